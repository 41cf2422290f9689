/**
 * Charts, rendering, and showing them in notebooks (lib/notebook/charts.ts): a separate entry
 * from lib/mod.ts because it pulls in vega, vega-lite and resvg (npm).
 *   import { allCharts, show } from "../lib/charts/mod.ts";
 * It also holds the notebooks' knob cell (lib/notebook/knobs.ts), which draws a chart.
 */
export * from "./common.ts";
export * from "./roofline.ts";
export * from "./ceilings.ts";
export * from "./ladder.ts";
export * from "./bound.ts";
export * from "./scaling.ts";
export * from "./intensity.ts";
export * from "./cpu.ts";
export * from "./autotune.ts";
export * from "./shapes.ts";
export * from "./knob.ts";
export * from "./all.ts";
export * from "../render.ts";
export * from "../notebook/charts.ts";
export * from "../notebook/knobs.ts";
