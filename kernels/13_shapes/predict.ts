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
 *   2·BM·BN·(its K + kTiles·BK / R^overlap) FLOPs (the extra k tiles: its first loads and its
 *   stores, partly hidden behind the other workgroups on the SM) at the tile configuration's
 *   share of the SM's FMA peak, shared by the R workgroups of a full wave; a last wave of j < R
 *   takes j workgroups' time, but never less than a few warps' worth (an SM holding fewer warps
 *   cannot hide its loads' latency: saturationWarps). The share is measured
 *   twice: at long K, and at K of 128 and less, where a workgroup's loop is a few steps;
 *   between 128 and 1024 it moves from one to the other;
 * - the short-K kernel: timed like a tile, each workgroup's whole K (in whole 4 k) plus a few k
 *   per trip of staging, at its configuration's share of the FMA peak, except that a last wave of
 *   j < R runs faster per workgroup, taking R^b · j^(1 - b) workgroups' time (partialWave);
 * - the direct kernel: the trips of its loop over K (directTrips) per round of the busiest SM's
 *   workgroups, or its bytes;
 * - the matrix-vector kernel: B's bytes once per row block, its trips, or its multiply-adds at
 *   a share of the SM's FMA peak, whichever takes longest;
 * - the other bandwidth kernels (row-dot, outer, edge strips, copies, slice sum): the bytes at
 *   DRAM bandwidth, or the trips of their loop, whichever is longer. A trip issues its loads
 *   together and waits for them once; an SM holding R workgroups runs ceil(n / R) rounds of the
 *   workgroups' trips.
 *
 * The constants are the H200's (H200_TIME_MODEL), fit by least squares on log time, large misses
 * damped, to the validated times saved from it (lab/time_model_fit.ts lists them and recomputes the
 * fit; tests/plans_test.ts checks it). The first stage takes the per-shape plan search at 14 shapes
 * of 1 to 32768 rows, step 12's tile search at 4096, the whole-ladder record's steps 12 and 13 on
 * the suite (322 times), plan searches at 18 shapes of short K (24 to 256, large outputs) and of M
 * = 36 to 60 (314), and plan searches at 8 shapes where 12's plan leaves SMs idle (179): from them
 * the fixed cost, the extra k tiles, the overlap, the saturation, the matrix-vector share and the
 * tiles' short-K shares. The model's time is within 10% of the measured one at the median over the
 * first 322 (34% at the 90th percentile), 16% over the next 314 (46%) and 6% over the 179 (15%). A
 * search at 11 shapes of K = 12 to 500 fit the short-K kernel's shares and its trip to its 66 times
 * (within 7% at the median, 23% at the 90th percentile). A search at 13 shapes of 32 to 300 rows
 * and K of 200 to 8192 fit the two 32-row tiles' shares to its 534 times, the rest kept (within 10%
 * at the median, 35% at the 90th percentile over all 534). A search at 8 shapes of 40 to 120
 * columns and K of 64 to 500 fit the short-K kernel's 64- and 32-column widths' shares to their 96
 * times there (within 13% at the median, 42% at the 90th percentile), the rest kept. A search at 14
 * products of at most 10^7 FLOP fit the direct kernel's trip to the 241 times there. Those products
 * take 4.6 to 56 us, where the fixed cost, read at larger ones, is 16: the trip was fit beside a
 * fixed cost of their own (lab/time_model_fit.ts), so the model ranks the plans of a small product
 * by how they differ, and reads its time about 10 us long. The matrix-vector kernel, timed at every
 * row count of 1 to 16 with both loads (one block of 8192 x 4096, 32 slices), fit a share for each
 * row count of 5 to 16 and load width with the searches' matrix-vector times (1 to 4 rows, bound by
 * B's bytes, keep the one share), the rest kept. The model ranks plans well where they differ by a
 * third or more, which is what the planner asks of it (plans.ts). One of the tiles' short-K shares
 * sits at 1, the fit's cap, and another near it: for those big tiles at short K the extra k tiles
 * charge more than was measured, and the share makes up the difference.
 * On another GPU the per-SM rates scale with its FMA peak and the bytes with its bandwidth
 * (the device table); the fixed cost and the trip are the H200's. The row-dot and outer kernels
 * were not measured for the fit: their times are this model's reading of their loops (the
 * short-K search timed the outer kernel at K = 12 only).
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
import { GEMV_COLUMNS, GEMV_K_LANES, GEMV_LANES } from "./gemv.ts";
import {
  gemvLoads,
  outerRows,
  PLAN_DIRECT,
  PLAN_GEMV,
  PLAN_OUTER,
  PLAN_ROWDOT,
  PLAN_SHORTK,
  PLAN_TILES,
  planLaunchPlan,
  rowdotRows,
  shortkConfig,
} from "./launch.ts";
import {
  ROWDOT_INVOCATIONS,
  type RowDotConfig,
  rowdotRegisters,
  rowdotStorageBytes,
  rowdotTripK,
} from "./rowdot.ts";
import { OUTER_INVOCATIONS, OUTER_K_STEP, outerRegisters } from "./outer.ts";
import { DIRECT_INVOCATIONS, directTrips } from "./direct.ts";
import { SHORTK_INVOCATIONS, shortkRegisters, shortkStorageBytes } from "./shortk.ts";

