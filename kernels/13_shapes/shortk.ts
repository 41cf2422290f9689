/**
 * The WGSL of step 13's short-K plans, written out by TypeScript: C = A·B when K is short (a few
 * dozen to a few hundred) and C is large.
 *
 * At short K each element of C is a few dozen multiply-adds, so what a tile workgroup does
 * besides its share of K (its first loads, its barriers, its stores) is most of its time. Step
 * 12's kernel pays that for a loop built for long K: k tiles of 8 or 16 behind a double buffer,
 * vec4 rows that need padded copies of A and B when K or N is not a multiple of 4, and stores of
 * TN consecutive floats per invocation, which a warp spreads over TN·32 words (no longer one
 * 128-byte line per store instruction) and which cannot be vec4s when C's rows start at any
 * 4-byte boundary. Here a workgroup stages a KC-deep block of A and of B in workgroup memory (the
 * whole of K in one trip when K <= KC), waits once, and multiplies it out of registers; any M, K
 * and N, with no padding copy.
 *
 * A workgroup is 8 warps of 32 invocations over BN columns of C (128, or 64 or 32 where C has
 * few columns: a 128-wide block would compute columns that do not exist) and 8·ROWS rows: warp w
 * takes rows w·ROWS .. w·ROWS + ROWS - 1, lane l the columns l, l + 32, ... (BN / 32 of them, as
 * in the outer kernel), so each store instruction of a warp writes 32 consecutive floats of one
 * row. A's block is kept k-major in vec4s of 4 rows: the ROWS values a warp needs at one k are
 * ROWS / 4 vec4 loads of one address for all its lanes (a broadcast). B's block is kept k-major
 * too: a lane's BN / 32 values at one k are loads of 32 consecutive words per warp (one per bank).
 * Per k an invocation issues ROWS / 4 + BN / 32 loads for ROWS·BN / 32 multiply-adds: the narrow
 * widths trade more loads per multiply-add for more workgroups over few columns.
 *
 * Staging: invocation t stores 4 rows of A at one k as one vec4 (consecutive invocations take
 * consecutive quads of rows, so the stores of a warp fill the banks) and one word of B per
 * column (consecutive columns: B's rows read coalesced). Past the matrix a load reads the zero
 * the runner keeps after A's and B's data, so the block is zero past M, K and N and the product
 * loop may run a whole number of 4 k. The loop over blocks is bounded by the uniform dims alone,
 * so its two barriers are in uniform control flow.
 */
import { cachedKernel, lines, productInterface, SCALAR_LOADS } from "../../lib/steps/wgsl.ts";

/** Invocations per workgroup, lanes per warp. */
export const SHORTK_INVOCATIONS = 256;
const LANES = 32;
/** Columns of C per workgroup the kernel is written for: BN / 32 per lane. */
export const SHORTK_WIDTHS = [128, 64, 32] as const;
/** Rows of C per invocation the kernel is written for (whole vec4s of A). */
export const SHORTK_ROWS = [4, 8, 16] as const;
/** k staged per trip (KC): the whole K in one trip up to this depth. */
export const SHORTK_DEPTHS = [16, 32] as const;

/** Rows of C per workgroup: 8 warps of ROWS each. */
export const shortkRowsPerWorkgroup = (rows: number) => (SHORTK_INVOCATIONS / LANES) * rows;

/** One short-K kernel: rows of C per invocation, k staged per trip, columns per workgroup. */
export interface ShortKConfig {
  rows: number;
  depth: number;
  columns: number;
}

/** Bytes of workgroup memory: the staged blocks of A (BM x KC) and B (KC x BN). */
export const shortkStorageBytes = (c: ShortKConfig) =>
  4 * c.depth * (shortkRowsPerWorkgroup(c.rows) + c.columns);

/**
 * Registers per invocation, an estimate: ROWS·BN / 32 sums, one k's ROWS values of A and BN / 32
 * of B, and 24 for addresses and the rest.
 */
export const shortkRegisters = (c: ShortKConfig) =>
  (c.rows + 1) * (c.columns / LANES) + c.rows + 24;

/** Why a configuration cannot be generated (undefined when it can). */
export function shortkInvalid(c: ShortKConfig): string | undefined {
  if (!(SHORTK_ROWS as readonly number[]).includes(c.rows)) {
    return `the short-K kernel keeps ${SHORTK_ROWS.join(", ")} rows per invocation`;
  }
  if (!(SHORTK_DEPTHS as readonly number[]).includes(c.depth)) {
    return `the short-K kernel stages ${SHORTK_DEPTHS.join(" or ")} k per trip`;
  }
  if (!(SHORTK_WIDTHS as readonly number[]).includes(c.columns)) {
    return `the short-K kernel is ${SHORTK_WIDTHS.join(", ")} columns wide`;
  }
  return undefined;
}

