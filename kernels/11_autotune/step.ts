/**
 * Autotuned: 10 with each invocation's block of C (8 x 8 or 8 x 16) as one more knob, and the
 * tile sizes searched per device by lib/search.ts; the runner applies the saved winner.
 */
import { type KernelSpec, type Params, stepLayout } from "../../lib/steps/spec.ts";
import { need } from "../../lib/steps/tiling.ts";
import { step as doubleBuffer } from "../10_double_buffer/step.ts";
import { autotuneFigure } from "../../lib/figures/warps.ts";
import { warpTileLoop } from "../../lib/model/loops.ts";

/** Invocations: each owns an 8 x TN block of C. */
const threads8xTN = (p: Params) => (p.BM / 8) * (p.BN / p.TN);

export const step: KernelSpec = {
  ...doubleBuffer,
  ...stepLayout(import.meta.url),
  title: "Autotuned",
  idea: "10 with tile sizes and each invocation's block (8 x 8 or 8 x 16) searched on this device.",
  // vec4 loads with padding when K or N is not a multiple of 4 (10's align): one load of four
  // values instead of four bounds-checked scalar loads.
  params: { ...doubleBuffer.params, TN: 8 },
  // GROUP_M (the WGSL's launch order: GROUP_M tile rows walked column by column, so tiles that
  // run together share rows of A and columns of B in L2) is searched too.
  space: {
    BM: [64, 128, 256],
    BN: [64, 128, 256],
    BK: [8, 16],
    PAD: [0, 1],
    GROUP_M: [1, 8],
    TN: [8, 16],
  },
  invalid: (p) => {
    const t = threads8xTN(p);
    return need(
      [p.TN === 8 || p.TN === 16, "TN must be 8 or 16"],
      [p.BK % 4 === 0, "BK must be a multiple of 4 (vec4 rows)"],
      [p.BM % 32 === 0 && p.BN % (8 * p.TN) === 0, "BM must be a multiple of 32, BN of 8 * TN"],
      [
        [p.BM * p.BK / 4 / t, p.BK * p.BN / 4 / t].every((l) =>
          Number.isInteger(l) && l >= 1 && l <= 4
        ),
        "each invocation must load 1 to 4 whole vec4s of A and of B per tile",
      ],
      [t <= 512, "at most 512 invocations (1024 leave 64 registers each on NVIDIA)"],
    );
  },
  workgroupSize: (p) => [threads8xTN(p), 1, 1],
  deviceTuned: true,
  loop: (p) => warpTileLoop(p, p.TN, 1),
  figure: autotuneFigure,
  suite: true,
  knob: {
    name: "TN",
    why: "TN is the width of each invocation's block of C: at 16 half as many invocations each " +
      "keep twice the accumulators and use every A fragment for twice the multiply-adds.",
    points: [8, 16].map((TN) => ({ TN })),
  },
};
