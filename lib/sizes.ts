/**
 * The sizes a run uses when none are given, per adapter: the bench's shapes, the one size a
 * search or sweep runs at, the odd shapes with the aligned neighbours they are compared with,
 * and the square sizes a notebook or web page runs live.
 */
import type { DeviceSummary } from "./gpu.ts";
import { type Shape, square, uniqueShapes } from "./matrix.ts";
import type { KernelSpec } from "./steps/spec.ts";
import { SHAPE_SUITE } from "./suite.ts";

/** Square sizes a notebook or web page runs live: small on a software adapter, the bench's sizes on a GPU. */
export function ladderSizes(summary: DeviceSummary): number[] {
  return summary.software ? [128, 256] : [1024, 2048, 4096];
}

/**
 * Sizes a run uses when none are given. Software adapters are thousands of times slower, so
 * they get small sizes that finish in about a minute; a real GPU gets the tutorial's sizes plus
 * the odd shapes that prove edge handling costs little and their aligned neighbours,
 * and for a step that joins the shape suite (its spec's `suite`) that suite as well.
 */
export function defaultShapes(
  device: Pick<DeviceSummary, "software">,
  step?: Pick<KernelSpec, "suite">,
): Shape[] {
  if (device.software) return [64, 128, 256].map(square);
  const tutorial = [
    ...[1024, 2048, 4096, 8192].map(square),
    square(4095),
    square(4097),
    { m: 1000, k: 3000, n: 777 },
    // The odd rectangle's aligned neighbour: what its throughput is compared with.
    { m: 1024, k: 3072, n: 768 },
  ];
  return step?.suite ? uniqueShapes([...tutorial, ...SHAPE_SUITE]) : tutorial;
}

/** The square size a GPU run's searches and knob sweeps run at. */
export const GPU_SWEEP_SIZE = 4096;

/**
 * The one square size a search or a sweep runs at: GPU_SWEEP_SIZE when the run has it (a GPU's
 * defaults do), else the run's largest square size (a software adapter's, or the sizes given).
 */
export function sweepSize(shapes: Shape[]): number {
  const squares = shapes.filter((s) => s.m === s.k && s.k === s.n).map((s) => s.m);
  return squares.includes(GPU_SWEEP_SIZE) ? GPU_SWEEP_SIZE : Math.max(...squares, 64);
}

/** Each odd shape of a GPU run and the aligned shape its throughput is compared with. */
export const ODD_SHAPE_PAIRS: readonly [Shape, Shape][] = [
  [square(4095), square(4096)],
  [square(4097), square(4096)],
  [{ m: 1000, k: 3000, n: 777 }, { m: 1024, k: 3072, n: 768 }],
];
