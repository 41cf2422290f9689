/**
 * The WGSL of step 13's outer plan, written out by TypeScript: C = A·B when K is tiny (the outer
 * product at K = 1, and K up to a few).
 *
 * With K of a few, each element of C is a handful of multiply-adds and the time is the time to
 * write C: M·N·4 bytes against M·K + K·N read. A tiled kernel stages k tiles of 16 or 32 for K of
 * 1 (the runner pads K to a multiple of 4, with copies of A and B), and a 128-row tile computes
 * its whole k tile for every element. Here each invocation holds its rows of A and its columns of
 * B in registers, K_STEP k at a time, and writes ROWS x 4 elements of C; nothing is staged and
 * there is no barrier.
 *
 * A workgroup is 8 warps of 32 invocations over COLUMNS (128) columns of C and 8·ROWS rows: warp
 * w takes rows w·ROWS .. w·ROWS + ROWS - 1, lane l the columns l, l + 32, l + 64, l + 96. Each
 * store instruction of a warp writes 32 consecutive floats of one row (128 bytes, coalesced) at
 * any N, which four consecutive floats per invocation (a vec4 segment) would not, since C's rows
 * start at any 4-byte boundary. The loads of B are coalesced the same way; those of A are one
 * address per warp (a broadcast). Any M, K, N: past the matrix, a load reads the zero the runner
 * keeps after A's and B's data and a store is skipped.
 */
import { cachedKernel, lines, productInterface, SCALAR_LOADS } from "../../lib/steps/wgsl.ts";

/** Invocations per workgroup, lanes per warp, columns of C per workgroup. */
export const OUTER_INVOCATIONS = 256;
const LANES = 32;
export const OUTER_COLUMNS = 128;
/** k taken per trip (the loop covers any K; K <= K_STEP is a single trip). */
export const OUTER_K_STEP = 4;
/** Rows of C per invocation the kernel is written for. */
export const OUTER_ROWS = [1, 2, 4, 8] as const;

/** Rows of C per workgroup: 8 warps of ROWS each. */
export const outerRowsPerWorkgroup = (rows: number) => (OUTER_INVOCATIONS / LANES) * rows;

/** Registers per invocation, an estimate: the sums, one trip's A and B values, 24 for the rest. */
export const outerRegisters = (rows: number) => 4 * rows + OUTER_K_STEP * (rows + 4) + 24;

/** Why ROWS cannot be generated (undefined when it can). */
export function outerInvalid(rows: number): string | undefined {
  return (OUTER_ROWS as readonly number[]).includes(rows)
    ? undefined
    : `the outer kernel keeps ${OUTER_ROWS.join(", ")} rows per invocation`;
}

/** The outer kernel's WGSL for ROWS rows per invocation (cached). */
export const outerWgsl: (rows: number) => string = cachedKernel(
  (rows) => `outer kernel, ROWS=${rows}`,
  outerInvalid,
  emit,
);

const COLS = OUTER_COLUMNS / LANES;

function emit(rows: number): string {
  const each = (f: (r: number, j: number) => string) =>
    lines(rows, (r) => lines(COLS, (j) => f(r, j)));
  return `// Step 13 (outer): ${
    outerRowsPerWorkgroup(rows)
  } rows x ${OUTER_COLUMNS} columns of C per workgroup, ${rows} x ${COLS} per
// invocation (columns lane + 32 j), A and B held in registers ${OUTER_K_STEP} k at a time, C written once.
// Written by kernels/13_shapes/outer.ts for ROWS=${rows}.

${productInterface({ element: "f32", paddedB: false })}

${SCALAR_LOADS}

@compute @workgroup_size(${OUTER_INVOCATIONS})
fn main(
  @builtin(local_invocation_index) tid: u32,
  @builtin(workgroup_id) wid: vec3<u32>,
) {
  let lane = tid % ${LANES}u;
  let row0 = wid.y * ${outerRowsPerWorkgroup(rows)}u + (tid / ${LANES}u) * ${rows}u;
  let col0 = wid.x * ${OUTER_COLUMNS}u + lane;
${
    lines(rows, (r) =>
      `  let in${r} = row0 + ${r}u < dims.M;
  let at${r} = (row0 + ${r}u) * dims.K;`)
  }
${lines(COLS, (j) => `  let inCol${j} = col0 + ${LANES * j}u < dims.N;`)}
${each((r, j) => `  var c${r}_${j} = 0.0;`)}
  for (var kTrip = 0u; kTrip < dims.K; kTrip += ${OUTER_K_STEP}u) {
${
    lines(OUTER_K_STEP, (t) =>
      `    let k${t} = kTrip + ${t}u;
    let inK${t} = k${t} < dims.K;
${
        lines(COLS, (j) =>
          `    let b${j}_${t} = loadB(k${t} * dims.N + col0 + ${
            LANES * j
          }u, inK${t} && inCol${j});`)
      }
${
        lines(rows, (r) => `    let a${r}_${t} = loadA(at${r} + k${t}, inK${t} && in${r});`)
      }`)
  }
${lines(OUTER_K_STEP, (t) => each((r, j) => `    c${r}_${j} += a${r}_${t} * b${j}_${t};`))}
  }
${
    each((r, j) =>
      `  if (in${r} && inCol${j}) { C[(row0 + ${r}u) * dims.ldc + col0 + ${
        LANES * j
      }u] = c${r}_${j}; }`
    )
  }
}
`.replaceAll(" + 0u", "");
}
