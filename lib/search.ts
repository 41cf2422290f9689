/**
 * Every search over a kernel's parameters, on one sweep helper (`measurePoint`: the device's
 * limits checked before anything is compiled, then validated against the float64 reference,
 * then timed by the runner):
 * - `autotune`: every valid point of a step's space at one shape (the best few also at more
 *   shapes, so a tile that only suits the first one does not win), saved to data/tuning/;
 * - `quickTune`: the same in at most a minute or two, measuring only the points a saved search
 *   on the nearest device (lib/tuning.ts) ranked highest;
 * - `sweepKnob` / `sweepParams`: a step's knob, or any list of points, at one shape;
 * - `searchPlans`: per shape, the plans a step's planner ranks highest (KernelSpec
 *   planCandidates), each kind's best among them, kept per shape in data/tuning/.
 */
import type { Gpu } from "./gpu.ts";
import { flops, sameShape, type Shape, shapeLabel } from "./matrix.ts";
import type { KnobSweep } from "./record.ts";
import type { KernelResult } from "./record.ts";
import { type KernelSpec, type Params, spacePoints } from "./steps/spec.ts";
import { deviceLimitExceeded, runKernel } from "./runner.ts";
import type { TimingOptions } from "./timing.ts";
import {
  nearestTuning,
  saveSearchProgress,
  saveTuning,
  type ShapeTrial,
  type ShapeWinner,
  type TuningRecord,
  type TuningTrial,
} from "./tuning.ts";
import { deviceModel } from "./model/device.ts";

/** How one point is measured: the runner's timing budget and the rows checked. */
export interface PointOptions extends Pick<TimingOptions, "budgetMs" | "reps"> {
  checkRows?: number;
  /** Progress lines (e.g. console.error); silent by default. */
  log?: (line: string) => void;
}

/**
 * Why `params` cannot run here without compiling anything (the step's own rule, a missing
 * feature, or a device limit), or undefined when it can.
 */
export function whyNotHere(gpu: Gpu, spec: KernelSpec, params: Params): string | undefined {
  const missing = spec.requiredFeatures.find((f) => !gpu.has(f));
  if (missing) return `needs the "${missing}" feature`;
  return spec.invalid?.(params) ?? deviceLimitExceeded(gpu, spec, params);
}

/**
 * The one sweep helper: validate then time `spec` with `params` at `shape` (a point that cannot
 * run here is returned failed, with the reason, and never compiled).
 */
export async function measurePoint(
  gpu: Gpu,
  spec: KernelSpec,
  shape: Shape,
  params: Params,
  opts: PointOptions = {},
): Promise<KernelResult> {
  const full = { ...spec.params, ...params };
  const why = whyNotHere(gpu, spec, full);
  const result: KernelResult = why
    ? {
      kernel: spec.id,
      title: spec.title,
      ...shape,
      params: full,
      relErr: NaN,
      validated: false,
      error: why,
      errorKind: "limit",
      seed: 0,
      modelBytes: spec.model(shape, full).bytes,
      intensity: flops(shape) / spec.model(shape, full).bytes,
    }
    : await runKernel(gpu, spec, shape, {
      params,
      budgetMs: opts.budgetMs,
      reps: opts.reps,
      checkRows: opts.checkRows,
    });
  opts.log?.(
    `${spec.name} ${shapeLabel(shape)} ${JSON.stringify(params)}: ` +
      (result.validated ? `${result.gflops!.toFixed(0)} GFLOP/s` : `failed (${result.error})`),
  );
  return result;
}

const asTrial = (r: KernelResult): Omit<ShapeTrial, "shape"> => {
  const { validated, medianMs, gflops, relErr, error } = r;
  return { validated, medianMs, gflops, relErr, error };
};

// ---------------------------------------------------------------------------------------------
// Autotuning

export interface AutotuneOptions extends PointOptions {
  /** Search space; the kernel's own `space` by default. */
  space?: Record<string, number[]>;
  /** Only these points, in this order (a quick search's pick); all of `space` by default. */
  points?: Params[];
  /** Git commit recorded in the file ("unknown" by default). */
  commit?: string;
  /** Write data/tuning/<device>/<step>.json (default true). */
  save?: boolean;
  /** More shapes for the objective (geometric mean of GFLOP/s over `shape` and these). */
  alsoShapes?: Shape[];
  /** How many of the fastest candidates at `shape` are measured at `alsoShapes` (default 8). */
  shortlist?: number;
  /** Where the points came from, written into the record (a quick search's source). */
  seededBy?: string;
}

