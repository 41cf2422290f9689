/**
 * Step 13's plans and the picker that chooses one per shape and device.
 *
 * A plan is a parameter set of the step (kernels/13_shapes/step.ts):
 * - tiles (PLAN 0, SLICES 1): step 12's generated kernel at a tile configuration chosen for how
 *   well its grid fills the GPU;
 * - split-K (PLAN 0, SLICES > 1): the same kernel with K cut into SLICES slices of whole k tiles,
 *   each slice's partial C written to a workspace and summed in slice order by a second
 *   dispatch (deterministic: the same sums in the same order on every run);
 * - matrix-vector (PLAN 1): kernels/13_shapes/gemv.ts for M of 1 to GEMV_MAX_M = 32 (up to 16
 *   rows of C per workgroup, so one or two row blocks), B read once per row block, K split over
 *   SLICES as in split-K.
 *
 * A small N has no plan of its own: the matrix-vector kernel on swapped roles (C^T = B^T A^T)
 * would need A and B transposed in memory, a copy that reads and writes each once (three times
 * the traffic of the product itself), so small-N shapes take the tile and split-K plans, which
 * read A's rows contiguously.
 *
 * No rule forces a kind: at every shape the model ranks every tile configuration at every slice
 * count that leaves slices of at least max(MIN_SLICE_K, BK), and the matrix-vector plan when
 * M <= GEMV_MAX_M. The picker takes a saved winner when the per-shape search
 * (kernels/13_shapes/search.ts) ran on this device for a shape of the same class, and otherwise
 * the plan the model ranks first. The model is wave arithmetic over the workgroups the runner
 * launches (lib/kernels/cost.ts launchPlan: whole tiles, plus the edge-strip kernel's dispatch
 * when M or N ends 1..STRIP_WIDTH past a tile multiple): a grid of W workgroups on a GPU with S
 * SMs, each of which holds R of them at once, runs in ceil(W / (S·R)) waves, and a wave that is
 * partly empty costs as much as a full one.
 */
import type { DeviceSummary } from "../../lib/gpu.ts";
import {
  type DeviceModel,
  deviceModel,
  HOPPER_SM,
  occupancy,
  type Waves,
  waves,
} from "../../lib/kernels/device.ts";
import { ceilDiv, type LaunchPlan, launchPlan, type LaunchSpec } from "../../lib/kernels/cost.ts";
import { type KernelSpec, type Params, stepLayout } from "../../lib/kernels/spec.ts";
import type { Shape } from "../../lib/matrix.ts";
import { loadTuning, tunedParams, type TuningRecord } from "../../lib/tuning.ts";
import { type GeneratedParams, invocations, STEP_TRANSFORMS } from "../12_generated/generate.ts";
import { step as generated } from "../12_generated/step.ts";
import { GEMV_COLUMNS, GEMV_K_LANES, GEMV_MAX_ROWS } from "./gemv.ts";

export const PLAN_TILES = 0;
export const PLAN_GEMV = 1;

/** The device table and the wave arithmetic live in lib/kernels/device.ts (model.ts uses them). */
export { type DeviceModel, deviceModel, type Waves, waves };

export type PlanKind = "tiles" | "split-K" | "matrix-vector";

/** A plan as readers know it: "split-K 4 x 128x256x16 TN 8" (BM x BN x BK, TN outputs wide). */
export function planLabel(p: Record<string, number>): string {
  const kind = planKind(p);
  if (kind === "matrix-vector") {
    return `matrix-vector ${p.BM} row${p.BM === 1 ? "" : "s"}${
      p.SLICES > 1 ? `, ${p.SLICES} slices` : ""
    }`;
  }
  const tile = `${p.BM}x${p.BN}x${p.BK}${p.TN ? ` TN ${p.TN}` : ""}`;
  return kind === "split-K" ? `split-K ${p.SLICES} x ${tile}` : `tiles ${tile}`;
}

/** What a parameter set of the step does. */
export function planKind(p: Params): PlanKind {
  if (p.PLAN === PLAN_GEMV) return "matrix-vector";
  return p.SLICES > 1 ? "split-K" : "tiles";
}

