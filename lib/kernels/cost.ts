/**
 * FLOP and global-memory byte models shared by the kernel entries. Each model counts what the
 * kernel's tiling makes it load from global memory, plus the padding copies the runner adds.
 */
import type { Shape } from "../matrix.ts";
import { flops } from "../matrix.ts";
import type { CostModel } from "../registry.ts";

export const ceilDiv = (a: number, b: number): number => Math.ceil(a / b);
const roundUp = (x: number, to: number) => ceilDiv(x, to) * to;

/** Elements per 128-byte cache line of f32: where padded rows start. */
const LINE = 32;

/**
 * The size the runner pads a dimension to for a kernel that needs multiples of `align`: left
 * alone when it already is one, else rounded up to a whole number of 128-byte lines, so every
 * padded row starts on a cache line (rows 16 bytes off a line cost extra sectors per tile load).
 */
export function paddedSize(x: number, align: number): number {
  if (x % align === 0) return x;
  return roundUp(x, (align * LINE) / gcd(align, LINE));
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/** Relative-error tolerance for float32 storage and accumulation. */
export const F32_TOLERANCE = 1e-4;

/**
 * The naive model with no cache: every multiply-add loads one element of A and one of B from
 * global memory, and each C element is stored once. Intensity: 2 FLOP / 8 bytes = 1/4.
 */
export function naiveModel(s: Shape): CostModel {
  return { flops: flops(s), bytes: 4 * (2 * s.m * s.n * s.k + s.m * s.n) };
}

/** A kernel that tiles C into BM x BN blocks loads A N/BN times and B M/BM times. */
export function tiledModel(s: Shape, bm: number, bn: number, bytesPer = 4): CostModel {
  const aLoads = s.m * s.k * ceilDiv(s.n, bn);
  const bLoads = s.k * s.n * ceilDiv(s.m, bm);
  return { flops: flops(s), bytes: bytesPer * (aLoads + bLoads + s.m * s.n) };
}

/**
 * tiledModel on the dimensions the runner pads to (`align`), plus the padding copies' traffic
 * (each copied matrix read once and written once). FLOPs stay those of the real shape.
 * `padsC` false: the kernel writes the real M x N of C itself (KernelSpec.unpaddedC).
 */
export function paddedTiledModel(
  s: Shape,
  bm: number,
  bn: number,
  align: { m: number; k: number; n: number },
  padsC = true,
): CostModel {
  const p = {
    m: paddedSize(s.m, align.m),
    k: paddedSize(s.k, align.k),
    n: paddedSize(s.n, align.n),
  };
  const loads = tiledModel(p, bm, bn).bytes - 4 * p.m * p.n;
  let copies = 0;
  if (p.m !== s.m || p.k !== s.k) copies += s.m * s.k + p.m * p.k;
  if (p.k !== s.k || p.n !== s.n) copies += s.k * s.n + p.k * p.n;
  const padded = p.m !== s.m || p.k !== s.k || p.n !== s.n;
  const cStores = padsC ? p.m * p.n : s.m * s.n;
  if (padsC && padded) copies += p.m * p.n + s.m * s.n;
  return { flops: flops(s), bytes: loads + 4 * (cStores + copies) };
}
