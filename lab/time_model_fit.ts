/**
 * The time model's fit (kernels/13_shapes/predict.ts H200_TIME_MODEL): the saved H200 times it
 * is fit to, and the fit itself, so that its constants can be recomputed and checked.
 *
 * The times (savedTimes), each a validated median from one session:
 * - "search": the per-shape plan search (data/tuning/nvidia-h200/shapes.json, 14 shapes of 1
 *   to 32768 rows; its tile plans at M = 1 left out, where every tile plan is the same
 *   edge-strip kernel);
 * - "tiles": step 12's tile search at 4096 (data/tuning/nvidia-h200/generated.json), the
 *   fastest schedule of each tile, and its times at the search's other shapes;
 * - "record": the whole-ladder record's steps 12 and 13 on the suite
 *   (data/runs/nvidia-h200-2026-11-26T0725.json);
 * - "short K": two plan searches at shapes chosen for short K (17 to 256) with a large output
 *   and for M of 36 to 60 with long K (lab/runs/nvidia-h200-2026-11-26-shortk-probe-plans.json,
 *   3 shapes; lab/runs/nvidia-h200-2026-11-26-calibration-plans.json, 15 shapes). None of these
 *   shapes is one the bench's held-out draw can name (lib/heldout.ts: its model shapes differ,
 *   and its log-uniform draw is new at every seed);
 * - "short-K kernel": a plan search at 11 shapes of K = 12 to 500 with large outputs, chosen
 *   here, after the short-K kernel was written
 *   (lab/runs/nvidia-h200-2026-11-26-shortk-kernel-plans.json): every plan measured, the six
 *   short-K configurations among them. Its short-K times fit that kernel's constants, the rest
 *   kept;
 * - "thin tiles": a plan search at 13 shapes of 32 to 300 rows with K of 200 to 8192, chosen here,
 *   after the planner took 32-row tiles for M up to 128
 *   (lab/runs/nvidia-h200-2026-11-26-thin-calibration-plans.json, rebuilt from the run's log by
 *   lab/plans_from_log.ts: the run reached its time limit at its 13th shape, before it saved). Its
 *   times fit the two thin tiles' shares, the rest kept;
 * - "sub-wave": plan searches at 8 shapes where 12's plan leaves SMs idle (K of 600 to 3000, 200 to
 *   1000 rows), chosen here after the eighth and ninth stops' draws found 12's plan slow at such
 *   shapes (lab/runs/nvidia-h200-2026-11-27-subwave-plans.json and -subwave2-plans.json). Their
 *   times join the first stage's, which since fits the saturation (saturationWarps) in place of a
 *   partial-wave exponent for tiles;
 * - "gemv rows": the matrix-vector kernel at every row count of 1 to 16 per workgroup, each with
 *   vec4 and scalar loads, at one block of exactly that many rows (K = 8192 and N = 4096, 8195 and
 *   4099 for scalar loads; 32 slices), timed after the eighth stop's draw found 15 rows slow
 *   (lab/runs/nvidia-h200-2026-11-26-gemv-rows-probe.json, lab/probe_small.ts). Its 32 times and
 *   the other sessions' matrix-vector times fit a share for each row count and load width, the
 *   rest kept;
 * - "narrow and direct": a plan search at 8 shapes of 40 to 120 columns with K of 64 to 500, chosen
 *   here, after the short-K kernel took its 64- and 32-column widths
 *   (lab/runs/nvidia-h200-2026-11-26-narrow-direct-calibration-plans.json; its 12 products of at
 *   most 10^7 FLOP are left out: they timed a direct kernel since rewritten). Its narrow short-K
 *   times fit those widths' shares, the rest kept;
 * - "small products": a plan search at 14 products of at most 10^7 FLOP, chosen here, after the
 *   direct kernel took 8 k per trip (lab/runs/nvidia-h200-2026-11-27-direct-calibration-plans.json,
 *   every plan timed one submit per pass). Every plan's times there fit the direct kernel's trip,
 *   beside a fixed cost of their own (narrowAndDirect), the rest kept.
 *
 * The fit (fitTimeModel): coordinate descent on the constants it refits and on rows of the
 * short-K tables, each moved by a factor while that lowers the sum over the times of a Huber loss
 * on log(predicted / measured) (squared up to a miss of 30%, linear past it, so a few odd times do
 * not steer it). fitH200 runs it six times: REFIT and the tiles' short-K shares on the first four
 * sessions and the sub-wave searches, then the short-K kernel's constants on that session's
 * short-K times, then the thin tiles' shares on theirs, then the narrow widths' shares, then the
 * direct kernel's trip, then the matrix-vector kernel's shares by row count.
 *
 *   deno run --allow-read lab/time_model_fit.ts     prints the fit and its errors
 */
