/**
 * A knob per step: the reader turns the step's parameter (KernelSpec.knob) on their adapter, at
 * the values the knob cell passes, and sees a table and a chart, beside the GPU host's recorded
 * sweep of the same knob when the newest GPU record has one (`deno task bench --knobs`).
 */
import { knobChart, type KnobRun } from "../charts/knob.ts";
import { shortCommit } from "../charts/common.ts";
import { defaultPoint, knobShape, sweepKnob } from "../search.ts";
import { type Shape, shapeLabel } from "../matrix.ts";
import { GPU_SWEEP_SIZE } from "../sizes.ts";
import type { KernelResult, KnobSweep } from "../record.ts";
import { type KernelSpec, type Params, stepName } from "../registry.ts";
import { showChart } from "./charts.ts";
import {
  type Cell,
  shortError,
  showNote,
  SPREAD_COLUMN,
  spreadCell,
  tableBundle,
} from "./format.ts";
import { liveDisplay } from "./jupyter.ts";
import { defaultBudgetMs } from "./live.ts";
import { kernel } from "./steps.ts";
import { newestGpuSection } from "./recorded.ts";
import { mainSize, type Session } from "./session.ts";

/** Options of a knob cell. */
export interface KnobOptions {
  /**
   * The points to run, in order, each the parameters it sets over the step's defaults (default:
   * the step's own, KernelSpec.knob.points). A notebook's knob cell passes them, so the reader
   * edits them there. A parameter given as undefined stays at the step's default (so a cell may
   * spread a set of parameters that is empty on some adapters).
   */
  points?: Record<string, number | undefined>[];
  /**
   * What the points turn, when they turn other parameters than the step's knob does (default:
   * the knob's name): heads the table and the chart.
   */
  name?: string;
  /** Why these points, when `name` is given (default: the knob's own reason). */
  why?: string;
  /** Run size n (default: the session's largest size; the knob may make the shape skinny). */
  size?: number;
  /** Timed GPU time per point (default: 300 ms on software adapters, 400 ms on GPUs). */
  budgetMs?: number;
}

/**
 * This step's knob in the notebook's record, or else in the newest GPU record that swept it, with
 * the line naming that run. Given the live `shape`, a sweep at that shape comes first, then one at
 * the bench's own sweep size (GPU_SWEEP_SIZE): a sweep at some other size is never the comparison.
 */
export async function recordedKnob(spec: KernelSpec, shape?: Shape): Promise<KnobRun | undefined> {
  if (shape) {
    return await recordedKnobAt(spec, shape) ??
      await recordedKnobAt(spec, knobShape(spec, GPU_SWEEP_SIZE));
  }
  return recordedKnobAt(spec);
}

async function recordedKnobAt(spec: KernelSpec, shape?: Shape): Promise<KnobRun | undefined> {
  const atShape = (k: KnobSweep) =>
    !shape ||
    k.points.every(({ result: r }) => r.m === shape.m && r.k === shape.k && r.n === shape.n);
  const sweepOf = (knobs: KnobSweep[] = []) =>
    knobs.find((k) =>
      stepName(k.kernel) === spec.name && atShape(k) && k.points.some((p) => p.result.gflops)
    );
  const found = await newestGpuSection((r) => sweepOf(r.knobs) !== undefined, { beyondPin: true });
  if (!found) return undefined;
  const r = found.record;
  return {
    source: `${r.device.description}, ${r.date.slice(0, 10)}, commit ${
      shortCommit(r.commit)
    }${found.note}`,
    sweep: sweepOf(r.knobs)!,
  };
}

/**
 * Turn a step's knob on this adapter at the points the cell passes (default: the step's own):
 * every point validated, then timed, at one shape, shown as a table and a chart beside the GPU
 * host's recorded sweep of the same knob where it has those points (when one is committed).
 * Throws for a point that names a parameter the step does not have. Returns nothing: the table
 * and the chart are the output.
 */
