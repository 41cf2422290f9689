/**
 * FLOP and global-memory byte models shared by the kernel entries, and the launch plan (padding,
 * copies, tile grid, edge strips) that the runner dispatches and the models count. Each model
 * counts what the kernel's tiling makes it load from global memory, plus the runner's copies.
 */
import { GemmError } from "../errors.ts";
import { flops, type Shape } from "../matrix.ts";
import type { CostModel, KernelSpec, Params } from "./spec.ts";

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
 * The edge-strip kernel's geometry, mirrored from kernels/edge_strips.wgsl (its WIDTH, LANES and
 * GROUPS; tests/launch_plan_test.ts checks they agree). It is fixed there: the kernel's staging
 * and sums are written for these values.
 */
export const EDGE_STRIPS_FILE = "edge_strips.wgsl";
/**
 * The most rows or columns past the last whole tile that go to the edge-strip kernel instead of
 * one more row or column of tiles (WIDTH).
 */
export const STRIP_WIDTH = 8;
/** Columns of the bottom strip one workgroup of the edge-strip kernel covers (LANES). */
export const STRIP_COLUMNS = 32;
/** Rows of the right strip one workgroup of the edge-strip kernel covers (GROUPS). */
export const STRIP_ROWS = 8;

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

/** A copy the runner dispatches around the kernel: rows x cols into toRows x toCols, zero-filled. */
export interface PaddingCopy {
  label: "pad A" | "pad B" | "unpad C";
  rows: number;
  cols: number;
  toRows: number;
  toCols: number;
}

/** What launching a kernel on a shape takes: the runner dispatches it, the cost model counts it. */
export interface LaunchPlan {
  /** Dimensions of the A, B and C the kernel's tiles read and write (padded where it needs). */
  padded: Shape;
  /** Copies into zero-padded A and B before the tiles, and C back to its real size after. */
  copies: PaddingCopy[];
  /** The kernel writes a padded copy of C ("unpad C" copies it back). */
  paddedC: boolean;
  /** The part of the padded problem the kernel's tiles cover: all, or the whole tiles only. */
  tiles: Shape;
  /** The kernel's workgroup grid over `tiles` (any zero: no tile dispatch). */
  grid: [number, number, number];
  /** Thin edges handed to the edge-strip kernel; absent when there are none. */
  edgeStrips?: EdgePlan;
  /** The edge-strip kernel's workgroups: the bottom strip's first, then the right strip's. */
  stripGroups: { bottom: number; right: number };
  /**
   * Partial products of a split-K launch (1: none). With more, the tiles write `slices` partial
   * Cs into a workspace and a "sum slices" dispatch adds them over `tiles` (rows x columns).
   */
  slices: number;
}

/** The parts of a kernel's description its launch plan depends on. */
export type LaunchSpec = Pick<
  KernelSpec,
  "id" | "align" | "dispatch" | "unpaddedC" | "edgeStrips" | "precision" | "slices"
>;

/** Whether a kernel with these parameters may hand thin edges to the edge-strip kernel. */
export function hasEdgeStrips(spec: Pick<KernelSpec, "edgeStrips">, params: Params): boolean {
  return typeof spec.edgeStrips === "function" ? spec.edgeStrips(params) : !!spec.edgeStrips;
}

/**
 * The launch plan of `spec` with `params` on `shape`: which dimensions are padded to the
 * kernel's multiples (and so which copies run), the tile grid, and the edge strips (when the
 * kernel allows them and `edgeStrips` is not false). Throws a GemmError for a spec whose
 * padding and strips do not fit together.
 */