import { namedDevice } from "../lib/gpu.ts";
import { flops, type Shape } from "../lib/matrix.ts";
import { parseShape } from "../lib/bench_args.ts";
import type { Params } from "../lib/steps/spec.ts";
import type { TuningRecord } from "../lib/tuning.ts";
import { loadRecord } from "../lib/record.ts";
import { generatedParams } from "../kernels/12_generated/step.ts";
import { PLAN_GEMV, PLAN_SHORTK, PLAN_TILES } from "../kernels/13_shapes/launch.ts";
import { DIRECT_MAX_FLOPS, THIN_TILE_CONFIGS } from "../kernels/13_shapes/plans.ts";
import { SHORTK_WIDTHS } from "../kernels/13_shapes/shortk.ts";
import {
  gemvKey,
  H200_TIME_MODEL,
  predictPlanTime,
  shortkEfficiency,
  shortkKey,
  tileKey,
  type TimeModel,
} from "../kernels/13_shapes/predict.ts";

export const H200 = namedDevice("NVIDIA H200", "nvidia", "hopper");

/** One saved time: where it was measured, the plan, the median, and which session measured it. */
export interface Measured {
  session:
    | "search"
    | "tiles"
    | "record"
    | "short K"
    | "short-K kernel"
    | "thin tiles"
    | "narrow and direct"
    | "small products"
    | "sub-wave"
    | "gemv rows";
  shape: Shape;
  params: Params;
  seconds: number;
}

const readJson = async (path: string) =>
  JSON.parse(await Deno.readTextFile(new URL(`../${path}`, import.meta.url)));

/** The validated trials of a plan search, tile plans at M = 1 left out. */
function planTrials(search: TuningRecord, session: Measured["session"]): Measured[] {
  return search.trials
    .filter((t) => t.validated && t.shape && !(t.shape.m === 1 && t.params.PLAN === PLAN_TILES))
    .map((t) => ({ session, shape: t.shape!, params: t.params, seconds: t.medianMs! / 1e3 }));
}

/** The plan searches in lab/runs/ (nvidia-h200-<file>-plans.json) and their sessions, in order. */
const PLAN_SEARCHES: [string, Measured["session"]][] = [
  ["2026-11-26-shortk-probe", "short K"],
  ["2026-11-26-calibration", "short K"],
  ["2026-11-26-shortk-kernel", "short-K kernel"],
  ["2026-11-26-thin-calibration", "thin tiles"],
  ["2026-11-26-narrow-direct-calibration", "narrow and direct"],
  ["2026-11-27-direct-calibration", "small products"],
  ["2026-11-27-subwave", "sub-wave"],
  ["2026-11-27-subwave2", "sub-wave"],
];

/** The saved times the model is fit to (the module's header lists them), and 12's record rows. */
export async function savedTimes(): Promise<{ all: Measured[]; record12: Measured[] }> {
  const all: Measured[] = planTrials(
    await readJson("data/tuning/nvidia-h200/shapes.json"),
    "search",
  );
  const tiles = await readJson("data/tuning/nvidia-h200/generated.json") as TuningRecord;
  const fastest = new Map<string, typeof tiles.trials[number]>();
  for (const t of tiles.trials.filter((t) => t.validated)) {
    const key = tileKey(generatedParams(t.params));
    if (!fastest.has(key) || t.medianMs! < fastest.get(key)!.medianMs!) fastest.set(key, t);
  }
  for (const t of fastest.values()) {
    const params = { ...t.params, PLAN: PLAN_TILES, SLICES: 1 };
    all.push({ session: "tiles", shape: tiles.shape, params, seconds: t.medianMs! / 1e3 });
    for (const o of t.others ?? []) {
      if (o.validated) {
        all.push({ session: "tiles", shape: o.shape, params, seconds: o.medianMs! / 1e3 });
      }
    }
  }
  const record = await loadRecord(
    new URL("../data/runs/nvidia-h200-2026-11-26T0725.json", import.meta.url),
  );
  const record12: Measured[] = [];
  for (const r of record.results) {
    if (!r.validated || !["12_generated", "13_shapes"].includes(r.kernel)) continue;
    const params = r.kernel === "12_generated"
      ? { ...r.params, PLAN: PLAN_TILES, SLICES: 1 }
      : r.params;
    const m = {
      session: "record" as const,
      shape: { m: r.m, k: r.k, n: r.n },
      params,
      seconds: r.medianMs! / 1e3,
    };
    all.push(m);
    if (r.kernel === "12_generated") record12.push(m);
  }
  for (const [file, session] of PLAN_SEARCHES) {
    const trials = planTrials(await readJson(`lab/runs/nvidia-h200-${file}-plans.json`), session);
    // The narrow-columns search's small products timed a direct kernel since rewritten.
    all.push(
      ...(session === "narrow and direct"
        ? trials.filter((m) => flops(m.shape) > DIRECT_MAX_FLOPS)
        : trials),
    );
  }
  const sweep = await readJson("lab/runs/nvidia-h200-2026-11-26-gemv-rows-probe.json");
  for (const row of sweep.rows) {
    if (row.question !== "gemv rows sweep" || !row.validated) continue;
    const params = JSON.parse(row.plan);
    all.push({
      session: "gemv rows",
      shape: parseShape(row.shape),
      params,
      seconds: row.benchMs / 1e3,
    });
  }
  return { all, record12 };
}