/** The tile configurations the picker chooses among (GROUP_M and AHEAD come from step 12). */
export const TILE_CONFIGS: Pick<GeneratedParams, "BM" | "BN" | "BK" | "TN">[] = [
  { BM: 128, BN: 256, BK: 16, TN: 16 },
  { BM: 128, BN: 128, BK: 16, TN: 8 },
  { BM: 64, BN: 128, BK: 16, TN: 8 },
  { BM: 64, BN: 128, BK: 8, TN: 8 },
  { BM: 64, BN: 64, BK: 16, TN: 8 },
  { BM: 32, BN: 64, BK: 16, TN: 8 },
];

/** Slice counts the picker considers for split-K and the matrix-vector plan. */
export const SLICE_COUNTS = [1, 2, 4, 8, 16, 32, 64];
/** The shortest slice of K worth a workgroup (shorter ones are mostly prologue and stores). */
const MIN_SLICE_K = 128;

/**
 * Workgroups of a configuration one SM holds at once (lib/kernels/device.ts occupancy: NVIDIA's
 * per-SM budgets of registers, invocations, workgroups and shared memory), with an estimate of
 * the registers an invocation takes: its 8 x TN accumulators, its loads in flight, its
 * fragments, and 24 more.
 */
export function residentPerSm(p: GeneratedParams): number {
  const t = invocations(p);
  const loads = (p.BM * p.BK + p.BK * p.BN) / 4 / t;
  const registers = 8 * p.TN + 4 * loads + 4 * (2 + p.TN / 4) + 24;
  const smem = 2 * (p.BK * p.BM + p.BK * p.BN) * 4;
  return occupancy(HOPPER_SM, t, registers, smem).resident;
}

/** One plan and the model's time for it. */
export interface Candidate {
  params: Params;
  kind: PlanKind;
  waves: Waves;
  /** Modeled time, ms (a ranking, not a promise). */
  modelMs: number;
}

/** Per dispatch: what the model charges for launching one more kernel. */
const DISPATCH_MS = 0.005;

/**
 * How the runner launches a plan, shared by the step (kernels/13_shapes/step.ts) and the model
 * here, so both count the same workgroups: the grid over the whole tiles (or the matrix-vector
 * kernel's column and row blocks), z = SLICES, and edge strips for the tile plans.
 */
export const planLaunch: Pick<KernelSpec, "dispatch" | "edgeStrips" | "slices"> = {
  dispatch: (s, p) => [ceilDiv(s.n, p.BN), ceilDiv(s.m, p.BM), p.SLICES],
  // The matrix-vector plan has no BM x BN tiles to cut thin edges from.
  edgeStrips: (p) => p.PLAN !== PLAN_GEMV,
  slices: (p) => p.SLICES,
};

/** Step 13's launch description: step 12's alignment and precision, the plan's grid. */
const launchSpec: LaunchSpec = { ...generated, ...stepLayout(import.meta.url), ...planLaunch };

/** The launch plan the runner would dispatch for `params` at `s`. */
export const planLaunchPlan = (s: Shape, params: Params): LaunchPlan =>
  launchPlan(launchSpec, params, s);

/**
 * What the runner dispatches besides the plan's main kernel: the padding copies (each copied
 * matrix read once and written once) and the edge-strip kernel (its loads as lib/kernels/cost.ts
 * launchModel counts them: each bottom-strip workgroup reads the strip's rows of A and all of B's
 * rows for its columns, each right-strip workgroup its rows of A and the strip's columns of B).
 * Both move few FLOPs per byte, so the model charges them their bytes at full bandwidth, plus a
 * dispatch each.
 */
function extrasMs(plan: LaunchPlan, s: Shape, dev: DeviceModel): number {
  let elements = 0, dispatches = plan.copies.length;
  for (const c of plan.copies) elements += c.rows * c.cols + c.toRows * c.toCols;
  if (plan.edgeStrips) {
    dispatches++;
    const rows = s.m - plan.edgeStrips.rowsFrom, cols = s.n - plan.edgeStrips.colsFrom;
    if (rows > 0) elements += plan.stripGroups.bottom * rows * s.k + s.k * s.n + rows * s.n;
    if (cols > 0) {
      elements += plan.edgeStrips.rowsFrom * s.k + plan.stripGroups.right * s.k * cols +
        plan.edgeStrips.rowsFrom * cols;
    }
  }
  return dispatches * DISPATCH_MS + (4 * elements) / (dev.bandwidthGBs * 1e6);
}

/** Workgroups of a launch plan's main dispatch (x · y · z of its grid). */
const gridSize = (plan: LaunchPlan) => plan.grid[0] * plan.grid[1] * plan.grid[2];

