/**
 * Notebook 13's demonstrations: the wave arithmetic of the shape suite on the model's device (an
 * H200 as the picker's table describes it: 132 SMs), the plan the model picks per shape, the
 * suite scaled down on the reader's adapter against step 12 and TF.js, and the GPU host's
 * recorded suite and per-shape search once they are committed.
 */
import type { DeviceSummary } from "../../gpu.ts";
import { SHAPE_SUITE } from "../../suite.ts";
import { sameShape, type Shape, shapeLabel } from "../../matrix.ts";
import type { KernelResult, PeerResult, RunRecord } from "../../record.ts";
import { runKernel } from "../../runner.ts";
import { findKernel, type Params, previousStep } from "../../registry.ts";
import { measured } from "../../charts/common.ts";
import { geomean, ratio } from "../../compare.ts";
import { suiteRows } from "../../suite.ts";
import {
  BARS,
  barsMet,
  heldoutOf,
  type HeldoutRow,
  heldoutRows,
  type HeldoutSummary,
  heldoutSummary,
  LARGE_FLOP,
  speedsOf,
} from "../../heldout.ts";
import { recordedTuning } from "../../tuning.ts";
import { openTfjs } from "../../peers/tfjs.ts";
import { openCublas } from "../../peers/cublas.ts";
import {
  candidates,
  modelPlan,
  pickPlan,
  samePlan,
  TILE_CONFIGS,
} from "../../../kernels/13_shapes/plans.ts";
import { PLAN_TILES, planLabel, planLaunchPlan } from "../../../kernels/13_shapes/launch.ts";
import { predictPlanTime, residentPerSm } from "../../../kernels/13_shapes/predict.ts";
import { deviceModel, waves } from "../../model/device.ts";
import { STEP_TRANSFORMS } from "../../../kernels/12_generated/generate.ts";
import { type Cell, fmt, showNote, showTable, SPREAD_COLUMN, spreadCell } from "../format.ts";
import { loadCublasRetimed, retimedSummaries } from "../../cublas_retimed.ts";
import { kernel } from "../steps.ts";
import { dataPath, newestGpuRun, suiteSource } from "../recorded.ts";
import type { Session } from "../session.ts";
import { MODEL_DEVICE } from "../../model/device.ts";

/**
 * The wave arithmetic of every suite shape on `device`: the grid of the 128 x 256 x 16 TN 16
 * configuration as the runner launches it (whole tiles, one per SM, plus an edge-strip dispatch
 * where M or N ends a few rows past a tile multiple) and how full its waves are, then the plan
 * the picker takes and its waves.
 */
export async function showWaves(device: DeviceSummary = MODEL_DEVICE): Promise<void> {
  const model = deviceModel(device);
  const big = { ...TILE_CONFIGS[0], PAD: 0, GROUP_M: 8, AHEAD: 0, ...STEP_TRANSFORMS };
  const bigResident = residentPerSm(big);
  const rows: Cell[][] = SHAPE_SUITE.map((s) => {
    const plan = planLaunchPlan(s, { ...big, PLAN: PLAN_TILES, SLICES: 1 });
    const tiles = plan.grid[0] * plan.grid[1];
    const w = waves(tiles, model.sms, bigResident);
    const pick = pickPlan(s, device);
    return [
      shapeLabel(s),
      tiles,
      plan.edgeStrips ? "yes" : "",
      w.waves,
      `${fmt(100 * w.fill, 2)}%`,
      planLabel(pick.params),
      pick.waves.workgroups,
      `${fmt(100 * pick.waves.fill, 2)}%`,
      pick.from === "tuned"
        ? "measured (search)"
        : pick.from === "guard"
        ? "the general plan (guard)"
        : "model",
    ];
  });
  await showTable(
    [
      "M x K x N",
      "128x256 tiles",
      "edge strips",
      "waves",
      "slots used",
      "plan picked",
      "its workgroups",
      "slots used",
      "picked by",
    ],
    rows,
    `Model, not measured: ${device.description}, ${model.sms} SMs (${model.source}); ` +
      "the model puts one 128 x 256 x 16 TN 16 tile per SM",
  );
}

