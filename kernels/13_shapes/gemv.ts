/**
 * The WGSL of step 13's matrix-vector plan, written out by TypeScript for ROWS rows of C per
 * workgroup, in two forms that differ only in how they load.
 *
 * With a handful of rows (the plan is a candidate for M of 1 to 64: one to four row blocks of
 * at most 16 rows) the product is M dot products of A's rows with every column of B: 2·M·K·N FLOPs
 * over K·N elements of B, at most 8 FLOPs per byte of B at 16 rows, so the time is the time to
 * read B once per row block. The tiled kernels waste this: a 128-row tile holds 1 to 64 rows of
 * work, and each column of B tile is staged in workgroup memory for nothing. This kernel reads B
 * straight from global memory, once per row block (one when M <= ROWS).
 *
 * - LOADS = 4, when K and N are multiples of 4: A and B are read in vec4s, 64 neighbouring
 *   invocations taking 1 KiB of one row of B per load (coalesced); column lane l takes columns
 *   4l .. 4l + 3. For A, the 64 invocations of one k lane read the same vec4 (four k of one row)
 *   alike, one broadcast load each.
 * - LOADS = 1, any K and N: vec4 rows of B would need a padded copy of B, which at M of a few
 *   costs more than the product itself. Instead column lane l takes the columns l, l + 64,
 *   l + 128 and l + 192 of its 256, so each load of a warp reads 32 consecutive floats of one row
 *   of B (128 bytes, coalesced) and each store writes 32 consecutive floats of C. It issues four
 *   times the loads of the vec4 form for the same bytes, so it runs only where the copy would.
 *
 * A workgroup is 64 column lanes (256 columns of C) x 4 k lanes: k lane g takes the k steps
 * g, g + 4, g + 8, ... of four k each, so four loads of B are in flight per column for every one
 * a plain loop would have, and the four partial sums meet in workgroup memory at the end, row by
 * row, in a fixed order. Workgroup z takes slice z of K (the grid's z is the slice count) and
 * writes its partial C to slice z of the C binding, which the runner sums in slice order when
 * there is more than one: this is what fills a GPU of 132 SMs when N / 256 workgroups would not.
 * Past the matrix a load reads the zero the runner keeps after A's and B's data.
 */
import { cachedKernel, lines, productInterface } from "../../lib/steps/wgsl.ts";

/** Column lanes (vec4 columns of C) and k lanes of one workgroup. */
export const GEMV_LANES = 64;
export const GEMV_K_LANES = 4;
/** Columns of C one workgroup covers: the plan's BN. */
export const GEMV_COLUMNS = 4 * GEMV_LANES;
/** Bytes of workgroup memory: one vec4 per invocation, for the k lanes' sums. */
export const GEMV_STORAGE_BYTES = GEMV_LANES * GEMV_K_LANES * 16;
/** The most rows of C one workgroup keeps in registers (ROWS vec4 accumulators each). */
export const GEMV_MAX_ROWS = 16;

/** Elements per load: 4 (vec4s, K and N multiples of 4) or 1 (any K and N). */
export type GemvLoads = 4 | 1;

/** Why ROWS cannot be generated (undefined when it can). */
export function gemvInvalid(rows: number): string | undefined {
  return Number.isInteger(rows) && rows >= 1 && rows <= GEMV_MAX_ROWS
    ? undefined
    : `the matrix-vector kernel keeps 1 to ${GEMV_MAX_ROWS} rows of C per workgroup`;
}

const gemvText = cachedKernel<{ rows: number; loads: GemvLoads }>(
  ({ rows }) => `matrix-vector kernel, ROWS=${rows}`,
  ({ rows }) => gemvInvalid(rows),
  ({ rows, loads }) => loads === 4 ? emitVec4(rows) : emitScalar(rows),
);

/** The matrix-vector kernel's WGSL for ROWS rows of C per workgroup and LOADS (cached). */
export const gemvWgsl = (rows: number, loads: GemvLoads = 4): string => gemvText({ rows, loads });

