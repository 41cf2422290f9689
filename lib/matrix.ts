/**
 * Matrices as flat row-major Float32Arrays, seeded random fills, shape checks and the error
 * norm every kernel is judged by.
 */
import { ShapeError } from "./errors.ts";

/** C (m x n) = A (m x k) * B (k x n). */
export interface Shape {
  m: number;
  k: number;
  n: number;
}

/** The operation count every GFLOP/s figure uses: one multiply and one add per (i, j, p). */
/** The n x n x n shape. */
export function square(n: number): Shape {
  return { m: n, k: n, n };
}

export function flops({ m, n, k }: Shape): number {
  return 2 * m * n * k;
}

/** "MxKxN", the notation of `--shape`. */
export function shapeLabel({ m, k, n }: Shape): string {
  return m === n && n === k ? `${m}` : `${m}x${k}x${n}`;
}

/** Throws a ShapeError unless every dimension is a positive integer. */
export function checkShape(shape: Shape): Shape {
  for (const dim of ["m", "k", "n"] as const) {
    const v = shape[dim];
    if (typeof v !== "number" || !Number.isInteger(v) || v < 1) {
      throw new ShapeError(`${dim} must be a positive integer, got ${v}`);
    }
    if (v > 2 ** 20) {
      throw new ShapeError(`${dim} = ${v} is larger than this package supports (2^20)`);
    }
  }
  return shape;
}

/** Throws a ShapeError unless A, B (and C if given) have the lengths the shape implies. */
export function checkOperands(shape: Shape, a: ArrayLike<number>, b: ArrayLike<number>): void {
  checkShape(shape);
  const { m, k, n } = shape;
  if (a.length !== m * k) {
    throw new ShapeError(`A has ${a.length} elements, expected m*k = ${m * k}`);
  }
  if (b.length !== k * n) {
    throw new ShapeError(`B has ${b.length} elements, expected k*n = ${k * n}`);
  }
}

/** Small, fast, seedable PRNG (mulberry32); returns floats in [0, 1). */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A fresh seed from the OS: every check draws new inputs unless a seed is given. */
export function freshSeed(): number {
  return crypto.getRandomValues(new Uint32Array(1))[0];
}

/** A rows x cols matrix with entries uniform in [-1, 1). Never zeros: zeros hide bugs. */
export function randomMatrix(rows: number, cols: number, seed: number = freshSeed()): Float32Array {
  const next = rng(seed);
  const out = new Float32Array(rows * cols);
  for (let i = 0; i < out.length; i++) out[i] = next() * 2 - 1;
  return out;
}

/**
 * Relative error norm ||C - R||_F / ||R||_F over the given rows (all rows by default).
 * Returns NaN if C holds any NaN or infinity, so a NaN can never pass a `<` threshold.
 */
export function relativeError(
  c: ArrayLike<number>,
  ref: ArrayLike<number>,
  n: number,
  rows?: readonly number[],
): number {
  let diff = 0;
  let norm = 0;
  const rowList = rows ?? Array.from({ length: ref.length / n }, (_, i) => i);
  for (const i of rowList) {
    for (let j = 0; j < n; j++) {
      const x = c[i * n + j];
      if (!Number.isFinite(x)) return NaN;
      const r = ref[i * n + j];
      diff += (x - r) * (x - r);
      norm += r * r;
    }
  }
  return norm === 0 ? Math.sqrt(diff) : Math.sqrt(diff / norm);
}

/**
 * `count` distinct row indices in [0, m): the first and the last row, and one random row in each
 * of `count - 2` equal bands between them, so the sample spreads over every part of C.
 */
export function sampleRows(m: number, count: number, seed: number = freshSeed()): number[] {
  if (count >= m) return Array.from({ length: m }, (_, i) => i);
  const next = rng(seed);
  const rows = [0];
  const bands = Math.max(0, count - 2), inner = m - 2;
  for (let b = 0; b < bands; b++) {
    const from = Math.floor((b * inner) / bands), to = Math.floor(((b + 1) * inner) / bands);
    rows.push(1 + from + Math.floor(next() * (to - from)));
  }
  if (count > 1) rows.push(m - 1);
  return rows;
}

/** Whether two products have the same M, K and N. */
export const sameShape = (a: Shape, b: Shape): boolean => a.m === b.m && a.k === b.k && a.n === b.n;

/** The distinct shapes of a list, first occurrence first. */
export function uniqueShapes(shapes: Shape[]): Shape[] {
  return shapes.filter((s, i) => shapes.findIndex((t) => sameShape(s, t)) === i);
}