/**
 * The model's constants: what it takes from measurements. H200_TIME_MODEL holds the fit
 * (lab/time_model_fit.ts recomputes it from the saved times this header names).
 */
export interface TimeModel {
  /** What every product costs whatever its plan: the pass, its timestamps, the first launch. */
  fixedS: number;
  /** k tiles' worth of work a tile workgroup does besides its share of K (first loads, stores). */
  kTiles: number;
  /**
   * How much of that work the other workgroups on the SM hide: it is divided by R^overlap for R
   * resident workgroups (0: none hidden; 1: hidden in proportion to R).
   */
  overlap: number;
  /**
   * Warps an SM must hold at once to reach a tile configuration's share: a partly filled last
   * wave of j tile workgroups of w warps each takes as long as max(j, saturationWarps / w) of them
   * (at most a full wave's R), so a lone small workgroup runs no faster than a few together would.
   */
  saturationWarps: number;
  /**
   * b: how much faster a short-K workgroup runs in a partly filled last wave (0: none, 1: in
   * proportion): the wave of j takes R^b · j^(1 - b) workgroups' time.
   */
  partialWave: number;
  /** Share of the spec sheet's DRAM bandwidth the kernels draw. */
  dramEfficiency: number;
  /** Share of that the edge-strip kernel draws (its loads are not all coalesced). */
  stripEfficiency: number;
  /** One trip of a bandwidth kernel's loop: its loads issued together, waited for once. */
  tripS: number;
  /**
   * Share of an SM's FMA peak the matrix-vector kernel's multiply-adds reach: past a few rows
   * per workgroup its arithmetic, not B's bytes, is what takes the time. This one is for a row
   * count gemvRowsEfficiency lacks.
   */
  gemvEfficiency: number;
  /**
   * The same share for each row count per workgroup and load width ("ROWS/LOADS"): the compiled
   * kernel is not equally good at every row count (on the H200, 15 rows with vec4 loads took twice
   * as long as 16, and 9 to 11 rows longer than 12).
   */
  gemvRowsEfficiency: Record<string, number>;
  /**
   * Share of an SM's FMA peak each tile configuration ("BMxBNxBK/TN") reaches in full waves of
   * long K, and the share for a configuration the table lacks.
   */
  tileEfficiency: Record<string, number>;
  tileEfficiencyDefault: number;
  /**
   * The same share where a workgroup's slice of K is at most SHORT_K (its loop a few steps), for
   * the configurations short-K searches measured; between SHORT_K and LONG_K the share moves
   * geometrically from this one to the long-K one.
   */
  shortKEfficiency: Record<string, number>;
  /**
   * Share of an SM's FMA peak the short-K kernel's multiply-adds reach in full waves, per
   * configuration ("BMxBN/KC": rows and columns of C, k staged per trip).
   */
  shortkKernelEfficiency: Record<string, number>;
  /** k's worth of work each trip of the short-K kernel adds (staging, its two waits). */
  shortkTripK: number;
  /**
   * Seconds per trip of the direct kernel's loop (one element of C per invocation; directTrips):
   * about the latency of a load, since each trip's loads are waited for before its multiply-adds.
   */
  directTripS: number;
}

/** The slices of K at and below which shortKEfficiency holds, and from which tileEfficiency does. */
export const SHORT_K = 128;
export const LONG_K = 1024;

