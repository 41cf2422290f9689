/**
 * The time model of step 13's plans: predictPlanTime(shape, plan, device), in seconds, for the
 * planner (kernels/13_shapes/plans.ts) to rank plans with and for the bench and notebooks to
 * print beside measured times.
 *
 * A product is one compute pass: a fixed cost, then the plan's dispatches one after another
 * (padding copies, the main kernel, the slice sum, the edge strips), each as long as the larger
 * of what it must move through DRAM and what its workgroups take:
 *
 * - tiles and split-K (step 12's kernel): the busiest SM gets n = ceil(W / SMs) of the W
 *   workgroups and holds R at once (lib/model/device.ts occupancy); each workgroup multiplies
 *   2·BM·BN·(its K + K_TILES·BK) FLOPs (the extra k tiles: its first loads and its stores) at the
 *   tile configuration's share of the SM's FMA peak, shared by the R workgroups of a full wave;
 *   a last wave of j < R runs faster per workgroup, taking R^b · j^(1 - b) workgroups' time;
 * - the bandwidth kernels (matrix-vector, row-dot, outer, edge strips, copies, slice sum): the
 *   bytes at DRAM bandwidth, or the trips of their loop, whichever is longer. A trip issues its
 *   loads together and waits for them once, TRIP_S; an SM holding R workgroups runs
 *   ceil(n / R) rounds of the workgroups' trips.
 *
 * The constants are the H200's, fit (least squares on log time, large misses damped) to 322
 * validated times saved from it: the per-shape plan search (data/tuning/nvidia-h200/
 * shapes.json, 14 shapes of 1 to 32768 rows; its tile plans at M = 1 left out, where every tile
 * plan is the same edge-strip kernel), step 12's tile search at 4096 (generated.json, the
 * fastest schedule of each tile, and its times at the search's other shapes) and the
 * whole-ladder record's steps 12 and 13 on the suite (data/runs/nvidia-h200-2026-11-26T0725.json).
 * Over them the model's time is within 9% of the measured one at the median and 31% at the 90th
 * percentile (tests/plans_test.ts recomputes both).
 * On another GPU the per-SM rates scale with its FMA peak and the bytes with its bandwidth
 * (the device table); the fixed cost and the trip are the H200's. The row-dot and outer kernels
 * were not measured for the fit: their times are this model's reading of their loops.
 */
import type { DeviceSummary } from "../../lib/gpu.ts";
import {
  type DeviceModel,
  deviceModel,
  HOPPER_SM,
  occupancy,
  type Waves,
  waves,
} from "../../lib/model/device.ts";
import { ceilDiv, type LaunchPlan } from "../../lib/steps/launch.ts";
import type { Params } from "../../lib/steps/spec.ts";
import type { Shape } from "../../lib/matrix.ts";
import { type GeneratedParams, invocations } from "../12_generated/generate.ts";
import { generatedParams } from "../12_generated/step.ts";
import { GEMV_K_LANES, GEMV_LANES } from "./gemv.ts";
import {
  outerRows,
  PLAN_GEMV,
  PLAN_OUTER,
  PLAN_ROWDOT,
  planLaunchPlan,
  rowdotRows,
} from "./launch.ts";
import {
  ROWDOT_INVOCATIONS,
  type RowDotConfig,
  rowdotRegisters,
  rowdotStorageBytes,
  rowdotTripK,
} from "./rowdot.ts";
import { OUTER_INVOCATIONS, OUTER_K_STEP, outerRegisters } from "./outer.ts";

/** What every product costs whatever its plan: the pass, its timestamps, the first launch. */
export const FIXED_S = 20.8e-6;
/** k tiles' worth of work a tile workgroup does besides its share of K (first loads, stores). */
const K_TILES = 5.93;
/** b: how much faster a workgroup runs in a partly filled last wave (0: none, 1: in proportion). */
const PARTIAL_WAVE = 0.228;
/** Share of the spec sheet's DRAM bandwidth the kernels draw. */
const DRAM_EFFICIENCY = 0.927;
/** Share of that the edge-strip kernel draws (its loads are not all coalesced). */
const STRIP_EFFICIENCY = 0.587;
/** One trip of a bandwidth kernel's loop: its loads issued together, waited for once. */
export const TRIP_S = 1.9e-6;

/**
 * Share of an SM's FMA peak each tile configuration reaches in full waves ("BMxBNxBK/TN"): fit
 * with the rest, mostly set by step 12's search at 4096 on the H200.
 */
