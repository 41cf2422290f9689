/**
 * Step 13's planner: the plans it considers at a shape, and the rule that picks one.
 *
 * The plans (parameter sets of the step; kernels/13_shapes/launch.ts says how each launches):
 * - tiles: step 12's generated kernel at a tile configuration of TILE_CONFIGS (and 12's own),
 *   and of THIN_TILE_CONFIGS (32 rows) where M is at most THIN_TILE_MAX_M;
 * - split-K: the same kernel with K cut into slices summed in a fixed order, at slice counts
 *   that are powers of two or fill whole waves of the GPU (the counts that leave no wave partly
 *   empty: j·SMs·R / tiles for j = 1..4);
 * - matrix-vector (kernels/13_shapes/gemv.ts) when M <= 64;
 * - row-dot (kernels/13_shapes/rowdot.ts) when N <= 32, and dot, its form with a whole
 *   workgroup on each row, for the dot product and other products of a few rows and columns;
 * - outer (kernels/13_shapes/outer.ts) when K <= 16;
 * - short-K (kernels/13_shapes/shortk.ts) when K <= 512 and C has at least 32 rows and 32
 *   columns, 128 columns per workgroup, and 64 or 32 where N is at most 128;
 * - direct (kernels/13_shapes/direct.ts), one element of C per invocation, for products of at
 *   most DIRECT_MAX_FLOPS.
 *
 * The rule. The model (kernels/13_shapes/predict.ts predictPlanTime, fit to the H200's saved
 * measurements) predicts every plan's time. Step 12's general kernel at its tuned parameters,
 * "tiles, 1 slice, 12's params" (fallbackPlan), is the plan every pick is checked against: the
 * model's fastest plan is taken only when it is predicted faster than 12's plan by more than
 * GUARD_MARGIN (SUBWAVE_GUARD_MARGIN where 12's plan leaves SMs idle), counted on the time the
 * plans' own dispatches take (the fixed cost FIXED_S,
 * the same for every plan, left out of both). Otherwise 12's plan runs. So the step never runs
 * a plan that the model does not clearly prefer to the kernel it is built from. Nor one whose
 * kernel configuration no search has timed (measuredShare: its share is the model's default):
 * such a plan is offered to the per-shape search, which measures it, and runs only at a shape
 * where that search measured it the winner, or once a fit holds its share.
 *
 * Why 30%: the model is right about which of two plans is faster more often the larger the
 * difference it predicts. Over the saved H200 measurements (lab/time_model_fit.ts), comparing
 * plans measured in the same session at the same shape, of the 846 plans it predicts more than
 * 30% faster than 12's plan, 822 measured faster (all 91 of the sub-wave searches', 240 of the
 * thin-tile search's 242, 113 of the small-products search's 115, 100 of the narrow-columns
 * search's 115). Of the 24 that did not:
 * - 15 are in the narrow-columns search: short-K plans at four shapes of 40 to 120 columns (2 to
 *   30% slower; the pick at none of them);
 * - 2 each in the first search (its 4-slice plans at 1024^3, where its times rise and fall with
 *   the slice count), the short-K kernel's (two short-K plans at 3000x130x333, up to 5% slower),
 *   the thin-tile search's (32-row tiles at 100x200x16000, 1 and 23% slower) and the
 *   small-products search's (a row-dot plan at 2000x4x30 and a short-K plan at 128^3, 6% and 1%
 *   slower);
 * - 1 is at the short-K shapes: a 128x128x8 tile at 1200x40x5000 (5% slower).
 * A lower margin adds more plans and a loss with every few: 37 plans and 6 losses at 25%, 80 and
 * 12 at 20%, 160 and 33 at 10% (tests/plans_test.ts recomputes these counts).
 *
 * Why 20% where 12's plan leaves SMs idle (its grid smaller than the SM count): there the gains
 * measured over 12's plan run ahead of the predicted ones. Over every saved search, 50 of the 62
 * plans predicted 20 to 30% faster there measured faster, by 1.29 times at the median; the 18
 * predicted so elsewhere, by 1.15.
 *
 * Saved per-shape winners (lib/search.ts searchPlans, data/tuning/<device>/shapes.json) refine
 * the pick: the winner measured at shape S0 replaces the model's pick at a shape S of the same
 * class (shapeClass) only when the search also measured, at S0, the plan the rule picks at S
 * and 12's plan, and the winner's measured advantage over both, carried from S0 to S by the
 * model's ratio for each plan, still holds at S, by more than the guard's margin where S is not S0
 * (the carried part is the model's reading; so a winner whose configuration the model has no
 * measured share for replaces the pick at S0 alone, and at S the winner must launch and be of a
 * kind the planner offers there). Where the search did not measure those plans
 * the rule's pick stands, so a saved winner never replaces a plan it was not measured against.
 */
