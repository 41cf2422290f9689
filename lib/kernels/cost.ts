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

/** Elements a BM x BN tiling of an m x k x n product loads: A n/BN times, B m/BM times. */
function tileLoads(s: Shape, bm: number, bn: number): number {
  return s.m * s.k * ceilDiv(s.n, bn) + s.k * s.n * ceilDiv(s.m, bm);
}

/** A kernel that tiles C into BM x BN blocks loads A N/BN times and B M/BM times. */
export function tiledModel(s: Shape, bm: number, bn: number, bytesPer = 4): CostModel {
  return { flops: flops(s), bytes: bytesPer * (tileLoads(s, bm, bn) + s.m * s.n) };
}

/**
 * The most rows or columns past the last whole tile that go to the edge-strip kernel
 * (kernels/edge_strips.wgsl, WIDTH) instead of one more row or column of tiles.
 */
export const STRIP_WIDTH = 8;

/**
 * Where a BM x BN kernel's whole tiles stop and the edge strips start: `rowsFrom` is the first
 * row of the bottom strip, `colsFrom` the first column of the right strip (M and N when there is
 * none). A dimension that ends 1..STRIP_WIDTH past a tile multiple gets a strip; one that ends
 * further past keeps its bounds-checked edge tiles, which then do enough work to be worth it.
 */
export interface EdgePlan {
  rowsFrom: number;
  colsFrom: number;
}

export function edgePlan(s: Shape, bm: number, bn: number): EdgePlan {
  const thin = (x: number, tile: number) => {
    const rest = x % tile;
    return rest > 0 && rest <= STRIP_WIDTH ? x - rest : x;
  };
  return { rowsFrom: thin(s.m, bm), colsFrom: thin(s.n, bn) };
}

/**
 * Elements the edge-strip kernel loads: per workgroup of 32 columns of the bottom strip, the
 * strip's rows of A and 32 columns of B; per workgroup of 8 rows of the right strip, 8 rows of A
 * and the strip's columns of B.
 */
export function edgeStripLoads(s: Shape, plan: EdgePlan): number {
  const rows = s.m - plan.rowsFrom, cols = s.n - plan.colsFrom;
  const bottom = rows > 0 ? ceilDiv(s.n, 32) * rows * s.k + s.k * s.n : 0;
  const right = cols > 0 ? plan.rowsFrom * s.k + ceilDiv(plan.rowsFrom, 8) * s.k * cols : 0;
  return bottom + right;
}

/**
 * tiledModel on the dimensions the runner pads to (`align`), plus the padding copies' traffic
 * (each copied matrix read once and written once). FLOPs stay those of the real shape.
 * `padsC` false: the kernel writes the real M x N of C itself (KernelSpec.unpaddedC).
 * `edgeStrips`: thin edges go to the edge-strip kernel (KernelSpec.edgeStrips), so the tiles
 * cover only the whole ones in that dimension.
 */
export function paddedTiledModel(
  s: Shape,
  bm: number,
  bn: number,
  align: { m: number; k: number; n: number },
  padsC = true,
  edgeStrips = false,
): CostModel {
  const p = {
    m: paddedSize(s.m, align.m),
    k: paddedSize(s.k, align.k),
    n: paddedSize(s.n, align.n),
  };
  let loads = tileLoads(p, bm, bn);
  if (edgeStrips) {
    const plan = edgePlan(s, bm, bn);
    const tiles = {
      m: plan.rowsFrom < s.m ? plan.rowsFrom : p.m,
      k: p.k,
      n: plan.colsFrom < s.n ? plan.colsFrom : p.n,
    };
    loads = tileLoads(tiles, bm, bn) + edgeStripLoads(s, plan);
  }
  let copies = 0;
  if (p.m !== s.m || p.k !== s.k) copies += s.m * s.k + p.m * p.k;
  if (p.k !== s.k || p.n !== s.n) copies += s.k * s.n + p.k * p.n;
  const padded = p.m !== s.m || p.k !== s.k || p.n !== s.n;
  const cStores = padsC ? p.m * p.n : s.m * s.n;
  if (padsC && padded) copies += p.m * p.n + s.m * s.n;
  return { flops: flops(s), bytes: 4 * (loads + cStores + copies) };
}