/**
 * The model's five best plans at one shape among those it may pick (configurations a search has
 * timed), to see what it weighs.
 */
export async function showCandidates(
  shape: Shape,
  device: DeviceSummary = MODEL_DEVICE,
): Promise<void> {
  const rows = candidates(shape, device).filter((c) => c.measured).slice(0, 5).map((c): Cell[] => [
    planLabel(c.params),
    c.waves.workgroups,
    c.waves.perWave,
    c.waves.waves,
    `${fmt(100 * c.waves.fill, 2)}%`,
    fmt(c.modelMs, 3),
  ]);
  await showTable(
    ["plan", "workgroups", "per wave", "waves", "slots used", "model ms"],
    rows,
    `The model's first plans at ${shapeLabel(shape)} on ${device.description} (not measured)`,
  );
}

/**
 * The suite scaled down for an adapter: every dimension divided by `by` (at least 1), except M
 * of 16 or less, which is what makes a decode shape a matrix-vector product. A dimension that is
 * not a multiple of 4 stays one (4097 / 4 gives 1025, not 1024): such sizes are in the suite for
 * the edge paths they take (padding, edge strips), which a multiple of 4 would skip.
 */
export function scaledSuite(by: number): Shape[] {
  const d = (x: number) => {
    const scaled = Math.max(1, Math.round(x / by));
    return x % 4 !== 0 && scaled % 4 === 0 ? scaled + 1 : scaled;
  };
  return SHAPE_SUITE.map((s) => ({ m: s.m <= 16 ? s.m : d(s.m), k: d(s.k), n: d(s.n) }));
}

/** One live suite row: the shapes step, step 12 at its own parameters, TF.js, cuBLAS. */
export interface LiveSuiteRow {
  shape: Shape;
  /** The planning step at the plan it picked, and the step it builds on. */
  planned: KernelResult;
  general: KernelResult;
  tfjs?: PeerResult;
  /** Where CUDA is installed: cuBLAS SGEMM, timed as ours (GPU work only). */
  cublas?: PeerResult;
}

/**
 * Run the scaled-down suite on the reader's adapter (÷32 on a software adapter, ÷4 on a GPU):
 * `step` at the plan it picks, the step it builds on at its defaults or tuning, TF.js, and
 * cuBLAS where CUDA is installed (on an NVIDIA host), each validated, then timed.
 */
export async function runSuiteLive(s: Session, step: string): Promise<LiveSuiteRow[]> {
  const planner = kernel(step);
  const general = previousStep(planner)!;
  const budgetMs = s.software ? 150 : 300;
  const tfjs = await openTfjs(s.gpu).catch(() => undefined);
  const opened = s.software ? "software adapter" : openCublas();
  const cublas = typeof opened === "string" ? undefined : opened;
  const rows: LiveSuiteRow[] = [];
  try {
    for (const shape of scaledSuite(s.software ? 32 : 4)) {
      rows.push({
        shape,
        planned: await runKernel(s.gpu, planner, shape, { budgetMs }),
        general: await runKernel(s.gpu, general, shape, { budgetMs }),
        tfjs: await tfjs?.run(shape, { budgetMs }),
        cublas: await cublas?.run(shape, { budgetMs }),
      });
    }
  } finally {
    tfjs?.close();
    cublas?.close();
  }
  const speed = (r?: KernelResult | PeerResult) => r?.validated ? r.gflops : undefined;
  const vsGeneral = rows.map((r) => ratio(speed(r.planned), speed(r.general)));
  const vsTfjs = rows.map((r) => ratio(speed(r.planned), speed(r.tfjs)));
  const vsCublas = rows.map((r) => ratio(speed(r.planned), speed(r.cublas)));
  const withCublas = rows.some((r) => r.cublas);
  await showTable(
    [
      "M x K x N",
      "plan",
      "validated",
      `${planner.name} GFLOP/s`,
      SPREAD_COLUMN,
      general.name,
      "TF.js",
      ...(withCublas ? ["cuBLAS"] : []),
      `/ ${general.name}`,
      "/ TF.js",
      ...(withCublas ? ["/ cuBLAS"] : []),
    ],
    [
      ...rows.map((r, i): Cell[] => [
        shapeLabel(r.shape),
        planLabel(r.planned.params),
        r.planned.validated && r.general.validated,
        speed(r.planned),
        spreadCell(r.planned),
        speed(r.general),
        speed(r.tfjs),
        ...(withCublas ? [speed(r.cublas)] : []),
        vsGeneral[i],
        vsTfjs[i],
        ...(withCublas ? [vsCublas[i]] : []),
      ]),
      [
        "geometric mean",
        "",
        "",
        "",
        "",
        "",
        "",
        ...(withCublas ? [""] : []),
        geomean(vsGeneral),
        geomean(vsTfjs),
        ...(withCublas ? [geomean(vsCublas)] : []),
      ],
    ],
    `The suite ÷${s.software ? 32 : 4} on ${s.summary.description}` +
      (withCublas
        ? "; cuBLAS SGEMM (TF32 off) timed as our kernels are, GPU work only: its calls " +
          "queued behind a head start, so no launch is timed"
        : ""),
  );
  return rows;
}

