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
 *   and its log-uniform draw is new at every seed).
 *
 * The fit (fitTimeModel): coordinate descent on the constants it refits (REFIT) and the short-K
 * shares, each moved by a factor while that lowers the sum over the times of a Huber loss on log(predicted / measured) (squared up
 * to a miss of 30%, linear past it, so a few odd times do not steer it).
 *
 *   deno run --allow-read lab/time_model_fit.ts     prints the fit and its errors
 */
import { namedDevice } from "../lib/gpu.ts";
import type { Shape } from "../lib/matrix.ts";
import type { Params } from "../lib/steps/spec.ts";
import type { TuningRecord } from "../lib/tuning.ts";
import { loadRecord } from "../lib/record.ts";
import { generatedParams } from "../kernels/12_generated/step.ts";
import { PLAN_TILES } from "../kernels/13_shapes/launch.ts";
import {
  H200_TIME_MODEL,
  predictPlanTime,
  tileKey,
  type TimeModel,
} from "../kernels/13_shapes/predict.ts";

export const H200 = namedDevice("NVIDIA H200", "nvidia", "hopper");

/** One saved time: where it was measured, the plan, the median, and which session measured it. */
export interface Measured {
  session: "search" | "tiles" | "record" | "short K";
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
  for (const file of ["shortk-probe-plans", "calibration-plans"]) {
    all.push(
      ...planTrials(await readJson(`lab/runs/nvidia-h200-2026-11-26-${file}.json`), "short K"),
    );
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
export type Scalar = Exclude<keyof TimeModel, "tileEfficiency" | "shortKEfficiency">;
const UNIT: Scalar[] = [
  "overlap",
  "partialWave",
  "dramEfficiency",
  "stripEfficiency",
  "gemvEfficiency",
];

/**
 * Coordinate descent from `start`: each of `scalars` and each row of the short-K table moved up
 * or down by a factor while the loss falls, the factor halved each round; the rest kept.
 */
export function fitTimeModel(times: Measured[], start: TimeModel, scalars: Scalar[]): TimeModel {
  let best: TimeModel = {
    ...start,
    tileEfficiency: { ...start.tileEfficiency },
    shortKEfficiency: { ...start.shortKEfficiency },
  };
  // Each tile configuration the short-K searches measured gets its own short-K share.
  const shortKTiles = [
    ...new Set(
      times.filter((m) => m.session === "short K" && m.params.PLAN === PLAN_TILES)
        .map((m) => tileKey(generatedParams(m.params))),
    ),
  ];
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
      for (const key of shortKTiles) {
        for (const dir of [1 + step, 1 / (1 + step)]) {
          let v =
            (best.shortKEfficiency[key] ?? best.tileEfficiency[key] ?? best.tileEfficiencyDefault) *
            dir;
          while (
            tryModel({
              ...best,
              shortKEfficiency: { ...best.shortKEfficiency, [key]: Math.min(1, v) },
            })
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
export const REFIT: Scalar[] = ["fixedS", "kTiles", "overlap", "gemvEfficiency"];

/** The fit of H200_TIME_MODEL: from its constants with no short-K table, REFIT and that table. */
export const fitH200 = (times: Measured[]): TimeModel =>
  fitTimeModel(times, { ...H200_TIME_MODEL, shortKEfficiency: {} }, REFIT);

if (import.meta.main) {
  const { all } = await savedTimes();
  const first = all.filter((m) => m.session !== "short K");
  const short = all.filter((m) => m.session === "short K");
  const report = (name: string, model: TimeModel) => {
    for (const [group, times] of [["first fit's", first], ["short-K", short]] as const) {
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
  const { tileEfficiency: _, ...rest } = fit;
  console.log(JSON.stringify(rest, null, 2));
}
