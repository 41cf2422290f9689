/**
 * The roofline: measured bandwidth slope, FP32 roof and (when measured) packed-f16 roof, the
 * ridge points where they meet, and every kernel at its modeled intensity and measured GFLOP/s,
 * under the roof of the precision it computes in. Peers (cuBLAS, TF.js) have no model of ours,
 * so they sit at the compulsory-traffic intensity 2MNK / (4(MK + KN + MN)): what any
 * implementation must move at least once.
 */
import type { Ceilings, PeerResult, RunRecord } from "../record.ts";
import { findKernel } from "../registry.ts";
import {
  deviceLabel,
  isSquare,
  largestSquare,
  LEGEND_LABEL_LIMIT,
  measured,
  peerLabel,
  SCHEMA,
  seriesColorEncoding,
  shortCommit,
  VEGA_CONFIG,
  type VegaChart,
  wrapText,
} from "./common.ts";
import { type PlacedLabel, placeLabels } from "./roofline_labels.ts";

export interface RooflineOptions {
  /** Square size plotted where a record measured it (else, and by default, its largest). */
  n?: number;
  /** One legend label per record (default: device and date), e.g. ["recorded", "yours"]. */
  labels?: string[];
}

/** Row of the points layer; exported for tests and notebooks that tabulate the chart. */
export interface RooflinePoint {
  source: string;
  /** Legend name: "02 Naive" for a kernel (its step number), the peer's name for a peer. */
  label: string;
  /** What is printed beside the point: the step number, or the peer's name. */
  tag: string;
  role: "kernel" | "peer";
  /** The arithmetic the roof is taken from. */
  precision: "f32" | "f16";
  n: number;
  intensity: number;
  gflops: number;
  /** Tile parameters of the kernel ("BM=128 BN=128"); empty for peers. */
  params: string;
  /**
   * min(compute roof of its precision, bandwidth x intensity): what the roofline allows at this
   * intensity; absent when the record has no roof for its precision.
   */
  boundGflops?: number;
}

/** FLOP per byte when A, B and C each cross the memory bus exactly once (float32). */
export function compulsoryIntensity(s: { m: number; n: number; k: number }): number {
  return (2 * s.m * s.n * s.k) / (4 * (s.m * s.k + s.k * s.n + s.m * s.n));
}

const sig = (x: number) => Number(x.toPrecision(3)).toLocaleString("en-US");

/** Chart body size in pixels (label placement works in these pixels). */
const WIDTH = 560, HEIGHT = 420;
/** Roofs closer than this (log10 of their ratio, about 1.26x) share their labels, which would
 * otherwise print over each other: one ridge label, one roof label over the higher roof. */
const CLOSE_ROOFS_LOG10 = 0.1;
/** Roof colours: neutral, so they never read as one of the kernels. */
const ROOF_COLORS = { FP32: "#333333", f16: "#8a8a8a" } as const;

/** The compute roof a kernel of this precision sits under, when the record measured it. */
function computeRoof(ceil: Ceilings, precision: "f32" | "f16"): number | undefined {
  return precision === "f16" ? ceil.f16Gflops : ceil.fp32Gflops;
}

/** The smallest span of whole decades holding every value. */
function decades(values: number[]): [number, number] {
  const logs = values.filter((v) => v > 0).map(Math.log10);
  return [10 ** Math.floor(Math.min(...logs)), 10 ** Math.ceil(Math.max(...logs))];
}

/** Step number of a kernel id as the registry numbers it now (a record may carry an older one). */
function stepNumber(kernel: string): string {
  const n = findKernel(kernel)?.number ?? Number(kernel.slice(0, 2));
  return Number.isFinite(n) ? String(n).padStart(2, "0") : kernel;
}

type RoofName = "FP32" | "f16";

/** A corner of a run's roof line, or where a label of it is anchored. */
interface RoofRow {
  source: string;
  roof: RoofName;
  intensity: number;
  gflops: number;
}

/** A label of a roof: its ridge, its flat top or its bandwidth slope. */
interface RoofText extends RoofRow {
  text: string;
}

/** What one run puts on the chart. */
interface RunPlot {
  source: string;
  points: RooflinePoint[];
  roofs: RoofRow[];
  ridges: RoofText[];
  roofLabels: RoofText[];
  slopeLabels: RoofText[];
  /** Its subtitle line: who, commit, size and the measured roofs. */
  line: string;
  /** Points above their measured roof: the ceiling was measured too low. */
  warnings: string[];
}

