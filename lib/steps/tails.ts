/**
 * The shapes that reach every tail of a kernel: a partial last k tile, K smaller than one tile,
 * K = 1, partial tiles at the bottom and right edges (and edge strips where the kernel hands
 * thin edges to the strip kernel), M = 1 and N = 1. Derived from the kernel's own tile sizes
 * and padding, so a new step, or a new point of a search space, gets its tails without a list
 * to keep up to date. Tests, fuzz and the bench's validation sweep all start from these.
 */
import type { Shape } from "../matrix.ts";
import { paddedSize, STRIP_WIDTH } from "./launch.ts";
import type { KernelSpec, Params } from "./spec.ts";

/** A shape and the tail it reaches. */
export interface TailShape {
  shape: Shape;
  why: string;
}

/** The tile sizes a kernel's tails depend on (1 where the kernel has no such tile). */
export interface TileSizes {
  m: number;
  n: number;
  k: number;
}

/**
 * Rows, columns and depth of one tile: BM, BN, BK for the blocked kernels, TILE for the
 * square-tiled one, the workgroup's size for kernels with one output per invocation.
 */
export function tileOf(spec: Pick<KernelSpec, "workgroupSize">, p: Params): TileSizes {
  const [x, y] = spec.workgroupSize(p);
  return {
    m: p.BM ?? p.TILE ?? y,
    n: p.BN ?? p.TILE ?? x,
    k: p.BK ?? p.TILE ?? 1,
  };
}

/**
 * The smallest K in `from..to` (stepping by `step`) that, once padded to the kernel's K
 * alignment, leaves a partial last k tile; undefined when padding always makes whole tiles.
 */
function partialK(from: number, to: number, step: number, tileK: number, alignK: number) {
  for (let k = from; step > 0 ? k <= to : k >= to; k += step) {
    if (k >= 1 && paddedSize(k, alignK) % tileK !== 0) return k;
  }
  return undefined;
}

/** Every tail of `spec` with parameters `p`, each shape named for what it reaches. */
export function tailShapes(
  spec: Pick<KernelSpec, "workgroupSize" | "align">,
  p: Params,
): TailShape[] {
  const tile = tileOf(spec, p);
  const align = spec.align(p);
  // Past a whole number of tiles by more than a strip: bounds-checked edge tiles.
  const edgeM = 2 * tile.m + STRIP_WIDTH + 1, edgeN = 2 * tile.n + STRIP_WIDTH + 1;
  // One past a tile: an edge strip where the kernel allows them, else a one-row edge tile.
  const stripM = tile.m + 1, stripN = tile.n + 1;
  // Two whole k tiles and a part of one; K below one tile.
  const lastK = partialK(2 * tile.k + 1, 3 * tile.k - 1, 1, tile.k, align.k);
  const shortK = partialK(tile.k - 1, 1, -1, tile.k, align.k);
  const wholeK = 2 * tile.k;
  const tails: TailShape[] = [
    {
      shape: { m: edgeM, k: lastK ?? wholeK + 1, n: edgeN },
      why: lastK
        ? "partial last k tile, partial bottom and right tiles"
        : "partial bottom and right tiles (padding makes every k tile whole)",
    },
    {
      shape: { m: stripM, k: shortK ?? 1, n: stripN },
      why: shortK
        ? "K smaller than one k tile, one row and column past a tile"
        : "K = 1, one row and column past a tile",
    },
    { shape: { m: stripM + 2, k: 1, n: edgeN }, why: "K = 1" },
    { shape: { m: 1, k: lastK ?? wholeK + 1, n: edgeN }, why: "M = 1" },
    { shape: { m: edgeM, k: lastK ?? wholeK + 1, n: 1 }, why: "N = 1" },
    { shape: { m: tile.m, k: wholeK, n: tile.n }, why: "one whole tile, whole k tiles" },
  ];
  return tails;
}
