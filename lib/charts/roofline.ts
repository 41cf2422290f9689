/**
 * The roofline: measured bandwidth slope, FP32 roof and (when measured) packed-f16 roof, the
 * ridge points where they meet, and every kernel at its modeled intensity and measured GFLOP/s,
 * under the roof of the precision it computes in. Peers (cuBLAS, TF.js) have no model of ours,
 * so they sit at the compulsory-traffic intensity 2MNK / (4(MK + KN + MN)): what any
 * implementation must move at least once.
 */
import type { Ceilings, RunRecord } from "../record.ts";
import { findKernel } from "../registry.ts";
import {
  deviceLabel,
  isSquare,
  largestSquare,
  LEGEND_LABEL_LIMIT,
  measured,
  peerLabel,
  SCHEMA,
  seriesColors,
  shortCommit,
  VEGA_CONFIG,
  type VegaChart,
  wrapText,
} from "./common.ts";

export interface RooflineOptions {
  /** Square size plotted (default: the largest measured size of each record). */
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

/** Chart body size in pixels (label placement below works in these pixels). */
const WIDTH = 560, HEIGHT = 420;
/** Vertical space one label needs; points within CLUSTER_PX in x of a cluster's first share it. */
const LABEL_PX = 13, CLUSTER_PX = 36;
/** Gap between a column of labels and the outermost marker of its cluster; a label's least reach. */
const LABEL_GAP_PX = 12, LABEL_REACH_PX = 40;
/** Width of one character of a point label (bold, 10 px) and half a marker, for a label's reach. */
const LABEL_CHAR_PX = 6.5, MARKER_PX = 8;
/** Roofs closer than this (log10 of their ratio, about 1.26x) share their labels, which would
 * otherwise print over each other: one ridge label, one roof label over the higher roof. */
const CLOSE_ROOFS_LOG10 = 0.1;
/** Roof colours: neutral, so they never read as one of the kernels. */
const ROOF_COLORS = { FP32: "#333333", f16: "#8a8a8a" } as const;

/** The compute roof a kernel of this precision sits under, when the record measured it. */
function computeRoof(ceil: Ceilings, precision: "f32" | "f16"): number | undefined {
  return precision === "f16" ? ceil.f16Gflops : ceil.fp32Gflops;
}

/** A point's label: where its text is anchored, on which side, and whether it moved. */
interface PlacedLabel extends RooflinePoint {
  labelIntensity: number;
  labelGflops: number;
  side: "left" | "right";
  moved: boolean;
}

/** Log-scale pixel mapping of a domain onto `px` pixels (upward for y). */
function logAxis(domain: [number, number], px: number, up: boolean) {
  const span = Math.log10(domain[1] / domain[0]);
  const to = (v: number) => {
    const f = Math.log10(v / domain[0]) / span;
    return up ? px * (1 - f) : px * f;
  };
  const from = (p: number) => domain[0] * 10 ** (span * (up ? 1 - p / px : p / px));
  return { to, from };
}

/**
 * Spread labels that want the same spot: `want` pixel positions (sorted ascending), at least
 * `gap` apart, each run of crowded labels centred on the mean of what its members wanted.
 */
function spread(want: number[], gap: number, lo: number, hi: number): number[] {
  const blocks: { start: number; items: number[] }[] = [];
  want.forEach((w, i) => {
    blocks.push({ start: w, items: [i] });
    // Merge with the block before while they overlap, re-centring the merged block.
    while (blocks.length > 1) {
      const b = blocks[blocks.length - 1], a = blocks[blocks.length - 2];
      if (a.start + a.items.length * gap <= b.start) break;
      const items = [...a.items, ...b.items];
      const mean = items.reduce((s, j) => s + want[j], 0) / items.length;
      blocks.splice(-2, 2, { start: mean - ((items.length - 1) * gap) / 2, items });
    }
  });
  const out: number[] = [];
  for (const b of blocks) {
    const start = Math.min(Math.max(b.start, lo), hi - (b.items.length - 1) * gap);
    b.items.forEach((j, k) => out[j] = start + k * gap);
  }
  return out;
}

/**
 * Label placement without collisions: points are grouped into clusters of nearby x; a cluster's
 * labels alternate right and left of it (all go to one side when the other has a neighbouring
 * cluster within a label's reach), each column of labels outside the
 * cluster's outermost marker and spread vertically so no two overlap; a label that had to move
 * is tied to its point by a leader.
 */
function placeLabels(
  points: RooflinePoint[],
  xDomain: [number, number],
  yDomain: [number, number],
): PlacedLabel[] {
  const x = logAxis(xDomain, WIDTH, false), y = logAxis(yDomain, HEIGHT, true);
  const sorted = [...points].sort((a, b) => x.to(a.intensity) - x.to(b.intensity));
  const clusters: RooflinePoint[][] = [];
  for (const p of sorted) {
    const last = clusters.at(-1);
    const near = last && x.to(p.intensity) - x.to(last[0].intensity) < CLUSTER_PX;
    if (near) last.push(p);
    else clusters.push([p]);
  }
  const placed: PlacedLabel[] = [];
  const span = (c: RooflinePoint[]) => c.map((p) => x.to(p.intensity));
  clusters.forEach((cluster, c) => {
    const pxs = span(cluster);
    const edge = { left: Math.min(...pxs) - LABEL_GAP_PX, right: Math.max(...pxs) + LABEL_GAP_PX };
    // A side is free when no neighbouring cluster's marker lies within a label's reach of it:
    // its gap, its text (peer names are long) and the neighbour's half marker.
    const reach = Math.max(
      LABEL_REACH_PX,
      LABEL_GAP_PX + MARKER_PX + LABEL_CHAR_PX * Math.max(...cluster.map((p) => p.tag.length)),
    );
    const free = {
      left: c === 0 || Math.min(...pxs) - Math.max(...span(clusters[c - 1])) > reach,
      right: c === clusters.length - 1 ||
        Math.min(...span(clusters[c + 1])) - Math.max(...pxs) > reach,
    };
    const only = free.left === free.right ? undefined : free.left ? "left" : "right";
    // Peers right (they sit at the far right, alone); kernels alternate, from the right.
    const kernels = cluster.filter((p) => p.role === "kernel").sort((a, b) => a.gflops - b.gflops);
    const sides = new Map<RooflinePoint, "left" | "right">();
    kernels.forEach((p, i) => sides.set(p, only ?? (i % 2 === 0 ? "right" : "left")));
    for (const p of cluster) if (p.role === "peer") sides.set(p, only ?? "right");
    for (const side of ["left", "right"] as const) {
      const column = cluster.filter((p) => sides.get(p) === side)
        .sort((a, b) => y.to(a.gflops) - y.to(b.gflops));
      const at = spread(column.map((p) => y.to(p.gflops)), LABEL_PX, 6, HEIGHT - 6);
      column.forEach((p, i) => {
        const dx = Math.abs(edge[side] - x.to(p.intensity));
        const dy = Math.abs(at[i] - y.to(p.gflops));
        placed.push({
          ...p,
          labelIntensity: x.from(edge[side]),
          labelGflops: y.from(at[i]),
          side,
          moved: dx > LABEL_GAP_PX + 2 || dy > 2,
        });
      });
    }
  });
  return placed;
}

/** The smallest span of whole decades holding every value. */
function decades(values: number[]): [number, number] {
  const logs = values.filter((v) => v > 0).map(Math.log10);
  return [10 ** Math.floor(Math.min(...logs)), 10 ** Math.ceil(Math.max(...logs))];
}

/** Step number of a kernel id as the registry numbers it now ("13_f16" was renumbered 14). */
function stepNumber(kernel: string): string {
  const n = findKernel(kernel)?.number ?? Number(kernel.slice(0, 2));
  return Number.isFinite(n) ? String(n).padStart(2, "0") : kernel;
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
  const points: RooflinePoint[] = [];
  type Row = { source: string; roof: "FP32" | "f16"; intensity: number; gflops: number };
  const roofs: Row[] = [];
  const ridges: (Row & { text: string })[] = [];
  const roofLabels: (Row & { text: string })[] = [];
  const slopeLabels: (Row & { text: string })[] = [];
  const subtitle: string[] = [];
  const warnings: string[] = [];
  const sources: string[] = [];

  runs.forEach((record, i) => {
    // CPU peers do not belong on a GPU roofline.
    const gpuPeers = measured(record.peers).filter((p) => !p.peer.startsWith("openblas"));
    const n = opts.n ?? largestSquare(record.results) ?? largestSquare(gpuPeers);
    if (n === undefined) return;
    // Each run needs its own name, or its points would be drawn as another run's (the same
    // device on the same day, live beside recorded, say): the size tells them apart, then the
    // order.
    let source = opts.labels?.[i] ?? `${deviceLabel(record)} · ${record.date.slice(0, 10)}`;
    if (sources.includes(source)) source += ` · N = ${n}`;
    if (sources.includes(source)) source += ` · run ${i + 1}`;
    sources.push(source);
    const ceil = record.ceilings;
    const bound = (x: number, precision: "f32" | "f16") => {
      const roof = ceil && computeRoof(ceil, precision);
      return ceil && roof ? Math.min(roof, ceil.bandwidthGBs * x) : undefined;
    };
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
        boundGflops: bound(r.intensity, precision),
      };
      if ((best.get(r.kernel)?.gflops ?? 0) < p.gflops) best.set(r.kernel, p);
    }
    const mine = [...best.values()].sort((a, b) => a.label.localeCompare(b.label));
    for (const r of gpuPeers.filter((r) => isSquare(r) && r.n === n)) {
      const x = compulsoryIntensity(r);
      const label = peerLabel(r.peer);
      mine.push({
        source,
        label,
        tag: label,
        role: "peer",
        precision: "f32",
        n,
        params: "",
        intensity: x,
        gflops: r.gflops!,
        boundGflops: bound(x, "f32"),
      });
    }
    points.push(...mine);
    const who = opts.labels?.[i] ? `${source} (${record.device.description})` : source;
    const marker = runs.length > 1 ? (i === 0 ? " (filled points)" : " (hollow points)") : "";
    const line = `${who}${marker}: commit ${shortCommit(record.commit)}, N = ${n}`;
    if (!ceil) {
      subtitle.push(`${line}; no measured ceilings in this record, so no roof`);
      return;
    }
    const ridge = ceil.fp32Gflops / ceil.bandwidthGBs;
    const ridge16 = ceil.f16Gflops ? ceil.f16Gflops / ceil.bandwidthGBs : undefined;
    const xs = [ridge, ...(ridge16 ? [ridge16] : []), ...mine.map((p) => p.intensity)];
    const lo = Math.min(...xs) / 4, hi = Math.max(...xs) * 4;
    const at = (roof: Row["roof"], intensity: number, gflops: number) => ({
      source,
      roof,
      intensity,
      gflops,
    });
    roofs.push(
      at("FP32", lo, ceil.bandwidthGBs * lo),
      at("FP32", ridge, ceil.fp32Gflops),
      at("FP32", hi, ceil.fp32Gflops),
    );
    const close = ridge16 !== undefined &&
      Math.abs(Math.log10(ceil.f16Gflops! / ceil.fp32Gflops)) < CLOSE_ROOFS_LOG10;
    ridges.push({
      ...at("FP32", ridge, ceil.fp32Gflops),
      text: `ridge ${sig(ridge)}${close ? ` (f16 ${sig(ridge16!)})` : ""} FLOP/B`,
    });
    const fp32Text = `FP32 ${sig(ceil.fp32Gflops)} GFLOP/s`;
    const f16Text = `f16 (vec2) ${sig(ceil.f16Gflops ?? 0)} GFLOP/s`;
    // Short, clear of the labels beside the points: the y axis names the unit.
    const bothText = `FP32 ${sig(ceil.fp32Gflops)} · f16 ${sig(ceil.f16Gflops ?? 0)}`;
    const f16Higher = (ceil.f16Gflops ?? 0) > ceil.fp32Gflops;
    roofLabels.push({
      ...at("FP32", hi, ceil.fp32Gflops),
      text: !close ? fp32Text : f16Higher ? "" : bothText,
    });
    slopeLabels.push({
      ...at("FP32", lo * 1.5, ceil.bandwidthGBs * lo * 1.5),
      text: `${sig(ceil.bandwidthGBs)} GB/s`,
    });
    let roofsText = `${sig(ceil.bandwidthGBs)} GB/s, FP32 ${sig(ceil.fp32Gflops)} GFLOP/s`;
    if (ceil.f16Gflops && ridge16) {
      // Where the f16 roof is the higher one, the bandwidth slope continues from the FP32 ridge
      // up to the f16 ridge; where it is lower, the f16 roof leaves the slope at its own ridge.
      const from = Math.min(ridge, ridge16);
      roofs.push(
        at("f16", from, ceil.bandwidthGBs * from),
        at("f16", ridge16, ceil.f16Gflops),
        at("f16", hi, ceil.f16Gflops),
      );
      ridges.push({
        ...at("f16", ridge16, ceil.f16Gflops),
        text: close ? "" : `f16 ridge ${sig(ridge16)} FLOP/B`,
      });
      roofLabels.push({
        ...at("f16", hi, ceil.f16Gflops),
        text: !close ? f16Text : f16Higher ? bothText : "",
      });
      roofsText += `, f16 ${sig(ceil.f16Gflops)} GFLOP/s`;
    } else if (mine.some((p) => p.precision === "f16")) {
      roofsText += " (no f16 roof measured: the f16 kernel has no compute roof here)";
    }
    subtitle.push(`${line}, measured roofs ${roofsText}`);
    for (const p of mine) {
      const roof = computeRoof(ceil, p.precision);
      if (roof && p.gflops > roof) {
        warnings.push(
          `${p.label} is above the measured ${p.precision === "f16" ? "f16" : "FP32"} roof: ` +
            "the ceiling is too low",
        );
      }
    }
  });
  if (!points.length) throw new Error("no measured square-size results to put on a roofline");

  // Runs with the same or nearly the same ceilings draw their roofs over each other: label each
  // roof, ridge and slope once where their labels would land together (values within the
  // CLOSE_ROOFS_LOG10 margin; the subtitle gives every run's values), the roof at the right end
  // of the longest line, the slope at its lowest start.
  const near = (a: number, b: number) => Math.abs(Math.log10(a / b)) < CLOSE_ROOFS_LOG10;
  const once = <T extends Row & { text: string }>(
    rows: T[],
    same: (a: T, b: T) => boolean,
    better: (a: T, b: T) => boolean = () => false,
  ) => {
    const kept: T[] = [];
    for (const r of rows) {
      const i = kept.findIndex((k) => k.roof === r.roof && same(k, r));
      if (i < 0) kept.push(r);
      else if (better(r, kept[i])) kept[i] = r;
    }
    return kept;
  };
  const uniqueRoofLabels = once(
    roofLabels,
    (a, b) => near(a.gflops, b.gflops),
    (a, b) => a.intensity > b.intensity,
  );
  const uniqueRidges = once(
    ridges,
    (a, b) => near(a.gflops, b.gflops) && near(a.intensity, b.intensity),
  );
  const uniqueSlopeLabels = once(
    slopeLabels,
    (a, b) => near(a.gflops / a.intensity, b.gflops / b.intensity),
    (a, b) => a.intensity < b.intensity,
  );

  // Decades on x; on y from a decade up to just above the highest roof or point, fixed here so
  // label placement knows where points land.
  const xDomain = decades([...points, ...roofs].map((p) => p.intensity));
  const ys = [...points, ...roofs].map((p) => p.gflops);
  const yDomain: [number, number] = [decades(ys)[0], 2.2 * Math.max(...ys)];
  // A peer is named once, at the first run's marker; its colour names it in the other runs.
  const named = points.filter((p) =>
    p.role === "kernel" || points.find((q) => q.role === "peer" && q.label === p.label) === p
  );
  const labels = placeLabels(named, xDomain, yDomain);
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
  const colors = seriesColors(points);
  const color = {
    field: "label",
    type: "nominal",
    title: "Kernel or peer",
    scale: colors,
    sort: colors.domain,
    legend: { labelLimit: LEGEND_LABEL_LIMIT, symbolType: "circle" },
  } as const;
  const dash = {
    field: "source",
    type: "nominal",
    title: "Run",
    scale: { domain: sources, range: sources.map((_, i) => [[1, 0], [6, 4], [2, 3]][i % 3]) },
    legend: sources.length > 1
      ? { labelLimit: LEGEND_LABEL_LIMIT, symbolStrokeColor: ROOF_COLORS.FP32 }
      : null,
  } as const;
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
  const roofKinds = (["FP32", "f16"] as const).filter((k) => roofs.some((r) => r.roof === k));
  const text = (extra: Record<string, unknown>) => ({ type: "text", fontSize: 10, ...extra });

  return {
    kind: "vega-lite",
    name: "roofline",
    spec: {
      $schema: SCHEMA,
      title: {
        text: "Roofline: measured ceilings, modeled intensity",
        subtitle: [
          ...subtitle.flatMap((l) => wrapText(l, 100)),
          "circles: our kernels, squares: peers; numbers: ladder steps",
          ...warnings.map((w) => `warning: ${w}`),
        ],
      },
      width: WIDTH,
      height: HEIGHT,
      config: VEGA_CONFIG,
      layer: [
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
            data: { values: uniqueRidges.filter((r) => r.roof === kind) },
            mark: text({ align: "right", dx: -8, dy: -8 }),
            encoding: { x, y, color: { value: ROOF_COLORS[kind] }, text: { field: "text" } },
          },
          // Compute-roof labels above the right end of the flat roof.
          {
            data: { values: uniqueRoofLabels.filter((r) => r.roof === kind) },
            mark: text({ align: "right", dy: -8 }),
            encoding: { x, y, color: { value: ROOF_COLORS[kind] }, text: { field: "text" } },
          },
        ]),
        {
          data: { values: uniqueSlopeLabels },
          mark: text({ align: "left", dx: 6, dy: 14 }),
          encoding: { x, y, color: { value: ROOF_COLORS.FP32 }, text: { field: "text" } },
        },
        // Leaders from a point to its label where the label had to move away from it.
        {
          data: { values: labels.filter((l) => l.moved) },
          mark: { type: "rule", strokeWidth: 0.7, opacity: 0.7 },
          encoding: {
            x,
            y,
            x2: { field: "labelIntensity" },
            y2: { field: "labelGflops" },
            color,
          },
        },
        ...sources.map((source, i) => ({
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
            shape: {
              field: "role",
              type: "nominal",
              scale: { domain: ["kernel", "peer"], range: ["circle", "square"] },
              legend: null,
            },
            tooltip,
          },
        })),
        ...(["left", "right"] as const).map((side) => ({
          data: { values: labels.filter((l) => l.side === side) },
          mark: text({
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
        })),
      ],
    },
  } as VegaChart;
}