/**
 * The GPU host's recorded suite: per shape the shapes step, the best of our kernels, cuBLAS and
 * TF.js with ratios to cuBLAS, or a plain note that no such record is committed yet. Returns the
 * record shown (the notebook's, or the run of its device and commit that ran the suite).
 */
export async function showRecordedSuite(): Promise<
  { path: string; record: RunRecord } | undefined
> {
  const measuredSuite = (r: RunRecord) => suiteRows(r).filter((x) => x.step !== undefined);
  const newest = await newestGpuRun((r) => measuredSuite(r).length > 0);
  const found = newest && await suiteSource(newest);
  const rows = found ? measuredSuite(found.record) : [];
  if (!found || !rows.length) {
    await showNote(
      "**No GPU record with the shape suite is committed yet.** Once `tools/gpu_bench.sh` has " +
        "run this step on the GPU host and its record is in `data/runs/`, this cell shows every " +
        "shape of the suite against cuBLAS and TF.js.",
    );
    return undefined;
  }
  const stepRatios = rows.map((r) => ratio(r.step, r.reference?.gflops));
  const bestRatios = rows.map((r) => ratio(r.best?.gflops, r.reference?.gflops));
  await showTable(
    [
      "M x K x N",
      "plan",
      "planned",
      "general plan",
      "best of ours",
      "cuBLAS",
      "TF.js",
      "/ ref",
      "best / ref",
    ],
    [
      ...rows.map((r, i): Cell[] => [
        r.label,
        r.plan ? planLabel(r.plan) : "",
        r.step,
        r.general,
        r.best ? `${fmt(r.best.gflops)} (${r.best.kernel})` : "",
        r.cublas,
        r.tfjs,
        stepRatios[i],
        bestRatios[i],
      ]),
      ["geometric mean", "", "", "", "", "", "", geomean(stepRatios), geomean(bestRatios)],
    ],
    `Recorded: ${found.record.device.description}, ${found.record.date.slice(0, 10)}, ` +
      `commit ${found.record.commit.slice(0, 7)} (${dataPath(found.path)})`,
  );
  return found;
}

/**
 * The planning step over the step it builds on (its general plan), shape by shape, where both
 * validated in `results`; with that step's name.
 */
function plannedOverGeneral(results: KernelResult[]): { ratios: number[]; general?: string } {
  const planner = results.map((r) => findKernel(r.kernel)).find((k) => k?.planFor);
  const general = planner && previousStep(planner);
  if (!planner || !general) return { ratios: [] };
  const ok = (r: KernelResult) => r.validated && r.gflops !== undefined;
  const ratios = results.filter((r) => r.kernel === planner.id && ok(r)).flatMap((p) => {
    const g = results.find((r) => r.kernel === general.id && sameShape(r, p) && ok(r));
    return g ? [p.gflops! / g.gflops!] : [];
  });
  return { ratios, general: general.name };
}

/** "1.69 (0.995 to 8.24)": a geometric mean and the range of the ratios it is over. */
const gainText = (ratios: number[]): string =>
  ratios.length
    ? `${fmt(geomean(ratios))} (${fmt(Math.min(...ratios))} to ${fmt(Math.max(...ratios))})`
    : "";