/**
 * Search `spec`'s parameter space at `shape` (and the shortlist at `opts.alsoShapes`) and return
 * (and by default save) the record. Points this device cannot run are recorded with the reason,
 * never compiled; a candidate that fails on any shape never wins.
 */
export async function autotune(
  gpu: Gpu,
  spec: KernelSpec,
  shape: Shape,
  opts: AutotuneOptions = {},
): Promise<TuningRecord> {
  const space = opts.space ?? spec.space;
  if (!space) throw new Error(`${spec.id} has no parameter space to search`);
  const point = { budgetMs: 150, checkRows: 4, ...opts };
  const trials: TuningTrial[] = [];
  for (const params of opts.points ?? spacePoints(space, spec.params)) {
    const r = await measurePoint(gpu, spec, shape, params, point);
    trials.push({ params: r.params ?? params, ...asTrial(r), score: r.gflops });
  }
  const fastest = (list: TuningTrial[]) =>
    list.filter((t) => t.validated && t.score !== undefined).sort((a, b) => b.score! - a.score!);
  const others = opts.alsoShapes ?? [];
  if (others.length) {
    for (const trial of fastest(trials).slice(0, opts.shortlist ?? 8)) {
      trial.others = [];
      for (const at of others) {
        const r = await measurePoint(gpu, spec, at, trial.params, point);
        trial.others.push({ shape: at, ...asTrial(r) });
      }
      const all = [trial, ...trial.others];
      trial.score = all.every((t) => t.validated && t.gflops! > 0)
        ? Math.exp(all.reduce((sum, t) => sum + Math.log(t.gflops!), 0) / all.length)
        : undefined;
    }
    for (const trial of trials) if (!trial.others) delete trial.score;
  }
  const ranked = fastest(trials);
  if (!ranked.length) throw new Error(`${spec.id}: no candidate of the space validated`);
  const record: TuningRecord = {
    schema: 1,
    device: gpu.summary,
    date: new Date().toISOString(),
    commit: opts.commit ?? "unknown",
    shape,
    shapes: [shape, ...others],
    kernel: spec.id,
    space,
    trials,
    best: ranked[0],
    ...(opts.seededBy ? { seededBy: opts.seededBy } : {}),
  };
  if (opts.save ?? true) await saveTuning(record);
  return record;
}

/** Points a quick search measures, at most (a full search of step 12 has several hundred). */
export const QUICK_POINTS = 24;

/**
 * The points a quick search measures: the saved search of the nearest device (lib/tuning.ts
 * nearestTuning) ranked by its score, then by its speed at its first shape, the ones this
 * device cannot run left out, up to `count`, and the step's defaults. Without a saved search,
 * an even spread over the space (every k-th point). Deterministic.
 */
export function quickPoints(
  gpu: Gpu,
  spec: KernelSpec,
  count = QUICK_POINTS,
): { points: Params[]; seededBy: string } {
  const runs = (p: Params) => !whyNotHere(gpu, spec, p);
  const key = (p: Params) => JSON.stringify(Object.entries(p).sort());
  const picked = new Map<string, Params>();
  const add = (p: Params) => {
    const full = { ...spec.params, ...p };
    if (picked.size < count && runs(full)) picked.set(key(full), full);
  };
  const saved = nearestTuning(gpu.summary, spec.name);
  if (saved) {
    const rank = (t: TuningTrial) => [t.score ?? -1, t.gflops ?? -1];
    const ranked = saved.record.trials.filter((t) => t.validated)
      .sort((a, b) => rank(b)[0] - rank(a)[0] || rank(b)[1] - rank(a)[1]);
    add(spec.params);
    for (const t of ranked) add(t.params);
    return {
      points: [...picked.values()],
      seededBy: `the ${picked.size} points ranked highest by the search on ` +
        `${saved.record.device.description} (${saved.path})`,
    };
  }
  const all = spacePoints(spec.space ?? {}, spec.params).filter(runs);
  const stride = Math.max(1, Math.floor(all.length / count));
  add(spec.params);
  for (let i = 0; i < all.length; i += stride) add(all[i]);
  return { points: [...picked.values()], seededBy: `every ${stride}th point of the space` };
}

/**
 * A search of at most QUICK_POINTS points (quickPoints) with the same objective and file as
 * `autotune`: for a GPU with no saved search of its own.
 */