/**
 * Roofline of one or more runs (e.g. the recorded GPU host and the reader's live adapter).
 * Every kernel and peer has its own colour (legend on the right), its step number beside it;
 * each run has its own roofs, told apart by dash when there are several (later runs' points
 * hollow).
 */
export function rooflineChart(
  records: RunRecord | RunRecord[],
  opts: RooflineOptions = {},
): VegaChart {
  const runs = Array.isArray(records) ? records : [records];
  const plots: RunPlot[] = [];
  // Unlabelled runs beside a notebook's own run are named by role, not by device and date.
  const withLiveRun = runs.length > 1 && runs.some(isNotebookRun);
  runs.forEach((record, i) => {
    const plot = plotRun(record, i, runs.length, opts, plots.map((p) => p.source), withLiveRun);
    if (plot) plots.push(plot);
  });
  const points = plots.flatMap((p) => p.points);
  if (!points.length) throw new Error("no measured square-size results to put on a roofline");
  const roofs = plots.flatMap((p) => p.roofs);
  const sources = plots.map((p) => p.source);

  // Decades on x; on y from a decade up to just above the highest roof or point, fixed here so
  // label placement knows where points land.
  const xDomain = decades([...points, ...roofs].map((p) => p.intensity));
  const ys = [...points, ...roofs].map((p) => p.gflops);
  const yDomain: [number, number] = [decades(ys)[0], 2.2 * Math.max(...ys)];
  const labels = placeLabels(namedPoints(points), xDomain, yDomain, {
    width: WIDTH,
    height: HEIGHT,
  });
  const enc = encodings(points, sources, xDomain, yDomain);

  return {
    kind: "vega-lite",
    name: "roofline",
    spec: {
      $schema: SCHEMA,
      title: {
        text: "Roofline: measured ceilings, modeled intensity",
        subtitle: [
          ...plots.flatMap((p) => wrapText(p.line, 100)),
          "circles: our kernels, squares: peers; numbers: ladder steps",
          ...plots.flatMap((p) => p.warnings).map((w) => `warning: ${w}`),
        ],
      },
      width: WIDTH,
      height: HEIGHT,
      config: VEGA_CONFIG,
      layer: [
        ...roofLayers(plots, roofs, enc),
        ...leaderLayers(labels, enc),
        ...pointLayers(points, sources, enc),
        ...pointLabelLayers(labels, enc),
      ],
    },
  } as VegaChart;
}

/**
 * One run's points, roofs and subtitle line; undefined when it measured no square size to plot.
 * `taken` holds the names of the runs before it; `withLiveRun`, whether a notebook's own run is
 * among them (then runs are named by role).
 */
function plotRun(
  record: RunRecord,
  index: number,
  runCount: number,
  opts: RooflineOptions,
  taken: string[],
  withLiveRun: boolean,
): RunPlot | undefined {
  // CPU peers do not belong on a GPU roofline.
  const gpuPeers = measured(record.peers).filter((p) => !p.peer.startsWith("openblas"));
  const hasN = opts.n !== undefined &&
    measured([...record.results, ...gpuPeers]).some((r) => isSquare(r) && r.n === opts.n);
  const n = hasN ? opts.n : largestSquare(record.results) ?? largestSquare(gpuPeers);
  if (n === undefined) return undefined;
  const label = opts.labels?.[index] ?? (withLiveRun ? runLabel(record) : undefined);
  const source = runName(record, n, index, label, taken);
  const points = [
    ...kernelPoints(record, source, n, record.ceilings),
    ...peerPoints(gpuPeers, source, n, record.ceilings),
  ];
  // The f16 roof only where an f16 kernel sits under it: in an FP32 lesson it is a line the text
  // never mentions.
  const ceil = record.ceilings && !points.some((p) => p.precision === "f16")
    ? { ...record.ceilings, f16Gflops: undefined }
    : record.ceilings;
  const who = label ? `${source} (${record.device.description})` : source;
  const marker = runCount > 1 ? (index === 0 ? " (filled points)" : " (hollow points)") : "";
  const line = `${who}${marker}: commit ${shortCommit(record.commit)}, N = ${n}`;
  if (!ceil) {
    return {
      source,
      points,
      roofs: [],
      ridges: [],
      roofLabels: [],
      slopeLabels: [],
      line: `${line}; no measured ceilings in this record, so no roof`,
      warnings: [],
    };
  }
  const geometry = roofGeometry(ceil, points);
  return {
    source,
    points,
    roofs: roofLines(ceil, geometry, source),
    ridges: ridgeLabels(ceil, geometry, source),
    roofLabels: roofTopLabels(ceil, geometry, source),
    slopeLabels: [slopeLabel(ceil, geometry, source)],
    line: `${line}, measured roofs ${roofsText(ceil, geometry, points)}`,
    warnings: aboveRoof(ceil, points),
  };
}