const TILE_EFFICIENCY: Record<string, number> = {
  "32x64x16/8": 0.244,
  "64x64x8/8": 0.622,
  "64x64x16/8": 0.371,
  "64x64x32/8": 0.177,
  "64x128x8/8": 0.678,
  "64x128x8/16": 0.658,
  "64x128x16/8": 0.434,
  "64x128x16/16": 0.18,
  "64x128x32/8": 0.41,
  "64x256x8/16": 0.685,
  "64x256x16/8": 0.669,
  "64x256x16/16": 0.412,
  "128x64x8/8": 0.647,
  "128x64x16/8": 0.516,
  "128x64x32/8": 0.359,
  "128x128x8/8": 0.637,
  "128x128x8/16": 0.682,
  "128x128x16/8": 0.774,
  "128x128x16/16": 0.415,
  "128x256x8/16": 0.668,
  "128x256x16/8": 0.724,
  "128x256x16/16": 0.72,
  "256x64x16/8": 0.623,
  "256x128x8/16": 0.67,
  "256x128x16/8": 0.666,
  "256x128x16/16": 0.693,
  "256x256x8/16": 0.099,
};
/** A configuration the table lacks: the table's median. */
const TILE_EFFICIENCY_DEFAULT = 0.622;

/** The FMA share of a tile configuration (the table's, else its median). */
export const tileEfficiency = (p: Pick<GeneratedParams, "BM" | "BN" | "BK" | "TN">): number =>
  TILE_EFFICIENCY[`${p.BM}x${p.BN}x${p.BK}/${p.TN}`] ?? TILE_EFFICIENCY_DEFAULT;

/**
 * Workgroups of a tile configuration one SM holds at once (lib/model/device.ts occupancy:
 * NVIDIA's per-SM budgets of registers, invocations, workgroups and shared memory), with an
 * estimate of the registers an invocation takes: its 8 x TN accumulators, its loads in flight,
 * its fragments, and 24 more.
 */
export function residentPerSm(p: GeneratedParams): number {
  const t = invocations(p);
  const loads = (p.BM * p.BK + p.BK * p.BN) / 4 / t;
  const registers = 8 * p.TN + 4 * loads + 4 * (2 + p.TN / 4) + 24;
  const smem = 2 * (p.BK * p.BM + p.BK * p.BN) * 4;
  return occupancy(HOPPER_SM, t, registers, smem).resident;
}

/** The row-dot kernel a plan runs. */
export const rowdotConfig = (p: Params): RowDotConfig => ({
  kLanes: p.KL,
  rows: rowdotRows(p),
  cols: p.BN,
});

/** Workgroups of a plan's main kernel one SM holds at once. */
export function planResident(p: Params): number {
  switch (p.PLAN) {
    case PLAN_GEMV:
      // 256 invocations and a few registers: the SM's 2048 invocations are the limit.
      return Math.floor(HOPPER_SM.invocations / (GEMV_LANES * GEMV_K_LANES));
    case PLAN_ROWDOT: {
      const c = rowdotConfig(p);
      return occupancy(HOPPER_SM, ROWDOT_INVOCATIONS, rowdotRegisters(c), rowdotStorageBytes(c))
        .resident;
    }
    case PLAN_OUTER:
      return occupancy(HOPPER_SM, OUTER_INVOCATIONS, outerRegisters(outerRows(p)), 0).resident;
    default:
      return residentPerSm(generatedParams(p));
  }
}

/** Workgroups of a launch plan's main dispatch. */
export const gridSize = (plan: LaunchPlan): number => plan.grid[0] * plan.grid[1] * plan.grid[2];

/** The wave arithmetic of a plan's main dispatch at `s` on `device`. */
export function planWaves(s: Shape, p: Params, device: DeviceSummary): Waves {
  return waves(gridSize(planLaunchPlan(s, p)), deviceModel(device).sms, planResident(p));
}

/** Bytes per second the kernels draw from DRAM on `dev`. */
const bandwidth = (dev: DeviceModel) => dev.bandwidthGBs * 1e9 * DRAM_EFFICIENCY;

/** Rounds of trips the busiest SM runs: its ceil(W / SMs) workgroups, R at a time. */
const rounds = (workgroups: number, resident: number, dev: DeviceModel) =>
  Math.ceil(Math.ceil(workgroups / dev.sms) / resident);

/** A bandwidth dispatch: its bytes, or its trips, whichever takes longer. */
const streamed = (bytes: number, trips: number, bw: number) => Math.max(bytes / bw, trips * TRIP_S);

