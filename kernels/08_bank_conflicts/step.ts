/** Bank-conflict-free: neighbouring invocations read neighbouring vec4s; A's tile padded. */
import { type KernelSpec, stepLayout } from "../../lib/steps/spec.ts";
import { tileBytes } from "../../lib/steps/tiling.ts";
import { step as vectorize } from "../07_vectorize/step.ts";
import { bankFigure } from "../../lib/figures/banks.ts";
import { splitVec4Loop } from "../../lib/model/loops.ts";

export const step: KernelSpec = {
  ...vectorize,
  ...stepLayout(import.meta.url),
  title: "Bank-conflict-free",
  idea: "Neighbouring invocations read neighbouring vec4s, and the A tile is padded by one vec4.",
  params: { BM: 128, BN: 128, BK: 8, PAD: 1 },
  space: { BM: [64, 128], BN: [64, 128], BK: [8, 16], PAD: [0, 1] },
  workgroupStorageBytes: (p) => tileBytes(p),
  loop: splitVec4Loop,
  figure: bankFigure,
  knob: {
    name: "PAD",
    why: "PAD is the extra vec4s per row of the transposed A tile: with 1 the four scalar " +
      "stores of one loaded vec4 fall in other banks than the neighbours'; with 0 only the " +
      "new mapping remains.",
    points: [0, 1].map((PAD) => ({ PAD })),
  },
};