/** A notebook's own run: lib/notebook/recorded.ts notes it as "live notebook run". */
const isNotebookRun = (record: RunRecord) =>
  record.notes?.some((n) => n.startsWith("live notebook run")) ?? false;

/** Beside a notebook's own run, that run reads "your run" and a record "recorded run". */
const runLabel = (record: RunRecord) => isNotebookRun(record) ? "your run" : "recorded run";

/**
 * A run's name in the legend and tooltips. Each run needs its own, or its points would be drawn
 * as another run's (the same device on the same day, live beside recorded, say): the size tells
 * them apart, then the order.
 */
function runName(
  record: RunRecord,
  n: number,
  index: number,
  label: string | undefined,
  taken: string[],
): string {
  let source = label ?? `${deviceLabel(record)} · ${record.date.slice(0, 10)}`;
  if (taken.includes(source)) source += ` · N = ${n}`;
  if (taken.includes(source)) source += ` · run ${index + 1}`;
  return source;
}

/**
 * min(compute roof of its precision, bandwidth x intensity): what the roofline allows at this
 * intensity; undefined without a roof for its precision.
 */
function rooflineBound(
  ceil: Ceilings | undefined,
  intensity: number,
  precision: "f32" | "f16",
): number | undefined {
  const roof = ceil && computeRoof(ceil, precision);
  return ceil && roof ? Math.min(roof, ceil.bandwidthGBs * intensity) : undefined;
}

/** Each kernel's fastest measured result at N = n, in label order. */
function kernelPoints(
  record: RunRecord,
  source: string,
  n: number,
  ceil: Ceilings | undefined,
): RooflinePoint[] {
  const best = new Map<string, RooflinePoint>();
  for (const r of measured(record.results).filter((r) => isSquare(r) && r.n === n)) {
    const precision = findKernel(r.kernel)?.precision ?? "f32";
    const tag = stepNumber(r.kernel);
    const p: RooflinePoint = {
      source,
      label: `${tag} ${r.title}`,
      tag,
      role: "kernel",
      precision,
      n,
      params: Object.entries(r.params).map(([k, v]) => `${k}=${v}`).join(" "),
      intensity: r.intensity,
      gflops: r.gflops!,
      boundGflops: rooflineBound(ceil, r.intensity, precision),
    };
    if ((best.get(r.kernel)?.gflops ?? 0) < p.gflops) best.set(r.kernel, p);
  }
  return [...best.values()].sort((a, b) => a.label.localeCompare(b.label));
}

/** The GPU peers measured at N = n, at the compulsory-traffic intensity. */
function peerPoints(
  gpuPeers: PeerResult[],
  source: string,
  n: number,
  ceil: Ceilings | undefined,
): RooflinePoint[] {
  return gpuPeers.filter((r) => isSquare(r) && r.n === n).map((r) => {
    const x = compulsoryIntensity(r);
    const label = peerLabel(r.peer);
    return {
      source,
      label,
      tag: label,
      role: "peer",
      precision: "f32",
      n,
      params: "",
      intensity: x,
      gflops: r.gflops!,
      boundGflops: rooflineBound(ceil, x, "f32"),
    };
  });
}

/** Where a run's roofs meet and how far its roof lines reach. */
interface RoofGeometry {
  /** Intensity where the bandwidth slope meets the FP32 roof. */
  ridge: number;
  /** Where it meets the f16 roof, when one was measured. */
  ridge16?: number;
  /** The roof lines' ends: 4x beyond the outermost ridge or point on either side. */
  lo: number;
  hi: number;
  /** The two compute roofs so close that their labels share one place. */
  close: boolean;
}

