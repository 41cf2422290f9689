/**
 * Shape checks of one kernel: its tail shapes (lib/steps/tails.ts), then random shapes (1..300
 * per dimension, a mix of uniform draws, primes, and multiples of the kernel's tile sizes plus or
 * minus one, where edge handling breaks), and the sweep that runs each through the runner's
 * validation (fresh inputs, C poisoned with NaN, float64 reference) without timing. Used by
 * `deno task bench --validate N` and `deno task fuzz`.
 */
import type { Gpu } from "./gpu.ts";
import type { Shape } from "./matrix.ts";
import type { ValidationSweep } from "./record.ts";
import type { KernelSpec } from "./registry.ts";
import { kernelParams, runKernel } from "./runner.ts";
import { tailShapes } from "./steps/tails.ts";

/** Largest dimension drawn: big enough for several tiles, small enough for a software adapter. */
export const FUZZ_MAX_DIM = 300;

const PRIMES = Array.from({ length: FUZZ_MAX_DIM }, (_, i) => i + 1).filter((n) =>
  n > 1 && Array.from({ length: Math.floor(Math.sqrt(n)) - 1 }, (_, i) => i + 2)
    .every((d) => n % d !== 0)
);

/** The tile sizes a kernel's edges depend on: its block, workgroup and alignment sizes. */
export function tileSizes(gpu: Gpu, spec: KernelSpec): number[] {
  const params = kernelParams(gpu, spec);
  const align = spec.align(params);
  const sizes = [
    params.BM,
    params.BN,
    params.BK,
    ...spec.workgroupSize(params).slice(0, 2),
    align.m,
    align.k,
    align.n,
    4,
  ];
  return [...new Set(sizes.filter((s) => Number.isInteger(s) && s > 1))].sort((a, b) => a - b);
}

/** `count` shapes for a kernel with these tile sizes, drawn from `next` (uniform in [0, 1)). */
export function fuzzShapes(count: number, tiles: number[], next: () => number): Shape[] {
  const pick = <T>(xs: T[]) => xs[Math.floor(next() * xs.length)];
  const dim = () => {
    const kind = next();
    if (kind < 1 / 3) return 1 + Math.floor(next() * FUZZ_MAX_DIM);
    if (kind < 2 / 3) return pick(PRIMES);
    const tile = pick(tiles);
    const multiple = tile * (1 + Math.floor(next() * Math.floor(FUZZ_MAX_DIM / tile)));
    const d = multiple + pick([-1, 0, 1]);
    return Math.min(FUZZ_MAX_DIM, Math.max(1, d));
  };
  return Array.from({ length: count }, () => ({ m: dim(), k: dim(), n: dim() }));
}

/** The kernel's tail shapes with its parameters on this device, then `count` random shapes. */
export function checkShapes(
  gpu: Gpu,
  spec: KernelSpec,
  count: number,
  next: () => number,
): Shape[] {
  return [
    ...tailShapes(spec, kernelParams(gpu, spec)).map((t) => t.shape),
    ...fuzzShapes(count, tileSizes(gpu, spec), next),
  ];
}

/** One failed shape, with the input seed that reproduces it. */
export type FuzzFailure = ValidationSweep["failures"][number] & { seed: number };

/**
 * Validate `spec` on each shape (no timing). Inputs for shape i come from `seeds[i]`. A kernel
 * the device cannot run (missing feature) stops after the first shape and says so.
 */
export async function sweepKernel(
  gpu: Gpu,
  spec: KernelSpec,
  shapes: Shape[],
  seeds: number[],
  onShape?: (done: number) => void,
): Promise<ValidationSweep & { failures: FuzzFailure[]; skipped?: string }> {
  const sweep = {
    kernel: spec.id,
    shapes: 0,
    passed: 0,
    maxRelErr: 0,
    failures: [] as FuzzFailure[],
    skipped: undefined as string | undefined,
  };
  for (const [i, shape] of shapes.entries()) {
    const r = await runKernel(gpu, spec, shape, { skipTiming: true, seed: seeds[i] });
    if (r.errorKind === "feature") {
      sweep.skipped = r.error;
      sweep.failures.push({ ...shape, seed: r.seed, error: `skipped: ${r.error}` });
      break;
    }
    sweep.shapes++;
    if (r.validated) sweep.passed++;
    else sweep.failures.push({ ...shape, seed: r.seed, error: `${r.errorKind}: ${r.error}` });
    sweep.maxRelErr = Math.max(sweep.maxRelErr, Number.isNaN(r.relErr) ? Infinity : r.relErr);
    gpu.check();
    onShape?.(i + 1);
  }
  if (sweep.skipped === undefined) delete sweep.skipped;
  return sweep;
}

/** Per-shape input seeds drawn from one run seed, so a whole sweep replays from one number. */
export function caseSeeds(count: number, next: () => number): number[] {
  return Array.from({ length: count }, () => Math.floor(next() * 2 ** 32));
}