/** The entry point's first lines, the same in both forms: 64 column lanes x 4 k lanes. */
const ENTRY = `@compute @workgroup_size(${GEMV_LANES * GEMV_K_LANES})
fn main(
  @builtin(local_invocation_index) tid: u32,
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) grid: vec3<u32>,
) {
  let lane = tid % ${GEMV_LANES}u;
  let kLane = tid / ${GEMV_LANES}u;`;

/** K in whole steps of 16 (4 k for each k lane), the same in both forms. */
const K_STEP = 4 * GEMV_K_LANES;

/** Workgroup z's slice of K, the same in both forms; the last slices may be short or empty. */
const SLICE_OF_K =
  `  // Slice z of K, in whole steps of ${K_STEP} (one per k lane); the last may be short or empty.
  let kChunk = (dims.K + grid.z * ${K_STEP}u - 1u) / (grid.z * ${K_STEP}u) * ${K_STEP}u;
  let kBegin = min(wid.z * kChunk, dims.K);
  let kEnd = min(kBegin + kChunk, dims.K);`;

/** Columns of C per column lane: 4, one per 64 columns. */
const COLS = GEMV_COLUMNS / GEMV_LANES;

function emitScalar(rows: number): string {
  const each = (f: (r: number, j: number) => string) =>
    lines(rows, (r) => lines(COLS, (j) => f(r, j)));
  return `// Step 13 (matrix-vector): ${rows} rows of C x ${GEMV_COLUMNS} columns per workgroup, B read
// once as it is (32 consecutive floats per warp load), K split over ${GEMV_K_LANES} k lanes and over the
// grid's z (slices). Written by kernels/13_shapes/gemv.ts for ROWS=${rows}.

${productInterface({ element: "f32", paddedB: false })}

// The k lanes' partial sums of one row of C (four columns per lane): [k lane][column lane].
var<workgroup> sums: array<array<vec4<f32>, ${GEMV_LANES}>, ${GEMV_K_LANES}>;

fn loadA(i: u32, inside: bool) -> f32 {
  return A[select(arrayLength(&A) - 1u, i, inside)];
}

fn loadB(i: u32, inside: bool) -> f32 {
  return B[select(arrayLength(&B) - 1u, i, inside)];
}

${ENTRY}
  let col0 = wid.x * ${GEMV_COLUMNS}u + lane;
  let row0 = wid.y * ${rows}u;
${lines(COLS, (j) => `  let inCol${j} = col0 + ${GEMV_LANES * j}u < dims.N;`)}
${
    lines(rows, (r) =>
      `  let in${r} = row0 + ${r}u < dims.M;
  let at${r} = (row0 + ${r}u) * dims.K;`)
  }
${SLICE_OF_K}
${each((r, j) => `  var c${r}_${j} = 0.0;`)}
  for (var k = kBegin + kLane * 4u; k < kEnd; k += ${K_STEP}u) {
${
    lines(4, (t) =>
      `    let inK${t} = k + ${t}u < kEnd;
${
        lines(COLS, (j) =>
          `    let b${j}_${t} = loadB((k + ${t}u) * dims.N + col0 + ${
            GEMV_LANES * j
          }u, inK${t} && inCol${j});`)
      }`)
  }
${
    lines(rows, (r) =>
      lines(4, (t) =>
        `    let a${r}_${t} = loadA(at${r} + k + ${t}u, inK${t} && in${r});`) +
      "\n" +
      lines(
        COLS,
        (j) =>
          `    c${r}_${j} += a${r}_0 * b${j}_0 + a${r}_1 * b${j}_1 + a${r}_2 * b${j}_2 + a${r}_3 * b${j}_3;`,
      ))
  }
  }
  let at = wid.z * dims.M * dims.ldc + col0;
${lines(rows, (r) => sumAndStoreScalar(r))}
}
`.replaceAll("row0 + 0u", "row0").replaceAll(" + 0u", "").replaceAll("(row0)", "row0").replaceAll(
    "(k)",
    "k",
  );
}

