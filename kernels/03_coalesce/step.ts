/** Coalesced: the naive kernel with x walking the columns of C. */
import { ceilDiv, naiveModel } from "../../lib/steps/launch.ts";
import { F32_NUMERICS } from "../../lib/accuracy.ts";
import { type KernelSpec, stepLayout, variantLayout } from "../../lib/steps/spec.ts";
import { ANY, need } from "../../lib/steps/tiling.ts";
import { oneElementFigure } from "../../lib/figures/access.ts";
import { oneElementLoop } from "../../lib/model/loops.ts";
import { step as naive } from "../02_naive/step.ts";

const layout = stepLayout(import.meta.url);

export const step: KernelSpec = {
  ...layout,
  title: "Coalesced",
  idea:
    "x walks the columns of C, so a subgroup reads one contiguous run of B and writes one of C.",
  entryPoint: "main",
  params: { WG: 16 },
  space: { WG: [8, 16, 32] },
  invalid: (p) => need([p.WG * p.WG <= 1024, "WG * WG must be at most 1024"]),
  workgroupSize: (p) => [p.WG, p.WG, 1],
  dispatch: (s, p) => [ceilDiv(s.n, p.WG), ceilDiv(s.m, p.WG), 1],
  workgroupStorageBytes: () => 0,
  align: () => ANY,
  model: naiveModel,
  requiredFeatures: [],
  precision: "f32",
  numerics: F32_NUMERICS,
  loop: (p, s) => oneElementLoop(p, s, false),
  figure: (ctx) => oneElementFigure(ctx, "x_picks_column"),
  knob: {
    name: "WG",
    why: "WG is the length of a workgroup's rows: at WG 8 a subgroup of 32 spans 4 rows of 8 " +
      "columns, so its stores to C land in four 32-byte pieces; at 16 in two of 64 bytes; at 32 " +
      "in one run of 128 bytes.",
    points: [8, 16, 32].map((WG) => ({ WG })),
  },
};

/**
 * The step with its k loop unrolled by four (unrolled.wgsl): four loads of A and four of B in
 * flight per invocation instead of one pair, so the access pattern's cost can show. A control.
 */
export const unrolled: KernelSpec = {
  ...step,
  ...variantLayout(layout, "unrolled", "unrolled.wgsl"),
  title: "Coalesced, k loop unrolled by four",
  idea: "coalesce with four loads of A and of B in flight per invocation.",
  params: { WG: 16, COLUMNS: 1 },
  space: undefined,
  knob: undefined,
  demo: true,
};

/** `unrolled` with x picking the row of C, as naive does: the same loads, uncoalesced. */
export const unrolledRows: KernelSpec = {
  ...unrolled,
  ...variantLayout(layout, "unrolled_rows", "unrolled.wgsl"),
  title: "Naive order, k loop unrolled by four",
  idea: "naive's mapping (x picks the row) with four loads of A and of B in flight.",
  params: { WG: 16, COLUMNS: 0 },
  dispatch: naive.dispatch,
  loop: naive.loop,
  figure: naive.figure,
};
