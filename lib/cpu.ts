/**
 * CPU matmuls in plain TypeScript on Float32Arrays, the first rungs of the ladder: the naive ijk
 * loop, the loop-reordered ikj, and a cache-blocked matmul with a block-size parameter (packed
 * panels and a 2x4 register micro-kernel inside each block). Also the lecture's access model
 * and a wall-clock timer (right for CPU code, unlike GPU dispatches).
 *
 * JavaScript arithmetic is float64: the loops below read float32, multiply and add in double,
 * and round to float32 when they store into C.
 */
import { GemmError } from "./errors.ts";
import { checkOperands, freshSeed, randomMatrix, type Shape } from "./matrix.ts";
import { median } from "./timing.ts";

/**
 * Every CPU matmul: row-major A (m x k) and B (k x n) in, a new row-major C (m x n) out (a
 * promise of it from the threaded one).
 */
export type CpuMatmul = (
  a: Float32Array,
  b: Float32Array,
  shape: Shape,
) => Float32Array | Promise<Float32Array>;

/** The lecture's loop nest: one dot product per element of C; B is walked down a column. */
export function naiveMatmul(a: Float32Array, b: Float32Array, shape: Shape): Float32Array {
  checkOperands(shape, a, b);
  const { m, k, n } = shape;
  const c = new Float32Array(m * n);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let sum = 0;
      for (let p = 0; p < k; p++) sum += a[i * k + p] * b[p * n + j];
      c[i * n + j] = sum;
    }
  }
  return c;
}

/** Same arithmetic, loops reordered so the inner loop walks rows of B and C contiguously. */
export function ikjMatmul(a: Float32Array, b: Float32Array, shape: Shape): Float32Array {
  checkOperands(shape, a, b);
  const { m, k, n } = shape;
  const c = new Float32Array(m * n);
  for (let i = 0; i < m; i++) {
    const cRow = i * n;
    for (let p = 0; p < k; p++) {
      const aip = a[i * k + p];
      const bRow = p * n;
      for (let j = 0; j < n; j++) c[cRow + j] += aip * b[bRow + j];
    }
  }
  return c;
}

/**
 * Rows (MR) and columns (NR) of C one micro-kernel call keeps in local variables. 2x4 needs 8
 * sums, 4 values of B and 2 of A: 14 doubles, within the 16 float registers of x64 (V8 uses no
 * wider vectors here); a 4x4 tile needs 24 and spills to the stack.
 */
const MR = 2;
const NR = 4;

/** The block size the suite and notebooks use when none is given. */
export const DEFAULT_BLOCK = 256;

/**
 * Cache-blocked C = A * B: the i, j and k ranges are cut into `block`-sized pieces so one block
 * of A, B and C stays in cache while it is reused. `block` 0 means one block spans the whole
 * matrix: the same packed micro-kernel without cache blocking. Any shape works, including sizes that are not multiples of the block.
 * Blocks of at least 4 are packed into contiguous panels and multiplied by a 2x4 register
 * micro-kernel; smaller blocks (1-3) run the lecture's scalar loops, all loop overhead.
 */
export function blockedMatmul(
  a: Float32Array,
  b: Float32Array,
  shape: Shape,
  block: number = DEFAULT_BLOCK,
): Float32Array {
  checkOperands(shape, a, b);
  if (!Number.isInteger(block) || block < 0) {
    throw new GemmError("params", `block must be a non-negative integer, got ${block}`);
  }
  const { m, k, n } = shape;
  if (block === 0) return packedBlocked(a, b, m, k, n, m, n, k);
  if (block < 4) return scalarBlocked(a, b, m, k, n, block);
  return packedBlocked(a, b, m, k, n, block, block, block);
}

/** `blockedMatmul` with the block fixed, as a CpuMatmul (for timers and tables). */
export function blockedWith(block: number): CpuMatmul {
  return (a, b, shape) => blockedMatmul(a, b, shape, block);
}

/**
 * The lecture's blocked loop nest, with its bug fixed: the k loop stops at the end of the
 * current k block (the slide runs it to Width, redoing the rest of the sum in every block).
 */
function scalarBlocked(
  a: Float32Array,
  b: Float32Array,
  m: number,
  k: number,
  n: number,
  block: number,
): Float32Array {
  const c = new Float32Array(m * n);
  for (let ii = 0; ii < m; ii += block) {
    const iEnd = Math.min(ii + block, m);
    for (let jj = 0; jj < n; jj += block) {
      const jEnd = Math.min(jj + block, n);
      for (let kk = 0; kk < k; kk += block) {
        const kEnd = Math.min(kk + block, k);
        for (let i = ii; i < iEnd; i++) {
          for (let j = jj; j < jEnd; j++) {
            let sum = 0;
            for (let p = kk; p < kEnd; p++) sum += a[i * k + p] * b[p * n + j];
            c[i * n + j] += sum;
          }
        }
      }
    }
  }
  return c;
}

