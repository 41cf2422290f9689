/**
 * Step 13's plans as parameter sets: which kernel a plan runs (PLAN), what readers call it, and
 * how the runner launches it (grid, padding, edge strips, slices of K). The step
 * (kernels/13_shapes/step.ts), the time model (kernels/13_shapes/predict.ts) and the planner
 * (kernels/13_shapes/plans.ts) all launch a plan through this one description, so they count
 * the same workgroups.
 *
 * - PLAN 0, tiles: step 12's generated kernel at BM x BN x BK tiles; with SLICES > 1, split-K
 *   (each slice of K writes a partial C to a workspace, summed in slice order by a second
 *   dispatch).
 * - PLAN 1, matrix-vector: kernels/13_shapes/gemv.ts, BM rows of C (1 to 16) by 256 columns per
 *   workgroup, for M of 1 to 64; LOADS 4 (vec4 loads, K and N multiples of 4; the default) or 1
 *   (scalar loads, any K and N).
 * - PLAN 2, row-dot: kernels/13_shapes/rowdot.ts, BN columns (1 to 32) by BM rows per
 *   workgroup, KL k lanes per row group: the small-N plan (KL 32), and with KL 256 the dot
 *   product (a whole workgroup on each row).
 * - PLAN 3, outer: kernels/13_shapes/outer.ts, BM rows by 128 columns per workgroup: tiny K.
 * - PLAN 4, short-K: kernels/13_shapes/shortk.ts, BM rows by BN columns (128, 64 or 32) per
 *   workgroup, BK k staged per trip: short K with a large C.
 * - PLAN 5, direct: kernels/13_shapes/direct.ts, one element of C per invocation, BM rows by BN
 *   columns (BM·BN = 64) per workgroup: the smallest products.
 */
import { ceilDiv, type LaunchPlan, launchPlan, type LaunchSpec } from "../../lib/steps/launch.ts";
import { type KernelSpec, type Params, stepLayout } from "../../lib/steps/spec.ts";
import { ANY } from "../../lib/steps/tiling.ts";
import type { Shape } from "../../lib/matrix.ts";
import { step as generated } from "../12_generated/step.ts";
import { ROWDOT_INVOCATIONS } from "./rowdot.ts";
import { outerRowsPerWorkgroup } from "./outer.ts";
import { type ShortKConfig, shortkRowsPerWorkgroup } from "./shortk.ts";
import type { GemvLoads } from "./gemv.ts";

export const PLAN_TILES = 0;
export const PLAN_GEMV = 1;
export const PLAN_ROWDOT = 2;
export const PLAN_OUTER = 3;
export const PLAN_SHORTK = 4;
export const PLAN_DIRECT = 5;

export type PlanKind =
  | "tiles"
  | "split-K"
  | "matrix-vector"
  | "row-dot"
  | "dot"
  | "outer"
  | "short-K"
  | "direct";

/** What a parameter set of the step does. */
export function planKind(p: Params): PlanKind {
  if (p.PLAN === PLAN_GEMV) return "matrix-vector";
  if (p.PLAN === PLAN_ROWDOT) return p.KL === ROWDOT_INVOCATIONS ? "dot" : "row-dot";
  if (p.PLAN === PLAN_OUTER) return "outer";
  if (p.PLAN === PLAN_SHORTK) return "short-K";
  if (p.PLAN === PLAN_DIRECT) return "direct";
  return p.SLICES > 1 ? "split-K" : "tiles";
}

/** Rows of C per row group of a row-dot plan (its BM is groups x rows). */
export const rowdotRows = (p: Params) => (p.BM * p.KL) / ROWDOT_INVOCATIONS;
/** Elements per load of a matrix-vector plan: 4 unless LOADS says 1. */
export const gemvLoads = (p: Params): GemvLoads => p.LOADS === 1 ? 1 : 4;

/** Rows of C per invocation of an outer plan (its BM is 8 warps x rows). */
export const outerRows = (p: Params) => p.BM / outerRowsPerWorkgroup(1);

