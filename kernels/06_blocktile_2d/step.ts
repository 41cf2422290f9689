/** 2D blocktiling: an 8 x 8 block of C per invocation, and its local-array teaching variant. */
import { launchModel } from "../../lib/steps/launch.ts";
import { F32_NUMERICS } from "../../lib/accuracy.ts";
import {
  type KernelSpec,
  type Params,
  stepLayout,
  variantLayout,
  writtenOutControl,
} from "../../lib/steps/spec.ts";
import { ANY, blockGrid, F32, need, switchRule, threads8x8 } from "../../lib/steps/tiling.ts";
import { blocktile2dFigure } from "../../lib/figures/tiles.ts";
import { blockTile2dLoop } from "../../lib/model/loops.ts";

const layout = stepLayout(import.meta.url);

/** The rules of the 8 x 8-block kernels (this step and the ones built on it). */
export const blocktile2dInvalid = (p: Params): string | undefined =>
  need(
    [p.BM % 8 === 0 && p.BN % 8 === 0, "BM and BN must be multiples of 8"],
    [threads8x8(p) <= 1024, "(BM / 8) * (BN / 8) invocations must be at most 1024"],
  );

export const step: KernelSpec = {
  ...layout,
  title: "2D blocktiling",
  idea: "Each invocation computes an 8 x 8 block of C in 16 named vec4 registers.",
  entryPoint: "main",
  params: { BM: 128, BN: 128, BK: 8 },
  space: { BM: [64, 128], BN: [64, 128], BK: [8, 16] },
  invalid: blocktile2dInvalid,
  workgroupSize: (p) => [threads8x8(p), 1, 1],
  dispatch: blockGrid,
  workgroupStorageBytes: (p) => (p.BM * p.BK + p.BK * p.BN) * F32,
  align: () => ANY,
  edgeStrips: true,
  // Called as spec.model(...): the plan is this step's own (padding, copies, strips).
  model(s, p) {
    return launchModel(this, s, p);
  },
  requiredFeatures: [],
  precision: "f32",
  numerics: F32_NUMERICS,
  loop: blockTile2dLoop,
  figure: blocktile2dFigure,
  knob: {
    name: "BM x BN",
    why: "Every invocation owns an 8 x 8 block, so the BM x BN tile sets the invocations per " +
      "workgroup ((BM / 8) * (BN / 8)) and how often A and B come from global memory: larger " +
      "tiles move fewer bytes per FLOP but leave fewer workgroups to fill the GPU.",
    points: [[64, 64], [64, 128], [128, 128], [128, 256]].map(([BM, BN]) => ({ BM, BN })),
  },
};

/** The same kernel with function-local arrays indexed in loops: same result, local-memory speed. */
export const localArray: KernelSpec = {
  ...step,
  ...variantLayout(layout, "local_array", "local_array.wgsl"),
  title: "2D blocktiling, accumulators in a local array",
  idea: "The same 8 x 8 block in array<array<f32, 8>, 8> indexed in loops: watch it slow down.",
  space: undefined,
  knob: undefined,
  demo: true,
};

/**
 * The rule of the controls that write out a tile's loads (loads_first.wgsl here; 07's
 * scalar_loads.wgsl at LOADS_FIRST 1 and loads_first.wgsl): BM * BK and BK * BN are four per
 * invocation, so each loads exactly four scalars of A and four of B, or one vec4 of each.
 */
export const fourLoadsEach = (p: Params): string | undefined =>
  need(
    [p.BM * p.BK === 4 * threads8x8(p), "BM * BK must be 4 x the invocations"],
    [p.BK * p.BN === 4 * threads8x8(p), "BK * BN must be 4 x the invocations"],
  );

/**
 * The step with each invocation's eight loads of a tile issued before its first store
 * (loads_first.wgsl): against the step the load loops are written out and reordered (for the
 * default tile, where each invocation loads four elements of A and four of B). Which of the two
 * pays is not separated here; in 09's kernel, writing the loops out pays all of it.
 */
export const loadsFirst: KernelSpec = {
  ...step,
  ...variantLayout(layout, "loads_first", "loads_first.wgsl"),
  title: "2D blocktiling, tile loads issued together",
  idea: "The step with a tile's eight loads issued before the first store.",
  invalid: (p) => blocktile2dInvalid(p) ?? fourLoadsEach(p) ?? switchRule(p, "IN_ORDER", [0, 1], 0),
  space: undefined,
  knob: undefined,
  demo: true,
};

/** loadsFirst in the step's order: the loads written out, each element stored before the next. */
export const writtenOut = writtenOutControl(loadsFirst, layout, "written_out", step.params, {
  title: "2D blocktiling, tile loads written out in order",
  idea: "The step with its tile-load loops written out, each element stored before the next load.",
});
