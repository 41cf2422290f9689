/**
 * GFLOP/s against matrix size N (square problems) for every kernel and peer of a run. Lines join
 * the sizes that are multiples of 4; a size that is not (4095, 4097) measures how a kernel handles
 * a ragged edge, not how it scales, and on a log axis it would sit on its neighbour's tick, so it
 * stands apart in a panel of its own, beside the nearest size on the lines.
 */
import type { RunRecord } from "../record.ts";
import {
  isSquare,
  measured,
  peerLabel,
  requireRows,
  SCHEMA,
  seriesColorEncoding,
  sourceLabel,
  VEGA_CONFIG,
  type VegaChart,
  type VegaLiteSpec,
} from "./common.ts";

/** One point of the scaling chart. */
export interface ScalingRow {
  label: string;
  role: "kernel" | "peer";
  n: number;
  gflops: number;
  medianMs: number;
}

/** A size the lines join: every `vec4` kernel takes it without padding or a ragged edge. */
export const onScalingLine = (n: number) => n % 4 === 0;

/** The size in `sizes` nearest to `n` by ratio (what a log axis shows as near). */
function nearestSize(n: number, sizes: readonly number[]): number | undefined {
  const distance = (m: number) => Math.abs(Math.log(m / n));
  return sizes.reduce<number | undefined>(
    (best, m) => best === undefined || distance(m) < distance(best) ? m : best,
    undefined,
  );
}

/**
 * Lines of GFLOP/s vs N, one per kernel and peer (dashed), through the sizes that are multiples
 * of 4; the other sizes as unjoined points beside the nearest of those; the best params per
 * kernel and N.
 */
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
  const sizes = [...new Set(rows.map((r) => r.n))].sort((a, b) => a - b);
  const lineSizes = sizes.filter(onScalingLine);
  const apart = sizes.filter((n) => !onScalingLine(n));
  const besideSizes = new Set([
    ...apart,
    ...apart.flatMap((n) => nearestSize(n, lineSizes) ?? []),
  ]);
  // Legend in story order (kernels by number, then peers), not alphabetical; one colour each.
  const color = seriesColorEncoding(rows);
  // Log scale: the ladder spans orders of magnitude, and equal ratios read as equal gaps.
  const y = {
    field: "gflops",
    type: "quantitative",
    scale: { type: "log" },
    title: "GFLOP/s (measured)",
  } as const;
  const tooltip = [
    { field: "label", title: "kernel" },
    { field: "n", title: "N" },
    { field: "gflops", title: "GFLOP/s", format: ".4~g" },
    { field: "medianMs", title: "median ms", format: ".4~g" },
  ];
  const panels: VegaLiteSpec[] = [];
  if (lineSizes.length) {
    panels.push({
      width: apart.length ? 440 : 560,
      height: 360,
      data: { values: rows.filter((r) => onScalingLine(r.n)) },
      mark: { type: "line", point: true },
      encoding: {
        x: {
          field: "n",
          type: "quantitative",
          scale: { type: "log", base: 2 },
          axis: { values: lineSizes },
          title: "N (square M = K = N)",
        },
        y,
        color,
        strokeDash: {
          field: "role",
          type: "nominal",
          title: null,
          scale: { domain: ["kernel", "peer"], range: [[1, 0], [6, 3]] },
          legend: null,
        },
        tooltip,
      },
    } as VegaLiteSpec);
  }
  if (apart.length) {
    panels.push({
      width: { step: 40 },
      height: 360,
      data: { values: rows.filter((r) => besideSizes.has(r.n)) },
      mark: { type: "point", filled: true, size: 50 },
      encoding: {
        x: {
          field: "n",
          type: "ordinal",
          sort: "ascending",
          axis: { labelAngle: 0 },
          title: "N, not joined",
        },
        y: { ...y, axis: { labels: false, title: null } },
        color,
        tooltip,
      },
    } as VegaLiteSpec);
  }
  return {
    kind: "vega-lite",
    name: "scaling",
    spec: {
      $schema: SCHEMA,
      title: {
        text: "Throughput against matrix size",
        subtitle: [
          sourceLabel(record),
          "solid: our kernels, dashed: peers",
          ...(apart.length
            ? ["right: sizes that are not multiples of 4, beside the nearest size that is"]
            : []),
        ],
      },
      config: VEGA_CONFIG,
      spacing: 12,
      hconcat: panels,
      resolve: { scale: { y: "shared", color: "shared" } },
    } as VegaLiteSpec,
  };
}