import type { DeviceSummary } from "../../lib/gpu.ts";
import { type DeviceModel, deviceModel, type Waves, waves } from "../../lib/model/device.ts";
import type { Params } from "../../lib/steps/spec.ts";
import { flops, sameShape, type Shape } from "../../lib/matrix.ts";
import { loadTuning, tunedParams } from "../../lib/tuning.ts";
import { type GeneratedParams, invocations, STEP_TRANSFORMS } from "../12_generated/generate.ts";
import { step as generated } from "../12_generated/step.ts";
import { GEMV_COLUMNS, GEMV_K_LANES, GEMV_MAX_ROWS, type GemvLoads } from "./gemv.ts";
import {
  gemvLoads,
  PLAN_DIRECT,
  PLAN_GEMV,
  PLAN_OUTER,
  PLAN_ROWDOT,
  PLAN_SHORTK,
  PLAN_TILES,
  type PlanKind,
  planKind,
  planLaunchPlan,
  shortkConfig,
  shortkPlan,
} from "./launch.ts";
import {
  FIXED_S,
  gridSize,
  measuredShare,
  planResident,
  predictPlanTime,
  residentPerSm,
  rowdotConfig,
} from "./predict.ts";
import {
  ROWDOT_INVOCATIONS,
  ROWDOT_MAX_COLS,
  ROWDOT_MAX_SUMS,
  ROWDOT_STAGED_COLS,
  rowdotStorageBytes,
  rowdotTripK,
} from "./rowdot.ts";
import { OUTER_COLUMNS, OUTER_ROWS, outerRowsPerWorkgroup } from "./outer.ts";
import { DIRECT_INVOCATIONS } from "./direct.ts";
import {
  SHORTK_DEPTHS,
  SHORTK_ROWS,
  SHORTK_WIDTHS,
  shortkRowsPerWorkgroup,
  shortkStorageBytes,
} from "./shortk.ts";

/**
 * The tile configurations the planner considers (with 12's tuned one; GROUP_M and AHEAD come
 * from step 12): the largest for big grids, then smaller ones whose grids fill the waves of
 * smaller products, each of which ran within 15% of the fastest at 4096 on the H200.
 */
export const TILE_CONFIGS: Pick<GeneratedParams, "BM" | "BN" | "BK" | "TN">[] = [
  { BM: 128, BN: 256, BK: 16, TN: 16 },
  { BM: 128, BN: 128, BK: 16, TN: 8 },
  { BM: 128, BN: 128, BK: 8, TN: 8 },
  { BM: 64, BN: 128, BK: 8, TN: 8 },
  { BM: 64, BN: 64, BK: 8, TN: 8 },
];

/**
 * Tiles of 32 rows, for products of a few rows (M up to THIN_TILE_MAX_M): a 64-row tile there
 * computes up to twice the rows C has, and the matrix-vector kernel is limited by its arithmetic.
 * With split K they fill the GPU where few row blocks leave it mostly idle.
 */
export const THIN_TILE_CONFIGS: Pick<GeneratedParams, "BM" | "BN" | "BK" | "TN">[] = [
  { BM: 32, BN: 128, BK: 8, TN: 8 },
  { BM: 32, BN: 128, BK: 16, TN: 8 },
];
/** The most rows for which the thin tiles are considered (the shapes their shares were fit on). */
export const THIN_TILE_MAX_M = 128;

/** Slice counts every split plan considers (wave-filling counts are added per shape). */
export const SLICE_COUNTS = [1, 2, 4, 8, 16, 32, 64];
/** The most slices of K a launch may have. */
export const MAX_SLICES = 64;
/** The shortest slice of K worth a tile workgroup (shorter ones are mostly prologue and stores). */
const MIN_SLICE_K = 128;
/** The widest N the row-dot plan is considered for, and the deepest K for the outer plan. */
const ROWDOT_MAX_N = ROWDOT_MAX_COLS;
const OUTER_MAX_K = 16;
/**
 * The deepest K the short-K plan is considered for: past it, 12's double-buffered loop hides
 * its loads where the short-K kernel waits for each trip's.
 */
