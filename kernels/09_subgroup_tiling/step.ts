/** Subgroup (warp) tiling: each group of 32 invocations owns a 32 x 64 block of C. */
import {
  type KernelSpec,
  type Params,
  stepLayout,
  variantLayout,
  writtenOutControl,
} from "../../lib/steps/spec.ts";
import { need, switchRule } from "../../lib/steps/tiling.ts";
import { fourLoadsEach } from "../06_blocktile_2d/step.ts";
import { vec4Invalid } from "../07_vectorize/step.ts";
import { step as bankConflicts } from "../08_bank_conflicts/step.ts";
import { subgroupTilingFigure } from "../../lib/figures/warps.ts";
import { warpTileLoop } from "../../lib/model/loops.ts";

/** The rules of the warp-tiled kernels (this step and the ones built on it). */
export const warpTileInvalid = (p: Params): string | undefined =>
  vec4Invalid(p) ??
    need([p.BM % 32 === 0 && p.BN % 64 === 0, "BM must be a multiple of 32 and BN of 64"]);

const layout = stepLayout(import.meta.url);

export const step: KernelSpec = {
  ...bankConflicts,
  ...layout,
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

/**
 * The step with 08's flat mapping (WARP_TILES = 0), its loads in 09's order: 08's mapping in this
 * kernel's code, the in-order corner of the layout-against-order comparison.
 */
export const flat: KernelSpec = {
  ...step,
  ...variantLayout(layout, "flat"),
  title: "Subgroup tiling's kernel, flat mapping",
  idea: "This kernel with 08's flat mapping: only the layout differs from the step.",
  params: { ...step.params, WARP_TILES: 0 },
  invalid: (p) => warpTileInvalid(p) ?? switchRule(p, "WARP_TILES", [0, 1], 1),
  loop: bankConflicts.loop,
  space: undefined,
  knob: undefined,
  demo: true,
};

/**
 * The loads-first controls' rule: one vec4 of A and one of B per invocation, a WARP_TILES and an
 * IN_ORDER.
 */
const loadsFirstInvalid = (p: Params): string | undefined =>
  warpTileInvalid(p) ?? fourLoadsEach(p) ??
    switchRule(p, "WARP_TILES", [0, 1], 1) ?? switchRule(p, "IN_ORDER", [0, 1], 0);

/**
 * The step with each invocation's two tile loads issued before its first store
 * (loads_first.wgsl): against the step the loops are written out and reordered, as 07's
 * loads_first is to 07; writtenOut below separates the two.
 */
export const loadsFirst: KernelSpec = {
  ...step,
  ...variantLayout(layout, "loads_first", "loads_first.wgsl"),
  title: "Subgroup tiling, tile loads issued together",
  idea: "The step with a tile's two vec4 loads issued before the first store.",
  invalid: loadsFirstInvalid,
  space: undefined,
  knob: undefined,
  demo: true,
};

/**
 * loadsFirst with 08's flat mapping (WARP_TILES = 0): 08 with its loads issued together, so
 * against 07's loads_first only the banks' layout differs.
 */
export const flatLoadsFirst: KernelSpec = {
  ...loadsFirst,
  ...variantLayout(layout, "flat_loads_first", "loads_first.wgsl"),
  title: "Flat mapping, tile loads issued together",
  idea: "08's mapping with a tile's two vec4 loads issued before the first store.",
  params: { ...step.params, WARP_TILES: 0 },
  loop: bankConflicts.loop,
};

/** loadsFirst in the step's order: the two loads written out, A's vec4 stored before B's load. */
export const writtenOut = writtenOutControl(loadsFirst, layout, "written_out", step.params, {
  title: "Subgroup tiling, tile loads written out in order",
  idea: "The step with its tile-load loops written out, A's vec4 stored before B's is loaded.",
});

/** writtenOut with 08's flat mapping (WARP_TILES = 0): 08's mapping, its load loops written out. */
export const flatWrittenOut: KernelSpec = {
  ...writtenOutControl(loadsFirst, layout, "flat_written_out", { ...step.params, WARP_TILES: 0 }, {
    title: "Flat mapping, tile loads written out in order",
    idea:
      "08's mapping with its tile-load loops written out, A's vec4 stored before B's is loaded.",
  }),
  loop: bankConflicts.loop,
};