/**
 * Share of an SM's FMA peak a tile reaches inside a full wave: more of it for tiles that reuse
 * each loaded element more (BM·BN / (BM + BN) multiply-adds per element). A prior for ranking;
 * the search measures.
 */
const tileEfficiency = (p: GeneratedParams) => {
  const reuse = (p.BM * p.BN) / (p.BM + p.BN);
  return reuse / (reuse + 16);
};

/**
 * What splitting K into `slices` adds: the partial Cs of m x n written (slices - 1 more than C),
 * read back by the sum, and C written again, plus the sum's dispatch.
 */
const sumMs = (slices: number, m: number, n: number, dev: DeviceModel) =>
  slices > 1 ? DISPATCH_MS + (2 * slices * m * n * 4) / (dev.bandwidthGBs * 1e6) : 0;

/**
 * A tiles or split-K plan of `config` with `slices` slices, under the model: the workgroups the
 * runner launches (launchPlan: whole tiles only where an edge strip takes a thin remainder), and
 * the strip and padding dispatches on top.
 */
function tilePlan(
  s: Shape,
  config: GeneratedParams,
  slices: number,
  dev: DeviceModel,
): Candidate {
  const params = { ...config, PLAN: PLAN_TILES, SLICES: slices };
  const plan = planLaunchPlan(s, params);
  const covered = plan.tiles;
  const resident = residentPerSm(config);
  const w = waves(gridSize(plan), dev.sms, resident);
  const sliceK = Math.ceil(s.k / slices / config.BK) * config.BK;
  const perSlotGflops = (dev.smGflops * tileEfficiency(config)) / resident;
  // Each workgroup also pays its first tile's loads and its stores: about 4 more k tiles.
  const workK = sliceK + 4 * config.BK;
  const computeMs = (w.waves * 2 * config.BM * config.BN * workK) / (perSlotGflops * 1e6);
  // A read N / BN times and B M / BM times (the L2 keeps some of it: a floor, not a sum).
  const bytes = 4 * (covered.m * covered.k * plan.grid[0] + covered.k * covered.n * plan.grid[1]);
  const memoryMs = bytes / (dev.bandwidthGBs * 1e6);
  const summed = sumMs(slices, Math.min(covered.m, s.m), Math.min(covered.n, s.n), dev);
  return {
    params,
    kind: slices > 1 ? "split-K" : "tiles",
    waves: w,
    modelMs: DISPATCH_MS + Math.max(computeMs, memoryMs) + summed + extrasMs(plan, s, dev),
  };
}

/** Rows per workgroup of the matrix-vector plan: M in as few row blocks as fit in registers. */
export const gemvRows = (m: number) => Math.ceil(m / Math.ceil(m / GEMV_MAX_ROWS));

/**
 * Matrix-vector workgroups (256 invocations) the model assumes an SM needs in flight to cover
 * DRAM latency: a launch with fewer than GEMV_PER_SM per SM draws that share of the bandwidth.
 */
const GEMV_PER_SM = 4;

/**
 * The matrix-vector plan with `slices` slices: bound by reading B once per row block, at the
 * bandwidth the launch can draw (its workgroups over GEMV_PER_SM per SM, at most all of it).
 */
function gemvPlan(s: Shape, slices: number, dev: DeviceModel): Candidate {
  const rows = gemvRows(s.m);
  const params = {
    PLAN: PLAN_GEMV,
    SLICES: slices,
    BM: rows,
    BN: GEMV_COLUMNS,
    BK: 4 * GEMV_K_LANES,
  };
  const plan = planLaunchPlan(s, params);
  const blocks = plan.grid[1];
  const w = waves(gridSize(plan), dev.sms, GEMV_PER_SM);
  const bytes = 4 * (s.k * s.n * blocks + s.m * s.k + s.m * s.n);
  const drawn = Math.min(1, w.workgroups / w.perWave);
  return {
    params,
    kind: "matrix-vector",
    waves: w,
    modelMs: DISPATCH_MS + bytes / (dev.bandwidthGBs * 1e6 * drawn) +
      sumMs(slices, s.m, s.n, dev) + extrasMs(plan, s, dev),
  };
}

/** The most rows for which the matrix-vector plan is a candidate (two row blocks of 16). */
const GEMV_MAX_M = 2 * GEMV_MAX_ROWS;

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

/**
 * Every plan the picker considers for `s`, fastest first under the model: each tile
 * configuration (and step 12's tuned one) at each slice count that leaves slices of at least
 * MIN_SLICE_K, and the matrix-vector plan when M <= GEMV_MAX_M.
 */
