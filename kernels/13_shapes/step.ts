/**
 * Step 13: the kernel family a program would call for any shape. A plan per shape and device
 * (kernels/13_shapes/plans.ts): step 12's generated kernel at a tile size that fills the GPU's
 * waves, the same kernel with K split into slices summed in a fixed order when M x N is small
 * and K long, and a matrix-vector kernel (kernels/13_shapes/gemv.ts) when M is 1 to 32; the
 * model ranks all of them at every shape.
 */
import { type KernelSpec, type Params, stepLayout } from "../../lib/kernels/spec.ts";
import { need } from "../../lib/kernels/tiling.ts";
import { STEP_TRANSFORMS } from "../12_generated/generate.ts";
import { generatedParams, step as generated } from "../12_generated/step.ts";
import { generateWgsl, invocations, whyInvalid } from "../12_generated/generate.ts";
import {
  GEMV_COLUMNS,
  GEMV_K_LANES,
  GEMV_LANES,
  GEMV_STORAGE_BYTES,
  gemvInvalid,
  gemvWgsl,
} from "./gemv.ts";
import {
  candidates,
  pickPlan,
  PLAN_GEMV,
  PLAN_TILES,
  planLabel,
  planLaunch,
} from "./plans.ts";
import { wavesFigure } from "./figure.ts";
import { warpTileLoop } from "../../lib/kernels/loops.ts";

/** The plan parameters: PLAN (tiles or matrix-vector), SLICES of K, and the tile's. */
const DEFAULTS: Params = {
  PLAN: PLAN_TILES,
  SLICES: 1,
  BM: 128,
  BN: 128,
  BK: 16,
  TN: 8,
  PAD: 0,
  GROUP_M: 8,
  AHEAD: 0,
  ...STEP_TRANSFORMS,
};

/** The most slices of K a launch may have. */
const MAX_SLICES = 64;

const isGemv = (p: Params) => p.PLAN === PLAN_GEMV;
const tileParams = (p: Params) => ({ ...generatedParams(p), SPLIT_K: p.SLICES > 1 ? 1 : 0 });

const layout = stepLayout(import.meta.url);

export const step: KernelSpec = {
  ...generated,
  ...layout,
  title: "Every shape",
  idea:
    "A plan per shape, ranked by a wave model: tiles that fill the GPU's waves, split K for small outputs, a matrix-vector kernel for M <= 32.",
  file: `${layout.id}/plans.ts`,
  // A first line names the plan (PLAN and SLICES are not the generators' parameters).
  generate: (p) =>
    `// Step 13, plan ${planLabel(p)}: PLAN=${p.PLAN} SLICES=${p.SLICES}\n` +
    (isGemv(p) ? gemvWgsl(p.BM) : generateWgsl(tileParams(p))),
  params: { ...DEFAULTS },
  // The plan is picked per shape (planFor); lib/search.ts searchPlans searches plans per shape.
  space: undefined,
  invalid: (p) =>
    need(
      [
        p.PLAN === PLAN_TILES || p.PLAN === PLAN_GEMV,
        "PLAN must be 0 (tiles) or 1 (matrix-vector)",
      ],
      [
        Number.isInteger(p.SLICES) && p.SLICES >= 1 && p.SLICES <= MAX_SLICES,
        `SLICES must be a whole number from 1 to ${MAX_SLICES}`,
      ],
    ) ??
      (isGemv(p)
        ? need([p.BN === GEMV_COLUMNS, `the matrix-vector plan's BN is ${GEMV_COLUMNS}`]) ??
          gemvInvalid(p.BM)
        : whyInvalid(tileParams(p))),
  workgroupSize: (p) =>
    isGemv(p) ? [GEMV_LANES * GEMV_K_LANES, 1, 1] : [invocations(generatedParams(p)), 1, 1],
  workgroupStorageBytes: (p) => isGemv(p) ? GEMV_STORAGE_BYTES : generated.workgroupStorageBytes(p),
  // The grid, edge strips and slices the picker's model counts too.
  ...planLaunch,
  deviceTuned: false,
  planFor: (shape, device) => pickPlan(shape, device).params,
  planCandidates: (shape, device) => candidates(shape, device),
  // The tile plans run 12's loop; the other plans' loops are not described.
  loop: (p) => p.PLAN === PLAN_TILES ? warpTileLoop(p, p.TN, 1) : undefined,
  figure: wavesFigure,
  change: {
    params: { SLICES: 2 },
    note: "13's tiles plan is 12's kernel at the same tile (it would differ only in its first " +
      "line), so shown is what its split-K plan (SLICES=2) changes in it; the matrix-vector " +
      "plan is a kernel of its own, kernels/13_shapes/gemv.ts.",
  },
  knob: {
    name: "plan",
    why: "At 16 rows of C a 128 x 128 tile leaves most of its rows idle and makes few " +
      "workgroups; a smaller tile, slices of K or the matrix-vector kernel each spread the same " +
      "work over more of the GPU: the plans the picker ranks.",
    points: [
      { PLAN: PLAN_TILES, SLICES: 1 },
      { PLAN: PLAN_TILES, SLICES: 1, BM: 32, BN: 64 },
      { PLAN: PLAN_TILES, SLICES: 8 },
      { PLAN: PLAN_GEMV, SLICES: 8, BM: 16, BN: GEMV_COLUMNS },
    ],
    label: planLabel,
    shape: (n) => ({ m: 16, k: n, n }),
  },
};