/** |log(predicted / measured)| of each time under `model`. */
export const logErrors = (times: Measured[], model: TimeModel): number[] =>
  times.map((m) => Math.abs(Math.log(predictPlanTime(m.shape, m.params, H200, model) / m.seconds)));

/** The q-quantile of `xs`. */
export const quantile = (xs: number[], q: number): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(q * xs.length)];

/** Huber loss on log error: squared to HUBER, linear past it. */
const HUBER = Math.log(1.3);
const loss = (times: Measured[], model: TimeModel) =>
  logErrors(times, model).reduce(
    (sum, e) => sum + (e <= HUBER ? e * e : HUBER * (2 * e - HUBER)),
    0,
  );

/** A constant of the model besides its tables, and the ones that are shares (kept in [0, 1]). */
export type Scalar = Exclude<
  keyof TimeModel,
  "tileEfficiency" | "shortKEfficiency" | "shortkKernelEfficiency" | "gemvRowsEfficiency"
>;
/** The thin tiles' keys: the only rows of tileEfficiency a fit here moves. */
const THIN_KEYS = THIN_TILE_CONFIGS.map(tileKey);

/** The tables whose rows a fit may move (each share kept in [0, 1]). */
export type Table =
  | "shortKEfficiency"
  | "shortkKernelEfficiency"
  | "tileEfficiency"
  | "gemvRowsEfficiency";
const UNIT: Scalar[] = [
  "overlap",
  "dramEfficiency",
  "stripEfficiency",
  "gemvEfficiency",
];

/**
 * The rows of `table` the times measured: each tile configuration the short-K searches measured
 * gets its own short-K share, each short-K kernel configuration measured its own share.
 */
function tableRows(times: Measured[], table: Table): string[] {
  const rows = table === "shortKEfficiency"
    ? times.filter((m) => m.session === "short K" && m.params.PLAN === PLAN_TILES)
      .map((m) => tileKey(generatedParams(m.params)))
    : table === "tileEfficiency"
    ? times.filter((m) => m.params.PLAN === PLAN_TILES)
      .map((m) => tileKey(generatedParams(m.params))).filter((key) => THIN_KEYS.includes(key))
    : table === "gemvRowsEfficiency"
    ? times.filter((m) => m.params.PLAN === PLAN_GEMV).map((m) => gemvKey(m.params))
    : times.filter((m) => m.params.PLAN === PLAN_SHORTK).map((m) => shortkKey(m.params));
  return [...new Set(rows)];
}

/** A row's value, or where the table lacks it, the share the model reads in its place. */
function rowValue(model: TimeModel, table: Table, key: string): number {
  return model[table][key] ??
    (table === "shortKEfficiency" || table === "tileEfficiency"
      ? model.tileEfficiency[key] ?? model.tileEfficiencyDefault
      : table === "gemvRowsEfficiency"
      ? model.gemvEfficiency
      : shortkEfficiency(key, model));
}

/**
 * Coordinate descent from `start`: each of `scalars` and each row the times measured of each of
 * `tables` moved up or down by a factor while the loss falls, the factor halved each round; the
 * rest kept.
 */