export async function quickTune(
  gpu: Gpu,
  spec: KernelSpec,
  shape: Shape,
  opts: AutotuneOptions = {},
): Promise<TuningRecord> {
  const { points, seededBy } = quickPoints(gpu, spec);
  return await autotune(gpu, spec, shape, { shortlist: 4, ...opts, points, seededBy });
}

// ---------------------------------------------------------------------------------------------
// A step's knob, and any list of points

/** One point of a knob: its name, and the whole parameter set it runs. */
export interface KnobPoint {
  label: string;
  params: Params;
}

/** The knob's points, each laid over the step's defaults; empty for a step without a knob. */
export function knobPoints(spec: KernelSpec): KnobPoint[] {
  const knob = spec.knob;
  if (!knob) return [];
  return knob.points.map((point) => {
    const params = { ...spec.params, ...point };
    const label = knob.label?.(params) ??
      Object.entries(point).map(([k, v]) => `${k}=${v}`).join(" ");
    return { label, params };
  });
}

/** The point that runs the step's defaults (every knob has one; tests/knobs_test.ts checks). */
export function defaultPoint(spec: KernelSpec): KnobPoint | undefined {
  const same = (p: Params) =>
    Object.keys({ ...p, ...spec.params }).every((k) => p[k] === spec.params[k]);
  return knobPoints(spec).find((point) => same(point.params));
}

/** The shape the knob is swept at for run size n (square unless the knob names its own). */
export function knobShape(spec: KernelSpec, n: number): Shape {
  return spec.knob?.shape?.(n) ?? { m: n, k: n, n };
}

/**
 * The step exactly as its points describe it: no device-tuned parameters or per-shape plan
 * layered under them, so every adapter turns the same knob.
 */
function asDescribed(spec: KernelSpec): KernelSpec {
  return { ...spec, deviceTuned: false, planFor: undefined };
}

/** How a sweep runs: timing options, and a callback before and after each point. */
export interface SweepOptions extends PointOptions {
  onStart?(point: KnobPoint, index: number, total: number): void | Promise<void>;
  onResult?(point: KnobSweep["points"][number]): void | Promise<void>;
}

/**
 * Validate then time one kernel at several parameter sets at one shape, in order (each set laid
 * over the parameters the runner would use, as `runKernel`'s `params` are).
 */
export async function sweepParams(
  gpu: Gpu,
  spec: KernelSpec,
  shape: Shape,
  points: KnobPoint[],
  opts: SweepOptions = {},
): Promise<KnobSweep["points"]> {
  const done: KnobSweep["points"] = [];
  for (const [i, point] of points.entries()) {
    await opts.onStart?.(point, i, points.length);
    done.push({
      label: point.label,
      result: await measurePoint(gpu, spec, shape, point.params, opts),
    });
    await opts.onResult?.(done[i]);
  }
  return done;
}

/** Validate then time every point of `spec`'s knob at run size n, in order. */
export async function sweepKnob(
  gpu: Gpu,
  spec: KernelSpec,
  n: number,
  opts: SweepOptions = {},
): Promise<KnobSweep> {
  if (!spec.knob) throw new Error(`${spec.id} has no knob`);
  const points = await sweepParams(
    gpu,
    asDescribed(spec),
    knobShape(spec, n),
    knobPoints(spec),
    opts,
  );
  return { kernel: spec.id, knob: spec.knob.name, points };
}

// ---------------------------------------------------------------------------------------------
// Plans per shape

export interface PlanSearchOptions extends PointOptions {
  /** Plans measured per shape (the planner's first ones plus the best of each kind). */
  perShape?: number;
  /** Plans measured per shape of at least BIG_FLOPS. */
  perBigShape?: number;
  /** Plans per shape measured a second time (the fastest of the first pass). */
  confirm?: number;
  /** Shapes under this many FLOPs measure every plan (default SMALL_FLOPS). */
  everyPlanBelow?: number;
  commit?: string;
  /**
   * Write data/tuning/<device>/<step>.json (default true), and the search's progress beside it
   * (<step>.partial.json) while it runs.
   */
  save?: boolean;
}

/** Shapes of at least this many FLOPs (4096^3 and up) measure fewer plans. */
const BIG_FLOPS = 1e11;
/** Shapes under this many FLOPs (about 1700^3) measure every plan. */
const SMALL_FLOPS = 1e10;

/** A plan the planner offers at a shape, best first. */
export interface PlanCandidate {
  params: Params;
  kind: string;
}

