/**
 * The shape suite of a run record: for each shape of SHAPE_SUITE the record measured, the
 * step that plans per shape (the kernel a program would call), the best of our kernels, cuBLAS and TF.js, and
 * their ratios to cuBLAS, with the geometric mean over the suite. The README table, the chart's
 * shape view and notebook 13 all read it from here.
 */
import { sameShape, type Shape, shapeLabel, square } from "./matrix.ts";
import { isGpuRun, type KernelResult, type PeerResult, type RunRecord } from "./record.ts";
import { deviceSlug } from "./gpu.ts";
import { findKernel, previousStep } from "./registry.ts";
import { referencePeer } from "./compare.ts";

/**
 * The shapes real programs multiply (M x K x N): squares, an odd square and an odd rectangle, a
 * language model's prefill (2048 x 4096 x 11008, 512 x 4096 x 4096) and decode (16 and 1 rows),
 * a long reduction with a small output (256 x 65536 x 256) and a tall, thin product.
 */
export const SHAPE_SUITE: readonly Shape[] = [
  ...[1024, 2048, 4096, 8192, 4097].map(square),
  { m: 1000, k: 3000, n: 777 },
  { m: 2048, k: 4096, n: 11008 },
  { m: 512, k: 4096, n: 4096 },
  { m: 16, k: 4096, n: 4096 },
  { m: 1, k: 4096, n: 4096 },
  { m: 256, k: 65536, n: 256 },
  { m: 32768, k: 512, n: 128 },
];

/** One shape of the suite in one record (GFLOP/s; absent where nothing validated). */
export interface SuiteRow {
  shape: Shape;
  label: string;
  /** The shapes step's GFLOP/s and the plan it ran. */
  step?: number;
  plan?: Record<string, number>;
  /** The step it plans around (its general plan: one tuned tile per shape), where measured. */
  general?: number;
  /** The fastest validated kernel of the ladder at this shape. */
  best?: { kernel: string; gflops: number };
  cublas?: number;
  tfjs?: number;
  jaxjs?: number;
  /** The reference at this shape (lib/compare.ts: cuBLAS, else the fastest GPU peer). */
  reference?: { peer: string; gflops: number };
}

const speed = (r: KernelResult | PeerResult | undefined) =>
  r?.validated && r.gflops ? r.gflops : undefined;

/** The suite's rows in `record`, in the suite's order (shapes it did not measure left out). */
export function suiteRows(record: RunRecord, suite: readonly Shape[] = SHAPE_SUITE): SuiteRow[] {
  const rows: SuiteRow[] = [];
  for (const shape of suite) {
    const results = record.results.filter((r) => sameShape(r, shape));
    const peers = record.peers.filter((p) => sameShape(p, shape));
    if (!results.length && !peers.length) continue;
    const step = results.find((r) => findKernel(r.kernel)?.planFor);
    // The step it plans around: its general plan, one tuned tile per shape.
    const general = step && previousStep(findKernel(step.kernel)!)?.id;
    const ref = referencePeer(peers, shape);
    const best = results.filter((r) => speed(r))
      .sort((a, b) => b.gflops! - a.gflops!)[0];
    rows.push({
      shape,
      label: shapeLabel(shape),
      step: speed(step),
      plan: step?.params,
      general: speed(results.find((r) => r.kernel === general)),
      best: best ? { kernel: best.kernel, gflops: best.gflops! } : undefined,
      cublas: speed(peers.find((p) => p.peer === "cublas")),
      tfjs: speed(peers.find((p) => p.peer === "tfjs-webgpu")),
      jaxjs: speed(peers.find((p) => p.peer === "jaxjs-webgpu")),
      reference: ref && { peer: ref.peer, gflops: ref.gflops! },
    });
  }
  return rows;
}

/** The run of `x`'s device and commit with the most suite shapes, if it has more than `x`. */
export function suiteCompanion<T extends { path: string; record: RunRecord }>(
  x: T,
  runs: T[],
): T | undefined {
  const count = (r: RunRecord) => suiteRows(r).length;
  const same = runs.filter((y) =>
    isGpuRun(y.record) && y.record.commit === x.record.commit &&
    deviceSlug(y.record.device) === deviceSlug(x.record.device)
  ).sort((a, b) => count(b.record) - count(a.record))[0];
  return same && count(same.record) > count(x.record) ? same : undefined;
}
