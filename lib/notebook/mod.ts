/**
 * The notebook wing: what notebook cells call, re-exported by lib/mod.ts.
 *   jupyter.ts   the one Jupyter display adapter: bundles, outputs updated in place
 *   charts.ts    charts built by lib/charts/ shown as bundles (vega-lite or plotly, SVG, PNG)
 *   knobs.ts     a step's knob turned live, as a table and a chart beside the recorded sweep
 *   format.ts    notes and tables (Markdown, HTML, plain text), number formatting
 *   session.ts   the reader's adapter, sizes and measured ceilings
 *   kernels.ts   kernel lookup, WGSL source, cost-model predictions
 *   diff.ts      what a step changes in the kernel before it, as a diff
 *   live.ts      live validated-and-timed runs and the gap to the model's bound
 *   models.ts    the step model: what changes per step, its bounds, the gap to a record
 *   recorded.ts  the committed GPU-host record beside the live numbers
 *   tuning.ts    live and recorded autotuning searches
 *   ablation.ts  the GPU host's ablation of the autotuned kernel, stage by stage
 *   lessons/     one module per demonstration a notebook runs (hardware.ts: the driver's
 *                register counts and the CUDA ports' counters, from committed records)
 *   figures/     concept figures drawn from a step's parameters (conceptFigure, showConcept)
 */
export * from "./jupyter.ts";
export * from "./charts.ts";
export * from "./knobs.ts";
export * from "./format.ts";
export * from "./session.ts";
export * from "./steps.ts";
export * from "./diff.ts";
export * from "./live.ts";
export * from "./models.ts";
export * from "./recorded.ts";
export * from "./tuning.ts";
export * from "./ablation.ts";
export * from "./lessons/timing.ts";
export * from "./lessons/workgroups.ts";
export * from "./lessons/coalescing.ts";
export * from "./lessons/edges.ts";
export * from "./lessons/banks.ts";
export * from "./lessons/cpu.ts";
export * from "./generated.ts";
export * from "./lessons/shapes.ts";
export * from "./lessons/hardware.ts";
export * from "./lessons/machine_code.ts";
export * from "./lessons/validation.ts";
export * from "./concept.ts";
