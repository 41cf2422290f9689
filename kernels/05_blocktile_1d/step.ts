/** 1D blocktiling: each invocation computes 8 outputs of one column. */
import { tiledModel } from "../../lib/steps/launch.ts";
import { F32_NUMERICS } from "../../lib/accuracy.ts";
import { type KernelSpec, stepLayout } from "../../lib/steps/spec.ts";
import { ANY, blockGrid, F32, need } from "../../lib/steps/tiling.ts";
import { blocktile1dFigure } from "../../lib/figures/tiles.ts";
import { blockTile1dLoop } from "../../lib/model/loops.ts";

export const step: KernelSpec = {
  ...stepLayout(import.meta.url),
  title: "1D blocktiling",
  idea: "Each invocation computes 8 outputs of one column, reusing each B value 8 times.",
  entryPoint: "main",
  params: { BM: 64, BN: 64, BK: 8 },
  space: { BM: [32, 64, 128], BN: [32, 64, 128], BK: [8, 16] },
  invalid: (p) =>
    need(
      [p.BM % 8 === 0, "BM must be a multiple of 8"],
      [p.BM * p.BN / 8 <= 1024, "BM * BN / 8 invocations must be at most 1024"],
    ),
  workgroupSize: (p) => [p.BM * p.BN / 8, 1, 1],
  dispatch: blockGrid,
  workgroupStorageBytes: (p) => (p.BM * p.BK + p.BK * p.BN) * F32,
  align: () => ANY,
  model: (s, p) => tiledModel(s, p.BM, p.BN),
  requiredFeatures: [],
  precision: "f32",
  numerics: F32_NUMERICS,
  loop: blockTile1dLoop,
  figure: blocktile1dFigure,
  knob: {
    name: "BM x BN",
    why: "Every invocation keeps 8 outputs of one column (TM = 8 is fixed in the WGSL); the " +
      "BM x BN tile sets how often A and B are read from global memory (N / BN and M / BM " +
      "times) and how many invocations share a workgroup (BM * BN / 8).",
    points: [[32, 32], [64, 32], [64, 64], [128, 64]].map(([BM, BN]) => ({ BM, BN })),
  },
};