export function fitTimeModel(
  times: Measured[],
  start: TimeModel,
  scalars: Scalar[],
  tables: Table[],
): TimeModel {
  let best: TimeModel = {
    ...start,
    tileEfficiency: { ...start.tileEfficiency },
    shortKEfficiency: { ...start.shortKEfficiency },
    shortkKernelEfficiency: { ...start.shortkKernelEfficiency },
    gemvRowsEfficiency: { ...start.gemvRowsEfficiency },
  };
  const rows = tables.flatMap((table) => tableRows(times, table).map((key) => ({ table, key })));
  let bestLoss = loss(times, best);
  const tryModel = (m: TimeModel) => {
    const l = loss(times, m);
    if (l < bestLoss - 1e-12) {
      best = m;
      bestLoss = l;
      return true;
    }
    return false;
  };
  for (let step = 0.2; step > 0.002; step /= 2) {
    for (let round = 0; round < 6; round++) {
      let moved = false;
      for (const key of scalars) {
        for (const dir of [1 + step, 1 / (1 + step)]) {
          let v = best[key] * dir;
          if (UNIT.includes(key)) v = Math.min(1, v);
          while (tryModel({ ...best, [key]: v })) {
            moved = true;
            v = UNIT.includes(key) ? Math.min(1, v * dir) : v * dir;
          }
        }
      }
      for (const { table, key } of rows) {
        for (const dir of [1 + step, 1 / (1 + step)]) {
          let v = rowValue(best, table, key) * dir;
          while (
            tryModel({ ...best, [table]: { ...best[table], [key]: Math.min(1, v) } })
          ) {
            moved = true;
            v *= dir;
          }
        }
      }
      if (!moved) break;
    }
  }
  return best;
}

/** The constants this module's fit moves; the rest keep the first fit's values (the header). */
export const REFIT: Scalar[] = ["fixedS", "kTiles", "overlap", "saturationWarps", "gemvEfficiency"];
/** The short-K kernel's constants, fit on its own search's times. */
export const SHORTK_REFIT: Scalar[] = ["shortkTripK"];

/**
 * The fit of H200_TIME_MODEL, from its constants with the short-K and matrix-vector tables empty,
 * in six stages: REFIT and the tiles' short-K shares on the first three sessions, "short K" and
 * "sub-wave"; SHORTK_REFIT and the short-K kernel's shares on that session's short-K times; the
 * thin tiles' shares on the thin-tile search's times; the narrow short-K widths' shares on the
 * narrow-columns search's; the direct kernel's trip on the small products'; and the
 * matrix-vector shares by row count on the row sweep's and the other matrix-vector times.
 */
export function fitH200(times: Measured[]): TimeModel {
  const empty = {
    ...H200_TIME_MODEL,
    shortKEfficiency: {},
    shortkKernelEfficiency: {},
    gemvRowsEfficiency: {},
  };
  const later: Measured["session"][] = [
    "short-K kernel",
    "thin tiles",
    "narrow and direct",
    "small products",
    "gemv rows",
  ];
  const first = fitTimeModel(
    times.filter((m) => !later.includes(m.session)),
    empty,
    REFIT,
    ["shortKEfficiency"],
  );
  const kernel = times.filter((m) =>
    m.session === "short-K kernel" && m.params.PLAN === PLAN_SHORTK
  );
  // Every configuration measured starts at the same share, so each ends with a row of its own,
  // and the trip at the 32 k written before any measurement (the loss is flat enough along the
  // trip that where the descent starts decides where it stops within a few percent).
  const second = fitTimeModel(
    kernel,
    { ...first, shortkKernelEfficiency: startingShares(kernel), shortkTripK: 32 },
    SHORTK_REFIT,
    ["shortkKernelEfficiency"],
  );
  // The thin tiles' shares, each from the table's default, on their own search's times.
  const thinRows = tableRows(times.filter((m) => m.session === "thin tiles"), "tileEfficiency");
  const tiles = Object.fromEntries(
    Object.entries(second.tileEfficiency).filter(([key]) => !thinRows.includes(key)),
  );
  const third = fitTimeModel(
    times.filter((m) => m.session === "thin tiles"),
    { ...second, tileEfficiency: tiles },
    [],
    ["tileEfficiency"],
  );
  // The narrow short-K widths' shares, each from the same start as the 128-wide ones, on their
  // times at the few-columns shapes (the products above the direct plan's range).
  const { narrow, tiny } = narrowAndDirect(times);
  const fourth = fitTimeModel(
    narrow,
    {
      ...third,
      shortkKernelEfficiency: { ...third.shortkKernelEfficiency, ...startingShares(narrow) },
    },
    [],
    ["shortkKernelEfficiency"],
  );
  // The direct kernel's trip, on every plan's times at the smallest products, with the fixed cost
  // fit beside it for these times alone and then dropped: those products take 5 to 56 us, where
  // the fixed cost read at larger ones (15 us) would leave the trip nothing to explain. The fixed
  // cost is every plan's alike, so the trip is fit on how direct's times differ from the others'.
  const direct = fitTimeModel(
    tiny,
    { ...fourth, fixedS: 5e-6, directTripS: 5e-9 },
    ["fixedS", "directTripS"],
    [],
  );
  // A share for each row count and load width of the matrix-vector kernel, each from the one
  // share the first stage fit, on every matrix-vector time above the smallest products (whose
  // times are the fixed cost's): the sweep of row counts at one shape and the searches' at 10
  // others (leave-one-shape-out, lab/NOTES.md).
  const gemv = fitTimeModel(
    [...times.filter((m) => m.session === "gemv rows"), ...otherGemv(times)],
    fourth,
    [],
    ["gemvRowsEfficiency"],
  );
  return {
    ...fourth,
    directTripS: direct.directTripS,
    gemvRowsEfficiency: gemv.gemvRowsEfficiency,
  };
}