const SHORTK_MAX_K = 512;
/**
 * The most rows for which the matrix-vector plan is a candidate: four row blocks of 16, each
 * reading B once, which at M of 33 to 64 still reads fewer bytes than a 64-row tile wastes.
 */
const GEMV_MAX_M = 4 * GEMV_MAX_ROWS;

/**
 * The predicted gain a plan must show over 12's plan to be picked instead: 0.3, i.e. more than
 * 1.3 times faster on the plans' own dispatches (this module's header says why).
 */
export const GUARD_MARGIN = 0.3;
/**
 * The margin where 12's plan launches fewer workgroups than the GPU has SMs, so that some SMs
 * get none: there the gains measured over 12's plan have run ahead of the predicted ones (this
 * module's header gives the counts).
 */
export const SUBWAVE_GUARD_MARGIN = 0.2;

/** The guard's margin at `s`: SUBWAVE_GUARD_MARGIN where 12's plan leaves SMs idle. */
export function guardMargin(s: Shape, device: DeviceSummary): number {
  const grid = gridSize(planLaunchPlan(s, fallbackPlan(s, device)));
  return grid < deviceModel(device).sms ? SUBWAVE_GUARD_MARGIN : GUARD_MARGIN;
}

/** One plan and the model's time for it. */
export interface Candidate {
  params: Params;
  kind: PlanKind;
  /** Whether the model has a measured share for its kernel configuration (measuredShare). */
  measured: boolean;
  waves: Waves;
  /** predictPlanTime, seconds. */
  seconds: number;
  /** The same in ms (a prediction, not a measurement). */
  modelMs: number;
}

/** Rows per workgroup of the matrix-vector plan: M in as few row blocks as fit in registers. */
export const gemvRows = (m: number) => Math.ceil(m / Math.ceil(m / GEMV_MAX_ROWS));

/**
 * The row counts per workgroup the matrix-vector plan may take at M: the fewest (gemvRows), and
 * past 4 rows that rounded up to a multiple of 4, and 16, the rows past M masked. Each keeps the
 * same row blocks, so B is read as often; they differ in how well the compiled kernel runs (the
 * time model's share per row count: 16 rows with one masked ran twice as fast as 15 on the H200).
 * Up to 4 rows the kernel is bound by B's bytes, so masked rows could only cost.
 */
export function gemvRowChoices(m: number): number[] {
  const fewest = gemvRows(m);
  if (fewest <= 4) return [fewest];
  return [...new Set([fewest, Math.min(4 * Math.ceil(fewest / 4), GEMV_MAX_ROWS), GEMV_MAX_ROWS])]
    .filter((rows) => Math.ceil(m / rows) === Math.ceil(m / fewest));
}

type Schedule = Pick<GeneratedParams, "GROUP_M" | "AHEAD" | "LITERAL_BUFFER">;
type Tile = Pick<GeneratedParams, "BM" | "BN" | "BK" | "TN">;

/**
 * How a tile's loop is scheduled (launch order, look-ahead, the buffer a tile reads): the
 * fastest schedule step 12's search on this device measured for this tile, else 12's tuned
 * choice, else its defaults. A plan chooses the tile and the slices; the schedule is 12's.
 */
function scheduleFor(device: DeviceSummary, tile: Tile): Schedule {
  const sameTile = (loadTuning(device, "generated")?.trials ?? [])
    .filter((t) =>
      t.validated && t.gflops !== undefined &&
      (["BM", "BN", "BK", "TN"] as const).every((k) => t.params[k] === tile[k])
    )
    .sort((a, b) => b.gflops! - a.gflops!);
  const from = sameTile[0]?.params ?? tunedParams(device, "generated") ?? generated.params;
  return {
    GROUP_M: from.GROUP_M ?? generated.params.GROUP_M,
    AHEAD: from.AHEAD ?? generated.params.AHEAD,
    LITERAL_BUFFER: from.LITERAL_BUFFER ?? generated.params.LITERAL_BUFFER,
  };
}

