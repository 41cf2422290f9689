/** Workgroup tiles, and the two teaching variants that each drop one of its barriers. */
import { ceilDiv, tiledModel } from "../../lib/steps/launch.ts";
import { F32_NUMERICS } from "../../lib/accuracy.ts";
import { type KernelSpec, stepLayout, variantLayout } from "../../lib/steps/spec.ts";
import { ANY, F32, need } from "../../lib/steps/tiling.ts";
import { tiledFigure } from "../../lib/figures/tiles.ts";
import { sharedTileLoop } from "../../lib/model/loops.ts";

const layout = stepLayout(import.meta.url);

export const step: KernelSpec = {
  ...layout,
  title: "Workgroup tiles",
  idea: "Stage TILE x TILE tiles of A and B in workgroup memory, guarded by two barriers.",
  entryPoint: "main",
  params: { TILE: 16, RAW_BARRIER: 1, WAR_BARRIER: 1 },
  space: { TILE: [8, 16, 32] },
  invalid: (p) => need([p.TILE * p.TILE <= 1024, "TILE * TILE must be at most 1024"]),
  workgroupSize: (p) => [p.TILE, p.TILE, 1],
  dispatch: (s, p) => [ceilDiv(s.n, p.TILE), ceilDiv(s.m, p.TILE), 1],
  workgroupStorageBytes: (p) => 2 * p.TILE * p.TILE * F32,
  align: () => ANY,
  model: (s, p) => tiledModel(s, p.TILE, p.TILE),
  requiredFeatures: [],
  precision: "f32",
  numerics: F32_NUMERICS,
  loop: sharedTileLoop,
  figure: tiledFigure,
  knob: {
    name: "TILE",
    why: "Each element staged in workgroup memory is used TILE times, so global traffic falls " +
      "as 1 / TILE; a larger tile also has more invocations waiting at each barrier.",
    points: [8, 16, 32].map((TILE) => ({ TILE })),
  },
};

/** Without the read-after-write barrier: invocations read tiles others have not written. */
export const noRawBarrier: KernelSpec = {
  ...step,
  ...variantLayout(layout, "no_raw_barrier"),
  title: "Tiles, RAW barrier missing (broken on purpose)",
  idea: "Drop the barrier between writing a tile and reading it: a race the validation catches.",
  params: { ...step.params, RAW_BARRIER: 0 },
  space: undefined,
  knob: undefined,
  demo: true,
};

/** Without the write-after-read barrier: the next tile overwrites one still being read. */
export const noWarBarrier: KernelSpec = {
  ...step,
  ...variantLayout(layout, "no_war_barrier"),
  title: "Tiles, WAR barrier missing (broken on purpose)",
  idea: "Drop the barrier before overwriting a tile: fast invocations clobber data still in use.",
  params: { ...step.params, WAR_BARRIER: 0 },
  space: undefined,
  knob: undefined,
  demo: true,
};

/**
 * Four independent partial sums instead of one chain (four_sums.wgsl): the same tiles, loads and
 * barriers, in a loop of four k steps per trip. With oneSumByFour (that loop, one sum) it separates
 * the chain of dependent additions from the loop's shape.
 */
export const fourSums: KernelSpec = {
  ...step,
  ...variantLayout(layout, "four_sums", "four_sums.wgsl"),
  title: "Tiles, four partial sums",
  idea: "Split each dot product into four independent sums, four k steps per loop trip.",
  params: { TILE: 16 },
  invalid: (p) =>
    need(
      [p.TILE * p.TILE <= 1024, "TILE * TILE must be at most 1024"],
      [p.TILE % 4 === 0, "TILE must be a multiple of 4 (four sums)"],
    ),
  space: undefined,
  knob: undefined,
  demo: true,
};

/**
 * The control for fourSums (one_sum_by_four.wgsl): its loop, four k steps per trip with the same
 * tile reads, but one chain of additions. Against fourSums only the chain differs; against the
 * step only the shape of the loop.
 */
export const oneSumByFour: KernelSpec = {
  ...fourSums,
  ...variantLayout(layout, "one_sum_by_four", "one_sum_by_four.wgsl"),
  title: "Tiles, one sum four steps per trip",
  idea: "four_sums' loop with one chain of additions: the chain apart from the loop's shape.",
};

/**
 * oneSumByFour with the k steps per trip a parameter (steps.wgsl, STEPS from 1 to TILE): its knob
 * sweeps the loop's shape alone, one sum throughout.
 */
export const steps: KernelSpec = {
  ...oneSumByFour,
  ...variantLayout(layout, "steps", "steps.wgsl"),
  title: "Tiles, one sum, STEPS k steps per trip",
  idea: "One sum, the inner loop's trips cut into STEPS k steps: the loop's shape swept alone.",
  params: { TILE: 16, STEPS: 4 },
  invalid: (p) =>
    need(
      [p.TILE * p.TILE <= 1024, "TILE * TILE must be at most 1024"],
      [p.STEPS >= 1 && p.TILE % p.STEPS === 0, "STEPS must divide TILE"],
    ),
  knob: {
    name: "STEPS",
    why: "STEPS is the k steps each trip of the inner loop does, with one sum throughout: from 1 " +
      "(the step's loop) to 16 (one trip per tile), only the loop's shape changes.",
    points: [1, 2, 4, 8, 16].map((STEPS) => ({ STEPS })),
  },
};

/**
 * steps at STEPS = 16 written by hand (written_out.wgsl): a tile's 16 k steps as 16 lines, no
 * inner loop left, whatever the driver does with a loop of fixed trip count. 16 x 16 tiles only.
 */
export const writtenOut: KernelSpec = {
  ...oneSumByFour,
  ...variantLayout(layout, "written_out", "written_out.wgsl"),
  title: "Tiles, one sum, the k loop written out",
  idea: "One sum, a tile's 16 k steps written as 16 lines: no inner loop at all.",
  params: { TILE: 16 },
  invalid: (p) => need([p.TILE === 16, "the k steps are written out for TILE = 16"]),
};
