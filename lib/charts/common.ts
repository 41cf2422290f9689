/**
 * What every chart builder returns, and the small helpers they share. Builders take measured
 * data (a run record, or rows derived from one) and return a spec; they never hold numbers.
 */
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

/** The one font the renderer embeds (DejaVu ships with Debian's fonts-dejavu-core). */
export const FONT = "DejaVu Sans";

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
    "openblas-1t": "OpenBLAS (1 thread)",
    "openblas-all": "OpenBLAS (all threads)",
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
