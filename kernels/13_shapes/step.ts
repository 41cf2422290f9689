/**
 * Step 13: the kernel family a program would call for any shape. A plan per shape and device
 * (kernels/13_shapes/plans.ts): step 12's generated kernel at a tile size that fills the GPU's
 * waves, the same kernel with K split into slices summed in a fixed order when M x N is small
 * and K long, a matrix-vector kernel (kernels/13_shapes/gemv.ts) when M is 1 to 64, a row-dot
 * kernel (kernels/13_shapes/rowdot.ts) when N is 1 to 32 and for the dot product, an outer
 * kernel (kernels/13_shapes/outer.ts) when K is tiny, a short-K kernel
 * (kernels/13_shapes/shortk.ts) when K is short and C large, and a direct kernel
 * (kernels/13_shapes/direct.ts) for the smallest products. A time model ranks them at every shape,
 * and a plan other than 12's own runs only where the model clearly prefers it.
 */
import { type KernelSpec, type Params, stepLayout } from "../../lib/steps/spec.ts";
import { need } from "../../lib/steps/tiling.ts";
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
import { MAX_SLICES, pickPlan, planOrder } from "./plans.ts";
import {
  gemvLoads,
  PLAN_DIRECT,
  PLAN_GEMV,
  PLAN_OUTER,
  PLAN_ROWDOT,
  PLAN_SHORTK,
  PLAN_TILES,
  planLabel,
  planLaunch,
  shortkConfig,
} from "./launch.ts";
import { ROWDOT_INVOCATIONS, rowdotInvalid, rowdotStorageBytes, rowdotWgsl } from "./rowdot.ts";
import {
  OUTER_COLUMNS,
  OUTER_INVOCATIONS,
  outerInvalid,
  outerRowsPerWorkgroup,
  outerWgsl,
} from "./outer.ts";
import {
  SHORTK_INVOCATIONS,
  shortkInvalid,
  shortkRowsPerWorkgroup,
  shortkStorageBytes,
  shortkWgsl,
} from "./shortk.ts";
import { rowdotConfig } from "./predict.ts";
import { DIRECT_INVOCATIONS, directInvalid, directWgsl } from "./direct.ts";
import { outerRows } from "./launch.ts";
import { wavesFigure } from "./figure.ts";
import { warpTileLoop } from "../../lib/model/loops.ts";

/** The plan parameters: PLAN (which kernel), SLICES of K, and the tile's. */
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

const tileParams = (p: Params) => ({ ...generatedParams(p), SPLIT_K: p.SLICES > 1 ? 1 : 0 });

/** The plan's kernel text (without the first line, which names the plan). */
function kernelText(p: Params): string {
  switch (p.PLAN) {
    case PLAN_GEMV:
      return gemvWgsl(p.BM, gemvLoads(p));
    case PLAN_ROWDOT:
      return rowdotWgsl(rowdotConfig(p));
    case PLAN_OUTER:
      return outerWgsl(outerRows(p));
    case PLAN_SHORTK:
      return shortkWgsl(shortkConfig(p));
    case PLAN_DIRECT:
      return directWgsl(p.BN);
    default:
      return generateWgsl(tileParams(p));
  }
}

/** Why a plan of a known kind cannot run (undefined when it can). */
function planInvalid(p: Params): string | undefined {
  switch (p.PLAN) {
    case PLAN_GEMV:
      return need(
        [p.BN === GEMV_COLUMNS, `the matrix-vector plan's BN is ${GEMV_COLUMNS}`],
        [p.LOADS === undefined || p.LOADS === 1 || p.LOADS === 4, "LOADS is 4 or 1"],
      ) ?? gemvInvalid(p.BM);
    case PLAN_ROWDOT:
      return need([
        Number.isInteger(rowdotConfig(p).rows),
        `the row-dot plan's BM is its groups (${ROWDOT_INVOCATIONS} / KL) times its rows`,
      ]) ?? rowdotInvalid(rowdotConfig(p));
    case PLAN_OUTER:
      return need(
        [p.SLICES === 1, "the outer plan does not split K"],
        [p.BN === OUTER_COLUMNS, `the outer plan's BN is ${OUTER_COLUMNS}`],
        [
          Number.isInteger(outerRows(p)),
          `the outer plan's BM is ${outerRowsPerWorkgroup(1)} times its rows`,
        ],
      ) ?? outerInvalid(outerRows(p));
    case PLAN_SHORTK:
      return need(
        [p.SLICES === 1, "the short-K plan does not split K"],
        [
          Number.isInteger(shortkConfig(p).rows),
          `the short-K plan's BM is ${shortkRowsPerWorkgroup(1)} times its rows`,
        ],
      ) ?? shortkInvalid(shortkConfig(p));
    case PLAN_DIRECT:
      return need(
        [p.SLICES === 1, "the direct plan does not split K"],
        [p.BM * p.BN === DIRECT_INVOCATIONS, `the direct plan's BM x BN is ${DIRECT_INVOCATIONS}`],
      ) ?? directInvalid(p.BN);
    default:
      return whyInvalid(tileParams(p));
  }
}

