/**
 * The autotuner: try every valid point of a kernel's parameter space on this device at one
 * shape, validate each candidate against the reference, time it with GPU timestamps, and save
 * the trials and the winner to data/tuning/<device-slug>.json (through lib/tuning.ts).
 * With `alsoShapes`, the best candidates are measured there too and the winner is the one with
 * the best geometric mean over all shapes, so a tile that only suits the first shape (say one
 * that fills the GPU's waves exactly at 4096 but spills at 4097) does not win.
 */
import type { Gpu } from "./gpu.ts";
import type { Shape } from "./matrix.ts";
import { type KernelSpec, type Params, spacePoints } from "./kernels/spec.ts";
import { runKernel } from "./runner.ts";
import { saveTuning, type ShapeTrial, type TuningRecord, type TuningTrial } from "./tuning.ts";

export { spacePoints };

export interface AutotuneOptions {
  /** Search space; the kernel's own `space` by default. */
  space?: Record<string, number[]>;
  /** Timing budget per candidate, in ms of GPU time. */
  budgetMs?: number;
  /** Rows of C checked against the reference per candidate. */
  checkRows?: number;
  /** Git commit recorded in the file ("unknown" by default). */
  commit?: string;
  /** Write data/tuning/<device-slug>.json (default true). */
  save?: boolean;
  /** More shapes for the objective (geometric mean of GFLOP/s over `shape` and these). */
  alsoShapes?: Shape[];
  /** How many of the fastest candidates at `shape` are measured at `alsoShapes` (default 8). */
  shortlist?: number;
  /** Progress lines (e.g. console.error); silent by default. */
  log?: (line: string) => void;
}

/**
 * Search `spec`'s parameter space at `shape` (and the shortlist at `opts.alsoShapes`) and return
 * (and by default save) the record. Invalid points are recorded with their reason; a candidate
 * that fails on any shape never wins.
 */
export async function autotune(
  gpu: Gpu,
  spec: KernelSpec,
  shape: Shape,
  opts: AutotuneOptions = {},
): Promise<TuningRecord> {
  const space = opts.space ?? spec.space;
  if (!space) throw new Error(`${spec.id} has no parameter space to search`);
  const measure = async (params: Params, at: Shape): Promise<ShapeTrial> => {
    const r = await runKernel(gpu, spec, at, {
      params,
      budgetMs: opts.budgetMs ?? 150,
      checkRows: opts.checkRows ?? 4,
    });
    opts.log?.(
      `autotune ${JSON.stringify(params)} ${at.m}x${at.k}x${at.n}: ` +
        (r.validated ? `${r.gflops!.toFixed(0)} GFLOP/s` : `failed (${r.error})`),
    );
    const { validated, medianMs, gflops, relErr, error } = r;
    return { shape: at, validated, medianMs, gflops, relErr, error };
  };
  const trials: TuningTrial[] = [];
  for (const params of spacePoints(space, spec.params)) {
    const why = spec.invalid?.(params);
    if (why) {
      trials.push({ params, validated: false, error: why });
      continue;
    }
    const { shape: _, ...first } = await measure(params, shape);
    trials.push({ params, ...first, score: first.gflops });
  }
  const fastest = (list: TuningTrial[]) =>
    list.filter((t) => t.validated && t.score !== undefined).sort((a, b) => b.score! - a.score!);
  const others = opts.alsoShapes ?? [];
  if (others.length) {
    for (const trial of fastest(trials).slice(0, opts.shortlist ?? 8)) {
      trial.others = [];
      for (const at of others) trial.others.push(await measure(trial.params, at));
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
  };
  if (opts.save ?? true) await saveTuning(record);
  return record;
}