/**
 * The GPU host's held-out shapes (`deno task bench --heldout N`): shapes drawn after the code was
 * fixed, which no search or test of ours read. The bars' figures (lib/heldout.ts) over them and
 * over the suite side by side, then the worst and best few shapes: the planner judged on shapes
 * it never saw, not only on the ones it was tuned on.
 */
export async function showRecordedHeldout(shown = 8): Promise<void> {
  const found = await newestGpuRun((r) => heldoutOf(r) !== undefined);
  const section = found && heldoutOf(found.record);
  if (!found || !section) {
    await showNote(
      "**No GPU record with held-out shapes is committed yet** (`deno task bench --heldout 40`).",
    );
    return;
  }
  const rows = heldoutRows(found.record, section);
  const held = heldoutSummary(speedsOf(rows));
  const suiteRecord = (await suiteSource(found)).record;
  const suite = heldoutSummary(speedsOf(suiteRows(suiteRecord)));
  const onSuite = suiteRecord.results.filter((r) => SHAPE_SUITE.some((s) => sameShape(s, r)));
  const [suiteGain, heldGain] = [onSuite, section.results].map(plannedOverGeneral);
  const f = (x?: number) => x === undefined ? "" : x;
  await showTable(
    [
      "set",
      "count",
      "best / cuBLAS, geometric mean",
      "geometric mean at >= 1e8 FLOP",
      "worst at >= 1e8 FLOP",
      "median gap < 1e8 FLOP (us)",
      `planned / ${heldGain.general ?? "general"}: geometric mean (range)`,
    ],
    [
      [
        "suite (tuned on)",
        suite.count,
        f(suite.geomean),
        f(suite.large.geomean),
        f(suite.large.worst?.ratio),
        f(suite.small.medianGapUs),
        gainText(suiteGain.ratios),
      ],
      [
        `held out (seed ${section.seed})`,
        held.count,
        f(held.geomean),
        f(held.large.geomean),
        f(held.large.worst?.ratio),
        f(held.small.medianGapUs),
        gainText(heldGain.ratios),
      ],
    ],
    `Recorded: ${found.record.device.description}, ${found.record.date.slice(0, 10)}; the bars: ` +
      `mean >= ${BARS.geomean}, none under ${BARS.worstLarge} at >= 1e8 FLOP, ` +
      `median gap <= ${BARS.smallGapUs} us below`,
  );
  const of = (r: HeldoutRow) => ratio(r.best?.gflops, r.cublas) ?? 0;
  const sorted = [...rows].sort((a, b) => of(a) - of(b));
  const pick = sorted.length > 2 * shown
    ? [...sorted.slice(0, shown), ...sorted.slice(-shown)]
    : sorted;
  await showTable(
    [
      "M x K x N",
      "from",
      "planned",
      "plan",
      "general plan",
      "best of ours",
      "cuBLAS",
      "TF.js",
      "jax-js",
      "best / cuBLAS",
    ],
    pick.map((r): Cell[] => [
      r.label,
      r.from,
      r.step,
      r.plan ? planLabel(r.plan) : "",
      r.general,
      r.best ? `${fmt(r.best.gflops)} (${r.best.kernel})` : "",
      r.cublas,
      r.tfjs,
      r.jaxjs,
      ratio(r.best?.gflops, r.cublas),
    ]),
    sorted.length > pick.length
      ? `The ${shown} lowest and ${shown} highest of ${sorted.length} held-out shapes, GFLOP/s`
      : `Every held-out shape, GFLOP/s, lowest ratio first`,
  );
}

/**
 * A plan beside another: its label, and where the two labels read the same, the parameters in
 * which it differs (a schedule or transform the label leaves out).
 */
function pickLabel(plan: Params, other: Params): string {
  const label = planLabel(plan);
  if (label !== planLabel(other)) return label;
  const differ = Object.keys(plan).filter((k) => plan[k] !== other[k]);
  return `${label} (${differ.map((k) => `${k}=${plan[k]}`).join(" ")})`;
}