/**
 * The short-K kernel a plan runs: rows of C per invocation (its BM is 8 warps x rows), BK k per
 * trip, BN columns per workgroup.
 */
export const shortkConfig = (p: Params): ShortKConfig => ({
  rows: p.BM / shortkRowsPerWorkgroup(1),
  depth: p.BK,
  columns: p.BN,
});

/** The plan that runs a short-K configuration (shortkConfig's inverse). */
export const shortkPlan = (c: ShortKConfig): Params => ({
  PLAN: PLAN_SHORTK,
  SLICES: 1,
  BM: shortkRowsPerWorkgroup(c.rows),
  BN: c.columns,
  BK: c.depth,
});

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/**
 * A plan as readers know it: "split-K 4 x 128x256x16 TN 8" (BM x BN x BK, TN outputs wide),
 * "matrix-vector 16 rows, 8 slices", "row-dot 8 rows x 4 columns", "dot, 32 slices", "outer
 * 16 rows", "short-K 128 rows, 32 k per trip" (and "x 32 columns" where it is narrower than 128),
 * "direct 8 rows x 8 columns".
 */
export function planLabel(p: Params): string {
  const kind = planKind(p);
  const slices = p.SLICES > 1 ? `, ${p.SLICES} slices` : "";
  switch (kind) {
    case "matrix-vector":
      return `matrix-vector ${plural(p.BM, "row")}${
        gemvLoads(p) === 1 ? " (scalar loads)" : ""
      }${slices}`;
    case "row-dot":
      return `row-dot ${plural(p.BM, "row")} x ${plural(p.BN, "column")}${slices}`;
    case "dot":
      return `dot ${plural(p.BM, "row")} x ${plural(p.BN, "column")}${slices}`;
    case "outer":
      return `outer ${plural(p.BM, "row")}`;
    case "direct":
      return `direct ${plural(p.BM, "row")} x ${plural(p.BN, "column")}`;
    case "short-K":
      return `short-K ${plural(p.BM, "row")}${
        p.BN === 128 ? "" : ` x ${p.BN} columns`
      }, ${p.BK} k per trip`;
  }
  const tile = `${p.BM}x${p.BN}x${p.BK}${p.TN ? ` TN ${p.TN}` : ""}`;
  return kind === "split-K" ? `split-K ${p.SLICES} x ${tile}` : `tiles ${tile}`;
}

/** Plans that read A and B as they are (any K and N, no padding copies). */
const unpadded = (p: Params) =>
  p.PLAN === PLAN_ROWDOT || p.PLAN === PLAN_OUTER || p.PLAN === PLAN_SHORTK ||
  p.PLAN === PLAN_DIRECT ||
  (p.PLAN === PLAN_GEMV && gemvLoads(p) === 1);

/**
 * How the runner launches a plan: the grid over BN columns and BM rows of C per workgroup,
 * z = SLICES; the tile plans and the vec4 matrix-vector plan read K and N padded to multiples of 4
 * (vec4 rows), the scalar matrix-vector, row-dot, outer, short-K and direct plans any size;
 * edge strips for the tile plans only.
 */
export const planLaunch: Pick<KernelSpec, "dispatch" | "align" | "edgeStrips" | "slices"> = {
  dispatch: (s, p) => [ceilDiv(s.n, p.BN), ceilDiv(s.m, p.BM), p.SLICES],
  align: (p) => unpadded(p) ? ANY : generated.align(p),
  // Only the tile plans have BM x BN tiles to cut thin edges from.
  edgeStrips: (p) => p.PLAN === PLAN_TILES,
  slices: (p) => p.SLICES,
};

/** Step 13's launch description: step 12's precision and C, the plan's grid and padding. */
const launchSpec: LaunchSpec = { ...generated, ...stepLayout(import.meta.url), ...planLaunch };

/** The launch plan the runner would dispatch for `params` at `s`. */
export const planLaunchPlan = (s: Shape, params: Params): LaunchPlan =>
  launchPlan(launchSpec, params, s);
