/**
 * The WGSL of step 13's row-dot plans, written out by TypeScript: C = A·B when N is small (1 to
 * 32 columns; one column is a matrix-vector product A·b), and the dot product (M = N = 1).
 *
 * With few columns, the product is M·N dot products of A's rows with B's columns: 2·M·K·N FLOPs
 * over M·K elements of A, at most 16 FLOPs per byte of A at 32 columns, so the time is the time
 * to read A once. A 128 x 128 tile would compute 128 columns for N of them and stage A through
 * workgroup memory for nothing. Here A is read straight from global memory, once, along its
 * rows: the K_LANES invocations of a group read consecutive elements of one row (coalesced, 128
 * bytes per warp for a group of 32), any K, with no padding copy. Each invocation takes the k
 * steps lane, lane + K_LANES, lane + 2·K_LANES, ... of ROWS rows and keeps ROWS x COLS sums; one
 * trip of the loop issues all its loads (UNROLL k steps of every row) before the first
 * multiply-add, because a GPU stalls a warp at the first use of a pending load.
 *
 * B's few columns: with COLS <= 4 each invocation reads its k steps' values of B directly (the
 * same few cache lines for every row, served by the L1). With COLS >= 8 that would cost a cache
 * line per element, so a trip first stages its k steps x COLS block of B in workgroup memory,
 * read coalesced by the whole workgroup, in rows of COLS + 1 words so that the lanes of a group
 * (consecutive k) read different banks.
 *
 * The lanes' partial sums meet in workgroup memory, PER_PASS values per invocation at a time,
 * and are added in a fixed tree (lane l takes lane l + h, h = K_LANES / 2 ... 1): the same
 * additions in the same order on every run. Workgroup z takes slice z of K and writes its sums to
 * slice z of the C binding, which the runner sums in slice order when there is more than one:
 * for the dot product this spreads the K-long read over many workgroups.
 *
 * Every loop that holds a barrier is bounded by values computed in the entry point from the
 * workgroup id and the uniform dims (uniform control flow); only loads are selected per
 * invocation (an address outside the matrix reads the zero the runner keeps after A's and B's
 * data) and only stores are branched.
 */
import { cachedKernel, lines, productInterface } from "../../lib/steps/wgsl.ts";

/** Invocations per workgroup. */
export const ROWDOT_INVOCATIONS = 256;
/** k lanes per group: a warp per row group, or the whole workgroup on one row group (dot). */
export const ROWDOT_K_LANES = [32, 256] as const;
/** Column counts a workgroup can take (powers of two up to 32). */
export const ROWDOT_MAX_COLS = 32;
/** The most sums one invocation keeps (ROWS x COLS accumulators). */
export const ROWDOT_MAX_SUMS = 64;
/** Columns from which B is staged in workgroup memory instead of read directly. */
export const ROWDOT_STAGED_COLS = 8;
/**
 * Loads of A one invocation issues per trip, before the first multiply-add: rows x UNROLL. 16
 * loads of 4 bytes by 256 invocations, with 4 workgroups to an SM, keep 64 KiB per SM in
 * flight, what DRAM's bandwidth times its latency asks of each of an H200's 132 SMs.
 */
const LOADS_IN_FLIGHT = 16;
/** Words of workgroup memory a trip may stage B in (8 KiB). */
const STAGE_WORDS = 2048;

/** One row-dot kernel: k lanes per group, rows per group and columns per workgroup. */
export interface RowDotConfig {
  kLanes: number;
  rows: number;
  cols: number;
}

/** Groups of k lanes in a workgroup. */
export const rowdotGroups = (c: RowDotConfig) => ROWDOT_INVOCATIONS / c.kLanes;
/** Whether B goes through workgroup memory. */
export const rowdotStaged = (c: RowDotConfig) => c.cols >= ROWDOT_STAGED_COLS;
/** Words of one staged row of B: COLS + 1 (odd, so that consecutive k fall in different banks). */
const stageStride = (c: RowDotConfig) => c.cols + 1;

/** k steps each lane takes per trip (all of them loaded before the first multiply-add). */
export function rowdotUnroll(c: RowDotConfig): number {
  const wanted = Math.max(1, LOADS_IN_FLIGHT / c.rows);
  if (!rowdotStaged(c)) return wanted;
  return Math.max(1, Math.min(wanted, Math.floor(STAGE_WORDS / (c.kLanes * stageStride(c)))));
}

/** k steps one trip covers: every lane's UNROLL. */
export const rowdotTripK = (c: RowDotConfig) => c.kLanes * rowdotUnroll(c);

/** Sums per invocation moved to workgroup memory per pass of the reduction. */
const perPass = (c: RowDotConfig) => Math.min(8, c.rows * c.cols);