/** "Tiles, 1 slice, 12's params": exactly what step 12 runs at `s` on `device`. */
export function fallbackPlan(s: Shape, device: DeviceSummary): Params {
  return {
    ...generated.params,
    ...tunedParams(device, "generated", s),
    PLAN: PLAN_TILES,
    SLICES: 1,
  };
}

/** The device's limits the planner respects, WebGPU's defaults where it does not say. */
function limitsOf(device: DeviceSummary) {
  const l = device.limits ?? {};
  return {
    storage: l.maxComputeWorkgroupStorageSize ?? Infinity,
    invocations: l.maxComputeInvocationsPerWorkgroup ?? Infinity,
    binding: l.maxStorageBufferBindingSize ?? 2 ** 31 - 4,
    grid: l.maxComputeWorkgroupsPerDimension ?? 65535,
  };
}

/**
 * Whether `p` can launch at `s` on `device`: its workgroup fits the limits, its grid is no
 * larger than a dimension allows, and its split-K workspace fits one binding.
 */
function launchable(s: Shape, p: Params, device: DeviceSummary, storageBytes: number): boolean {
  const lim = limitsOf(device);
  const grid = planLaunchPlan(s, p).grid;
  return storageBytes <= lim.storage && grid.every((g) => g <= lim.grid) &&
    (p.SLICES === 1 || 4 * p.SLICES * s.m * s.n <= lim.binding);
}

function candidate(s: Shape, params: Params, device: DeviceSummary): Candidate {
  const seconds = predictPlanTime(s, params, device);
  const w = waves(
    gridSize(planLaunchPlan(s, params)),
    deviceModel(device).sms,
    planResident(params),
  );
  return {
    params,
    kind: planKind(params),
    measured: measuredShare(params),
    waves: w,
    seconds,
    modelMs: 1e3 * seconds,
  };
}

/**
 * Slice counts for a grid of `tiles` workgroups of `resident` per SM: the powers of two, and
 * the counts that make j whole waves (j = 1..4), each leaving slices of at least `minK`.
 */
function sliceCounts(s: Shape, tiles: number, resident: number, dev: DeviceModel, minK: number) {
  const filling = [1, 2, 3, 4].map((j) => Math.floor((j * dev.sms * resident) / tiles));
  return [...new Set([...SLICE_COUNTS, ...filling])]
    .filter((n) => n >= 1 && n <= MAX_SLICES && (n === 1 || s.k / n >= minK))
    .sort((a, b) => a - b);
}

/** The tile and split-K plans. */
function tilePlans(s: Shape, device: DeviceSummary, dev: DeviceModel): Params[] {
  const tuned = tunedParams(device, "generated", s);
  const configs: Tile[] = [...TILE_CONFIGS, ...s.m <= THIN_TILE_MAX_M ? THIN_TILE_CONFIGS : []];
  const sameTile = (a: Tile, b: Params) =>
    (["BM", "BN", "BK", "TN"] as const).every((k) => a[k] === b[k]);
  if (tuned && !configs.some((c) => sameTile(c, tuned))) {
    configs.unshift({ BM: tuned.BM, BN: tuned.BN, BK: tuned.BK, TN: tuned.TN });
  }
  const out: Params[] = [];
  const lim = limitsOf(device);
  for (const c of configs) {
    const config: GeneratedParams = { ...c, PAD: 0, ...STEP_TRANSFORMS, ...scheduleFor(device, c) };
    // Configurations this device cannot launch (a software adapter's 32 KiB of workgroup memory).
    if (invocations(config) > lim.invocations) continue;
    const storage = generated.workgroupStorageBytes({ ...config });
    const tiles = Math.ceil(s.m / c.BM) * Math.ceil(s.n / c.BN);
    const counts = sliceCounts(s, tiles, residentPerSm(config), dev, Math.max(MIN_SLICE_K, c.BK));
    for (const slices of counts) {
      const p = { ...config, PLAN: PLAN_TILES, SLICES: slices };
      // A product thinner than one tile runs on the edge-strip kernel alone: slices change nothing.
      if (slices > 1 && gridSize(planLaunchPlan(s, p)) === 0) break;
      if (launchable(s, p, device, storage)) out.push(p);
    }
  }
  return out;
}

