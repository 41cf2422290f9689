/**
 * Chart builders: vega-lite and plotly specs from run records, with no display and no rendering.
 * Showing a chart in a notebook is lib/notebook/charts.ts (showChart, through lib/mod.ts);
 * rendering one to SVG, PNG or HTML is lib/render.ts.
 *   import * as charts from "../lib/charts/mod.ts";
 *   await showChart(charts.rooflineChart(record));
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