/**
 * GotoBLAS-style blocking: for each k block and column block, pack B's block into NR-column
 * panels (read once, contiguously, by every micro-kernel call); for each row block, pack A's
 * block into MR-row panels; then sweep MR x NR tiles of C. Panels are float64 (the float32
 * values, converted once while packing instead of on every load) and zero-padded to whole
 * tiles so the micro-kernel never branches; only the write-back clips to the real matrix.
 */
function packedBlocked(
  a: Float32Array,
  b: Float32Array,
  m: number,
  k: number,
  n: number,
  mBlock: number,
  nBlock: number,
  kBlock: number,
): Float32Array {
  const c = new Float32Array(m * n);
  const kMax = Math.min(kBlock, k);
  const aPack = new Float64Array(roundUp(Math.min(mBlock, m), MR) * kMax);
  const bPack = new Float64Array(roundUp(Math.min(nBlock, n), NR) * kMax);
  for (let kk = 0; kk < k; kk += kBlock) {
    const kc = Math.min(kBlock, k - kk);
    for (let jj = 0; jj < n; jj += nBlock) {
      const nc = Math.min(nBlock, n - jj);
      packB(b, n, kk, kc, jj, nc, bPack);
      for (let ii = 0; ii < m; ii += mBlock) {
        const mc = Math.min(mBlock, m - ii);
        packA(a, k, ii, mc, kk, kc, aPack);
        multiplyPanels(aPack, bPack, mc, nc, kc, c, n, ii * n + jj);
      }
    }
  }
  return c;
}

function roundUp(x: number, to: number): number {
  return Math.ceil(x / to) * to;
}

/** B[kk.., jj..] (kc x nc) as NR-wide column panels: panel s, step p at s*kc + p*NR. */
function packB(
  b: Float32Array,
  n: number,
  kk: number,
  kc: number,
  jj: number,
  nc: number,
  out: Float64Array,
): void {
  for (let s = 0; s < nc; s += NR) {
    const cols = Math.min(NR, nc - s);
    let o = s * kc;
    for (let p = 0; p < kc; p++) {
      const src = (kk + p) * n + jj + s;
      for (let r = 0; r < NR; r++) out[o + r] = r < cols ? b[src + r] : 0;
      o += NR;
    }
  }
}

/** A[ii.., kk..] (mc x kc) as MR-tall row panels: panel q, step p at q*kc + p*MR. */
function packA(
  a: Float32Array,
  k: number,
  ii: number,
  mc: number,
  kk: number,
  kc: number,
  out: Float64Array,
): void {
  for (let q = 0; q < mc; q += MR) {
    const rows = Math.min(MR, mc - q);
    let o = q * kc;
    const src = (ii + q) * k + kk;
    for (let p = 0; p < kc; p++) {
      for (let r = 0; r < MR; r++) out[o + r] = r < rows ? a[src + r * k + p] : 0;
      o += MR;
    }
  }
}

/**
 * C[block] += packed A * packed B, one 2x4 tile of C at a time. The 8 sums stay in registers
 * for the whole k block: each step loads 2 values of A and 4 of B for 8 multiply-adds, where
 * the ikj loop loads B and loads and stores C for every one.
 */
function multiplyPanels(
  aPack: Float64Array,
  bPack: Float64Array,
  mc: number,
  nc: number,
  kc: number,
  c: Float32Array,
  n: number,
  cBlock: number,
): void {
  for (let q = 0; q < mc; q += MR) {
    const rows = Math.min(MR, mc - q);
    for (let s = 0; s < nc; s += NR) {
      const cols = Math.min(NR, nc - s);
      let c00 = 0, c01 = 0, c02 = 0, c03 = 0;
      let c10 = 0, c11 = 0, c12 = 0, c13 = 0;
      let ai = q * kc;
      let bi = s * kc;
      const aEnd = ai + MR * kc;
      while (ai < aEnd) {
        const b0 = bPack[bi], b1 = bPack[bi + 1], b2 = bPack[bi + 2], b3 = bPack[bi + 3];
        const x0 = aPack[ai], x1 = aPack[ai + 1];
        c00 += x0 * b0, c01 += x0 * b1, c02 += x0 * b2, c03 += x0 * b3;
        c10 += x1 * b0, c11 += x1 * b1, c12 += x1 * b2, c13 += x1 * b3;
        ai += MR;
        bi += NR;
      }
      const o = cBlock + q * n + s;
      if (cols === NR) {
        c[o] += c00, c[o + 1] += c01, c[o + 2] += c02, c[o + 3] += c03;
        if (rows === MR) {
          c[o + n] += c10, c[o + n + 1] += c11, c[o + n + 2] += c12, c[o + n + 3] += c13;
        }
      } else {
        const tile = [c00, c01, c02, c03, c10, c11, c12, c13];
        for (let r = 0; r < rows; r++) {
          for (let col = 0; col < cols; col++) c[o + r * n + col] += tile[r * NR + col];
        }
      }
    }
  }
}