/** Bytes of workgroup memory: the staged B block or one pass of the reduction, the larger. */
export function rowdotStorageBytes(c: RowDotConfig): number {
  const stage = rowdotStaged(c) ? rowdotTripK(c) * stageStride(c) : 0;
  return 4 * Math.max(stage, perPass(c) * ROWDOT_INVOCATIONS);
}

/** Registers per invocation, an estimate: the sums, the loads of one trip, 24 for the rest. */
export function rowdotRegisters(c: RowDotConfig): number {
  const u = rowdotUnroll(c);
  return c.rows * c.cols + (c.rows + (rowdotStaged(c) ? 0 : c.cols)) * u + 24;
}

const isPowerOfTwo = (x: number) => Number.isInteger(x) && x >= 1 && (x & (x - 1)) === 0;

/** Why this configuration cannot be generated (undefined when it can). */
export function rowdotInvalid(c: RowDotConfig): string | undefined {
  if (!(ROWDOT_K_LANES as readonly number[]).includes(c.kLanes)) {
    return `the row-dot kernel's k lanes are ${ROWDOT_K_LANES.join(" or ")}`;
  }
  if (!isPowerOfTwo(c.rows) || c.rows > 8) return "the row-dot kernel keeps 1, 2, 4 or 8 rows";
  if (!isPowerOfTwo(c.cols) || c.cols > ROWDOT_MAX_COLS) {
    return `the row-dot kernel takes 1 to ${ROWDOT_MAX_COLS} columns, a power of two`;
  }
  if (c.rows * c.cols > ROWDOT_MAX_SUMS) {
    return `rows x columns is at most ${ROWDOT_MAX_SUMS} sums per invocation`;
  }
  if (rowdotStaged(c) && c.kLanes !== 32) {
    return `from ${ROWDOT_STAGED_COLS} columns (B staged) the row-dot kernel has groups of 32`;
  }
  return undefined;
}

/** The row-dot kernel's WGSL for this configuration (cached). */
export const rowdotWgsl: (c: RowDotConfig) => string = cachedKernel(
  (c) => `row-dot kernel ${c.kLanes} ${c.rows} ${c.cols}`,
  rowdotInvalid,
  emit,
);

/** Every (row, column) pair, row-major. */
const each = (c: RowDotConfig, f: (r: number, j: number) => string) =>
  lines(c.rows, (r) => lines(c.cols, (j) => f(r, j)));

