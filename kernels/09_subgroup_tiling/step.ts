/** Subgroup (warp) tiling: each group of 32 invocations owns a 32 x 64 block of C. */
import { type KernelSpec, type Params, stepLayout } from "../../lib/kernels/spec.ts";
import { need } from "../../lib/kernels/tiling.ts";
import { vec4Invalid } from "../07_vectorize/step.ts";
import { step as bankConflicts } from "../08_bank_conflicts/step.ts";

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
};