/** The row-dot and dot plans, for N up to ROWDOT_MAX_N. */
function rowdotPlans(s: Shape, device: DeviceSummary): Params[] {
  if (s.n > ROWDOT_MAX_N) return [];
  const cols = 2 ** Math.ceil(Math.log2(s.n));
  const out: Params[] = [];
  for (const kLanes of [32, ROWDOT_INVOCATIONS]) {
    if (kLanes !== 32 && cols >= ROWDOT_STAGED_COLS) continue;
    for (const rows of [1, 2, 4, 8]) {
      if (rows * cols > ROWDOT_MAX_SUMS) continue;
      const config = { kLanes, rows, cols };
      for (const slices of SLICE_COUNTS) {
        if (slices > 1 && s.k / slices < rowdotTripK(config)) continue;
        const p = {
          PLAN: PLAN_ROWDOT,
          SLICES: slices,
          KL: kLanes,
          BM: (ROWDOT_INVOCATIONS / kLanes) * rows,
          BN: cols,
        };
        if (launchable(s, p, device, rowdotStorageBytes(rowdotConfig(p)))) out.push(p);
      }
    }
  }
  return out;
}

/** The outer plans, for K up to OUTER_MAX_K. */
function outerPlans(s: Shape, device: DeviceSummary): Params[] {
  if (s.k > OUTER_MAX_K) return [];
  return OUTER_ROWS.map((rows) => ({
    PLAN: PLAN_OUTER,
    SLICES: 1,
    BM: outerRowsPerWorkgroup(rows),
    BN: OUTER_COLUMNS,
  })).filter((p) => launchable(s, p, device, 0));
}

/**
 * The short-K plans, for K up to SHORTK_MAX_K where C has at least the smallest plan's rows and
 * 32 columns (thinner products have plans of their own): 128 columns per workgroup, and 64 or 32
 * where N is at most 128, so that one 128-wide block would compute columns C does not have.
 */
function shortkPlans(s: Shape, device: DeviceSummary): Params[] {
  if (s.k > SHORTK_MAX_K || s.m < shortkRowsPerWorkgroup(SHORTK_ROWS[0]) || s.n < 32) return [];
  const widths = SHORTK_WIDTHS.filter((w) => w === SHORTK_WIDTHS[0] || s.n <= SHORTK_WIDTHS[0]);
  return widths.flatMap((columns) =>
    SHORTK_ROWS.flatMap((rows) =>
      SHORTK_DEPTHS.map((depth) => shortkPlan({ rows, depth, columns }))
    )
  ).filter((p) => launchable(s, p, device, shortkStorageBytes(shortkConfig(p))));
}

/**
 * The matrix-vector kernel's loads at `s`: vec4s where K and N are multiples of 4, else scalar
 * loads (vec4 rows would need a padded copy of B).
 */
export const gemvLoadsFor = (s: Shape): GemvLoads => s.k % 4 === 0 && s.n % 4 === 0 ? 4 : 1;

/**
 * The largest product the direct plan is considered for: below it every other plan's fixed
 * machinery (staging, barriers, padding copies, second dispatches) outweighs the arithmetic.
 */
export const DIRECT_MAX_FLOPS = 1e7;

/**
 * The direct kernel's width at `s`: 64 rows of a single column, one row of 64 columns for a
 * single row, else 8 x 8. The model reads the three alike (one round of K steps at these sizes);
 * measured on the H200 (lab/time_model_fit.ts's "narrow and direct" search), 8 x 8 was the
 * fastest of the three or within 8% of it at each of the 10 products with more than one row and
 * column, where the other two took up to 38% longer than 8 x 8; at 5000 x 5 x 1 the single column
 * took 7.1 us, 8 x 8 8.9.
 */
const directWidth = (s: Shape): number => s.n === 1 ? 1 : s.m === 1 ? 64 : 8;

/** The direct plan, for products of at most DIRECT_MAX_FLOPS. */
function directPlans(s: Shape, device: DeviceSummary): Params[] {
  if (flops(s) > DIRECT_MAX_FLOPS) return [];
  const BN = directWidth(s);
  const p = { PLAN: PLAN_DIRECT, SLICES: 1, BM: DIRECT_INVOCATIONS / BN, BN };
  return launchable(s, p, device, 0) ? [p] : [];
}