/** The tile kernel's dispatch: the busiest SM's waves, or its compulsory bytes. */
function tileSeconds(plan: LaunchPlan, p: Params, dev: DeviceModel): number {
  const w = gridSize(plan);
  if (w === 0) return 0;
  const config = generatedParams(p);
  const resident = residentPerSm(config);
  const perSm = Math.ceil(w / dev.sms);
  const full = Math.floor(perSm / resident), last = perSm - full * resident;
  const sliceK = ceilDiv(ceilDiv(plan.padded.k, plan.slices), config.BK) * config.BK;
  const flops = 2 * config.BM * config.BN * (sliceK + K_TILES * config.BK);
  const rate = tileEfficiency(config) * dev.smGflops * 1e9;
  const workgroupTimes = full * resident +
    (last ? resident ** PARTIAL_WAVE * last ** (1 - PARTIAL_WAVE) : 0);
  const { m, n } = plan.tiles, k = plan.padded.k;
  const bytes = 4 * (m * k + k * n + m * n * plan.slices);
  return Math.max((workgroupTimes * flops) / rate, bytes / bandwidth(dev));
}

/**
 * The edge-strip kernel (kernels/edge_strips.wgsl): its loads as lib/steps/launch.ts launchModel
 * counts them (each bottom-strip workgroup reads the strip's rows of A and all of B's rows for
 * its columns, each right-strip workgroup its rows of A and the strip's columns of B), and its
 * trips of 256 k each, 8 workgroups to an SM.
 */
function stripSeconds(s: Shape, plan: LaunchPlan, dev: DeviceModel): number {
  if (!plan.edgeStrips) return 0;
  const rows = s.m - plan.edgeStrips.rowsFrom, cols = s.n - plan.edgeStrips.colsFrom;
  let elements = 0;
  if (rows > 0) elements += plan.stripGroups.bottom * rows * s.k + s.k * s.n + rows * s.n;
  if (cols > 0) {
    elements += plan.edgeStrips.rowsFrom * s.k + plan.stripGroups.right * s.k * cols +
      plan.edgeStrips.rowsFrom * cols;
  }
  const groups = plan.stripGroups.bottom + plan.stripGroups.right;
  return streamed(
    4 * elements / STRIP_EFFICIENCY,
    rounds(groups, 8, dev) * ceilDiv(s.k, 256),
    bandwidth(dev),
  );
}

/** The main kernel of a matrix-vector, row-dot or outer plan. */
function bandwidthKernelSeconds(s: Shape, plan: LaunchPlan, p: Params, dev: DeviceModel): number {
  const w = gridSize(plan), r = rounds(w, planResident(p), dev), bw = bandwidth(dev);
  const { k, n } = plan.padded;
  switch (p.PLAN) {
    case PLAN_GEMV: {
      // B read once per row block; a trip is 16 k (4 k lanes x 4).
      const trips = ceilDiv(ceilDiv(k, plan.slices), 4 * GEMV_K_LANES);
      return streamed(4 * (k * n * plan.grid[1] + s.m * k + s.m * n * plan.slices), r * trips, bw);
    }
    case PLAN_ROWDOT: {
      // A read once per column block; one more trip for the reduction's rounds of barriers.
      const trips = ceilDiv(ceilDiv(k, plan.slices), rowdotTripK(rowdotConfig(p))) + 1;
      return streamed(4 * (s.m * k * plan.grid[0] + k * n + s.m * n * plan.slices), r * trips, bw);
    }
    default: {
      // PLAN_OUTER: C written once, A read once per column block.
      const trips = ceilDiv(k, OUTER_K_STEP);
      return streamed(4 * (s.m * n + s.m * k * plan.grid[0] + k * n), r * trips, bw);
    }
  }
}

/**
 * The model's time for `plan` at `s` on `device`, in seconds: the fixed cost, the padding
 * copies (each matrix read and written once), the main kernel, the slice sum (the partial Cs
 * read, C written) and the edge strips. Pure: the same inputs give the same time.
 */
export function predictPlanTime(s: Shape, plan: Params, device: DeviceSummary): number {
  const dev = deviceModel(device);
  const bw = bandwidth(dev);
  const launch = planLaunchPlan(s, plan);
  let seconds = FIXED_S;
  for (const c of launch.copies) {
    seconds += streamed(4 * (c.rows * c.cols + c.toRows * c.toCols), 1, bw);
  }
  seconds += plan.PLAN === PLAN_GEMV || plan.PLAN === PLAN_ROWDOT || plan.PLAN === PLAN_OUTER
    ? bandwidthKernelSeconds(s, launch, plan, dev)
    : tileSeconds(launch, plan, dev);
  if (launch.slices > 1 && gridSize(launch) > 0) {
    const rows = Math.min(launch.tiles.m, s.m), cols = Math.min(launch.tiles.n, s.n);
    seconds += streamed(4 * 2 * launch.slices * rows * cols, 1, bw);
  }
  return seconds + stripSeconds(s, launch, dev);
}