/** Row r: the k lanes' sums meet in workgroup memory; k lane 0 adds them in order and stores. */
function sumAndStoreScalar(r: number): string {
  const add = Array.from({ length: GEMV_K_LANES - 1 }, (_, g) => ` + sums[${g + 1}u][lane]`)
    .join("");
  const parts = ["x", "y", "z", "w"];
  return `  sums[kLane][lane] = vec4<f32>(${
    lines(COLS, (j) => `c${r}_${j}`).replaceAll("\n", ", ")
  });
  workgroupBarrier();
  if (kLane == 0u && in${r}) {
    let sum = sums[0u][lane]${add};
${
    lines(COLS, (j) =>
      `    if (inCol${j}) { C[at + (row0 + ${r}u) * dims.ldc + ${GEMV_LANES * j}u] = sum.${
        parts[j]
      }; }`)
  }
  }
  workgroupBarrier();`;
}

function emitVec4(rows: number): string {
  return `// Step 13 (matrix-vector): ${rows} rows of C x ${GEMV_COLUMNS} columns per workgroup, B read
// once in vec4s, K split over ${GEMV_K_LANES} k lanes and over the grid's z (slices). Written by
// kernels/13_shapes/gemv.ts for ROWS=${rows}.

${productInterface({ element: "vec4<f32>", paddedB: true })}

// The k lanes' partial sums of one row of C: [k lane][column lane].
var<workgroup> sums: array<array<vec4<f32>, ${GEMV_LANES}>, ${GEMV_K_LANES}>;

// Four k values of row \`row\` of A from column \`k\` (zero past the matrix).
fn loadA(row: u32, k: u32) -> vec4<f32> {
  return A[select(arrayLength(&A) - 1u, (row * dims.K + k) / 4u, row < dims.M)];
}

// Four columns of row \`k\` of B from column \`col\` (zero past the matrix).
fn loadB(k: u32, col: u32) -> vec4<f32> {
  return B[select(arrayLength(&B) - 1u, (k * dims.N + col) / 4u, col < dims.N)];
}

// Four columns of C from index \`at\` (column \`col\`); those past the real N are left alone.
fn store(at: u32, col: u32, v: vec4<f32>) {
  if (col < dims.ldc) { C[at] = v.x; }
  if (col + 1u < dims.ldc) { C[at + 1u] = v.y; }
  if (col + 2u < dims.ldc) { C[at + 2u] = v.z; }
  if (col + 3u < dims.ldc) { C[at + 3u] = v.w; }
}

${ENTRY}
  let col = (wid.x * ${GEMV_LANES}u + lane) * 4u;
  let row0 = wid.y * ${rows}u;
${SLICE_OF_K}
${lines(rows, (r) => `  var c${r} = vec4<f32>(0.0);`)}
  for (var k = kBegin + kLane * 4u; k < kEnd; k += ${4 * GEMV_K_LANES}u) {
    // K is a multiple of 4 (the runner pads it), so k..k+3 are all inside.
    let b0 = loadB(k, col);
    let b1 = loadB(k + 1u, col);
    let b2 = loadB(k + 2u, col);
    let b3 = loadB(k + 3u, col);
${
    lines(rows, (r) =>
      `    let a${r} = loadA(row0 + ${r}u, k);
    c${r} += a${r}.x * b0 + a${r}.y * b1 + a${r}.z * b2 + a${r}.w * b3;`)
  }
  }
  let at = wid.z * dims.M * dims.ldc + col;
${lines(rows, (r) => sumAndStore(r))}
}
`.replaceAll("row0 + 0u", "row0");
}

/** Row r: the k lanes' sums meet in workgroup memory; k lane 0 adds them in order and stores. */
function sumAndStore(r: number): string {
  const add = Array.from({ length: GEMV_K_LANES - 1 }, (_, g) => ` + sums[${g + 1}u][lane]`)
    .join("");
  return `  sums[kLane][lane] = c${r};
  workgroupBarrier();
  if (kLane == 0u && row0 + ${r}u < dims.M) {
    store(at + (row0 + ${r}u) * dims.ldc, col, sums[0u][lane]${add});
  }
  workgroupBarrier();`;
}