function roofGeometry(ceil: Ceilings, points: RooflinePoint[]): RoofGeometry {
  const ridge = ceil.fp32Gflops / ceil.bandwidthGBs;
  const ridge16 = ceil.f16Gflops ? ceil.f16Gflops / ceil.bandwidthGBs : undefined;
  const xs = [ridge, ...(ridge16 ? [ridge16] : []), ...points.map((p) => p.intensity)];
  const close = ridge16 !== undefined &&
    Math.abs(Math.log10(ceil.f16Gflops! / ceil.fp32Gflops)) < CLOSE_ROOFS_LOG10;
  return { ridge, ridge16, lo: Math.min(...xs) / 4, hi: Math.max(...xs) * 4, close };
}

/** The measured f16 roof and its ridge, when the record has both. */
function f16Roof(ceil: Ceilings, g: RoofGeometry) {
  return ceil.f16Gflops && g.ridge16 ? { gflops: ceil.f16Gflops, ridge: g.ridge16 } : undefined;
}

const roofRow = (
  source: string,
  roof: RoofName,
  intensity: number,
  gflops: number,
): RoofRow => ({ source, roof, intensity, gflops });

/**
 * The corners of a run's roof lines: the bandwidth slope up to the FP32 ridge, then flat. Where
 * the f16 roof is the higher one, its slope continues from the FP32 ridge up to the f16 ridge;
 * where it is lower, the f16 roof leaves the slope at its own ridge.
 */
function roofLines(ceil: Ceilings, g: RoofGeometry, source: string): RoofRow[] {
  const rows = [
    roofRow(source, "FP32", g.lo, ceil.bandwidthGBs * g.lo),
    roofRow(source, "FP32", g.ridge, ceil.fp32Gflops),
    roofRow(source, "FP32", g.hi, ceil.fp32Gflops),
  ];
  const f16 = f16Roof(ceil, g);
  if (f16) {
    const from = Math.min(g.ridge, f16.ridge);
    rows.push(
      roofRow(source, "f16", from, ceil.bandwidthGBs * from),
      roofRow(source, "f16", f16.ridge, f16.gflops),
      roofRow(source, "f16", g.hi, f16.gflops),
    );
  }
  return rows;
}

/** The ridge diamonds' labels; roofs that nearly coincide share the FP32 one. */
function ridgeLabels(ceil: Ceilings, g: RoofGeometry, source: string): RoofText[] {
  const rows = [{
    ...roofRow(source, "FP32", g.ridge, ceil.fp32Gflops),
    text: `ridge ${sig(g.ridge)}${g.close ? ` (f16 ${sig(g.ridge16!)})` : ""} FLOP/B`,
  }];
  const f16 = f16Roof(ceil, g);
  if (f16) {
    rows.push({
      ...roofRow(source, "f16", f16.ridge, f16.gflops),
      text: g.close ? "" : `f16 ridge ${sig(f16.ridge)} FLOP/B`,
    });
  }
  return rows;
}

/**
 * The compute roofs' labels at their right ends; roofs that nearly coincide share one short
 * label over the higher roof, clear of the labels beside the points (the y axis names the unit).
 */
function roofTopLabels(ceil: Ceilings, g: RoofGeometry, source: string): RoofText[] {
  const fp32Text = `FP32 ${sig(ceil.fp32Gflops)} GFLOP/s`;
  const f16Text = `f16 (vec2) ${sig(ceil.f16Gflops ?? 0)} GFLOP/s`;
  const bothText = `FP32 ${sig(ceil.fp32Gflops)} · f16 ${sig(ceil.f16Gflops ?? 0)}`;
  const f16Higher = (ceil.f16Gflops ?? 0) > ceil.fp32Gflops;
  const rows = [{
    ...roofRow(source, "FP32", g.hi, ceil.fp32Gflops),
    text: !g.close ? fp32Text : f16Higher ? "" : bothText,
  }];
  const f16 = f16Roof(ceil, g);
  if (f16) {
    rows.push({
      ...roofRow(source, "f16", g.hi, f16.gflops),
      text: !g.close ? f16Text : f16Higher ? bothText : "",
    });
  }
  return rows;
}

/** The bandwidth slope's label, near its lower end. */
function slopeLabel(ceil: Ceilings, g: RoofGeometry, source: string): RoofText {
  return {
    ...roofRow(source, "FP32", g.lo * 1.5, ceil.bandwidthGBs * g.lo * 1.5),
    text: `${sig(ceil.bandwidthGBs)} GB/s`,
  };
}