function emit(c: RowDotConfig): string {
  const groups = rowdotGroups(c);
  const u = rowdotUnroll(c);
  const tripK = rowdotTripK(c);
  const staged = rowdotStaged(c);
  const stride = stageStride(c);
  const words = rowdotStorageBytes(c) / 4;
  const values = c.rows * c.cols;
  const pass = perPass(c);
  const kind = groups === 1 ? "dot" : "row-dot";
  // Loads of one trip: A for every row and k step, then B (direct) for every column and k step.
  const loadsA = lines(
    c.rows,
    (r) => lines(u, (t) => `    let a${r}_${t} = loadA(at${r} + k${t}, in${r} && inK${t});`),
  );
  const kSteps = lines(u, (t) =>
    `    let k${t} = kTrip + ${t * c.kLanes}u + lane;
    let inK${t} = k${t} < kEnd;`);
  const directB = lines(
    c.cols,
    (j) =>
      lines(
        u,
        (t) => `    let b${j}_${t} = loadB(k${t} * dims.N + col0 + ${j}u, inK${t} && inCol${j});`,
      ),
  );
  // The trip's block of B: tripK x COLS elements, ROWDOT_INVOCATIONS at a time, in k order.
  const stageB = lines((tripK * c.cols) / ROWDOT_INVOCATIONS, (e) => {
    const i = `tid + ${e * ROWDOT_INVOCATIONS}u`;
    return `    {
      let kk = (${i}) / ${c.cols}u;
      let j = (${i}) % ${c.cols}u;
      let k = kTrip + kk;
      stage[kk * ${stride}u + j] = loadB(k * dims.N + col0 + j, k < kEnd && col0 + j < dims.N);
    }`;
  });
  const stagedB = lines(
    c.cols,
    (j) =>
      lines(
        u,
        (t) => `    let b${j}_${t} = stage[(${t * c.kLanes}u + lane) * ${stride}u + ${j}u];`,
      ),
  );
  // Each sum takes its k steps in order (a fixed order, so the same result on every run).
  const fmas = lines(u, (t) => each(c, (r, j) => `    s${r}_${j} += a${r}_${t} * b${j}_${t};`));
  const trip = staged
    ? `${kSteps}
${loadsA}
    // Stage the trip's block of B (the loads of A above are already in flight).
${stageB}
    workgroupBarrier();
${stagedB}
${fmas}
    // Every group has read the block before the next trip overwrites it.
    workgroupBarrier();`
    : `${kSteps}
${loadsA}
${directB}
${fmas}`;
  const reduction = Array.from({ length: values / pass }, (_, p) => {
    const v = (i: number) => p * pass + i;
    const sum = (i: number) => `s${Math.floor(v(i) / c.cols)}_${v(i) % c.cols}`;
    const tree: string[] = [];
    for (let h = c.kLanes / 2; h >= 1; h /= 2) {
      tree.push(`  if (lane < ${h}u) {
${
        lines(pass, (i) =>
          `    stage[${i * ROWDOT_INVOCATIONS}u + tid] += stage[${
            i * ROWDOT_INVOCATIONS
          }u + tid + ${h}u];`)
      }
  }
  workgroupBarrier();`);
    }
    const last = p === values / pass - 1;
    return `  // Sums ${v(0)}..${v(pass - 1)} of ${values} (row-major over rows x columns).
${lines(pass, (i) => `  stage[${i * ROWDOT_INVOCATIONS}u + tid] = ${sum(i)};`)}
  workgroupBarrier();
${tree.join("\n")}
  if (lane == 0u) {
${
      lines(pass, (i) => {
        const r = Math.floor(v(i) / c.cols), j = v(i) % c.cols;
        return `    store(row0 + ${r}u, col0 + ${j}u, slice, stage[${
          i * ROWDOT_INVOCATIONS
        }u + tid]);`;
      })
    }
  }${
      last
        ? ""
        : "\n  // The tree's words are read before the next pass writes them.\n  workgroupBarrier();"
    }`;
  }).join("\n");
  return `// Step 13 (${kind}): ${groups} group${
    groups > 1 ? "s" : ""
  } of ${c.kLanes} k lanes per workgroup, ${c.rows} row${
    c.rows > 1 ? "s" : ""
  } of C per group, ${c.cols}
// column${c.cols > 1 ? "s" : ""} per workgroup; A read once along its rows, ${u} k step${
    u > 1 ? "s" : ""
  } per lane and trip${staged ? ", B staged per trip" : ""}.
// Written by kernels/13_shapes/rowdot.ts for K_LANES=${c.kLanes} ROWS=${c.rows} COLS=${c.cols}.

${productInterface({ element: "f32", paddedB: false })}

// ${
    staged ? "The trip's block of B, then the" : "The"
  } lanes' partial sums on their way to the tree.
var<workgroup> stage: array<f32, ${words}>;

// Element \`i\` of A, or the zero after A's data when \`inside\` is false.
fn loadA(i: u32, inside: bool) -> f32 {
  return A[select(arrayLength(&A) - 1u, i, inside)];
}

fn loadB(i: u32, inside: bool) -> f32 {
  return B[select(arrayLength(&B) - 1u, i, inside)];
}

// C[row][col] of slice \`slice\` (the C binding holds one M x N product per slice).
fn store(row: u32, col: u32, slice: u32, v: f32) {
  if (row < dims.M && col < dims.N) {
    C[(slice * dims.M + row) * dims.ldc + col] = v;
  }
}

@compute @workgroup_size(${ROWDOT_INVOCATIONS})
fn main(
  @builtin(local_invocation_index) tid: u32,
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) grid: vec3<u32>,
) {
  let lane = tid % ${c.kLanes}u;
  let group = tid / ${c.kLanes}u;
  let col0 = wid.x * ${c.cols}u;
  let row0 = wid.y * ${groups * c.rows}u + group * ${c.rows}u;
  // Slice z of K. Lets from the workgroup id and the uniform dims: the loop they bound keeps
  // its barriers in uniform control flow.
  let slice = wid.z;
  let kChunk = (dims.K + grid.z - 1u) / grid.z;
  let kBegin = min(slice * kChunk, dims.K);
  let kEnd = min(kBegin + kChunk, dims.K);
${
    lines(c.rows, (r) =>
      `  let in${r} = row0 + ${r}u < dims.M;
  let at${r} = (row0 + ${r}u) * dims.K;`)
  }
${staged ? "" : lines(c.cols, (j) => `  let inCol${j} = col0 + ${j}u < dims.N;`) + "\n"}${
    each(c, (r, j) => `  var s${r}_${j} = 0.0;`)
  }
  for (var kTrip = kBegin; kTrip < kEnd; kTrip += ${tripK}u) {
${trip}
  }
${reduction}
}
`.replaceAll(" + 0u", "").replaceAll("(0u + lane)", "lane");
}
