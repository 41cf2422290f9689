/**
 * The ladder as bars: GFLOP/s of every step at one size, with the peers beside them, and each
 * step as a percentage of cuBLAS (or of the best GPU peer when cuBLAS did not run).
 */
import type { RunRecord } from "../record.ts";
import {
  isSquare,
  largestSquare,
  measured,
  peerLabel,
  SCHEMA,
  sourceLabel,
  VEGA_CONFIG,
  type VegaChart,
  type VegaLiteSpec,
} from "./common.ts";

export interface LadderOptions {
  /** Square size shown (default: the largest measured). */
  n?: number;
}

/** One bar of the ladder. */
export interface LadderRow {
  label: string;
  role: "kernel" | "peer";
  /** Story order: the kernel number; peers come last. */
  order: number;
  gflops: number;
  /** Percent of the reference peer (absent when there is no peer). */
  pct?: number;
}

/** Bars per ladder step at one size: GFLOP/s, and % of cuBLAS when a GPU peer ran. */
export function ladderChart(record: RunRecord, opts: LadderOptions = {}): VegaChart {
  const n = opts.n ?? largestSquare(record.results);
  const at = <T extends { m: number; n: number; k: number }>(rows: T[]) =>
    rows.filter((r) => isSquare(r) && r.n === n);
  const kernels = at(measured(record.results));
  if (!kernels.length) throw new Error(`no measured kernel results at N = ${n} to chart`);
  const peers = at(measured(record.peers)).filter((p) => !p.peer.startsWith("openblas"));
  const reference = peers.find((p) => p.peer === "cublas") ??
    peers.reduce<(typeof peers)[number] | undefined>(
      (a, b) => (a && a.gflops! >= b.gflops! ? a : b),
      undefined,
    );
  const refName = reference ? peerLabel(reference.peer) : undefined;

  const best = new Map<string, LadderRow>();
  for (const r of kernels) {
    const number = Number(r.kernel.slice(0, 2));
    const row: LadderRow = {
      label: r.title,
      role: "kernel",
      order: Number.isFinite(number) ? number : 99,
      gflops: r.gflops!,
    };
    if ((best.get(r.kernel)?.gflops ?? 0) < row.gflops) best.set(r.kernel, row);
  }
  const rows: LadderRow[] = [...best.values()];
  peers.forEach((p, i) =>
    rows.push({ label: peerLabel(p.peer), role: "peer", order: 1000 + i, gflops: p.gflops! })
  );
  if (reference) { for (const r of rows) r.pct = (100 * r.gflops) / reference.gflops!; }

  rows.sort((a, b) => a.order - b.order);
  const y = {
    field: "label",
    type: "nominal",
    sort: rows.map((r) => r.label),
    title: null,
    axis: { labelLimit: 240 },
  };
  const color = {
    field: "role",
    type: "nominal",
    title: null,
    scale: { domain: peers.length ? ["kernel", "peer"] : ["kernel"] },
  };
  // Bar labels: plain GFLOP/s at any magnitude (no SI "m" or "k" suffixes).
  const numberFormat = Math.max(...rows.map((r) => r.gflops)) >= 100 ? ",.0f" : ".3~g";
  // The second panel shares the first's rows, so it does not repeat their names.
  const bars = (field: "gflops" | "pct", title: string, format: string): VegaLiteSpec => ({
    width: field === "gflops" ? 300 : 200,
    height: { step: 24 },
    encoding: {
      y: field === "gflops" ? y : { ...y, axis: { labels: false, ticks: false } },
      // Room for the value printed after the longest bar.
      x: {
        field,
        type: "quantitative",
        title,
        scale: { domainMax: 1.15 * Math.max(...rows.map((r) => r[field] ?? 0)) },
      },
      color,
      tooltip: [
        { field: "label", title: "step" },
        { field: "gflops", title: "GFLOP/s", format: ".4~g" },
        ...(reference ? [{ field: "pct", title: `% of ${refName}`, format: ".3~g" }] : []),
      ],
    },
    layer: [
      { mark: "bar" },
      {
        mark: { type: "text", align: "left", dx: 3, fontSize: 10 },
        encoding: { text: { field, type: "quantitative", format }, color: { value: "black" } },
      },
    ],
  } as VegaLiteSpec);

  const panels = [bars("gflops", "GFLOP/s (measured)", numberFormat)];
  if (reference) panels.push(bars("pct", `% of ${refName}`, ".0f"));
  return {
    kind: "vega-lite",
    name: "ladder",
    spec: {
      $schema: SCHEMA,
      title: {
        text: `The ladder at N = ${n}`,
        subtitle: [
          sourceLabel(record),
          reference
            ? `percentages relative to ${refName} in the same run`
            : "no GPU peer in this run",
        ],
      },
      config: VEGA_CONFIG,
      data: { values: rows },
      spacing: 12,
      hconcat: panels,
    } as VegaLiteSpec,
  };
}
