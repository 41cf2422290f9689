/**
 * The autotuner: try every valid point of a kernel's parameter space on this device at one
 * shape, validate each candidate against the reference, time it with GPU timestamps, and save
 * the trials and the winner to data/tuning/<device-slug>.json (read back by lib/tuning.ts).
 */
import type { Gpu } from "./gpu.ts";
import type { Shape } from "./matrix.ts";
import type { KernelSpec, Params } from "./registry.ts";
import { runKernel } from "./runner.ts";
import { type TuningRecord, type TuningTrial, tuningUrl } from "./tuning.ts";

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
  /** Progress lines (e.g. console.error); silent by default. */
  log?: (line: string) => void;
}

/** Every combination of the space's values layered over `base`, in a stable order. */
export function spacePoints(space: Record<string, number[]>, base: Params): Params[] {
  let points: Params[] = [{ ...base }];
  for (const [key, values] of Object.entries(space)) {
    points = points.flatMap((p) => values.map((v) => ({ ...p, [key]: v })));
  }
  return points;
}

/**
 * Search `spec`'s parameter space at `shape` and return (and by default save) the record.
 * Invalid points are recorded with their reason; failed candidates never win.
 */
export async function autotune(
  gpu: Gpu,
  spec: KernelSpec,
  shape: Shape,
  opts: AutotuneOptions = {},
): Promise<TuningRecord> {
  const space = opts.space ?? spec.space;
  if (!space) throw new Error(`${spec.id} has no parameter space to search`);
  const trials: TuningTrial[] = [];
  for (const params of spacePoints(space, spec.params)) {
    const why = spec.invalid?.(params);
    if (why) {
      trials.push({ params, validated: false, error: why });
      continue;
    }
    const r = await runKernel(gpu, spec, shape, {
      params,
      budgetMs: opts.budgetMs ?? 150,
      checkRows: opts.checkRows ?? 4,
    });
    trials.push({
      params,
      validated: r.validated,
      medianMs: r.medianMs,
      gflops: r.gflops,
      relErr: r.relErr,
      error: r.error,
    });
    opts.log?.(
      `autotune ${JSON.stringify(params)}: ` +
        (r.validated ? `${r.gflops!.toFixed(0)} GFLOP/s` : `failed (${r.error})`),
    );
  }
  const ranked = trials.filter((t) => t.validated && t.gflops !== undefined)
    .sort((a, b) => b.gflops! - a.gflops!);
  if (!ranked.length) throw new Error(`${spec.id}: no candidate of the space validated`);
  const record: TuningRecord = {
    schema: 1,
    device: gpu.summary,
    date: new Date().toISOString(),
    commit: opts.commit ?? "unknown",
    shape,
    kernel: spec.id,
    space,
    trials,
    best: ranked[0],
  };
  if (opts.save ?? true) await saveTuning(record);
  return record;
}

/** Write a tuning record to data/tuning/<device-slug>.json. */
export async function saveTuning(record: TuningRecord): Promise<URL> {
  const url = tuningUrl(record.device);
  await Deno.mkdir(new URL(".", url), { recursive: true });
  await Deno.writeTextFile(url, JSON.stringify(record, null, 2) + "\n");
  return url;
}
