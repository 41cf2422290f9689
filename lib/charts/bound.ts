/**
 * Model against measurement, step by step: what the roofline allows at each kernel's modeled
 * intensity, min(FP32 roof, bandwidth x FLOP/byte), beside what the kernel measured. A step far
 * below its bound is limited by something the byte model does not count (latency, occupancy,
 * instruction overhead); one at its bound has met the model.
 */
import type { RunRecord } from "../record.ts";
import {
  isSquare,
  largestSquare,
  measured,
  SCHEMA,
  sourceLabel,
  VEGA_CONFIG,
  type VegaChart,
} from "./common.ts";

/** One ladder step: measured and modeled-bound GFLOP/s. */
export interface BoundRow {
  label: string;
  order: number;
  intensity: number;
  gflops: number;
  boundGflops: number;
  /** "memory" when the bound is the bandwidth slope, "compute" when it is the FP32 roof. */
  limit: "memory" | "compute";
  pctOfBound: number;
  pctText: string;
}

/** Bars of measured GFLOP/s per step with the roofline bound marked, on a log axis. */
export function boundChart(record: RunRecord, opts: { n?: number } = {}): VegaChart {
  const ceil = record.ceilings;
  if (!ceil) throw new Error("no measured ceilings in the record, so no bound to compare with");
  const n = opts.n ?? largestSquare(record.results);
  const best = new Map<string, BoundRow>();
  for (const r of measured(record.results).filter((r) => isSquare(r) && r.n === n)) {
    const memory = ceil.bandwidthGBs * r.intensity;
    const bound = Math.min(ceil.fp32Gflops, memory);
    const row: BoundRow = {
      label: r.title,
      order: Number(r.kernel.slice(0, 2)),
      intensity: r.intensity,
      gflops: r.gflops!,
      boundGflops: bound,
      limit: memory < ceil.fp32Gflops ? "memory" : "compute",
      pctOfBound: (100 * r.gflops!) / bound,
      pctText: `${Number(((100 * r.gflops!) / bound).toPrecision(2))}% of roofline`,
    };
    if ((best.get(r.kernel)?.gflops ?? 0) < row.gflops) best.set(r.kernel, row);
  }
  const rows = [...best.values()].sort((a, b) => a.order - b.order);
  if (!rows.length) throw new Error(`no measured kernel results at N = ${n} to chart`);
  const y = {
    field: "label",
    type: "nominal",
    sort: rows.map((r) => r.label),
    title: null,
    axis: { labelLimit: 240 },
  } as const;
  // Whole decades; bars start at the left edge (a log axis has no zero).
  const logs = rows.flatMap((r) => [Math.log10(r.gflops), Math.log10(r.boundGflops)]);
  const domain = [10 ** Math.floor(Math.min(...logs)), 10 ** Math.ceil(Math.max(...logs))];
  const x = {
    type: "quantitative",
    scale: { type: "log", domain },
    title: "GFLOP/s (bar: measured; tick: roofline bound at the modeled intensity)",
  } as const;
  return {
    kind: "vega-lite",
    name: "bound",
    spec: {
      $schema: SCHEMA,
      title: {
        text: `Model against measurement at N = ${n}`,
        subtitle: [
          sourceLabel(record),
          "bound = min(FP32 roof, bandwidth x modeled FLOP/byte), both roofs measured",
        ],
      },
      config: VEGA_CONFIG,
      width: 460,
      height: { step: 24 },
      data: { values: rows },
      encoding: {
        y,
        tooltip: [
          { field: "label", title: "step" },
          { field: "intensity", title: "modeled FLOP/byte", format: ".3~g" },
          { field: "gflops", title: "measured GFLOP/s", format: ".4~g" },
          { field: "boundGflops", title: "bound GFLOP/s", format: ".4~g" },
          { field: "limit", title: "bound set by" },
          { field: "pctOfBound", title: "% of roofline", format: ".3~g" },
        ],
      },
      layer: [
        {
          mark: "bar",
          encoding: { x: { ...x, field: "gflops" }, x2: { datum: domain[0] } },
        },
        {
          mark: { type: "tick", thickness: 3 },
          encoding: {
            x: { ...x, field: "boundGflops" },
            color: {
              field: "limit",
              type: "nominal",
              title: "Bound set by",
              scale: { domain: ["memory", "compute"], range: ["#e45756", "#54a24b"] },
            },
          },
        },
        {
          mark: { type: "text", align: "left", dx: 6, fontSize: 10 },
          encoding: { x: { ...x, field: "boundGflops" }, text: { field: "pctText" } },
        },
      ],
    },
  };
}