/**
 * The GPU host's per-shape search, one row per shape: how many plans it measured, the fastest
 * (the winner) and the plan the model picks without the search (modelPlan) with its measured
 * speed, so the row that matters, where the model's pick loses, shows beside the rest. Or a
 * plain note that no search is committed yet.
 */
export async function showShapeSearch(step: string): Promise<void> {
  const saved = await recordedTuning(kernel(step).name);
  if (!saved?.record.perShape) {
    await showNote(
      "**No per-shape search from a GPU is committed yet** (`data/tuning/<device>/${step}.json`); " +
        "until one is, the picker uses its model everywhere.",
    );
    return;
  }
  const { device, trials, perShape } = saved.record;
  const rows = perShape.map((won): Cell[] => {
    const here = trials.filter((t) => t.shape && sameShape(t.shape, won.shape));
    const pick = modelPlan(won.shape, device).params;
    const pickGflops = Math.max(
      ...here.filter((t) => t.validated && samePlan(t.params, pick)).map((t) => t.gflops ?? 0),
    );
    const measured = pickGflops > 0 ? pickGflops : undefined;
    return [
      shapeLabel(won.shape),
      here.length,
      planLabel(won.params),
      won.gflops,
      samePlan(pick, won.params) ? "the winner" : pickLabel(pick, won.params),
      measured,
      ratio(measured, won.gflops),
    ];
  });
  await showTable(
    ["M x K x N", "plans measured", "winner", "GFLOP/s", "model's pick", "its GFLOP/s", "/ winner"],
    rows,
    `Per-shape search on ${device.description}, ${saved.record.date.slice(0, 10)}: the fastest ` +
      "plan per shape and the one the model picks without the search",
  );
}

/** The time model beside one measured plan: the shape, its FLOP, and both times in ms. */
interface ModelReading {
  shape: Shape;
  flop: number;
  measuredMs: number;
  modelMs: number;
  /** Step 12's plan at the same shape, measured and modeled, where the record has it. */
  twelve?: { measuredMs: number; modelMs: number };
}

/** Quantile q of xs (nearest rank on the sorted values). */
function quantile(xs: number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * (sorted.length - 1) + 0.5))];
}

/**
 * The planner's time model (kernels/13_shapes/predict.ts) judged on the newest record's held-out
 * shapes, which its fit never read: for each shape, the time it gives the plan step 13 ran
 * against that plan's measured median, and whether it orders steps 12 and 13 as measured where
 * their measured times differ by a third or more (the differences the planner relies on it for).
 */
export async function showTimeModelCheck(): Promise<void> {
  const found = await newestGpuRun((r) => heldoutOf(r) !== undefined);
  const section = found && heldoutOf(found.record);
  if (!found || !section) {
    await showNote("**No GPU record with held-out shapes is committed yet.**");
    return;
  }
  const device = found.record.device;
  const ran = (id: string, s: Shape) =>
    measured(section.results).find((r) => r.kernel === id && sameShape(r, s) && r.params);
  const readings: ModelReading[] = [];
  for (const { shape } of heldoutRows(found.record, section)) {
    const thirteen = ran(kernel("shapes").id, shape), twelve = ran(kernel("generated").id, shape);
    if (!thirteen) continue;
    const modelMs = (plan: Params) => 1e3 * predictPlanTime(shape, plan, device);
    readings.push({
      shape,
      flop: 2 * shape.m * shape.n * shape.k,
      measuredMs: thirteen.medianMs!,
      modelMs: modelMs(thirteen.params!),
      ...(twelve
        ? {
          twelve: {
            measuredMs: twelve.medianMs!,
            modelMs: modelMs({ PLAN: PLAN_TILES, SLICES: 1, ...twelve.params! }),
          },
        }
        : {}),
    });
  }
  const band = (large: boolean): Cell[] => {
    const rows = readings.filter((r) => (r.flop >= LARGE_FLOP) === large);
    const misses = rows.map((r) => Math.abs(r.measuredMs / r.modelMs - 1));
    const apart = rows.filter((r) =>
      r.twelve && Math.max(r.measuredMs, r.twelve.measuredMs) /
            Math.min(r.measuredMs, r.twelve.measuredMs) >= 4 / 3
    );
    const ordered = apart.filter((r) =>
      (r.measuredMs < r.twelve!.measuredMs) === (r.modelMs < r.twelve!.modelMs)
    );
    const worst = rows[misses.indexOf(Math.max(...misses))];
    return [
      large ? ">= 1e8 FLOP" : "< 1e8 FLOP",
      rows.length,
      `${fmt(100 * quantile(misses, 0.5), 2)}%`,
      `${fmt(100 * quantile(misses, 0.9), 2)}%`,
      worst
        ? `${shapeLabel(worst.shape)}: ${fmt(worst.measuredMs, 3)} ms, model ${
          fmt(worst.modelMs, 3)
        }`
        : undefined,
      `${ordered.length} of ${apart.length}`,
    ];
  };
  await showTable(
    [
      "held-out shapes",
      "count",
      "model's miss, median",
      "90th percentile",
      "largest miss",
      "12 and 13 ordered as measured (a third apart or more)",
    ],
    [band(true), band(false)],
    `The time model (constants fit on other shapes) against step 13's measured plan times on ` +
      `${device.description}, ${found.record.date.slice(0, 10)}, commit ${found.record.commit} ` +
      `(${dataPath(found.path)}); miss: |measured / model - 1|`,
  );
}