/** The matrix-vector times besides the row sweep's, above the smallest products. */
export const otherGemv = (times: Measured[]): Measured[] =>
  times.filter((m) =>
    m.session !== "gemv rows" && m.params.PLAN === PLAN_GEMV && flops(m.shape) > DIRECT_MAX_FLOPS
  );

/** The short-K configurations `times` measured, each at the share a fit starts them from. */
const startingShares = (times: Measured[]) =>
  Object.fromEntries(tableRows(times, "shortkKernelEfficiency").map((key) => [key, 0.5]));

/**
 * The narrow short-K plans' times at the "narrow and direct" search's few-columns shapes, and every
 * plan's at the "small products" search's products of at most DIRECT_MAX_FLOPS.
 */
export function narrowAndDirect(times: Measured[]): { narrow: Measured[]; tiny: Measured[] } {
  return {
    narrow: times.filter((m) =>
      m.session === "narrow and direct" && m.params.PLAN === PLAN_SHORTK &&
      m.params.BN < SHORTK_WIDTHS[0]
    ),
    tiny: times.filter((m) => m.session === "small products"),
  };
}

if (import.meta.main) {
  const { all } = await savedTimes();
  const first = all.filter((m) => ["search", "tiles", "record"].includes(m.session));
  const { narrow, tiny } = narrowAndDirect(all);
  const short = all.filter((m) => m.session === "short K");
  const kernel = all.filter((m) => m.session === "short-K kernel");
  const groups = [
    ["first fit's", first],
    ["short-K", short],
    ["short-K kernel search's short-K", kernel.filter((m) => m.params.PLAN === PLAN_SHORTK)],
    ["short-K kernel search's other", kernel.filter((m) => m.params.PLAN !== PLAN_SHORTK)],
    ["thin-tile search's", all.filter((m) => m.session === "thin tiles")],
    ["narrow short-K", narrow],
    ["smallest products'", tiny],
    ["matrix-vector row sweep's", all.filter((m) => m.session === "gemv rows")],
    ["other matrix-vector", otherGemv(all)],
  ] as const;
  const report = (name: string, model: TimeModel) => {
    for (const [group, times] of groups) {
      const e = logErrors(times, model);
      console.log(
        `${name}, ${times.length} ${group} times: median miss ` +
          `${(Math.exp(quantile(e, 0.5)) - 1).toFixed(3)}, 90th percentile ` +
          `${(Math.exp(quantile(e, 0.9)) - 1).toFixed(3)}`,
      );
    }
  };
  report("saved constants", H200_TIME_MODEL);
  const fit = fitH200(all);
  report("this fit", fit);
  const { tileEfficiency, ...rest } = fit;
  const gemvCheck = otherGemv(all);
  console.log(
    `other matrix-vector times, one share for all row counts against one each: median miss ${
      (Math.exp(quantile(logErrors(gemvCheck, { ...fit, gemvRowsEfficiency: {} }), 0.5)) - 1)
        .toFixed(3)
    } against ${(Math.exp(quantile(logErrors(gemvCheck, fit), 0.5)) - 1).toFixed(3)}`,
  );
  const thin = Object.entries(tileEfficiency).filter(([key]) => THIN_KEYS.includes(key));
  console.log(JSON.stringify({ ...rest, thinTiles: Object.fromEntries(thin) }, null, 2));
}
