/**
 * Vectorized: 16-byte loads and stores, A transposed in workgroup memory; and two controls that
 * each undo one half of the change, to measure the halves apart.
 */
import { launchModel } from "../../lib/steps/launch.ts";
import { F32_NUMERICS } from "../../lib/accuracy.ts";
import {
  type KernelSpec,
  type Params,
  stepLayout,
  variantLayout,
  writtenOutControl,
} from "../../lib/steps/spec.ts";
import { blockGrid, F32, need, switchRule, threads8x8, VEC4 } from "../../lib/steps/tiling.ts";
import { blocktile2dInvalid, fourLoadsEach } from "../06_blocktile_2d/step.ts";
import { vectorizeFigure } from "../../lib/figures/tiles.ts";
import { blockTile2dLoop, pairedVec4Loop } from "../../lib/model/loops.ts";

/** The rules of the vec4 kernels (this step and the ones built on it). */
export const vec4Invalid = (p: Params): string | undefined =>
  blocktile2dInvalid(p) ?? need([p.BK % 4 === 0, "BK must be a multiple of 4 (vec4 rows)"]);

const layout = stepLayout(import.meta.url);

export const step: KernelSpec = {
  ...layout,
  title: "Vectorized (vec4)",
  idea: "16-byte loads and stores, and A transposed in workgroup memory so its reads are vec4 too.",
  entryPoint: "main",
  params: { BM: 128, BN: 128, BK: 8 },
  space: { BM: [64, 128], BN: [64, 128], BK: [8, 16] },
  invalid: vec4Invalid,
  workgroupSize: (p) => [threads8x8(p), 1, 1],
  dispatch: blockGrid,
  workgroupStorageBytes: (p) => (p.BM * p.BK + p.BK * p.BN) * F32,
  align: () => VEC4,
  // C is written unpadded: the runner pads only A and B (K and N, when not multiples of 4).
  unpaddedC: true,
  edgeStrips: true,
  // Called as spec.model(...): the plan is this step's own (padding, copies, strips).
  model(s, p) {
    return launchModel(this, s, p);
  },
  requiredFeatures: [],
  precision: "f32",
  numerics: F32_NUMERICS,
  loop: pairedVec4Loop,
  figure: vectorizeFigure,
  knob: {
    name: "BK",
    why: "BK is the depth of one k tile, loaded in vec4s between two barriers: doubling it " +
      "halves the barriers and tile loads per multiply-add and doubles the workgroup memory.",
    points: [8, 16, 32].map((BK) => ({ BK })),
  },
};

/**
 * The step's workgroup tiles with 06's global loads (scalar_loads.wgsl): against the step only the
 * width of the global loads differs, 4 bytes instead of 16.
 */
export const scalarLoads: KernelSpec = {
  ...step,
  ...variantLayout(layout, "scalar_loads", "scalar_loads.wgsl"),
  title: "Vectorized, scalar global loads",
  idea: "The transposed tile and vec4 tile reads, with A and B loaded one float at a time.",
  space: undefined,
  knob: undefined,
  demo: true,
};

/**
 * The step's vec4 global loads with 06's workgroup tiles and reads (scalar_reads.wgsl): against
 * the step only the layout and reads of workgroup memory differ.
 */
export const scalarReads: KernelSpec = {
  ...step,
  ...variantLayout(layout, "scalar_reads", "scalar_reads.wgsl"),
  title: "Vectorized, scalar tile reads",
  idea: "vec4 global loads into 06's untransposed tiles, read as 16 scalars per k step.",
  loop: blockTile2dLoop,
  space: undefined,
  knob: undefined,
  demo: true,
};

/**
 * scalarLoads with each invocation's eight loads of a tile issued before its first store
 * (LOADS_FIRST 1 in scalar_loads.wgsl): against scalarLoads the load loops are written out (for the
 * default tile, where each invocation loads four elements of A and four of B) and reordered.
 */
export const scalarLoadsFirst: KernelSpec = {
  ...scalarLoads,
  ...variantLayout(layout, "scalar_loads_first", "scalar_loads.wgsl"),
  title: "Vectorized, scalar global loads issued together",
  idea: "scalar_loads with a tile's eight loads issued before the first store.",
  params: { ...scalarLoads.params, LOADS_FIRST: 1 },
  invalid: (p) => vec4Invalid(p) ?? fourLoadsEach(p),
};

/**
 * The step with each invocation's two tile loads issued before its first store (loads_first.wgsl):
 * against the step the load loops are written out (for the default tile, where each invocation
 * loads one vec4 of A and one of B) and reordered; in 09's kernel the writing out pays all of it.
 */
export const loadsFirst: KernelSpec = {
  ...step,
  ...variantLayout(layout, "loads_first", "loads_first.wgsl"),
  title: "Vectorized, tile loads issued together",
  idea: "The step with a tile's two vec4 loads issued before the first store.",
  invalid: (p) => vec4Invalid(p) ?? fourLoadsEach(p) ?? switchRule(p, "IN_ORDER", [0, 1], 0),
  space: undefined,
  knob: undefined,
  demo: true,
};

/** loadsFirst in the step's order: the two loads written out, A's vec4 stored before B's load. */
export const writtenOut = writtenOutControl(loadsFirst, layout, "written_out", step.params, {
  title: "Vectorized, tile loads written out in order",
  idea: "The step with its tile-load loops written out, A's vec4 stored before B's is loaded.",
});

/**
 * The step with 06's bounds check (value_select.wgsl): the loaded value replaced by zero past the
 * edge, instead of the load pointed at the zero after the data. Against the step only the check
 * differs: its cost inside the ratios 07 takes against 06's kernels.
 */
export const valueSelect: KernelSpec = {
  ...step,
  ...variantLayout(layout, "value_select", "value_select.wgsl"),
  title: "Vectorized, the value selected at the edges",
  idea:
    "vectorize with blocktile_2d's bounds check: the loaded value is selected, not the address.",
  space: undefined,
  knob: undefined,
  demo: true,
};