/** The H200's fit. */
export const H200_TIME_MODEL: TimeModel = {
  fixedS: 15.75e-6,
  kTiles: 9.432,
  overlap: 0.3281,
  saturationWarps: 5.21,
  partialWave: 0.228,
  dramEfficiency: 0.927,
  stripEfficiency: 0.587,
  tripS: 1.9e-6,
  gemvEfficiency: 0.201,
  gemvRowsEfficiency: {
    "5/4": 0.1362,
    "6/4": 0.1721,
    "7/4": 0.1639,
    "8/4": 0.1579,
    "9/4": 0.1138,
    "10/4": 0.1358,
    "11/4": 0.117,
    "12/4": 0.2664,
    "13/4": 0.1907,
    "14/4": 0.2072,
    "15/4": 0.0757,
    "16/4": 0.2267,
    "5/1": 0.1579,
    "6/1": 0.1675,
    "7/1": 0.1798,
    "8/1": 0.1844,
    "9/1": 0.1494,
    "10/1": 0.1452,
    "11/1": 0.1907,
    "12/1": 0.1574,
    "13/1": 0.1448,
    "14/1": 0.1685,
    "15/1": 0.1685,
    "16/1": 0.1649,
  },
  tileEfficiency: {
    "32x64x16/8": 0.244,
    "32x128x8/8": 0.5343,
    "32x128x16/8": 0.5961,
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
  },
  tileEfficiencyDefault: 0.622,
  shortKEfficiency: {
    "128x128x16/8": 0.9877,
    "128x128x8/8": 0.7981,
    "128x256x16/16": 1,
    "128x64x8/8": 0.8816,
    "64x128x8/8": 0.5936,
    "64x256x8/16": 0.5107,
    "64x64x8/8": 0.6336,
  },
  shortkKernelEfficiency: {
    "32x128/16": 0.3681,
    "64x128/16": 0.5174,
    "128x128/16": 0.4254,
    "32x128/32": 0.2771,
    "64x128/32": 0.3855,
    "128x128/32": 0.3559,
    "32x64/16": 0.305,
    "64x64/16": 0.38,
    "128x64/16": 0.3557,
    "32x64/32": 0.3472,
    "64x64/32": 0.3917,
    "128x64/32": 0.3649,
    "32x32/16": 0.2065,
    "64x32/16": 0.2938,
    "128x32/16": 0.2573,
    "32x32/32": 0.2485,
    "64x32/32": 0.3001,
    "128x32/32": 0.2688,
  },
  shortkTripK: 2.684,
  directTripS: 1.877e-7,
};

/** What every product costs whatever its plan (the H200 fit's). */
export const FIXED_S = H200_TIME_MODEL.fixedS;

/**
 * The FMA share of a tile configuration at slices of `sliceK` (the long-K table's, else its
 * default; moved toward the short-K table's below LONG_K where that has the configuration).
 */
export function tileEfficiency(
  p: Pick<GeneratedParams, "BM" | "BN" | "BK" | "TN">,
  sliceK = LONG_K,
  model: TimeModel = H200_TIME_MODEL,
): number {
  const long = model.tileEfficiency[tileKey(p)] ?? model.tileEfficiencyDefault;
  const short = model.shortKEfficiency[tileKey(p)];
  if (short === undefined || sliceK >= LONG_K) return long;
  const w = Math.max(0, Math.log2(sliceK / SHORT_K) / Math.log2(LONG_K / SHORT_K));
  return short ** (1 - w) * long ** w;
}

/** A matrix-vector plan's key in gemvRowsEfficiency: "ROWS/LOADS". */
export const gemvKey = (p: Params): string => `${p.BM}/${gemvLoads(p)}`;

/** The FMA share of a matrix-vector plan's row count and loads (the table's, else the default). */
export const gemvEfficiency = (p: Params, model: TimeModel = H200_TIME_MODEL): number =>
  model.gemvRowsEfficiency[gemvKey(p)] ?? model.gemvEfficiency;

/** A short-K configuration's key in its efficiency table: "BMxBN/KC". */
export const shortkKey = (p: Params): string => `${p.BM}x${p.BN}/${p.BK}`;

/**
 * The FMA share of a short-K configuration (its shortkKey): the table's, else the lowest the
 * table holds (a configuration no search measured is taken for the slowest that one did).
 */
export function shortkEfficiency(key: string, model: TimeModel = H200_TIME_MODEL): number {
  const table = model.shortkKernelEfficiency;
  return table[key] ?? Math.min(0.5, ...Object.values(table));
}

/**
 * Whether the model's tables hold a measured share for the kernel configuration plan `p` runs: a
 * tile configuration's in tileEfficiency, a short-K configuration's in shortkKernelEfficiency (the
 * other kernels' rates are one constant each, or one per row count for the matrix-vector kernel,
 * whose row counts were all timed; fit or read from their loops). A configuration
 * without one is read at a default share, good for ordering a search, not for picking it.
 */
export function measuredShare(p: Params, model: TimeModel = H200_TIME_MODEL): boolean {
  if (p.PLAN === PLAN_SHORTK) return shortkKey(p) in model.shortkKernelEfficiency;
  if ((p.PLAN ?? PLAN_TILES) === PLAN_TILES) {
    return tileKey(generatedParams(p)) in model.tileEfficiency;
  }
  return true;
}

