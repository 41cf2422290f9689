/**
 * How far a correct product may be from the float64 reference, and the checks that hold every
 * result to it.
 *
 * The model. A dot product of length K summed in floating point makes one rounding per
 * multiply-add. With inputs of random sign each rounding is an independent error of at most u
 * (the unit roundoff) times the partial sum it rounds, and partial sums grow like a random walk,
 * so the error of one output grows like u times the square root of K, in units of that output's
 * natural size sqrt(sum_p (a_ip b_pj)^2). That is the probabilistic model of rounding error
 * (Higham and Mary, "A New Approach to Probabilistic Rounding Error Analysis", SIAM J. Sci.
 * Comput. 41(5), 2019, https://doi.org/10.1137/18M1226312); the worst-case bound grows like
 * u K and is far too loose to catch a wrong kernel at K = 8192.
 *
 * Storing A, B and C in f16 rounds every input and output once (an error of order u16 that does
 * not grow with K), and an f16 partial sum that runs R multiply-adds before it is added into f32
 * adds u16 times sqrt(R). The coefficients below are rounded up from the largest errors the
 * correct kernels show, on the software adapter and on GPU hosts (every run record keeps each
 * row's ratios to the bound), and the bound is SAFETY times the model.
 *
 * Dividing by sqrt(sum_p (a_ip b_pj)^2) rather than by |C_ij| keeps an output that cancels to
 * nearly zero from reading as a huge relative error: the scale is what the rounding acts on.
 *
 * The checks, each a ratio to its bound (a result passes when every ratio is at most 1):
 * - norm: the root mean square error over the checked rows, in units of the model;
 * - worst: the worst checked element, against the largest of that many Gaussian errors;
 * - rows: every row of C projected on a random vector, C x against A (B x) in float64
 *   (Freivalds' check), so every element of C takes part even where only some rows are
 *   compared element by element;
 * - worstRow: the worst row of that projection.
 * Every element must also be finite: the runner poisons C with NaN, so an unwritten element
 * fails.
 */
import { rng, type Shape } from "./matrix.ts";
import { referenceRow } from "./reference.ts";

/** What rounds in a kernel's product. */
export interface Numerics {
  /** Element type A, B and C are stored in: f16 rounds every input and output once. */
  storage: "f32" | "f16";
  /** Multiply-adds an f16 partial sum runs before it is added into f32 (0: every sum in f32). */
  f16Run: number;
}

/** Storage and sums in f32. */
export const F32_NUMERICS: Numerics = { storage: "f32", f16Run: 0 };

/** Unit roundoff of round-to-nearest: half the spacing of numbers in [1, 2). */
export const UNIT_ROUNDOFF = { f32: 2 ** -24, f16: 2 ** -11 } as const;

/**
 * Model coefficients, each the rms error of one kind of rounding in units of u (and of sqrt(K)
 * or sqrt(R) for the sums), rounded up from the largest values the correct kernels measured:
 * about 0.6 of this model (tests/accuracy_test.ts checks every kernel stays under it).
 */
export const MODEL = {
  /** f32 sums: a sequential sum in round-to-nearest has rms error u sqrt(K / 6) ~ 0.41 u sqrt(K). */
  f32Sum: 0.5,
  /** f16 storage: A's and B's elements rounded (each product off by ~u16 sqrt(2/3)), C rounded. */
  f16Storage: 1.2,
  /** f16 partial sums of R terms: like f32Sum, in u16. */
  f16Sum: 0.5,
};

/** How far above the model a result may be: room for devices and orders the fit never saw. */
export const SAFETY = 3;

/**
 * Improbability of the tails: a correct kernel fails a check with probability about e^-TAIL
 * (2e-9) if its errors follow the model. Sets how far the worst of n errors and the mean
 * square of a few may stray above the model.
 */
const TAIL = 20;

