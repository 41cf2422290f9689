/**
 * Every chart a run record can feed, built in one call (the export task and the summary
 * notebook use it). A chart whose data the record lacks is skipped with the reason.
 */
import type { CpuRecord, RunRecord } from "../record.ts";
import { KERNELS, type KernelSpec } from "../registry.ts";
import { autotuneChart } from "./autotune.ts";
import { boundChart } from "./bound.ts";
import { ceilingsChart } from "./ceilings.ts";
import { shapeLabel } from "../matrix.ts";
import { type Chart, isSquare, measured, shortCommit, sourceLabel } from "./common.ts";
import { cpuChart, type CpuChartData, cpuSuiteRows } from "./cpu.ts";
import { intensityChart, modeledIntensity } from "./intensity.ts";
import { ladderChart } from "./ladder.ts";
import { rooflineChart } from "./roofline.ts";
import { scalingChart } from "./scaling.ts";
import { shapesChart } from "./shapes.ts";
import { suiteRows } from "../suite.ts";

/** The record's CPU section and OpenBLAS peers as chart rows, the CPU named in the subtitle. */
export function cpuData(record: RunRecord): CpuChartData {
  const cpu: Partial<CpuRecord> = record.cpu ?? {};
  const machine = cpu.machine?.model ?? record.device.description;
  const source = `${machine} · ${record.date.slice(0, 10)} · commit ${shortCommit(record.commit)}`;
  return cpuSuiteRows(cpu, record.peers, source);
}

export interface AllChartsOptions {
  /** The reader's live run, drawn on the roofline beside the record. */
  live?: RunRecord;
  /** Kernels whose models the intensity chart shows (default: the whole registry). */
  kernels?: readonly KernelSpec[];
}

/** Build every chart the record has data for. */
export function allCharts(
  record: RunRecord,
  opts: AllChartsOptions = {},
): { charts: Chart[]; skipped: { name: string; reason: string }[] } {
  const charts: Chart[] = [];
  const skipped: { name: string; reason: string }[] = [];
  const attempt = (name: string, build: () => Chart) => {
    try {
      charts.push(build());
    } catch (e) {
      skipped.push({ name, reason: (e as Error).message });
    }
  };
  attempt("roofline", () => rooflineChart(opts.live ? [record, opts.live] : record));
  attempt("ceilings", () => {
    if (!record.ceilings) throw new Error("no measured ceilings in the record");
    return ceilingsChart(record.ceilings, sourceLabel(record));
  });
  attempt("ladder", () => ladderChart(record));
  attempt("bound", () => boundChart(record));
  attempt("scaling", () => scalingChart(record));
  // The shape view belongs to records that measured the shape suite against cuBLAS.
  if (suiteRows(record).some((r) => r.reference)) attempt("suite", () => shapesChart(record));
  const sizes = [...new Set(measured(record.results).filter(isSquare).map((r) => r.n))];
  // Teaching-only variants (deliberately broken kernels) have no place in the model chart.
  const kernels = opts.kernels ?? KERNELS.filter((k) => !k.demo);
  attempt("intensity", () => intensityChart(modeledIntensity(kernels, sizes)));
  attempt("cpu", () => cpuChart(cpuData(record)));
  const tunings = record.tuning ?? [];
  if (!tunings.length) skipped.push({ name: "tuning", reason: "no tuning trials in the record" });
  tunings.forEach((t, i) =>
    attempt(`autotune${i ? `-${i}` : ""}`, () => {
      const at = ` · searched at ${shapeLabel(t.shape)}`;
      const chart = autotuneChart(t.trials, {
        kernel: t.kernel,
        winner: t.best?.params,
        source: sourceLabel(record) + at,
      });
      return i ? { ...chart, name: `autotune-${t.kernel}` } : chart;
    })
  );
  return { charts, skipped };
}
