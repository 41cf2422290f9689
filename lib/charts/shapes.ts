/**
 * The shape view: per shape of the suite, our planning step, cuBLAS and the JavaScript peers as
 * a ratio to the reference (lib/compare.ts: cuBLAS where it ran, so cuBLAS is 1), so shapes of
 * very different sizes share one axis.
 */
import type { RunRecord } from "../record.ts";
import { geomean, ratio } from "../compare.ts";
import { suiteRows } from "../suite.ts";
import { requireRows, SCHEMA, sourceLabel, VEGA_CONFIG, type VegaChart } from "./common.ts";

/** One bar of the shape view. */
export interface ShapeBar {
  shape: string;
  who: string;
  ratio: number;
  gflops: number;
}

export const SHAPE_SERIES = ["ours (planned)", "cuBLAS", "TF.js WebGPU", "jax-js WebGPU"] as const;

/** Bars of ratio to the reference per suite shape: ours, cuBLAS, TF.js and jax-js. */
export function shapesChart(record: RunRecord): VegaChart {
  const rows = suiteRows(record).filter((r) => r.reference);
  const bars: ShapeBar[] = rows.flatMap((r) =>
    (
      [
        [SHAPE_SERIES[0], r.step],
        [SHAPE_SERIES[1], r.cublas],
        [SHAPE_SERIES[2], r.tfjs],
        [SHAPE_SERIES[3], r.jaxjs],
      ] as const
    ).flatMap(([who, gflops]) =>
      gflops ? [{ shape: r.label, who, ratio: ratio(gflops, r.reference!.gflops)!, gflops }] : []
    )
  );
  requireRows(bars.filter((b) => b.who === SHAPE_SERIES[0]), "suite shapes with a reference");
  const ref = rows.every((r) => r.reference!.peer === "cublas") ? "cuBLAS" : "the reference";
  const mean = geomean(rows.map((r) => ratio(r.step, r.reference!.gflops)));
  return {
    kind: "vega-lite",
    name: "suite",
    spec: {
      $schema: SCHEMA,
      title: {
        text: `Every shape against ${ref}`,
        subtitle: [
          sourceLabel(record),
          mean ? `geometric mean of ours / ${ref}: ${mean.toFixed(2)}` : "ours not measured",
        ],
      },
      width: 640,
      height: 320,
      config: VEGA_CONFIG,
      data: { values: bars },
      mark: { type: "bar" },
      encoding: {
        x: { field: "shape", type: "nominal", sort: rows.map((r) => r.label), title: "M x K x N" },
        xOffset: { field: "who", type: "nominal", sort: [...SHAPE_SERIES] },
        y: { field: "ratio", type: "quantitative", title: `GFLOP/s / ${ref}'s` },
        color: { field: "who", type: "nominal", title: null, sort: [...SHAPE_SERIES] },
        tooltip: [
          { field: "shape", title: "shape" },
          { field: "who", title: "who" },
          { field: "gflops", title: "GFLOP/s", format: ".4~g" },
          { field: "ratio", title: `/ ${ref}`, format: ".2f" },
        ],
      },
    },
  };
}