/** The model's rms error of one output, relative to its scale, for a product of depth k. */
export function modelError(numerics: Numerics, k: number): number {
  const u32 = UNIT_ROUNDOFF.f32, u16 = UNIT_ROUNDOFF.f16;
  // k + 1: k roundings of the sum and, without a fused multiply-add, one of the product.
  let variance = (MODEL.f32Sum * u32) ** 2 * (k + 1);
  if (numerics.storage === "f16") variance += (MODEL.f16Storage * u16) ** 2;
  if (numerics.f16Run > 0) variance += (MODEL.f16Sum * u16) ** 2 * Math.min(k, numerics.f16Run);
  return Math.sqrt(variance);
}

/**
 * The relative error norm a correct product of depth k stays under, over many elements: the
 * model times its safety factor (the bound the whole-matrix check holds large products to).
 */
export function errorBound(numerics: Numerics, k: number): number {
  return SAFETY * modelError(numerics, k);
}

/**
 * The absolute error a correct product may show whatever its scale: f16's subnormal spacing
 * (2^-24) for each rounding that can underflow there, the output and each product of an f16
 * partial sum (an output of one small product is all underflow). None for f32, whose subnormals
 * start near 1e-38. Times the safety factor, like the relative bound.
 */
export function errorFloor(numerics: Numerics, k: number): number {
  if (numerics.storage !== "f16" && numerics.f16Run === 0) return 0;
  return SAFETY * 2 ** -24 * Math.sqrt(1 + Math.min(k, numerics.f16Run));
}

/**
 * How far the root mean square of n errors may lie above their rms under the model: a
 * chi-square bound (Laurent and Massart, Ann. Statist. 28(5), 2000) at probability e^-TAIL.
 * Near 1 for many elements, up to 7 for one.
 */
export function meanSquareTail(n: number): number {
  return Math.sqrt(1 + 2 * Math.sqrt(TAIL / n) + (2 * TAIL) / n);
}

/** How many rms the largest of n Gaussian errors may reach at probability e^-TAIL. */
export function worstTail(n: number): number {
  return Math.sqrt(2 * Math.log(Math.max(n, 1)) + 2 * TAIL);
}

/** Each check's ratio to its bound: at most 1 passes. NaN when C held a non-finite element. */
export interface ErrorRatios {
  norm: number;
  worst: number;
  rows: number;
  worstRow: number;
}

/** The outcome of checking one product. */
export interface AccuracyCheck {
  /** ||C - R||_F / ||R||_F over the checked rows (NaN when C held a non-finite element). */
  relErr: number;
  ratios: ErrorRatios;
  /** Every element finite and every ratio at most 1. */
  passed: boolean;
  /** The check that failed, in words, when one did. */
  failure?: string;
}

const NOT_FINITE: ErrorRatios = { norm: NaN, worst: NaN, rows: NaN, worstRow: NaN };

/**
 * Check C (m x n, float32) against A (m x k) and B (k x n): every element finite, `rows`
 * compared element by element with a float64 reference, and every row through a projection on
 * a random positive vector drawn from `seed`.
 */
export function checkProduct(
  c: ArrayLike<number>,
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  shape: Shape,
  rows: readonly number[],
  numerics: Numerics,
  seed: number,
): AccuracyCheck {
  for (let i = 0; i < shape.m * shape.n; i++) {
    if (!Number.isFinite(c[i])) {
      return {
        relErr: NaN,
        ratios: NOT_FINITE,
        passed: false,
        failure: `element ${i} (row ${Math.floor(i / shape.n)}) is ${
          c[i]
        }: unwritten or overflowed`,
      };
    }
  }
  const bound = {
    relative: errorBound(numerics, shape.k),
    absolute: errorFloor(numerics, shape.k),
  };
  const sampled = compareRows(c, a, b, shape, rows, bound);
  const projected = compareProjection(c, a, b, shape, seed, bound);
  const ratios: ErrorRatios = {
    norm: rms(sampled) / meanSquareTail(sampled.count),
    worst: sampled.worst / worstTail(sampled.count),
    rows: rms(projected) / meanSquareTail(shape.m),
    worstRow: projected.worst / worstTail(shape.m),
  };
  const relErr = sampled.refSquared === 0
    ? Math.sqrt(sampled.squared)
    : Math.sqrt(sampled.squared / sampled.refSquared);
  const over = (Object.keys(ratios) as (keyof ErrorRatios)[]).filter((key) => !(ratios[key] <= 1));
  return {
    relErr,
    ratios,
    passed: over.length === 0,
    ...(over.length
      ? {
        failure: over.map((key) => `${key} error ${ratios[key].toPrecision(3)}x its bound`)
          .join(", "),
      }
      : {}),
  };
}