/** The measured roofs as the subtitle states them. */
function roofsText(ceil: Ceilings, g: RoofGeometry, points: RooflinePoint[]): string {
  const text = `${sig(ceil.bandwidthGBs)} GB/s, FP32 ${sig(ceil.fp32Gflops)} GFLOP/s`;
  const f16 = f16Roof(ceil, g);
  if (f16) return `${text}, f16 ${sig(f16.gflops)} GFLOP/s`;
  if (points.some((p) => p.precision === "f16")) {
    return `${text} (no f16 roof measured: the f16 kernel has no compute roof here)`;
  }
  return text;
}

/** A warning per point above the measured roof of its precision. */
function aboveRoof(ceil: Ceilings, points: RooflinePoint[]): string[] {
  return points.filter((p) => {
    const roof = computeRoof(ceil, p.precision);
    return roof && p.gflops > roof;
  }).map((p) =>
    `${p.label} is above the measured ${p.precision === "f16" ? "f16" : "FP32"} roof: ` +
    "the ceiling is too low"
  );
}

/**
 * Points that get a label: each kernel and peer once, at the first run's marker that has it (a
 * second run's point of the same kernel shares its colour; two labels would print side by side
 * where the runs agree).
 */
function namedPoints(points: RooflinePoint[]): RooflinePoint[] {
  return points.filter((p) => points.find((q) => q.role === p.role && q.label === p.label) === p);
}

const near = (a: number, b: number) => Math.abs(Math.log10(a / b)) < CLOSE_ROOFS_LOG10;

/**
 * Labels of one roof kind that would land together kept once: `same` says whether two would,
 * `better` whether a later one replaces the one kept.
 */
function labelOnce<T extends RoofText>(
  rows: T[],
  same: (a: T, b: T) => boolean,
  better: (a: T, b: T) => boolean = () => false,
): T[] {
  const kept: T[] = [];
  for (const r of rows) {
    const i = kept.findIndex((k) => k.roof === r.roof && same(k, r));
    if (i < 0) kept.push(r);
    else if (better(r, kept[i])) kept[i] = r;
  }
  return kept;
}

/**
 * Runs with the same or nearly the same ceilings draw their roofs over each other: each roof,
 * ridge and slope is labelled once where their labels would land together (values within the
 * CLOSE_ROOFS_LOG10 margin; the subtitle gives every run's values), the roof at the right end
 * of the longest line, the slope at its lowest start.
 */
function sharedRoofLabels(plots: RunPlot[]) {
  return {
    roofLabels: labelOnce(
      plots.flatMap((p) => p.roofLabels),
      (a, b) => near(a.gflops, b.gflops),
      (a, b) => a.intensity > b.intensity,
    ),
    ridges: labelOnce(
      plots.flatMap((p) => p.ridges),
      (a, b) => near(a.gflops, b.gflops) && near(a.intensity, b.intensity),
    ),
    slopeLabels: labelOnce(
      plots.flatMap((p) => p.slopeLabels),
      (a, b) => near(a.gflops / a.intensity, b.gflops / b.intensity),
      (a, b) => a.intensity < b.intensity,
    ),
  };
}

/** The encodings the layers share: log axes, a colour per kernel or peer, a dash per run. */
function encodings(
  points: RooflinePoint[],
  sources: string[],
  xDomain: [number, number],
  yDomain: [number, number],
) {
  const x = {
    field: "intensity",
    type: "quantitative",
    scale: { type: "log", domain: xDomain },
    title: "Arithmetic intensity (FLOP per byte of global memory, modeled)",
  } as const;
  const y = {
    field: "gflops",
    type: "quantitative",
    scale: { type: "log", domain: yDomain, nice: false },
    title: "GFLOP/s (measured)",
  } as const;
  const color = seriesColorEncoding(points);
  const dash = {
    field: "source",
    type: "nominal",
    title: "Run",
    scale: { domain: sources, range: sources.map((_, i) => [[1, 0], [6, 4], [2, 3]][i % 3]) },
    legend: sources.length > 1
      ? { labelLimit: LEGEND_LABEL_LIMIT, symbolStrokeColor: ROOF_COLORS.FP32 }
      : null,
  } as const;
  return { x, y, color, dash };
}

type Encodings = ReturnType<typeof encodings>;

/** A text mark of the chart's label size. */
const textMark = (extra: Record<string, unknown>) => ({ type: "text", fontSize: 10, ...extra });

/**
 * Per roof kind: the roof lines (a dash per run), the ridge diamonds and their labels, the
 * compute roofs' labels; then the bandwidth slopes' labels.
 */
