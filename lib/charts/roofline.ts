/**
 * The roofline: measured bandwidth slope and FP32 roof, the ridge point where they meet, and
 * every kernel at its modeled intensity and measured GFLOP/s. Peers (cuBLAS, TF.js) have no
 * model of ours, so they sit at the compulsory-traffic intensity 2MNK / (4(MK + KN + MN)):
 * what any implementation must move at least once.
 */
import type { RunRecord } from "../record.ts";
import {
  deviceLabel,
  isSquare,
  largestSquare,
  measured,
  peerLabel,
  SCHEMA,
  shortCommit,
  VEGA_CONFIG,
  type VegaChart,
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
  label: string;
  role: "kernel" | "peer";
  n: number;
  intensity: number;
  gflops: number;
  /** Tile parameters of the kernel ("BM=128 BN=128"); empty for peers. */
  params: string;
  /** min(FP32 roof, bandwidth x intensity): what the roofline allows at this intensity. */
  boundGflops?: number;
}

/** FLOP per byte when A, B and C each cross the memory bus exactly once (float32). */
export function compulsoryIntensity(s: { m: number; n: number; k: number }): number {
  return (2 * s.m * s.n * s.k) / (4 * (s.m * s.k + s.k * s.n + s.m * s.n));
}

const sig = (x: number) => Number(x.toPrecision(3)).toLocaleString("en-US");

/** Chart body size in pixels (the label spacing below depends on it). */
const WIDTH = 640, HEIGHT = 420;
/** Vertical space one label needs, and how far right of its point a label may reach. */
const LABEL_PX = 12, LABEL_REACH_PX = 120;

/** The smallest span of whole decades holding every value. */
function decades(values: number[]): [number, number] {
  const logs = values.filter((v) => v > 0).map(Math.log10);
  return [10 ** Math.floor(Math.min(...logs)), 10 ** Math.ceil(Math.max(...logs))];
}

/** A point's label: where it is drawn, and whether it had to move off its point. */
interface PlacedLabel extends RooflinePoint {
  labelGflops: number;
  moved: boolean;
}

/**
 * Greedy label placement: points whose labels would overlap (close in x on screen) are taken
 * bottom to top and each label pushed up to at least LABEL_PX above the one below it.
 */
function spreadLabels(
  points: RooflinePoint[],
  xDomain: [number, number],
  yDomain: [number, number],
): PlacedLabel[] {
  const pxPerDecadeX = WIDTH / Math.log10(xDomain[1] / xDomain[0]);
  const pxPerDecadeY = HEIGHT / Math.log10(yDomain[1] / yDomain[0]);
  const gap = LABEL_PX / pxPerDecadeY;
  const placed: PlacedLabel[] = [];
  for (const p of [...points].sort((a, b) => a.gflops - b.gflops)) {
    const want = Math.log10(p.gflops);
    const below = placed.filter((q) =>
      Math.abs(Math.log10(q.intensity / p.intensity)) * pxPerDecadeX < LABEL_REACH_PX
    );
    const floor = Math.max(-Infinity, ...below.map((q) => Math.log10(q.labelGflops) + gap));
    const at = Math.max(want, floor);
    placed.push({ ...p, labelGflops: 10 ** at, moved: at - want > gap / 4 });
  }
  return placed;
}

/**
 * Roofline of one or more runs (e.g. the recorded GPU host and the reader's live adapter):
 * each run gets its own roof and colour, kernels and peers are told apart by shape.
 */
