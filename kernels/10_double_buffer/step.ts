/** Double buffering: the next tile's loads fly while this tile's multiply-adds run. */
import { type KernelSpec, type Params, stepLayout, variantLayout } from "../../lib/steps/spec.ts";
import {
  loadsPerInvocation,
  need,
  switchRule,
  threads8x8,
  tileBytes,
} from "../../lib/steps/tiling.ts";
import { step as subgroupTiling, warpTileInvalid } from "../09_subgroup_tiling/step.ts";
import { doubleBufferFigure } from "./figure.ts";
import { warpTileLoop } from "../../lib/model/loops.ts";

const doubleBufferInvalid = (p: Params) =>
  warpTileInvalid(p) ??
    need(
      [
        loadsPerInvocation(p).every((l) => Number.isInteger(l) && l >= 1 && l <= 4),
        "each invocation must load 1 to 4 whole vec4s of A and of B per tile",
      ],
      [threads8x8(p) <= 512, "at most 512 invocations (1024 leave 64 registers each on NVIDIA)"],
    );

/** A variant's rule: its switch takes one of `values`, and the step's rules hold. */
const withSwitch = (name: string, values: number[]) => (p: Params) =>
  switchRule(p, name, values) ?? doubleBufferInvalid(p);

const layout = stepLayout(import.meta.url);

export const step: KernelSpec = {
  ...subgroupTiling,
  ...layout,
  title: "Double buffering",
  idea: "Prefetch the next tile into registers while computing this one; one barrier per tile.",
  invalid: doubleBufferInvalid,
  workgroupStorageBytes: (p) => tileBytes(p, 2),
  loop: (p) => warpTileLoop(p, 8, 1),
  figure: doubleBufferFigure,
  knob: {
    name: "BM x BN",
    why: "Each invocation keeps the next tile's loads in registers while it computes: LA + LB " +
      "vec4s, 4 at a 64 x 64 tile, 3 at 64 x 128 and 2 at 128 x 128, which also has a quarter " +
      "of the workgroups of 64 x 64.",
    points: [[64, 64], [64, 128], [128, 128]].map(([BM, BN]) => ({ BM, BN })),
  },
};

/**
 * The same kernel with 08's flat mapping in place of 09's subgroup tiles (WARP_TILES = 0): what
 * the tiles buy once the loads overlap the multiply-adds, the question 09 leaves open.
 */
export const flat: KernelSpec = {
  ...step,
  ...variantLayout(layout, "flat"),
  title: "Double buffering, flat mapping",
  idea: "10 with 08's flat mapping instead of 09's subgroup tiles: what the tiles buy here.",
  params: { ...step.params, WARP_TILES: 0 },
  invalid: withSwitch("WARP_TILES", [0, 1]),
  space: undefined,
  knob: undefined,
  demo: true,
};

/**
 * The register prefetch alone (BUFFERS = 1): the next tile's loads still fly during the
 * multiply-adds, but into one copy of each tile, behind a second barrier as in 09. Between 09 and
 * this, the prefetch; between this and the step, the barrier the second copy removes.
 */
export const singleBuffer: KernelSpec = {
  ...step,
  ...variantLayout(layout, "single"),
  title: "Register prefetch, one buffer",
  idea: "10's prefetch with one copy of each tile and 09's two barriers: the prefetch alone.",
  params: { ...step.params, BUFFERS: 1 },
  invalid: withSwitch("BUFFERS", [1, 2]),
  space: undefined,
  knob: undefined,
  demo: true,
};

/**
 * The two copies with the next tile stored before the multiply-adds (STASH_FIRST = 1): its loads
 * are still issued together, but the invocation now waits for them before it computes. Between
 * this and the step, what hiding the loads behind the multiply-adds buys.
 */
export const stashFirst: KernelSpec = {
  ...step,
  ...variantLayout(layout, "stash_first"),
  title: "Double buffering, stored before the multiply-adds",
  idea: "10 with the next tile stored before the multiply-adds: loads issued together, not hidden.",
  params: { ...step.params, STASH_FIRST: 1 },
  invalid: (p) =>
    need([p.BUFFERS === undefined || p.BUFFERS === 2, "STASH_FIRST needs the two copies"]) ??
      withSwitch("STASH_FIRST", [0, 1, 2])(p),
  space: undefined,
  knob: undefined,
  demo: true,
};

/**
 * The stash-first control with its loads in 09's order (STASH_FIRST = 2): each vec4 loaded and
 * stored before the next is loaded, in this kernel's written-out code. Between it and
 * `stashFirst`, only the loads issued together; between it and 09, the code's shape (written-out
 * loads and stores, two copies, one barrier).
 */
export const storedInOrder: KernelSpec = {
  ...stashFirst,
  ...variantLayout(layout, "stored_in_order"),
  title: "Double buffering, loads in 09's order",
  idea: "10's stash-first control with each vec4 loaded and stored in turn, as 09 does.",
  params: { ...step.params, STASH_FIRST: 2 },
};

/**
 * The stored-in-order control with 09's second barrier back (EXTRA_BARRIER = 1): each tile's
 * loads and stores, then a barrier, then the multiply-adds, then a barrier, as in 09, but into
 * two copies. Between it and `storedInOrder`, only the barrier the second copy removes.
 */
export const twoBarriers: KernelSpec = {
  ...storedInOrder,
  ...variantLayout(layout, "two_barriers"),
  title: "Double buffering, loads in 09's order, 09's two barriers",
  idea: "10's stored-in-order control with a barrier before the multiply-adds: two per tile.",
  params: { ...storedInOrder.params, EXTRA_BARRIER: 1 },
  invalid: (p) =>
    need([p.STASH_FIRST === 2, "EXTRA_BARRIER is a control of STASH_FIRST 2"]) ??
      switchRule(p, "EXTRA_BARRIER", [0, 1]) ?? storedInOrder.invalid!(p),
};