function roofLayers(plots: RunPlot[], roofs: RoofRow[], enc: Encodings) {
  const { x, y, dash } = enc;
  const ridges = plots.flatMap((p) => p.ridges);
  const shared = sharedRoofLabels(plots);
  const roofKinds = (["FP32", "f16"] as const).filter((k) => roofs.some((r) => r.roof === k));
  return [
    ...roofKinds.flatMap((kind) => [
      {
        data: { values: roofs.filter((r) => r.roof === kind) },
        mark: { type: "line", strokeWidth: 2, clip: true, color: ROOF_COLORS[kind] },
        encoding: { x, y, strokeDash: dash, detail: { field: "source" } },
      },
      {
        data: { values: ridges.filter((r) => r.roof === kind) },
        mark: { type: "point", shape: "diamond", size: 80, filled: true },
        encoding: { x, y, color: { value: ROOF_COLORS[kind] } },
      },
      // Ridge labels up and to the left of their diamond, clear of the points to the right.
      {
        data: { values: shared.ridges.filter((r) => r.roof === kind) },
        mark: textMark({ align: "right", dx: -8, dy: -8 }),
        encoding: { x, y, color: { value: ROOF_COLORS[kind] }, text: { field: "text" } },
      },
      // Compute-roof labels above the right end of the flat roof.
      {
        data: { values: shared.roofLabels.filter((r) => r.roof === kind) },
        mark: textMark({ align: "right", dy: -8 }),
        encoding: { x, y, color: { value: ROOF_COLORS[kind] }, text: { field: "text" } },
      },
    ]),
    {
      data: { values: shared.slopeLabels },
      mark: textMark({ align: "left", dx: 6, dy: 14 }),
      encoding: { x, y, color: { value: ROOF_COLORS.FP32 }, text: { field: "text" } },
    },
  ];
}

/** Leaders from a point to its label where the label had to move away from it. */
function leaderLayers(labels: PlacedLabel<RooflinePoint>[], { x, y, color }: Encodings) {
  return [{
    data: { values: labels.filter((l) => l.moved) },
    mark: { type: "rule", strokeWidth: 0.7, opacity: 0.7 },
    encoding: {
      x,
      y,
      x2: { field: "labelIntensity" },
      y2: { field: "labelGflops" },
      color,
    },
  }];
}

/** One layer of points per run: the first run's filled, later runs' hollow; tooltips on each. */
function pointLayers(points: RooflinePoint[], sources: string[], { x, y, color }: Encodings) {
  const tooltip = [
    { field: "label", title: "kernel" },
    { field: "source", title: "run" },
    { field: "params", title: "params" },
    { field: "n", title: "N" },
    { field: "precision", title: "arithmetic" },
    { field: "intensity", title: "FLOP/byte", format: ".3~g" },
    { field: "gflops", title: "GFLOP/s", format: ".4~g" },
    { field: "boundGflops", title: "roofline bound", format: ".4~g" },
  ];
  return sources.map((source, i) => ({
    data: { values: points.filter((p) => p.source === source) },
    mark: {
      type: "point",
      size: 70,
      filled: i === 0,
      strokeWidth: i === 0 ? 0.8 : 1.6,
      opacity: 1,
      ...(i === 0 ? { stroke: "white" } : {}),
    },
    encoding: {
      x,
      y,
      color,
      // Keyed like the colour, with the same title, so the two share one legend whose symbols
      // are the points' own: circles for kernels, squares for peers.
      shape: {
        field: color.field,
        type: color.type,
        title: color.title,
        sort: color.sort,
        scale: {
          domain: color.scale.domain,
          range: color.scale.domain.map((label) =>
            points.find((p) => p.label === label)?.role === "peer" ? "square" : "circle"
          ),
        },
        legend: color.legend,
      },
      tooltip,
    },
  }));
}

/** The step numbers and peer names beside the points, a layer per side. */
function pointLabelLayers(labels: PlacedLabel<RooflinePoint>[], { x, y, color }: Encodings) {
  return (["left", "right"] as const).map((side) => ({
    data: { values: labels.filter((l) => l.side === side) },
    mark: textMark({
      align: side === "right" ? "left" : "right",
      baseline: "middle",
      dx: side === "right" ? 3 : -3,
      fontWeight: "bold",
    }),
    encoding: {
      x: { ...x, field: "labelIntensity" },
      y: { ...y, field: "labelGflops" },
      color,
      text: { field: "tag" },
    },
  }));
}