/** The short-K kernel's WGSL for a configuration (cached). */
export const shortkWgsl: (c: ShortKConfig) => string = cachedKernel(
  (c) => `short-K kernel, ROWS=${c.rows} KC=${c.depth} BN=${c.columns}`,
  shortkInvalid,
  emit,
);

/**
 * A staging loop: `count` units over the workgroup's invocations, unit `i` of them handled by
 * `body` (a guard only where the units do not divide evenly).
 */
function staged(count: number, body: string): string {
  const rounds = Math.ceil(count / SHORTK_INVOCATIONS);
  const guarded = count % SHORTK_INVOCATIONS !== 0;
  return lines(rounds, (q) => {
    const i = `tid + ${q * SHORTK_INVOCATIONS}u`;
    return guarded
      ? `    { let i = ${i}; if (i < ${count}u) {\n${body}\n    } }`
      : `    { let i = ${i};\n${body}\n    }`;
  });
}

function emit({ rows, depth, columns }: ShortKConfig): string {
  const bm = shortkRowsPerWorkgroup(rows);
  const quads = bm / 4, warpQuads = rows / 4;
  const cols = columns / LANES;
  // A row's sums: a vector of one value per column the lane owns (a scalar for one column).
  const sums = cols === 1 ? "f32" : `vec${cols}<f32>`;
  const sum = (r: number, j: number) => cols === 1 ? `c${r}` : `c${r}.${"xyzw"[j]}`;
  return `// Step 13 (short-K): ${bm} rows x ${columns} columns of C per workgroup, ${rows} x ${cols} per
// invocation (columns lane + 32 j); A and B staged ${depth} k at a time, one wait per trip.
// Written by kernels/13_shapes/shortk.ts for ROWS=${rows} KC=${depth} BN=${columns}.

${productInterface({ element: "f32", paddedB: false })}

// A's ${bm} rows for ${depth} k, k-major in vec4s of 4 rows: As[k * ${quads} + row / 4].
var<workgroup> As: array<vec4<f32>, ${depth * quads}>;
// B's ${depth} rows of ${columns} columns: Bs[k * ${columns} + column].
var<workgroup> Bs: array<f32, ${depth * columns}>;

${SCALAR_LOADS}

@compute @workgroup_size(${SHORTK_INVOCATIONS})
fn main(
  @builtin(local_invocation_index) tid: u32,
  @builtin(workgroup_id) wid: vec3<u32>,
) {
  let lane = tid % ${LANES}u;
  let warp = tid / ${LANES}u;
  let rowBase = wid.y * ${bm}u;
  let colBase = wid.x * ${columns}u;
  let row0 = rowBase + warp * ${rows}u;
  let col0 = colBase + lane;
${lines(rows, (r) => `  var c${r} = ${sums}();`)}
  for (var k0 = 0u; k0 < dims.K; k0 += ${depth}u) {
${
    staged(
      depth * quads,
      `      let row = rowBase + 4u * (i % ${quads}u);
      let k = k0 + i / ${quads}u;
      let inK = k < dims.K;
      As[i] = vec4<f32>(
${
        lines(
          4,
          (r) =>
            `        loadA((row + ${r}u) * dims.K + k, inK && row + ${r}u < dims.M)${
              r < 3 ? "," : ""
            }`,
        )
      }
      );`,
    )
  }
${
    staged(
      depth * columns,
      `      let col = colBase + i % ${columns}u;
      let k = k0 + i / ${columns}u;
      Bs[i] = loadB(k * dims.N + col, k < dims.K && col < dims.N);`,
    )
  }
    workgroupBarrier();
    // The block is zero past K: a whole number of 4 k is as right as the exact count.
    let steps = min(${depth}u, (dims.K - k0 + 3u) / 4u * 4u);
    for (var kk = 0u; kk < steps; kk++) {
      let b = ${sums}(${
    Array.from({ length: cols }, (_, j) => `Bs[kk * ${columns}u + lane + ${LANES * j}u]`)
      .join(", ")
  });
${
    lines(
      warpQuads,
      (q) => `      let a${q} = As[kk * ${quads}u + warp * ${warpQuads}u + ${q}u];`,
    )
  }
${
    lines(rows, (r) => {
      return `      c${r} += a${Math.floor(r / 4)}.${"xyzw"[r % 4]} * b;`;
    })
  }
    }
    workgroupBarrier();
  }
${lines(cols, (j) => `  let inCol${j} = col0 + ${LANES * j}u < dims.N;`)}
${
    lines(rows, (r) =>
      `  if (row0 + ${r}u < dims.M) {
    let at = (row0 + ${r}u) * dims.ldc + col0;
${lines(cols, (j) => `    if (inCol${j}) { C[at + ${LANES * j}u] = ${sum(r, j)}; }`)}
  }`)
  }
}
`.replaceAll(" + 0u", "");
}
