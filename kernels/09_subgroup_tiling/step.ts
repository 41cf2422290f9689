/** Subgroup (warp) tiling: each group of 32 invocations owns a 32 x 64 block of C. */
import { type KernelSpec, type Params, stepLayout } from "../../lib/steps/spec.ts";
import { need } from "../../lib/steps/tiling.ts";
import { vec4Invalid } from "../07_vectorize/step.ts";
import { step as bankConflicts } from "../08_bank_conflicts/step.ts";
import { subgroupTilingFigure } from "../../lib/figures/warps.ts";
import { warpTileLoop } from "../../lib/model/loops.ts";

/** The rules of the warp-tiled kernels (this step and the ones built on it). */
export const warpTileInvalid = (p: Params): string | undefined =>
  vec4Invalid(p) ??
    need([p.BM % 32 === 0 && p.BN % 64 === 0, "BM must be a multiple of 32 and BN of 64"]);

export const step: KernelSpec = {
  ...bankConflicts,
  ...stepLayout(import.meta.url),
  title: "Subgroup (warp) tiling",
  idea: "Each group of 32 invocations owns a 32 x 64 block: fewer distinct reads per subgroup.",
  invalid: warpTileInvalid,
  loop: (p) => warpTileLoop(p, 8, 2),
  figure: subgroupTilingFigure,
  knob: {
    name: "BM x BN",
    why: "The workgroup tile is a grid of 32 x 64 subgroup tiles: BM x BN sets how many " +
      "subgroups share one tile in workgroup memory, from one (32 x 64) to sixteen (128 x 256).",
    points: [[32, 64], [64, 64], [64, 128], [128, 128], [128, 256]].map(([BM, BN]) => ({ BM, BN })),
    label: (p) => {
      const subgroups = (p.BM / 32) * (p.BN / 64);
      return `${p.BM}x${p.BN} (${subgroups} subgroup${subgroups > 1 ? "s" : ""})`;
    },
  },
};
