/**
 * Validate, then time. Every speed in a record comes from a product first checked against the
 * float64 reference on the same inputs: our GPU kernels (lib/runner.ts), our CPU matmuls
 * (lib/cpu_bench.ts) and the peers (cuBLAS, OpenBLAS, TF.js) each bring their own way to compute
 * and to time a product, and this module does the rest the same way for all of them.
 */
import { type AccuracyCheck, checkProduct, type ErrorRatios, type Numerics } from "./accuracy.ts";
import { GemmError, ValidationFailedError } from "./errors.ts";
import { flops, freshSeed, randomMatrix, sampleRows, type Shape } from "./matrix.ts";
import type { Measured, PeerResult } from "./record.ts";
import type { Timing } from "./timing.ts";

/** Largest reference work (multiply-adds) per check before rows are sampled. */
const CHECK_BUDGET = 6e8;

/** Rows of C the check covers: all of them unless the reference would cost too much. */
export function checkRowsFor(shape: Shape, requested?: number): number {
  if (requested !== undefined) return Math.min(shape.m, Math.max(1, requested));
  return Math.min(shape.m, Math.max(8, Math.floor(CHECK_BUDGET / (shape.k * shape.n))));
}

/**
 * Check C against A and B (lib/accuracy.ts): every element finite, the sampled rows element by
 * element against the float64 reference, every row through a random projection, each held to
 * the bound the kernel's numerics give for this K.
 */
export function validateProduct(
  c: Float32Array,
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  shape: Shape,
  numerics: Numerics,
  seed: number,
  checkRows?: number,
): AccuracyCheck {
  const rows = sampleRows(shape.m, checkRowsFor(shape, checkRows), seed);
  return checkProduct(c, a, b, shape, rows, numerics, seed);
}

/** What a timer reports; `method` is set by our WebGPU timer, which has a choice of clock. */
export type TimingSummary = Pick<Timing, "medianMs" | "minMs" | "maxMs" | "reps"> & {
  method?: Timing["method"];
};

/**
 * A timing's numbers without its clock, for rows whose `timer` names the clock (the CPU's wall
 * clock, CUDA events): the record's `timing` is the WebGPU clock, and stays unset for them.
 */
export function timerNumbers(
  t: Pick<Timing, "medianMs" | "minMs" | "maxMs" | "reps">,
): TimingSummary {
  return { medianMs: t.medianMs, minMs: t.minMs, maxMs: t.maxMs, reps: t.reps };
}

/** How one implementation computes and times a product. */
export interface Measurement {
  /** What rounds in the product: sets the error bound (lib/accuracy.ts). */
  numerics: Numerics;
  /** Rows of C checked (default `checkRowsFor`: all rows unless the reference costs too much). */
  checkRows?: number;
  /** Names the product in a wrong-result message, e.g. "02_naive at 64x64x64". */
  label?: string;
  /**
   * One product of `a` (M x K) and `b` (K x N), C read back. Elements it did not write must read
   * as NaN (poison C first), so that they fail the check.
   */
  compute(a: Float32Array, b: Float32Array): Float32Array | Promise<Float32Array>;
  /** Time the product on the same inputs; called only once C passed. Absent: validate only. */
  time?(): TimingSummary | Promise<TimingSummary>;
  /** The kind a thrown error is recorded under; undefined: a GemmError's own kind, else "error". */
  errorKind?(e: unknown): string | undefined;
}

/** A measured row: ours or a peer's (a peer's seed is optional in the record). */
type Row = Omit<Measured, "seed"> & { seed?: number };

/**
 * Fill in `result` (whose m, k, n and seed say what to run): make A and B from the seed, compute
 * C, check it against the float64 reference (NaN never passes), and only then time it and fill
 * in the timing fields and GFLOP/s. Any failure is recorded as `error` and `errorKind`, never as
 * a speed; a lost device is rethrown, so callers stop.
 */
export async function validateThenTime<R extends Row>(result: R, how: Measurement): Promise<R> {
  const shape = { m: result.m, k: result.k, n: result.n };
  const seed = result.seed ??= freshSeed();
  try {
    const a = randomMatrix(shape.m, shape.k, seed);
    const b = randomMatrix(shape.k, shape.n, seed ^ 0x9e3779b9);
    const c = await how.compute(a, b);
    const check = validateProduct(c, a, b, shape, how.numerics, seed, how.checkRows);
    result.relErr = check.relErr;
    if (Number.isFinite(check.relErr)) result.errRatios = roundRatios(check.ratios);
    if (!check.passed) {
      throw new ValidationFailedError(
        `${how.label ? `${how.label}: ` : ""}${check.failure} (relative error ${check.relErr})`,
      );
    }
    result.validated = true;
    if (how.time) {
      const t = await how.time();
      result.medianMs = t.medianMs;
      result.minMs = t.minMs;
      result.maxMs = t.maxMs;
      result.reps = t.reps;
      if (t.method) result.timing = t.method;
      result.gflops = flops(shape) / (t.medianMs * 1e6);
    }
  } catch (e) {
    if (e instanceof GemmError && e.kind === "device-lost") throw e;
    recordFailure(
      result,
      e instanceof Error ? e.message : String(e),
      how.errorKind?.(e) ?? (e instanceof GemmError ? e.kind : "error"),
    );
  }
  return result;
}

/** Three significant digits: the ratios say how close to the bound, not more. */
function roundRatios(ratios: ErrorRatios): ErrorRatios {
  const round = (x: number) => Number(x.toPrecision(3));
  return {
    norm: round(ratios.norm),
    worst: round(ratios.worst),
    rows: round(ratios.rows),
    worstRow: round(ratios.worstRow),
  };
}

/** Who a peer is, as its rows name it. */
export type PeerIdentity = Pick<PeerResult, "peer" | "kernel" | "title" | "timer" | "details">;

/** A peer's row for `shape` before it is measured: unchecked, with fresh inputs' seed. */
export function peerRow({ details, ...who }: PeerIdentity, shape: Shape): PeerResult {
  return {
    ...who,
    ...shape,
    relErr: NaN,
    validated: false,
    seed: freshSeed(),
    ...(details ? { details } : {}),
  };
}

/** Mark a row failed: the reason and its kind recorded, every timing field and the speed gone. */
export function recordFailure(result: Row, error: string, errorKind: string): void {
  result.validated = false;
  result.error = error;
  result.errorKind = errorKind;
  for (const key of ["medianMs", "minMs", "maxMs", "reps", "gflops", "timing"] as const) {
    delete result[key];
  }
}