/**
 * The lecture's operation and access counts for C = A * B (seed lecture 04, "Analysis" slide,
 * for square N; here M, K, N): f = 2MNK FLOPs; with a perfect cache each element of A, B and C
 * moves once (3N^2 unique accesses, so r = f / m = 2N^3 / 3N^2 = O(N)); with no cache every
 * inner step loads A and B and loads and stores C: 4 accesses per 2 FLOPs (4N^3, r = 1/2).
 */
export interface CpuAccessModel {
  flops: number;
  /** Elements touched once each: MK + KN + MN (3N^2). */
  uniqueAccesses: number;
  /** Every inner-step access: 4MNK (4N^3). */
  allAccesses: number;
  /** FLOP per element access with perfect caching (O(N)) and with none (1/2). */
  intensityUnique: number;
  intensityAll: number;
  /** The same in FLOP per byte of float32 (the lecture's 1/8 for the no-cache case). */
  flopsPerByteUnique: number;
  flopsPerByteAll: number;
}

/** The lecture's model for a shape (or a square size N). */
export function cpuAccessModel(shape: Shape | number): CpuAccessModel {
  const { m, k, n } = typeof shape === "number" ? { m: shape, k: shape, n: shape } : shape;
  const flops = 2 * m * n * k;
  const uniqueAccesses = m * k + k * n + m * n;
  const allAccesses = 4 * m * n * k;
  return {
    flops,
    uniqueAccesses,
    allAccesses,
    intensityUnique: flops / uniqueAccesses,
    intensityAll: flops / allAccesses,
    flopsPerByteUnique: flops / (4 * uniqueAccesses),
    flopsPerByteAll: flops / (4 * allAccesses),
  };
}

/** Model rows for the CPU chart: FLOPs, unique and all accesses at each square size. */
export function cpuModelRows(
  sizes: readonly number[],
): { n: number; series: string; value: number }[] {
  return sizes.flatMap((n) => {
    const model = cpuAccessModel(n);
    return [
      { n, series: "FLOPs (2N³)", value: model.flops },
      { n, series: "unique accesses (3N²)", value: model.uniqueAccesses },
      { n, series: "all accesses (4N³)", value: model.allAccesses },
    ];
  });
}

/** Wall-clock timing of a CPU matmul (performance.now around each call). */
export interface CpuTiming {
  medianMs: number;
  minMs: number;
  maxMs: number;
  reps: number;
  samplesMs: number[];
  method: "performance.now";
}

export interface CpuTimingOptions {
  /** Inputs to multiply; fresh random matrices by default. */
  a?: Float32Array;
  b?: Float32Array;
  /** Untimed calls first (JIT warm-up); default 1. */
  warmup?: number;
  /** Stop after this much timed work even if fewer than `reps` ran (at least one always runs). */
  budgetMs?: number;
}

/** Time `fn` on `shape`: warm-up calls, then up to `reps` timed calls; median, min, max. */
export async function timeCpu(
  fn: CpuMatmul,
  shape: Shape,
  reps = 5,
  opts: CpuTimingOptions = {},
): Promise<CpuTiming> {
  const seed = freshSeed();
  const a = opts.a ?? randomMatrix(shape.m, shape.k, seed);
  const b = opts.b ?? randomMatrix(shape.k, shape.n, seed ^ 0x9e3779b9);
  checkOperands(shape, a, b);
  for (let w = 0; w < (opts.warmup ?? 1); w++) await fn(a, b, shape);
  const samplesMs: number[] = [];
  const budget = opts.budgetMs ?? Infinity;
  let spent = 0;
  while (samplesMs.length < Math.max(1, reps) && (samplesMs.length === 0 || spent < budget)) {
    const start = performance.now();
    await fn(a, b, shape);
    const ms = performance.now() - start;
    samplesMs.push(ms);
    spent += ms;
  }
  return {
    medianMs: median(samplesMs),
    minMs: Math.min(...samplesMs),
    maxMs: Math.max(...samplesMs),
    reps: samplesMs.length,
    samplesMs,
    method: "performance.now",
  };
}
