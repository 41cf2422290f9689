/** Naive: one invocation per element of C. */
import { ceilDiv, naiveModel } from "../../lib/steps/launch.ts";
import { F32_NUMERICS } from "../../lib/accuracy.ts";
import { type KernelSpec, stepLayout } from "../../lib/steps/spec.ts";
import { oneElementFigure } from "../../lib/figures/access.ts";
import { oneElementLoop } from "../../lib/model/loops.ts";

export const step: KernelSpec = {
  ...stepLayout(import.meta.url),
  title: "Naive",
  idea:
    "One invocation per element of C; x walks rows, so neighbouring invocations read far apart.",
  entryPoint: "main",
  params: { WG: 16 },
  workgroupSize: (p) => [p.WG, p.WG, 1],
  dispatch: (s, p) => [ceilDiv(s.m, p.WG), ceilDiv(s.n, p.WG), 1],
  workgroupStorageBytes: () => 0,
  align: () => ({ m: 1, n: 1, k: 1 }),
  model: naiveModel,
  requiredFeatures: [],
  precision: "f32",
  numerics: F32_NUMERICS,
  loop: (p, s) => oneElementLoop(p, s, true),
  figure: (ctx) => oneElementFigure(ctx, "x_picks_row"),
  knob: {
    name: "WG",
    why: "The workgroup is WG x WG invocations. Its width decides how many rows of A one " +
      "subgroup of 32 reads at once (32 / WG columns of WG rows each), and its size how many " +
      "invocations an SM holds.",
    points: [4, 8, 16, 32].map((WG) => ({ WG })),
  },
};