/** A tile configuration's key in the efficiency table. */
export const tileKey = (p: Pick<GeneratedParams, "BM" | "BN" | "BK" | "TN">): string =>
  `${p.BM}x${p.BN}x${p.BK}/${p.TN}`;

/** A device's table row and the model's constants, which every part of a prediction reads. */
interface Context {
  dev: DeviceModel;
  model: TimeModel;
}

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
    case PLAN_SHORTK: {
      const c = shortkConfig(p);
      return occupancy(HOPPER_SM, SHORTK_INVOCATIONS, shortkRegisters(c), shortkStorageBytes(c))
        .resident;
    }
    case PLAN_DIRECT:
      // 64 invocations, a sum, a counter and addresses: the SM's workgroup slots are the limit.
      return occupancy(HOPPER_SM, DIRECT_INVOCATIONS, 24, 0).resident;
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

/** Bytes per second the kernels draw from DRAM. */
const bandwidth = ({ dev, model }: Context) => dev.bandwidthGBs * 1e9 * model.dramEfficiency;

/** Rounds of trips the busiest SM runs: its ceil(W / SMs) workgroups, R at a time. */
const rounds = (workgroups: number, resident: number, dev: DeviceModel) =>
  Math.ceil(Math.ceil(workgroups / dev.sms) / resident);

/** A bandwidth dispatch: its bytes, or its trips, whichever takes longer. */
const streamed = (bytes: number, trips: number, c: Context) =>
  Math.max(bytes / bandwidth(c), trips * c.model.tripS);

/**
 * Workgroup-times of the busiest SM: its ceil(W / SMs) workgroups, R at once, and `lastWave(j)` for a
 * partly filled last wave of j.
 */
function busiestSm(
  workgroups: number,
  resident: number,
  lastWave: (j: number) => number,
  { dev }: Context,
): number {
  const perSm = Math.ceil(workgroups / dev.sms);
  const full = Math.floor(perSm / resident), last = perSm - full * resident;
  return full * resident + (last ? lastWave(last) : 0);
}

/** The tile kernel's dispatch: the busiest SM's waves, or its compulsory bytes. */
function tileSeconds(plan: LaunchPlan, p: Params, c: Context): number {
  const { dev, model } = c;
  const w = gridSize(plan);
  if (w === 0) return 0;
  const config = generatedParams(p);
  const resident = residentPerSm(config);
  const sliceK = ceilDiv(ceilDiv(plan.padded.k, plan.slices), config.BK) * config.BK;
  const overhead = model.kTiles * config.BK / resident ** model.overlap;
  const flops = 2 * config.BM * config.BN * (sliceK + overhead);
  const rate = tileEfficiency(config, sliceK, model) * dev.smGflops * 1e9;
  // A last wave of j: j workgroups' time, but at least saturationWarps' worth.
  const warps = invocations(config) / 32;
  const lastWave = (j: number) => Math.max(j, Math.min(resident, model.saturationWarps / warps));
  const workgroupTimes = busiestSm(w, resident, lastWave, c);
  const { m, n } = plan.tiles, k = plan.padded.k;
  const bytes = 4 * (m * k + k * n + m * n * plan.slices);
  return Math.max((workgroupTimes * flops) / rate, bytes / bandwidth(c));
}

/**
 * The edge-strip kernel (kernels/edge_strips.wgsl): its loads as lib/steps/launch.ts launchModel
 * counts them (each bottom-strip workgroup reads the strip's rows of A and all of B's rows for
 * its columns, each right-strip workgroup its rows of A and the strip's columns of B), and its
 * trips of 256 k each, 8 workgroups to an SM.
 */
function stripSeconds(s: Shape, plan: LaunchPlan, c: Context): number {
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
    4 * elements / c.model.stripEfficiency,
    rounds(groups, 8, c.dev) * ceilDiv(s.k, 256),
    c,
  );
}