export function rooflineChart(
  records: RunRecord | RunRecord[],
  opts: RooflineOptions = {},
): VegaChart {
  const runs = Array.isArray(records) ? records : [records];
  const points: RooflinePoint[] = [];
  const roofs: { source: string; intensity: number; gflops: number }[] = [];
  const ridges: { source: string; intensity: number; gflops: number; text: string }[] = [];
  const roofLabels: typeof ridges = [];
  const subtitle: string[] = [];
  const warnings: string[] = [];

  runs.forEach((record, i) => {
    const source = opts.labels?.[i] ?? `${deviceLabel(record)} · ${record.date.slice(0, 10)}`;
    // CPU peers do not belong on a GPU roofline.
    const gpuPeers = measured(record.peers).filter((p) => !p.peer.startsWith("openblas"));
    const n = opts.n ?? largestSquare(record.results) ?? largestSquare(gpuPeers);
    if (n === undefined) return;
    const ceil = record.ceilings;
    const bound = (x: number) =>
      ceil ? Math.min(ceil.fp32Gflops, ceil.bandwidthGBs * x) : undefined;
    const best = new Map<string, RooflinePoint>();
    for (const r of measured(record.results).filter((r) => isSquare(r) && r.n === n)) {
      const p: RooflinePoint = {
        source,
        label: r.title,
        role: "kernel",
        n,
        params: Object.entries(r.params).map(([k, v]) => `${k}=${v}`).join(" "),
        intensity: r.intensity,
        gflops: r.gflops!,
        boundGflops: bound(r.intensity),
      };
      if ((best.get(r.kernel)?.gflops ?? 0) < p.gflops) best.set(r.kernel, p);
    }
    points.push(...best.values());
    for (const r of gpuPeers.filter((r) => isSquare(r) && r.n === n)) {
      const x = compulsoryIntensity(r);
      points.push({
        source,
        label: peerLabel(r.peer),
        role: "peer",
        n,
        params: "",
        intensity: x,
        gflops: r.gflops!,
        boundGflops: bound(x),
      });
    }
    const who = opts.labels?.[i] ? `${source} (${record.device.description})` : source;
    const line = `${who}: commit ${shortCommit(record.commit)}, N = ${n}`;
    if (!ceil) {
      subtitle.push(`${line}; no measured ceilings in this record, so no roof`);
      return;
    }
    const ridge = ceil.fp32Gflops / ceil.bandwidthGBs;
    const mine = points.filter((p) => p.source === source);
    const xs = [ridge, ...mine.map((p) => p.intensity)];
    const lo = Math.min(...xs) / 4, hi = Math.max(...xs) * 4;
    for (const x of [lo, ridge, hi]) roofs.push({ source, intensity: x, gflops: bound(x)! });
    ridges.push({
      source,
      intensity: ridge,
      gflops: ceil.fp32Gflops,
      text: `ridge ${sig(ridge)} FLOP/B`,
    });
    roofLabels.push(
      {
        source,
        intensity: hi,
        gflops: ceil.fp32Gflops,
        text: `FP32 ${sig(ceil.fp32Gflops)} GFLOP/s`,
      },
      {
        source,
        intensity: lo * 1.5,
        gflops: bound(lo * 1.5)!,
        text: `${sig(ceil.bandwidthGBs)} GB/s`,
      },
    );
    subtitle.push(
      `${line}, measured roofs ${sig(ceil.bandwidthGBs)} GB/s and ${sig(ceil.fp32Gflops)} GFLOP/s`,
    );
    for (const p of mine.filter((p) => p.gflops > ceil.fp32Gflops)) {
      warnings.push(`${p.label} is above the measured FP32 roof: the ceiling is too low`);
    }
  });
  if (!points.length) throw new Error("no measured square-size results to put on a roofline");

  // Whole decades on both axes, fixed here so label placement knows where points land.
  const xDomain = decades([...points, ...roofs].map((p) => p.intensity));
  const yDomain = decades([...points, ...roofs].map((p) => p.gflops));
  const labels = (["kernel", "peer"] as const).flatMap((role) =>
    spreadLabels(points.filter((p) => p.role === role), xDomain, yDomain)
  );
  const x = {
    field: "intensity",
    type: "quantitative",
    scale: { type: "log", domain: xDomain },
    title: "Arithmetic intensity (FLOP per byte of global memory, modeled)",
  } as const;
  const y = {
    field: "gflops",
    type: "quantitative",
    scale: { type: "log", domain: yDomain },
    title: "GFLOP/s (measured)",
  } as const;
  const color = {
    field: "source",
    type: "nominal",
    title: "Run",
    legend: { labelLimit: 360, orient: "bottom", direction: "vertical" },
  } as const;
  const tooltip = [
    { field: "label", title: "kernel" },
    { field: "source", title: "run" },
    { field: "params", title: "params" },
    { field: "n", title: "N" },
    { field: "intensity", title: "FLOP/byte", format: ".3~g" },
    { field: "gflops", title: "GFLOP/s", format: ".4~g" },
    { field: "boundGflops", title: "roofline bound", format: ".4~g" },
  ];

  return {
    kind: "vega-lite",
    name: "roofline",
    spec: {
      $schema: SCHEMA,
      title: {
        text: "Roofline: measured ceilings, modeled intensity",
        subtitle: [...subtitle, ...warnings.map((w) => `warning: ${w}`)],
      },
      width: WIDTH,
      height: HEIGHT,
      config: VEGA_CONFIG,
      layer: [
        {
          data: { values: roofs },
          mark: { type: "line", strokeWidth: 2, clip: true },
          encoding: { x, y, color, detail: { field: "source" } },
        },
        {
          data: { values: ridges },
          mark: { type: "point", shape: "diamond", size: 120, filled: true },
          encoding: { x, y, color },
        },
        {
          data: { values: ridges },
          mark: { type: "text", align: "left", dx: 8, dy: 16, fontSize: 10 },
          encoding: { x, y, color, text: { field: "text" } },
        },
        // Roof labels: FP32 above the right end of the flat roof, bandwidth below the slope.
        ...[0, 1].map((i) => ({
          data: { values: roofLabels.filter((_, j) => j % 2 === i) },
          mark: {
            type: "text",
            dx: i ? 6 : 0,
            dy: i ? 14 : -10,
            align: i ? "left" : "right",
            fontSize: 10,
          },
          encoding: { x, y, color, text: { field: "text" } },
        } as const)),
        {
          data: { values: points },
          mark: { type: "point", size: 90, filled: true, opacity: 0.9 },
          encoding: {
            x,
            y,
            color,
            shape: { field: "role", type: "nominal", title: "Kind" },
            tooltip,
          },
        },
        // Labels moved apart vertically where points crowd, each tied to its point by a short
        // leader; kernels labelled to the right, peers to the left.
        {
          data: { values: labels.filter((l) => l.moved) },
          mark: { type: "rule", strokeWidth: 0.6, opacity: 0.6 },
          encoding: { x, y, y2: { field: "labelGflops" }, color },
        },
        ...(["kernel", "peer"] as const).map((role) => ({
          data: { values: labels.filter((l) => l.role === role) },
          mark: {
            type: "text",
            align: role === "kernel" ? "left" : "right",
            baseline: "middle",
            dx: role === "kernel" ? 8 : -8,
            fontSize: 10,
          },
          encoding: {
            x,
            y: { ...y, field: "labelGflops" },
            color,
            text: { field: "label" },
          },
        } as const)),
      ],
    },
  };
}