/** The plans measured at one shape: the planner's first `count`, plus each kind's best. */
export function shortlist<C extends PlanCandidate>(all: C[], count: number): C[] {
  const picked = all.slice(0, count);
  for (const kind of new Set(all.map((c) => c.kind))) {
    if (!picked.some((c) => c.kind === kind)) picked.push(all.find((c) => c.kind === kind)!);
  }
  return picked;
}

/** The values each parameter took over `plans`: the space a plan search covered. */
function spaceOf(plans: Params[]): Record<string, number[]> {
  const space: Record<string, Set<number>> = {};
  for (const p of plans) for (const [k, v] of Object.entries(p)) (space[k] ??= new Set()).add(v);
  return Object.fromEntries(
    Object.entries(space).map(([k, v]) => [k, [...v].sort((a, b) => a - b)]),
  );
}

/**
 * Search a planning step's plans (KernelSpec planCandidates) at every shape of `shapes` on this
 * device, and save and return the record: every plan at the small shapes (where the planner's
 * ranking is least reliable and each run is cheapest), 8 per shape in the middle and 4 at the
 * largest. Then at every shape the fastest few are measured again, after all the other shapes
 * ran, and each keeps the slower of its two medians: a plan wins only when it is fast twice
 * (small split launches can settle into a slower state for a whole timing run). After each
 * shape the trials so far are saved as progress (lib/tuning.ts saveSearchProgress), so a run a
 * time limit stops keeps what it measured.
 */
export async function searchPlans(
  gpu: Gpu,
  spec: KernelSpec,
  shapes: Shape[],
  opts: PlanSearchOptions = {},
): Promise<TuningRecord> {
  if (!spec.planCandidates) throw new Error(`${spec.id} has no plans to search`);
  const point = { budgetMs: 100, checkRows: 4, ...opts };
  const trials: TuningTrial[] = [];
  // What has been measured so far, saved after each shape of each pass (lib/tuning.ts).
  const progress = (measured: number, confirmed: number) =>
    (opts.save ?? true) && saveSearchProgress({
      device: gpu.summary,
      kernel: spec.id,
      date: new Date().toISOString(),
      commit: opts.commit ?? "unknown",
      shapes,
      measured,
      confirmed,
      trials,
    });
  for (const [i, shape] of shapes.entries()) {
    const all = spec.planCandidates(shape, gpu.summary);
    const f = flops(shape);
    const count = f < (opts.everyPlanBelow ?? SMALL_FLOPS)
      ? all.length
      : f >= BIG_FLOPS
      ? opts.perBigShape ?? 4
      : opts.perShape ?? 8;
    for (const c of shortlist(all, count)) {
      const r = await measurePoint(gpu, spec, shape, c.params, point);
      trials.push({ params: r.params ?? c.params, shape, ...asTrial(r) });
    }
    await progress(i + 1, 0);
  }
  for (const [i, shape] of shapes.entries()) {
    const fastest = trials.filter((t) => t.shape === shape && t.validated)
      .sort((a, b) => b.gflops! - a.gflops!).slice(0, opts.confirm ?? 3);
    for (const t of fastest) {
      const again = await measurePoint(gpu, spec, shape, t.params, point);
      if (!again.validated) {
        Object.assign(t, { validated: false, error: again.error });
      } else if (again.gflops! < t.gflops!) {
        Object.assign(t, { gflops: again.gflops, medianMs: again.medianMs });
      }
    }
    await progress(shapes.length, i + 1);
  }
  const perShape: ShapeWinner[] = [];
  for (const shape of shapes) {
    const best = trials.filter((t) => t.shape === shape && t.validated)
      .reduce<TuningTrial | undefined>((a, t) => (!a || t.gflops! > a.gflops! ? t : a), undefined);
    if (best) perShape.push({ shape, params: best.params, gflops: best.gflops! });
  }
  // The record's `shape` is the first shape: its winner is the record's `best`.
  const winner = perShape.find((w) => sameShape(w.shape, shapes[0]));
  const first = winner && trials.find((t) => t.params === winner.params);
  if (!first) throw new Error(`${spec.name}: no plan validated at ${shapeLabel(shapes[0])}`);
  const record: TuningRecord = {
    schema: 1,
    device: gpu.summary,
    date: new Date().toISOString(),
    commit: opts.commit ?? "unknown",
    shape: shapes[0],
    shapes,
    kernel: spec.id,
    space: spaceOf(trials.map((t) => t.params)),
    trials,
    best: first,
    perShape,
    sms: deviceModel(gpu.summary).sms,
  };
  if (opts.save ?? true) await saveTuning(record);
  return record;
}
