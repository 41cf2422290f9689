/**
 * Step 13's per-shape search: at each shape, measure the plans the model ranks highest (and the
 * best of each kind, so the model cannot hide a kind), each validated then timed by the runner,
 * and keep the fastest per shape in data/tuning/<device>/shapes.json (lib/tuning.ts). The
 * picker (plans.ts) then uses the winner for every shape of the same class.
 *
 * Sized for one GPU session: every plan at the small shapes (under SMALL_FLOPS, where the model's
 * ranking is least reliable and each run is cheapest), 8 per shape in the middle and 4 at the
 * largest, where the model's ranking of tile plans is reliable and each run costs most.
 *
 * Then a second pass: at every shape the fastest few plans are measured again, after all the
 * other shapes ran, and each keeps the slower of its two medians. Small split-K launches can
 * settle into a slower state for a whole timing run (seen on the H200 at 1024^3: 0.14 ms in the
 * search, 0.17-0.25 ms in the bench that followed), so a plan wins only when it is fast twice.
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
import type { Params } from "../../lib/kernels/spec.ts";

export interface ShapeSearchOptions {
  /** Plans measured per shape (the model's first ones plus the best of each kind). */
  perShape?: number;
  /** Plans measured per shape of at least BIG_FLOPS. */
  perBigShape?: number;
  /** Plans per shape measured a second time (the fastest of the first pass). */
  confirm?: number;
  /** Shapes under this many FLOPs measure every plan (default SMALL_FLOPS). */
  everyPlanBelow?: number;
  /** Timing budget per plan, ms of GPU time. */
  budgetMs?: number;
  commit?: string;
  /** Write data/tuning/<device>/shapes.json (default true). */
  save?: boolean;
  log?: (line: string) => void;
}

/** Shapes of at least this many FLOPs (4096^3 and up) measure fewer plans. */
const BIG_FLOPS = 1e11;
/** Shapes under this many FLOPs (about 1700^3) measure every plan. */
const SMALL_FLOPS = 1e10;

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
  const measure = async (shape: Shape, params: Params, label: string) => {
    const r = await runKernel(gpu, spec, shape, {
      params,
      budgetMs: opts.budgetMs ?? 100,
      checkRows: 4,
    });
    opts.log?.(
      `shapes ${shapeLabel(shape)} ${label} ${JSON.stringify(params)}: ` +
        (r.validated ? `${r.gflops!.toFixed(0)} GFLOP/s` : `failed (${r.error})`),
    );
    return r;
  };
  for (const shape of shapes) {
    const all = candidates(shape, gpu.summary);
    const f = flops(shape);
    const count = f < (opts.everyPlanBelow ?? SMALL_FLOPS)
      ? all.length
      : f >= BIG_FLOPS
      ? opts.perBigShape ?? 4
      : opts.perShape ?? 8;
    for (const c of shortlist(all, count)) {
      const { params, validated, medianMs, gflops, relErr, error } = await measure(
        shape,
        c.params,
        c.kind,
      );
      trials.push({ params, shape, validated, medianMs, gflops, relErr, error });
    }
  }
  // The second pass: the fastest plans of each shape again; each keeps its slower median.
  for (const shape of shapes) {
    const fastest = trials.filter((t) => t.shape === shape && t.validated)
      .sort((a, b) => b.gflops! - a.gflops!).slice(0, opts.confirm ?? 3);
    for (const t of fastest) {
      const again = await measure(shape, t.params, "again");
      if (!again.validated) {
        Object.assign(t, { validated: false, error: again.error });
      } else if (again.gflops! < t.gflops!) {
        Object.assign(t, { gflops: again.gflops, medianMs: again.medianMs });
      }
    }
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
