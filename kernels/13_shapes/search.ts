/**
 * Step 13's per-shape search: at each shape, measure the plans the model ranks highest (and the
 * best of each kind, so the model cannot hide a kind), each validated then timed by the runner,
 * and keep the fastest per shape in data/tuning/<device>/shapes.json (lib/tuning.ts). The
 * picker (plans.ts) then uses the winner for every shape of the same class.
 *
 * Sized for one GPU session: on the 12-shape suite it measures about 8 plans per shape (4 at
 * the largest, where the model's ranking of tile plans is reliable and each run costs most), 80
 * to 90 runs of 0.1 s of timing plus input generation and checks.
 */
import type { Gpu } from "../../lib/gpu.ts";
import { flops, sameShape, type Shape, shapeLabel } from "../../lib/matrix.ts";
import { findKernel } from "../../lib/registry.ts";
import { runKernel } from "../../lib/runner.ts";
import {
  saveTuning,
  type ShapeWinner,
  type TuningRecord,
  type TuningTrial,
} from "../../lib/tuning.ts";
import { type Candidate, candidates, deviceModel, type PlanKind, SLICE_COUNTS } from "./plans.ts";

export interface ShapeSearchOptions {
  /** Plans measured per shape (the model's first ones plus the best of each kind). */
  perShape?: number;
  /** Plans measured per shape of at least BIG_FLOPS. */
  perBigShape?: number;
  /** Timing budget per plan, ms of GPU time. */
  budgetMs?: number;
  commit?: string;
  /** Write data/tuning/<device>/shapes.json (default true). */
  save?: boolean;
  log?: (line: string) => void;
}

/** Shapes of at least this many FLOPs (4096^3 and up) measure fewer plans. */
const BIG_FLOPS = 1e11;

/** The plans measured at one shape: the model's first `count`, plus each kind's best. */
export function shortlist(all: Candidate[], count: number): Candidate[] {
  const picked = all.slice(0, count);
  const kinds = new Set<PlanKind>(all.map((c) => c.kind));
  for (const kind of kinds) {
    if (!picked.some((c) => c.kind === kind)) picked.push(all.find((c) => c.kind === kind)!);
  }
  return picked;
}

/** Search the plans at every shape of `shapes` on this device; save and return the record. */
export async function searchShapes(
  gpu: Gpu,
  shapes: Shape[],
  opts: ShapeSearchOptions = {},
): Promise<TuningRecord> {
  const spec = findKernel("shapes");
  if (!spec) throw new Error("the registry has no step named shapes");
  const trials: TuningTrial[] = [];
  const perShape: ShapeWinner[] = [];
  for (const shape of shapes) {
    const count = flops(shape) >= BIG_FLOPS ? opts.perBigShape ?? 4 : opts.perShape ?? 8;
    let best: TuningTrial | undefined;
    for (const c of shortlist(candidates(shape, gpu.summary), count)) {
      const r = await runKernel(gpu, spec, shape, {
        params: c.params,
        budgetMs: opts.budgetMs ?? 100,
        checkRows: 4,
      });
      const { validated, medianMs, gflops, relErr, error } = r;
      const trial = { params: r.params, shape, validated, medianMs, gflops, relErr, error };
      trials.push(trial);
      opts.log?.(
        `shapes ${shapeLabel(shape)} ${c.kind} ${JSON.stringify(c.params)}: ` +
          (validated ? `${gflops!.toFixed(0)} GFLOP/s` : `failed (${error})`),
      );
      if (validated && gflops && (!best || gflops > best.gflops!)) best = trial;
    }
    if (best) perShape.push({ shape, params: best.params, gflops: best.gflops! });
  }
  // The record's `shape` is the first shape: its winner is the record's `best`.
  const winner = perShape.find((w) => sameShape(w.shape, shapes[0]));
  const first = winner && trials.find((t) => t.params === winner.params);
  if (!first) throw new Error(`shapes: no plan validated at ${shapeLabel(shapes[0])}`);
  const record: TuningRecord = {
    schema: 1,
    device: gpu.summary,
    date: new Date().toISOString(),
    commit: opts.commit ?? "unknown",
    shape: shapes[0],
    shapes,
    kernel: spec.id,
    space: { PLAN: [0, 1], SLICES: SLICE_COUNTS },
    trials,
    best: first,
    perShape,
    sms: deviceModel(gpu.summary).sms,
  };
  if (opts.save ?? true) await saveTuning(record);
  return record;
}
