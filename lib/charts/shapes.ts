/**
 * The shape view: per shape of the suite, our shapes step, cuBLAS and TF.js as a ratio to
 * cuBLAS (cuBLAS is 1), so shapes of very different sizes share one axis.
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

export const SHAPE_SERIES = ["ours (13 shapes)", "cuBLAS", "TF.js WebGPU"] as const;

/** Bars of ratio to cuBLAS per suite shape: ours, cuBLAS (1) and TF.js. */
export function shapesChart(record: RunRecord): VegaChart {
  const rows = suiteRows(record).filter((r) => r.cublas);
  const bars: ShapeBar[] = rows.flatMap((r) =>
    (
      [
        [SHAPE_SERIES[0], r.step],
        [SHAPE_SERIES[1], r.cublas],
        [SHAPE_SERIES[2], r.tfjs],
      ] as const
    ).flatMap(([who, gflops]) =>
      gflops ? [{ shape: r.label, who, ratio: ratio(gflops, r.cublas)!, gflops }] : []
    )
  );
  requireRows(bars.filter((b) => b.who !== SHAPE_SERIES[1]), "suite shapes with cuBLAS");
  const mean = geomean(rows.map((r) => ratio(r.step, r.cublas)));
  return {
    kind: "vega-lite",
    name: "shapes",
    spec: {
      $schema: SCHEMA,
      title: {
        text: "Every shape against cuBLAS",
        subtitle: [
          sourceLabel(record),
          mean ? `geometric mean of ours / cuBLAS: ${mean.toFixed(2)}` : "ours not measured",
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
        y: { field: "ratio", type: "quantitative", title: "GFLOP/s / cuBLAS's" },
        color: { field: "who", type: "nominal", title: null, sort: [...SHAPE_SERIES] },
        tooltip: [
          { field: "shape", title: "shape" },
          { field: "who", title: "who" },
          { field: "gflops", title: "GFLOP/s", format: ".4~g" },
          { field: "ratio", title: "/ cuBLAS", format: ".2f" },
        ],
      },
    },
  };
}
