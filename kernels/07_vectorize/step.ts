/** Vectorized: 16-byte loads and stores, A transposed in workgroup memory. */
import { launchModel } from "../../lib/steps/launch.ts";
import { F32_NUMERICS } from "../../lib/accuracy.ts";
import { type KernelSpec, type Params, stepLayout } from "../../lib/steps/spec.ts";
import { blockGrid, F32, need, threads8x8, VEC4 } from "../../lib/steps/tiling.ts";
import { blocktile2dInvalid } from "../06_blocktile_2d/step.ts";
import { vectorizeFigure } from "../../lib/figures/tiles.ts";
import { pairedVec4Loop } from "../../lib/model/loops.ts";

/** The rules of the vec4 kernels (this step and the ones built on it). */
export const vec4Invalid = (p: Params): string | undefined =>
  blocktile2dInvalid(p) ?? need([p.BK % 4 === 0, "BK must be a multiple of 4 (vec4 rows)"]);

export const step: KernelSpec = {
  ...stepLayout(import.meta.url),
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