export function launchPlan(
  spec: LaunchSpec,
  params: Params,
  shape: Shape,
  edgeStrips = true,
): LaunchPlan {
  const { m, k, n } = shape;
  const align = spec.align(params);
  const padded = {
    m: paddedSize(m, align.m),
    k: paddedSize(k, align.k),
    n: paddedSize(n, align.n),
  };
  const isPadded = padded.m !== m || padded.k !== k || padded.n !== n;
  if (isPadded && spec.precision !== "f32") {
    throw new GemmError("params", `${spec.id}: padding is implemented for 4-byte elements`);
  }
  if (spec.unpaddedC && align.m !== 1) {
    throw new GemmError("params", `${spec.id}: unpaddedC needs align m = 1`);
  }
  const paddedC = isPadded && !spec.unpaddedC;
  const copies: PaddingCopy[] = [];
  if (padded.m !== m || padded.k !== k) {
    copies.push({ label: "pad A", rows: m, cols: k, toRows: padded.m, toCols: padded.k });
  }
  if (padded.k !== k || padded.n !== n) {
    copies.push({ label: "pad B", rows: k, cols: n, toRows: padded.k, toCols: padded.n });
  }
  if (paddedC) {
    copies.push({ label: "unpad C", rows: padded.m, cols: padded.n, toRows: m, toCols: n });
  }
  let strips: EdgePlan | undefined;
  if (edgeStrips && hasEdgeStrips(spec, params)) {
    const plan = edgePlan(shape, params.BM, params.BN);
    if (plan.rowsFrom < m || plan.colsFrom < n) strips = plan;
  }
  if (strips && (paddedC || align.m !== 1)) {
    throw new GemmError("params", `${spec.id}: edge strips need C at its real size`);
  }
  // With edge strips the tiles cover only the whole ones in that dimension.
  const tiles = {
    m: strips && strips.rowsFrom < m ? strips.rowsFrom : padded.m,
    k: padded.k,
    n: strips && strips.colsFrom < n ? strips.colsFrom : padded.n,
  };
  const slices = spec.slices?.(params) ?? 1;
  if (!Number.isInteger(slices) || slices < 1) {
    throw new GemmError("params", `${spec.id}: ${slices} slices of K`);
  }
  return {
    padded,
    copies,
    paddedC,
    tiles,
    grid: spec.dispatch(tiles, params),
    slices,
    ...(strips ? { edgeStrips: strips } : {}),
    stripGroups: {
      bottom: strips && strips.rowsFrom < m ? ceilDiv(n, STRIP_COLUMNS) : 0,
      right: strips && strips.colsFrom < n ? ceilDiv(strips.rowsFrom, STRIP_ROWS) : 0,
    },
  };
}

/**
 * The traffic of a BM x BN tiled kernel under its launch plan: its tiles' loads over the part
 * they cover, the edge-strip kernel's loads, C's stores, and the padding copies (each copied
 * matrix read once and written once). FLOPs stay those of the real shape.
 */
export function launchModel(spec: LaunchSpec, s: Shape, p: Params): CostModel {
  const plan = launchPlan(spec, p, s);
  let loads = tileLoads(plan.tiles, p.BM, p.BN);
  if (plan.edgeStrips) {
    // Per workgroup of the bottom strip: the strip's rows of A and STRIP_COLUMNS columns of B;
    // per workgroup of the right strip: STRIP_ROWS rows of A and the strip's columns of B.
    const rows = s.m - plan.edgeStrips.rowsFrom, cols = s.n - plan.edgeStrips.colsFrom;
    if (rows > 0) loads += plan.stripGroups.bottom * rows * s.k + s.k * s.n;
    if (cols > 0) {
      loads += plan.edgeStrips.rowsFrom * s.k + plan.stripGroups.right * s.k * cols;
    }
  }
  let cStores = plan.paddedC ? plan.padded.m * plan.padded.n : s.m * s.n;
  if (plan.slices > 1) {
    // Each slice stores its partial C over the tiles; the sum reads them all and stores C.
    const summed = Math.min(plan.tiles.m, s.m) * Math.min(plan.tiles.n, s.n);
    cStores += (2 * plan.slices) * summed;
  }
  const copies = plan.copies.reduce((sum, c) => sum + c.rows * c.cols + c.toRows * c.toCols, 0);
  return { flops: flops(s), bytes: 4 * (loads + cStores + copies) };
}