/** The matrix-vector plans, for M up to GEMV_MAX_M. */
function gemvPlans(s: Shape): Params[] {
  if (s.m > GEMV_MAX_M) return [];
  return SLICE_COUNTS.filter((n) => n === 1 || s.k / n >= MIN_SLICE_K).flatMap((slices) =>
    gemvRowChoices(s.m).map((rows) => ({
      PLAN: PLAN_GEMV,
      SLICES: slices,
      BM: rows,
      BN: GEMV_COLUMNS,
      BK: 4 * GEMV_K_LANES,
      LOADS: gemvLoadsFor(s),
    }))
  );
}

/**
 * Every plan the planner considers for `s` on `device`, fastest first under the model (see the
 * module's header for which plans are considered where).
 */
export function candidates(s: Shape, device: DeviceSummary): Candidate[] {
  const dev = deviceModel(device);
  const plans = [
    ...tilePlans(s, device, dev),
    ...gemvPlans(s),
    ...rowdotPlans(s, device),
    ...outerPlans(s, device),
    ...shortkPlans(s, device),
    ...directPlans(s, device),
  ];
  return plans.map((p) => candidate(s, p, device)).sort((a, b) => a.seconds - b.seconds);
}

/**
 * How much faster the model predicts `plan` than `than` at `s`: the ratio of their times past
 * the fixed cost FIXED_S (which every plan pays alike).
 */
export function predictedGain(s: Shape, plan: Params, than: Params, device: DeviceSummary): number {
  return (predictPlanTime(s, than, device) - FIXED_S) /
    (predictPlanTime(s, plan, device) - FIXED_S);
}

/** What the planner chose for a shape, and why. */
export interface PlanChoice {
  params: Params;
  kind: PlanKind;
  /**
   * "model" (the model's fastest plan, clearly faster than 12's), "guard" (12's plan: the
   * model's fastest was not clearly faster), or "tuned" (a saved per-shape winner).
   */
  from: "model" | "guard" | "tuned";
  waves: Waves;
  /** predictPlanTime of the plan, seconds. */
  seconds: number;
}

const choice = (c: Candidate, from: PlanChoice["from"]): PlanChoice => ({
  params: c.params,
  kind: c.kind,
  from,
  waves: c.waves,
  seconds: c.seconds,
});

/**
 * The rule's pick at `s` (no saved winners): the model's fastest plan of a measured configuration
 * when it is predicted more than the guard's margin (guardMargin) faster than 12's plan, else
 * 12's plan.
 */
export function modelPlan(s: Shape, device: DeviceSummary): PlanChoice {
  const fallback = candidate(s, fallbackPlan(s, device), device);
  const best =
    candidates(s, device).find((c) => c.measured || samePlan(c.params, fallback.params)) ??
      fallback;
  if (samePlan(best.params, fallback.params)) return choice(fallback, "model");
  return predictedGain(s, best.params, fallback.params, device) > 1 + guardMargin(s, device)
    ? choice(best, "model")
    : choice(fallback, "guard");
}

/**
 * The keys that make two parameter sets the same kernel and launch, per kind: for the tile
 * plans the tile, the slices and the loop's schedule (a search that ran another schedule
 * measured another kernel).
 */
function planKeys(p: Params): string[] {
  switch (p.PLAN) {
    case PLAN_GEMV:
      return ["PLAN", "SLICES", "BM", "BN", "LOADS"];
    case PLAN_ROWDOT:
      return ["PLAN", "SLICES", "BM", "BN", "KL"];
    case PLAN_OUTER:
      return ["PLAN", "BM"];
    case PLAN_SHORTK:
      return ["PLAN", "BM", "BN", "BK"];
    case PLAN_DIRECT:
      return ["PLAN", "BN"];
    default:
      return [
        "PLAN",
        "SLICES",
        "BM",
        "BN",
        "BK",
        "TN",
        "GROUP_M",
        "AHEAD",
        ...Object.keys(STEP_TRANSFORMS),
      ];
  }
}

/** Whether two parameter sets are the same plan (compared on the plan's own keys). */
export const samePlan = (a: Params, b: Params): boolean =>
  planKeys(a).every((k) => valueOf(a, k) === valueOf(b, k));