/** The main kernel of a matrix-vector, row-dot or outer plan. */
function bandwidthKernelSeconds(s: Shape, plan: LaunchPlan, p: Params, c: Context): number {
  const w = gridSize(plan), r = rounds(w, planResident(p), c.dev);
  const { k, n } = plan.padded;
  switch (p.PLAN) {
    case PLAN_GEMV: {
      // B read once per row block; a trip is 16 k (4 k lanes x 4); the busiest SM's workgroups
      // each multiply BM rows by 256 columns over their slice of K.
      const sliceK = ceilDiv(k, plan.slices);
      const trips = ceilDiv(sliceK, 4 * GEMV_K_LANES);
      const flops = Math.ceil(w / c.dev.sms) * 2 * p.BM * GEMV_COLUMNS * sliceK;
      return Math.max(
        streamed(4 * (k * n * plan.grid[1] + s.m * k + s.m * n * plan.slices), r * trips, c),
        flops / (gemvEfficiency(p, c.model) * c.dev.smGflops * 1e9),
      );
    }
    case PLAN_ROWDOT: {
      // A read once per column block; one more trip for the reduction's rounds of barriers.
      const trips = ceilDiv(ceilDiv(k, plan.slices), rowdotTripK(rowdotConfig(p))) + 1;
      return streamed(4 * (s.m * k * plan.grid[0] + k * n + s.m * n * plan.slices), r * trips, c);
    }
    default: {
      // PLAN_OUTER: C written once, A read once per column block.
      const trips = ceilDiv(k, OUTER_K_STEP);
      return streamed(4 * (s.m * n + s.m * k * plan.grid[0] + k * n), r * trips, c);
    }
  }
}

/** Bytes of a kernel that reads A once per column block and B once per row block, and writes C. */
const blockBytes = (s: Shape, plan: LaunchPlan) =>
  4 * (s.m * s.k * plan.grid[0] + s.k * s.n * plan.grid[1] + s.m * s.n);

/**
 * The short-K kernel's dispatch, timed like a tile's: each workgroup multiplies BM x BN over K
 * (whole 4 k) plus shortkTripK k per trip of BK, at shortkKernelEfficiency of the SM's FMA peak
 * shared by the workgroups it holds; or its bytes (A once per column block, B once per row block,
 * C once), whichever is longer.
 */
function shortkSeconds(s: Shape, plan: LaunchPlan, p: Params, c: Context): number {
  const w = gridSize(plan);
  if (w === 0) return 0;
  const trips = ceilDiv(s.k, p.BK);
  const flops = 2 * p.BM * p.BN * (4 * ceilDiv(s.k, 4) + c.model.shortkTripK * trips);
  const resident = planResident(p), b = c.model.partialWave;
  const rate = shortkEfficiency(shortkKey(p), c.model) * c.dev.smGflops * 1e9;
  return Math.max(
    busiestSm(w, resident, (j) => resident ** b * j ** (1 - b), c) * flops / rate,
    blockBytes(s, plan) / bandwidth(c),
  );
}

/**
 * The direct kernel's dispatch: the trips of each invocation's loop (directTrips), the busiest
 * SM's workgroups R at a time, or its bytes (A once per column block, B once per row block, C
 * once), whichever is longer.
 */
function directSeconds(s: Shape, plan: LaunchPlan, p: Params, c: Context): number {
  const w = gridSize(plan);
  return Math.max(
    rounds(w, planResident(p), c.dev) * directTrips(s.k) * c.model.directTripS,
    blockBytes(s, plan) / bandwidth(c),
  );
}

/**
 * The model's time for `plan` at `s` on `device`, in seconds: the fixed cost, the padding
 * copies (each matrix read and written once), the main kernel, the slice sum (the partial Cs
 * read, C written) and the edge strips, with the constants of `model` (the H200's fit unless
 * given). Pure: the same inputs give the same time.
 */
export function predictPlanTime(
  s: Shape,
  plan: Params,
  device: DeviceSummary,
  model: TimeModel = H200_TIME_MODEL,
): number {
  const c: Context = { dev: deviceModel(device), model };
  const launch = planLaunchPlan(s, plan);
  let seconds = model.fixedS;
  for (const copy of launch.copies) {
    seconds += streamed(4 * (copy.rows * copy.cols + copy.toRows * copy.toCols), 1, c);
  }
  seconds += plan.PLAN === PLAN_SHORTK
    ? shortkSeconds(s, launch, plan, c)
    : plan.PLAN === PLAN_DIRECT
    ? directSeconds(s, launch, plan, c)
    : plan.PLAN === PLAN_GEMV || plan.PLAN === PLAN_ROWDOT || plan.PLAN === PLAN_OUTER
    ? bandwidthKernelSeconds(s, launch, plan, c)
    : tileSeconds(launch, plan, c);
  if (launch.slices > 1 && gridSize(launch) > 0) {
    const rows = Math.min(launch.tiles.m, s.m), cols = Math.min(launch.tiles.n, s.n);
    seconds += streamed(4 * 2 * launch.slices * rows * cols, 1, c);
  }
  return seconds + stripSeconds(s, launch, c);
}
