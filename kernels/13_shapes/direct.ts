/**
 * The WGSL of step 13's direct plan, written out by TypeScript: C = A·B for the smallest
 * products, where any kernel's time is mostly its launch.
 *
 * At a few thousand to a few million FLOPs every other plan's machinery (staged blocks and their
 * barriers, k lanes summed through workgroup memory, padding copies, a second dispatch for
 * slices) is a fixed cost larger than the arithmetic. Here each invocation computes one element
 * of C with a loop over K, as the naive kernel of step 02 does, and the workgroup's 64
 * invocations are laid over BM rows and BN columns of C so that a product with few columns
 * still gives each invocation an element: BN of 64 (one row per workgroup), 8 (8 x 8) or 1
 * (64 rows of one column). Within a warp the loads of B are consecutive columns of one row (or one
 * address), those of A one row per BN lanes. No workgroup memory, no barrier; an invocation past
 * the matrix returns at once.
 *
 * With so few invocations nothing hides a load's latency, so the loop's time is its trips, each
 * waiting once for its loads: a trip takes DIRECT_K_UNROLL k, their 2·DIRECT_K_UNROLL loads issued
 * before the first multiply-add, and the last K % DIRECT_K_UNROLL k take one trip each (directTrips). The
 * sum is added in k order either way.
 */
import { cachedKernel, productInterface } from "../../lib/steps/wgsl.ts";

/** Invocations per workgroup. */
export const DIRECT_INVOCATIONS = 64;
/** Columns of C per workgroup the kernel is written for (BM = 64 / BN rows). */
export const DIRECT_WIDTHS = [64, 8, 1] as const;

/** k per trip of the loop's main part (its loads issued together). */
const DIRECT_K_UNROLL = 8;

/** Trips of an invocation's loop over K: the unrolled ones, then one per k left over. */
export const directTrips = (k: number): number =>
  Math.floor(k / DIRECT_K_UNROLL) + (k % DIRECT_K_UNROLL);

/** Why a width cannot be generated (undefined when it can). */
export function directInvalid(columns: number): string | undefined {
  return (DIRECT_WIDTHS as readonly number[]).includes(columns)
    ? undefined
    : `the direct kernel is ${DIRECT_WIDTHS.join(", ")} columns wide`;
}

/** The direct kernel's WGSL for BN columns per workgroup (cached). */
export const directWgsl: (columns: number) => string = cachedKernel(
  (columns) => `direct kernel, BN=${columns}`,
  directInvalid,
  emit,
);

function emit(columns: number): string {
  const rows = DIRECT_INVOCATIONS / columns;
  return `// Step 13 (direct): one element of C per invocation, ${rows} rows x ${columns} columns per workgroup.
// Written by kernels/13_shapes/direct.ts for BN=${columns}.

${productInterface({ element: "f32", paddedB: false })}

@compute @workgroup_size(${DIRECT_INVOCATIONS})
fn main(
  @builtin(local_invocation_index) tid: u32,
  @builtin(workgroup_id) wid: vec3<u32>,
) {
  let row = wid.y * ${rows}u + tid / ${columns}u;
  let col = wid.x * ${columns}u + tid % ${columns}u;
  if (row >= dims.M || col >= dims.N) {
    return;
  }
  let aRow = row * dims.K;
  var sum = 0.0;
  var k = 0u;
  for (; k + ${DIRECT_K_UNROLL - 1}u < dims.K; k += ${DIRECT_K_UNROLL}u) {
${unrolled()}
  }
  for (; k < dims.K; k++) {
    sum += A[aRow + k] * B[k * dims.N + col];
  }
  C[row * dims.ldc + col] = sum;
}
`;
}

/** One trip of the main loop: every load first, then the multiply-adds in k order. */
function unrolled(): string {
  const ks = Array.from({ length: DIRECT_K_UNROLL }, (_, j) => j);
  const plus = (j: number) => (j ? ` + ${j}u` : "");
  return [
    ...ks.map((j) => `    let a${j} = A[aRow + k${plus(j)}];`),
    ...ks.map((j) => `    let b${j} = B[${j ? `(k + ${j}u)` : "k"} * dims.N + col];`),
    ...ks.map((j) => `    sum += a${j} * b${j};`),
  ].join("\n");
}