/** A plan's value for key `k`, with the defaults a plan may leave out. */
const valueOf = (p: Params, k: string) => k === "LOADS" ? gemvLoads(p) : p[k] ?? 0;

/**
 * A shape's class for the saved search: each dimension's log2, rounded. A class holds the
 * dimensions from 2^(j - 1/2) to 2^(j + 1/2), so shapes of one class are within a factor of 2 of
 * each other in every dimension.
 */
export function shapeClass(s: Shape): string {
  return [s.m, s.k, s.n].map((d) => Math.round(Math.log2(d))).join("-");
}

/**
 * The saved winner for `s`'s class as it was measured, with the search's record; undefined when
 * there is none or it cannot run at `s` (a matrix-vector winner at M past GEMV_MAX_M, or whose
 * rows per workgroup are not among this M's choices: re-fit, it would be another kernel, not the
 * one measured; so would its other loads at a
 * K or N of another alignment). At a shape other than its own, also undefined where it does not
 * launch (its grid; its workgroup memory already fit this device), where the planner offers no
 * plan of its kind (the range its kernel is written for), or where the model has no measured
 * share for its configuration (carried by a default share, its advantage would be a guess).
 */
function savedWinner(s: Shape, device: DeviceSummary) {
  const tuning = loadTuning(device, "shapes");
  const won = tuning?.perShape?.find((w) => shapeClass(w.shape) === shapeClass(s));
  if (!tuning || !won) return undefined;
  if (
    won.params.PLAN === PLAN_GEMV &&
    (!gemvRowChoices(s.m).includes(won.params.BM) || gemvLoads(won.params) !== gemvLoadsFor(s))
  ) return undefined;
  const kind = planKind(won.params);
  if (
    !sameShape(s, won.shape) &&
    (!measuredShare(won.params) || !launchable(s, won.params, device, 0) ||
      !candidates(s, device).some((c) => c.kind === kind))
  ) return undefined;
  return { params: won.params, at: won.shape, tuning };
}

/**
 * The plan for `s` on `device`: the rule's pick (modelPlan), replaced by the saved winner of
 * `s`'s class where the search measured that winner faster than both the rule's pick and 12's
 * plan (each measured time carried to `s` by the model's ratio for its plan).
 */
export function pickPlan(s: Shape, device: DeviceSummary): PlanChoice {
  const rule = modelPlan(s, device);
  const saved = savedWinner(s, device);
  if (!saved || samePlan(saved.params, rule.params)) return rule;
  const measured = (p: Params) =>
    saved.tuning.trials.find((t) =>
      t.validated && t.medianMs !== undefined && t.shape && sameShape(t.shape, saved.at) &&
      samePlan(t.params, p)
    )?.medianMs;
  // A plan's measured time at the winner's shape, carried to `s` by the model.
  const carried = (p: Params) => {
    const ms = measured(p);
    return ms === undefined
      ? undefined
      : ms * predictPlanTime(s, p, device) / predictPlanTime(saved.at, p, device);
  };
  const winner = carried(saved.params);
  const fallback = fallbackPlan(s, device);
  const rivals = [rule.params, ...samePlan(fallback, saved.params) ? [] : [fallback]].map(carried);
  // At the winner's own shape the measured times decide; carried to a neighbour by the model,
  // the advantage must clear the guard's margin, as any choice the model makes must.
  const margin = sameShape(s, saved.at) ? 1 : 1 + guardMargin(s, device);
  if (winner === undefined || rivals.some((t) => t === undefined || t <= winner * margin)) {
    return rule;
  }
  return choice(candidate(s, saved.params, device), "tuned");
}

/**
 * The plans in the order the planner prefers them at `s`: its pick, 12's plan (what every pick
 * is checked against), then the rest fastest first under the model. The per-shape search
 * measures from the front, so the plans a saved winner must beat are always measured.
 */
export function planOrder(s: Shape, device: DeviceSummary): Candidate[] {
  const all = candidates(s, device);
  const first = [modelPlan(s, device).params, fallbackPlan(s, device)];
  const front = first.map((p) => all.find((c) => samePlan(c.params, p)) ?? candidate(s, p, device))
    .filter((c, i, list) => list.findIndex((d) => samePlan(d.params, c.params)) === i);
  return [...front, ...all.filter((c) => !front.some((f) => samePlan(f.params, c.params)))];
}