export function candidates(s: Shape, device: DeviceSummary, tuning?: TuningRecord): Candidate[] {
  const dev = deviceModel(device, tuning);
  const tuned = tunedParams(device, "generated");
  const configs = [...TILE_CONFIGS];
  if (
    tuned && !configs.some((c) => ["BM", "BN", "BK", "TN"].every((k) => c[k as "BM"] === tuned[k]))
  ) {
    configs.unshift({ BM: tuned.BM, BN: tuned.BN, BK: tuned.BK, TN: tuned.TN });
  }
  const slicesFor = (minK: number) =>
    SLICE_COUNTS.filter((n) => n === 1 || s.k / n >= Math.max(MIN_SLICE_K, minK));
  // Configurations this device cannot launch (a software adapter's 32 KiB of workgroup memory).
  const fits = (p: GeneratedParams) =>
    2 * (p.BK * p.BM + p.BK * p.BN) * 4 <=
      (device.limits.maxComputeWorkgroupStorageSize ?? Infinity) &&
    invocations(p) <= (device.limits.maxComputeInvocationsPerWorkgroup ?? Infinity);
  const out: Candidate[] = [];
  for (const c of configs) {
    const config: GeneratedParams = {
      ...c,
      PAD: 0,
      ...STEP_TRANSFORMS,
      ...scheduleFor(device, c),
    };
    if (!fits(config)) continue;
    for (const n of slicesFor(config.BK)) out.push(tilePlan(s, config, n, dev));
  }
  if (s.m <= GEMV_MAX_M) {
    for (const n of slicesFor(4 * GEMV_K_LANES)) out.push(gemvPlan(s, n, dev));
  }
  return out.sort((a, b) => a.modelMs - b.modelMs);
}

/**
 * A shape's class for the saved search: each dimension's log2, rounded. A class holds the
 * dimensions from 2^(j - 1/2) to 2^(j + 1/2), so shapes of one class are within a factor of 2 of
 * each other in every dimension (each within sqrt(2) of the same power of two), and one plan is
 * taken to suit them all.
 */
export function shapeClass(s: Shape): string {
  return [s.m, s.k, s.n].map((d) => Math.round(Math.log2(d))).join("-");
}

/** What the picker chose for a shape, and why. */
export interface PlanChoice {
  params: Params;
  kind: PlanKind;
  /** "tuned" (the saved search's winner for the shape's class) or "model". */
  from: "tuned" | "model";
  waves: Waves;
}

/**
 * The plan for `s` on `device`: the saved winner for the shape's class when the per-shape search
 * ran there (the matrix-vector plan's rows re-fit to this M), else the model's first candidate.
 */
export function pickPlan(s: Shape, device: DeviceSummary): PlanChoice {
  const tuning = loadTuning(device, "shapes");
  const all = candidates(s, device, tuning);
  const won = tuning?.perShape?.find((w) => shapeClass(w.shape) === shapeClass(s));
  if (won) {
    // The per-shape search chose the plan (tile and slices); its loop is scheduled as step 12's
    // current tuning says, like every model-picked plan's.
    const params = { ...won.params };
    if (params.PLAN === PLAN_GEMV) params.BM = gemvRows(s.m);
    else Object.assign(params, STEP_TRANSFORMS, scheduleFor(device, params as Tile));
    if (params.PLAN !== PLAN_GEMV || s.m <= GEMV_MAX_M) {
      const same = all.find((c) => sameParams(c.params, params));
      return { params, kind: planKind(params), from: "tuned", waves: same?.waves ?? all[0].waves };
    }
  }
  return choice(all[0]);
}

/** The model's plan alone, whatever per-shape search this device has saved. */
export function modelPlan(s: Shape, device: DeviceSummary): PlanChoice {
  return choice(candidates(s, device)[0]);
}

const choice = (best: Candidate): PlanChoice => ({
  params: best.params,
  kind: best.kind,
  from: "model",
  waves: best.waves,
});

/** Whether two plans are the same (compared on the plan's own keys). */
function sameParams(a: Params, b: Params): boolean {
  const keys = ["PLAN", "SLICES", "BM", "BN", "BK", "TN"];
  return keys.every((k) => (a[k] ?? 0) === (b[k] ?? 0) || (a.PLAN === PLAN_GEMV && k === "TN"));
}
