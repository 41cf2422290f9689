/**
 * What every chart builder returns, and the small helpers they share. Builders take measured
 * data (a run record, or rows derived from one) and return a spec; they never hold numbers.
 */
import { FONT } from "../font.ts";
import type { TopLevelSpec } from "vega-lite";
import type { KernelResult, PeerResult, RunRecord } from "../record.ts";

export type VegaLiteSpec = TopLevelSpec;

/** A plotly figure as plotly.js takes it: traces, layout, config. */
export interface PlotlyFigure {
  data: Record<string, unknown>[];
  layout: Record<string, unknown>;
  config?: Record<string, unknown>;
}

/** A vega-lite chart: rendered to SVG/PNG by vega, to HTML by vega-embed. */
export interface VegaChart {
  kind: "vega-lite";
  /** File-name stem for exports, e.g. "roofline". */
  name: string;
  spec: VegaLiteSpec;
}

/**
 * A plotly chart (interactive). `fallback` draws the same data as a static vega-lite chart, so
 * SVG/PNG exports and notebook fallbacks need no browser.
 */
export interface PlotlyChart {
  kind: "plotly";
  name: string;
  figure: PlotlyFigure;
  fallback: VegaLiteSpec;
}

export type Chart = VegaChart | PlotlyChart;

/** Shared vega-lite config: the embedded font everywhere, a white background. */
export const VEGA_CONFIG = {
  font: FONT,
  background: "white",
  title: { font: FONT, fontSize: 15, anchor: "start", subtitleFontSize: 11 },
  axis: { labelFont: FONT, titleFont: FONT, labelFontSize: 11, titleFontSize: 12 },
  legend: { labelFont: FONT, titleFont: FONT },
  header: { labelFont: FONT, titleFont: FONT },
  text: { font: FONT },
} as const;

export const SCHEMA = "https://vega.github.io/schema/vega-lite/v6.json";

/** A commit as people write it: 7 hex digits, "+dirty" kept. */
export const shortCommit = (commit: string) => commit.replace(/^([0-9a-f]{7})[0-9a-f]*/, "$1");

/** "NVIDIA H200 · 2026-11-21 · 1a2b3c4": which machine, when and which code a number comes from. */
export function sourceLabel(record: RunRecord): string {
  return `${record.device.description} · ${record.date.slice(0, 10)} · ${
    shortCommit(record.commit)
  }`;
}

/** Short device name for legends ("llvmpipe (software)"). */
export function deviceLabel(record: RunRecord): string {
  const name = record.device.description.replace(/\s*\(.*\)\s*$/, "");
  return record.device.software ? `${name} (software)` : name;
}

/** Results that were validated and timed: the only ones ever drawn as a speed. */
export function measured<T extends KernelResult | PeerResult>(rows: readonly T[]): T[] {
  return rows.filter((r) => r.validated && typeof r.gflops === "number" && r.gflops > 0);
}

export const isSquare = (r: { m: number; n: number; k: number }) => r.m === r.n && r.n === r.k;

/** Peer ids as readers know them. */
export function peerLabel(peer: string): string {
  const names: Record<string, string> = {
    "cublas": "cuBLAS",
    "tfjs-webgpu": "TF.js WebGPU",
    "jaxjs-webgpu": "jax-js WebGPU",
    "openblas-1t": "OpenBLAS (1 thread)",
    "openblas-all": "OpenBLAS (all threads)",
    "jaxjs-wasm": "jax-js (wasm, all threads)",
  };
  return names[peer] ?? peer;
}

/**
 * The largest square size at which `rows` has a measured result, or undefined. Charts that show
 * one size pick it by default: the size the ladder is judged at.
 */
export function largestSquare(rows: readonly (KernelResult | PeerResult)[]): number | undefined {
  const sizes = measured(rows).filter(isSquare).map((r) => r.n);
  return sizes.length ? Math.max(...sizes) : undefined;
}

/** Throws a clear error when a builder has nothing measured to draw. */
export function requireRows<T>(rows: T[], what: string): T[] {
  if (!rows.length) throw new Error(`no measured ${what} to chart`);
  return rows;
}

/**
 * The widest a chart may draw, legends included, in CSS pixels: a notebook's output area and a
 * blog's column are about 900 px wide.
 */
export const MAX_CHART_PX = 900;

/**
 * One colour per kernel, in story order, chosen so neighbouring steps contrast and every colour
 * reads on white. Longer than the ladder (13 steps and their teaching variants).
 */
const KERNEL_COLORS = [
  "#4363d8", // blue
  "#f58231", // orange
  "#3cb44b", // green
  "#e6194b", // red
  "#911eb4", // purple
  "#42d4f4", // sky
  "#9a6324", // brown
  "#f032e6", // magenta
  "#469990", // teal
  "#800000", // maroon
  "#000075", // navy
  "#808000", // olive
  "#d4a000", // gold
  "#8fbc2c", // lime
  "#b59ce0", // lavender
  "#f4a3b8", // rose
  "#5f5f5f", // slate
];

/** Peers keep their colours on every chart: the reference is black, the others neutral. */
const PEER_COLORS: Record<string, string> = {
  "cuBLAS": "#000000",
  "TF.js WebGPU": "#a9a9a9",
  "OpenBLAS (1 thread)": "#7a5c3c",
  "OpenBLAS (all threads)": "#c8a27a",
};

/**
 * A colour scale giving every series its own colour: peers theirs, kernels the next unused
 * kernel colour in the order given (story order, so the same record colours alike everywhere).
 */
export function seriesColors(
  series: readonly { label: string; role: "kernel" | "peer" }[],
): { domain: string[]; range: string[] } {
  const domain: string[] = [], range: string[] = [];
  let next = 0;
  for (const { label, role } of series) {
    if (domain.includes(label)) continue;
    const color = role === "peer" && PEER_COLORS[label]
      ? PEER_COLORS[label]
      : KERNEL_COLORS[next++ % KERNEL_COLORS.length];
    domain.push(label);
    range.push(color);
  }
  return { domain, range };
}

/** Legend labels are never cut short (vega-lite's default cuts them at 160 px). */
export const LEGEND_LABEL_LIMIT = 400;

/**
 * The colour encoding of a chart whose series are kernels and peers: one colour each, the legend
 * in story order (kernels by number, then peers), `legend` adding to its defaults.
 */
export function seriesColorEncoding(
  series: readonly { label: string; role: "kernel" | "peer" }[],
  legend: Record<string, unknown> = {},
) {
  const colors = seriesColors(series);
  return {
    field: "label",
    type: "nominal",
    title: "Kernel or peer",
    scale: colors,
    sort: colors.domain,
    legend: { labelLimit: LEGEND_LABEL_LIMIT, ...legend },
  } as const;
}

/** Break a long subtitle into lines of at most `chars` characters, at " · " or spaces. */
export function wrapText(text: string, chars = 100): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && line.length + 1 + word.length > chars) {
      lines.push(line.replace(/ ·$/, ""));
      line = word === "·" ? "" : word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines;
}
