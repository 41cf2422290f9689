/**
 * A step's knob swept: GFLOP/s at each point, one panel per run (the reader's adapter, the
 * recorded GPU host), each panel on its own scale, the step's default point marked.
 */
import type { KnobSweep } from "../record.ts";
import { measured, requireRows, SCHEMA, VEGA_CONFIG, type VegaChart } from "./common.ts";

/** One run's sweep and the line that names it ("NVIDIA H200 · 2026-11-23 · 1a2b3c4"). */
export interface KnobRun {
  source: string;
  sweep: KnobSweep;
}

/** One bar: a validated and timed point of one run. */
export interface KnobBar {
  run: string;
  point: string;
  gflops: number;
  medianMs: number;
  relErr: number;
  isDefault: boolean;
}

/** Rough width of an axis label in pixels (the charts' axis font, measured on a rendered chart). */
const labelPixels = (label: string) => 7.6 * label.length;
/** The widest a bar's slot grows to fit its label level; past that, labels tilt. */
const MAX_BAR_STEP = 96;
/** Each bar's slot: 56 px, or wide enough for the longest label, up to MAX_BAR_STEP. */
const barStep = (labels: string[]) =>
  Math.min(MAX_BAR_STEP, Math.max(56, ...labels.map((l) => labelPixels(l) + 10)));
/** Whether every label fits its slot lying flat. */
const labelsFit = (labels: string[]) => labels.every((l) => labelPixels(l) + 6 <= barStep(labels));

/**
 * Bars of GFLOP/s per point of the knob, a panel per run; `defaultLabel` is the point that runs
 * the step's defaults. Points that failed or were not timed have no bar.
 */
export function knobChart(runs: KnobRun[], defaultLabel: string, title: string): VegaChart {
  const order = [...new Set(runs.flatMap((r) => r.sweep.points.map((p) => p.label)))];
  const bars: KnobBar[] = runs.flatMap(({ source, sweep }) =>
    sweep.points.filter((p) => measured([p.result]).length).map((p) => ({
      run: source,
      point: p.label,
      gflops: p.result.gflops!,
      medianMs: p.result.medianMs!,
      relErr: p.result.relErr,
      isDefault: p.label === defaultLabel,
    }))
  );
  requireRows(bars, `points of ${runs[0]?.sweep.kernel ?? "the"} knob`);
  const knob = runs[0].sweep.knob;
  return {
    kind: "vega-lite",
    name: `knob-${runs[0].sweep.kernel}`,
    spec: {
      $schema: SCHEMA,
      title: {
        text: title,
        subtitle: "validated, then timed; each panel on its own scale; dark: the step's default",
      },
      config: VEGA_CONFIG,
      data: { values: bars },
      facet: {
        column: { field: "run", type: "nominal", title: null, sort: runs.map((r) => r.source) },
      },
      resolve: { scale: { y: "independent" } },
      spec: {
        width: Math.max(160, barStep(order) * order.length),
        height: 220,
        mark: { type: "bar" },
        encoding: {
          x: {
            field: "point",
            type: "nominal",
            sort: order,
            title: knob,
            axis: { labelAngle: labelsFit(order) ? 0 : -30, labelLimit: 320 },
          },
          y: { field: "gflops", type: "quantitative", title: "GFLOP/s (measured)" },
          color: {
            field: "isDefault",
            type: "nominal",
            scale: { domain: [false, true], range: ["#9ecae1", "#3182bd"] },
            legend: null,
          },
          tooltip: [
            { field: "point", title: knob },
            { field: "gflops", title: "GFLOP/s", format: ".4~g" },
            { field: "medianMs", title: "median ms", format: ".4~g" },
            { field: "relErr", title: "rel. error", format: ".2e" },
          ],
        },
      },
    },
  };
}
