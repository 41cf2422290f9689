/** GFLOP/s against matrix size N (square problems) for every kernel and peer of a run. */
import type { RunRecord } from "../record.ts";
import {
  isSquare,
  LEGEND_LABEL_LIMIT,
  measured,
  peerLabel,
  requireRows,
  SCHEMA,
  seriesColors,
  sourceLabel,
  VEGA_CONFIG,
  type VegaChart,
} from "./common.ts";

/** One point of the scaling chart. */
export interface ScalingRow {
  label: string;
  role: "kernel" | "peer";
  n: number;
  gflops: number;
  medianMs: number;
}

/** Lines of GFLOP/s vs N, one per kernel and peer (dashed); the best params per kernel and N. */
export function scalingChart(record: RunRecord): VegaChart {
  const best = new Map<string, ScalingRow>();
  const keep = (key: string, row: ScalingRow) => {
    if ((best.get(key)?.gflops ?? 0) < row.gflops) best.set(key, row);
  };
  // Registry ids start with the step number ("02_naive"), so sorting them gives story order.
  const results = measured(record.results).filter(isSquare)
    .sort((a, b) => a.kernel.localeCompare(b.kernel));
  for (const r of results) {
    keep(`${r.kernel}@${r.n}`, {
      label: r.title,
      role: "kernel",
      n: r.n,
      gflops: r.gflops!,
      medianMs: r.medianMs!,
    });
  }
  for (const p of measured(record.peers).filter(isSquare)) {
    keep(`${p.peer}@${p.n}`, {
      label: peerLabel(p.peer),
      role: "peer",
      n: p.n,
      gflops: p.gflops!,
      medianMs: p.medianMs!,
    });
  }
  const rows = requireRows([...best.values()], "square-size results");
  // Legend in story order (kernels by number, then peers), not alphabetical; one colour each.
  const colors = seriesColors(rows);
  return {
    kind: "vega-lite",
    name: "scaling",
    spec: {
      $schema: SCHEMA,
      title: {
        text: "Throughput against matrix size",
        subtitle: [sourceLabel(record), "solid: our kernels, dashed: peers"],
      },
      width: 560,
      height: 360,
      config: VEGA_CONFIG,
      data: { values: rows },
      mark: { type: "line", point: true },
      encoding: {
        x: {
          field: "n",
          type: "quantitative",
          scale: { type: "log", base: 2 },
          axis: { values: [...new Set(rows.map((r) => r.n))].sort((a, b) => a - b) },
          title: "N (square M = K = N)",
        },
        // Log scale: the ladder spans orders of magnitude, and equal ratios read as equal gaps.
        y: {
          field: "gflops",
          type: "quantitative",
          scale: { type: "log" },
          title: "GFLOP/s (measured)",
        },
        color: {
          field: "label",
          type: "nominal",
          title: "Kernel or peer",
          scale: colors,
          sort: colors.domain,
          legend: { labelLimit: LEGEND_LABEL_LIMIT },
        },
        strokeDash: {
          field: "role",
          type: "nominal",
          title: null,
          scale: { domain: ["kernel", "peer"], range: [[1, 0], [6, 3]] },
          legend: null,
        },
        tooltip: [
          { field: "label", title: "kernel" },
          { field: "n", title: "N" },
          { field: "gflops", title: "GFLOP/s", format: ".4~g" },
          { field: "medianMs", title: "median ms", format: ".4~g" },
        ],
      },
    },
  };
}