/** The bound on one element's error: relative to its scale, plus an absolute floor. */
interface ElementBound {
  relative: number;
  absolute: number;
}

/** Errors summed against what the bound allows them. */
interface Comparison {
  /** Sum of squared errors. */
  squared: number;
  /** Sum of the squared errors the bound allows. */
  allowed: number;
  /** Largest error of one element (or row) as a share of what the bound allows it. */
  worst: number;
}

/** Root mean square error as a share of the bound (0 / 0: nothing to be off by). */
function rms({ squared, allowed }: Comparison): number {
  if (allowed === 0) return squared === 0 ? 0 : Infinity;
  return Math.sqrt(squared / allowed);
}

/** Add one error and the square of what the bound allows it. */
function add(into: Comparison, diff: number, allowedSquared: number) {
  into.squared += diff * diff;
  into.allowed += allowedSquared;
  const share = allowedSquared > 0
    ? Math.abs(diff) / Math.sqrt(allowedSquared)
    : diff === 0
    ? 0
    : Infinity;
  if (share > into.worst) into.worst = share;
}

/** The float64 reference of `rows`, element by element, each against its own bound. */
function compareRows(
  c: ArrayLike<number>,
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  shape: Shape,
  rows: readonly number[],
  bound: ElementBound,
): Comparison & { count: number; refSquared: number } {
  const { n } = shape;
  const out = { squared: 0, allowed: 0, worst: 0, count: rows.length * n, refSquared: 0 };
  const ref = new Float64Array(n), scale = new Float64Array(n);
  const floor = bound.absolute ** 2, relative = bound.relative ** 2;
  for (const i of rows) {
    ref.fill(0);
    scale.fill(0);
    referenceRow(a, b, shape, i, ref, scale);
    for (let j = 0; j < n; j++) {
      out.refSquared += ref[j] * ref[j];
      add(out, c[i * n + j] - ref[j], relative * scale[j] + floor);
    }
  }
  return out;
}

/**
 * Freivalds' check in float64: y = C x against z = A (B x) for a random x with entries in
 * [1, 2): positive, so errors of one sign along a row (a bias, a missing term) add up instead of
 * cancelling. Row i's error sum_j e_ij x_j has variance sum_j sigma_ij^2 x_j^2, whose scale is
 * sum_p a_ip^2 sum_j b_pj^2 x_j^2 (plus the floor's share, sum_j x_j^2 times its square).
 */
function compareProjection(
  c: ArrayLike<number>,
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  { m, k, n }: Shape,
  seed: number,
  bound: ElementBound,
): Comparison {
  const next = rng(seed ^ 0x5bd1e995);
  const x = Float64Array.from({ length: n }, () => 1 + next());
  const xSquares = x.reduce((sum, v) => sum + v * v, 0);
  const bx = new Float64Array(k), bSquares = new Float64Array(k);
  for (let p = 0; p < k; p++) {
    let dot = 0, squares = 0;
    for (let j = 0; j < n; j++) {
      const bpj = b[p * n + j];
      dot += bpj * x[j];
      squares += bpj * bpj * x[j] * x[j];
    }
    bx[p] = dot;
    bSquares[p] = squares;
  }
  const out = { squared: 0, allowed: 0, worst: 0 };
  const floor = bound.absolute ** 2 * xSquares, relative = bound.relative ** 2;
  for (let i = 0; i < m; i++) {
    let cx = 0, abx = 0, rowScale = 0;
    for (let j = 0; j < n; j++) cx += c[i * n + j] * x[j];
    for (let p = 0; p < k; p++) {
      const aip = a[i * k + p];
      abx += aip * bx[p];
      rowScale += aip * aip * bSquares[p];
    }
    add(out, cx - abx, relative * rowScale + floor);
  }
  return out;
}