export async function showKnob(s: Session, step: string, opts: KnobOptions = {}): Promise<void> {
  const stepSpec = kernel(step);
  const own = stepSpec.knob;
  if (!own) throw new Error(`${stepSpec.id} has no knob (KernelSpec.knob in its step.ts)`);
  const knob = {
    ...own,
    points: opts.points?.map(definedOnly) ?? own.points,
    name: opts.name ?? own.name,
    why: opts.why ?? own.why,
  };
  for (const point of knob.points) {
    const unknown = Object.keys(point).filter((k) => !(k in stepSpec.params));
    if (unknown.length) {
      throw new Error(
        `${stepSpec.id} has no parameter ${unknown.join(", ")} ` +
          `(its parameters: ${Object.keys(stepSpec.params).join(", ")})`,
      );
    }
  }
  const spec: KernelSpec = { ...stepSpec, knob };
  const n = opts.size ?? mainSize(s);
  const shape = knobShape(spec, n);
  await showNote(
    `**The knob: ${knob.name}.** ${knob.why} Each point (the \`points\` of this cell: edit them ` +
      `to try others) sets what it names over the step's defaults, at ${shapeLabel(shape)}, and ` +
      `is validated against the float64 reference before it is timed.`,
  );
  const live = liveDisplay(`knob-${crypto.randomUUID()}`);
  const mine = await sweepKnob(s.gpu, spec, n, {
    budgetMs: opts.budgetMs ?? defaultBudgetMs(s),
    onStart: (point, i, total) =>
      live.update(`running ${spec.id} ${point.label} at ${shapeLabel(shape)} (${i + 1}/${total})`),
  });
  // A renamed knob turns other parameters than the recorded sweep did: nothing to set beside it.
  const recorded = opts.name ? undefined : await recordedKnob(spec, shape);
  const yours = `${s.summary.description}${s.software ? " (software)" : ""}, live`;
  await live.update(knobTable(spec, mine, yours, recorded));
  const runs: KnobRun[] = [{ source: yours, sweep: mine }, ...(recorded ? [recorded] : [])];
  if (runs.some((r) => r.sweep.points.some((p) => p.result.gflops))) {
    await showChart(knobChart(runs, defaultPoint(spec)?.label ?? "", `${spec.id}: ${knob.name}`));
  }
  if (!recorded && !opts.name) {
    await showNote(
      "**No recorded GPU sweep of this knob yet**: it shows here once a GPU-host record made " +
        "with `deno task bench --knobs` is committed to `data/runs/`.",
    );
  }
}

/**
 * One row per point you ran: yours (validated, error, GFLOP/s, x the default) and the recorded
 * run's at the same point, where it has it (the chart draws the whole recorded sweep).
 */
function knobTable(
  spec: KernelSpec,
  mine: KnobSweep,
  yours: string,
  recorded: KnobRun | undefined,
) {
  const byLabel = (sweep: KnobSweep | undefined) =>
    new Map((sweep?.points ?? []).map((p) => [p.label, p.result]));
  const mineAt = byLabel(mine);
  const recAt = byLabel(recorded?.sweep);
  const base = defaultPoint(spec)?.label;
  const speedup = (at: Map<string, KernelResult>, label: string) => {
    const x = at.get(label)?.gflops, d = base ? at.get(base)?.gflops : undefined;
    return x && d ? x / d : undefined;
  };
  const rows: Cell[][] = [...mineAt.keys()].map((label) => {
    const r = mineAt.get(label);
    const failed = r && !r.validated ? shortError(r.error) ?? "not validated" : undefined;
    // A point past this adapter's limits never ran: nothing failed validation, nothing to show.
    const ran = r?.errorKind !== "limit";
    return [
      label === base ? `${label} (default)` : label,
      ran ? r?.validated : "not run",
      ran ? r?.relErr : undefined,
      r?.gflops,
      spreadCell(r),
      speedup(mineAt, label),
      ...(recorded ? [recAt.get(label)?.gflops, speedup(recAt, label)] : []),
      ...(mine.points.some((p) => !p.result.validated) ? [failed] : []),
    ];
  });
  const first = mine.points[0]?.result;
  const at = first ? shapeLabel(first) : "";
  const recN = recorded?.sweep.points[0]?.result;
  return tableBundle(
    [
      spec.knob!.name,
      "validated",
      "rel. error",
      "your GFLOP/s",
      `your ${SPREAD_COLUMN}`,
      "x default (yours)",
      ...(recorded
        ? [`recorded GFLOP/s${recN ? ` at ${shapeLabel(recN)}` : ""}`, "x default (recorded)"]
        : []),
      ...(mine.points.some((p) => !p.result.validated) ? ["why not"] : []),
    ],
    rows,
    `${spec.id}'s ${spec.knob!.name} at ${at} on ${yours}` +
      (recorded ? `; recorded on ${recorded.source}` : ""),
  );
}

/** A point without its undefined entries: those parameters keep the step's defaults. */
function definedOnly(point: Record<string, number | undefined>): Params {
  return Object.fromEntries(
    Object.entries(point).filter((e): e is [string, number] => e[1] !== undefined),
  );
}