/**
 * The bars over the suite and the held-out shapes twice: against cuBLAS as the records timed it,
 * and against cuBLAS re-timed with no launch inside its events (lib/cublas_retimed.ts, a later run
 * on the same kind of GPU), our kernels' recorded speeds unchanged; then the shapes whose cuBLAS
 * time moved most.
 */
export async function showCublasRetimed(file: string, shown = 5): Promise<void> {
  const retimed = await loadCublasRetimed(file);
  const found = retimed && await newestGpuRun((r) => heldoutOf(r) !== undefined);
  if (!retimed || !found || !found.path.endsWith(retimed.record)) {
    await showNote(`No cuBLAS re-timing of this notebook's records (\`data/probes/${file}\`).`);
    return;
  }
  const suite = await suiteSource(found);
  // The suite's 12 shapes are judged on every bar but the held-out set's count of 40.
  const line = (label: string, h: HeldoutSummary, heldout: boolean): Cell[] => [
    label,
    h.compared,
    h.geomean,
    h.large.geomean,
    h.large.worst?.ratio,
    h.small.medianGapUs,
    barsMet(h, heldout),
  ];
  const name = { suite: "suite", heldout: "held out" };
  await showTable(
    [
      "shapes, cuBLAS timed",
      "shapes",
      "best / cuBLAS, geometric mean",
      "geometric mean at >= 1e8 FLOP",
      "worst at >= 1e8 FLOP",
      "median gap < 1e8 FLOP (us)",
      "bars met",
    ],
    retimedSummaries(retimed, found.record, suite.record).flatMap((x) => [
      line(`${name[x.set]}, as recorded`, x.recorded, x.set === "heldout"),
      line(`${name[x.set]}, re-timed`, x.retimed, x.set === "heldout"),
    ]),
    `Our kernels as recorded (${dataPath(found.path)}, ${dataPath(suite.path)}); cuBLAS ` +
      `re-timed with no launch in its events on ${retimed.device}, ${retimed.date.slice(0, 10)}, ` +
      `commit ${retimed.commit} (data/probes/${file})`,
  );
  const moved = retimed.rows.filter((r) => r.recorded?.medianMs && r.queued.medianMs)
    .map((r) => ({ ...r, change: r.recorded!.medianMs! / r.queued.medianMs! }))
    .sort((a, b) => b.change - a.change).slice(0, shown);
  await showTable(
    ["M x K x N", "set", "cuBLAS us, as recorded", "cuBLAS us, re-timed", "recorded / re-timed"],
    moved.map((r) => [
      shapeLabel(r.shape),
      r.set === "suite" ? "suite" : "held out",
      1e3 * r.recorded!.medianMs!,
      1e3 * r.queued.medianMs!,
      r.change,
    ]),
    `The ${shown} shapes whose cuBLAS time changed most`,
  );
}