/** Invocations per workgroup of a plan's kernel. */
function invocationsOf(p: Params): number {
  switch (p.PLAN) {
    case PLAN_GEMV:
      return GEMV_LANES * GEMV_K_LANES;
    case PLAN_ROWDOT:
      return ROWDOT_INVOCATIONS;
    case PLAN_OUTER:
      return OUTER_INVOCATIONS;
    case PLAN_SHORTK:
      return SHORTK_INVOCATIONS;
    case PLAN_DIRECT:
      return DIRECT_INVOCATIONS;
    default:
      return invocations(generatedParams(p));
  }
}

/** Bytes of workgroup memory of a plan's kernel. */
function storageBytesOf(p: Params): number {
  switch (p.PLAN) {
    case PLAN_GEMV:
      return GEMV_STORAGE_BYTES;
    case PLAN_ROWDOT:
      return rowdotStorageBytes(rowdotConfig(p));
    case PLAN_OUTER:
    case PLAN_DIRECT:
      return 0;
    case PLAN_SHORTK:
      return shortkStorageBytes(shortkConfig(p));
    default:
      return generated.workgroupStorageBytes(p);
  }
}

const layout = stepLayout(import.meta.url);

export const step: KernelSpec = {
  ...generated,
  ...layout,
  title: "Every shape",
  idea:
    "A plan per shape, ranked by a time model and checked against 12's kernel: tiles that fill the GPU's waves, split K for small outputs, kernels of their own for few rows, few columns, short K and the smallest products.",
  file: `${layout.id}/plans.ts`,
  // A first line names the plan (PLAN and SLICES are not the generators' parameters).
  generate: (p) =>
    `// Step 13, plan ${planLabel(p)}: PLAN=${p.PLAN} SLICES=${p.SLICES}\n` + kernelText(p),
  params: { ...DEFAULTS },
  // The plan is picked per shape (planFor); lib/search.ts searchPlans searches plans per shape.
  space: undefined,
  invalid: (p) =>
    need(
      [
        [PLAN_TILES, PLAN_GEMV, PLAN_ROWDOT, PLAN_OUTER, PLAN_SHORTK, PLAN_DIRECT].includes(p.PLAN),
        "PLAN must be 0 (tiles), 1 (matrix-vector), 2 (row-dot), 3 (outer), 4 (short-K) or 5 (direct)",
      ],
      [
        Number.isInteger(p.SLICES) && p.SLICES >= 1 && p.SLICES <= MAX_SLICES,
        `SLICES must be a whole number from 1 to ${MAX_SLICES}`,
      ],
    ) ?? planInvalid(p),
  workgroupSize: (p) => [invocationsOf(p), 1, 1],
  workgroupStorageBytes: (p) => storageBytesOf(p),
  // The grid, edge strips and slices the picker's model counts too.
  ...planLaunch,
  deviceTuned: false,
  planFor: (shape, device) => pickPlan(shape, device).params,
  planCandidates: (shape, device) => planOrder(shape, device),
  // A tile plan's loop is 12's; the other plans' loops are not described.
  loop: (p) => p.PLAN === PLAN_TILES ? warpTileLoop(p, p.TN, 1) : undefined,
  figure: wavesFigure,
  change: {
    params: { SLICES: 2 },
    note: "13's tiles plan is 12's kernel at the same tile (it would differ only in its first " +
      "line), so shown is what its split-K plan (SLICES=2) changes in it; the matrix-vector, " +
      "row-dot, outer, short-K and direct plans are kernels of their own " +
      "(kernels/13_shapes/gemv.ts, rowdot.ts, outer.ts, shortk.ts, direct.ts).",
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
