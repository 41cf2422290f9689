/**
 * The ceiling sweeps behind the roofline: every streaming configuration's GB/s, and FP32 (and,
 * when measured, packed f16) GFLOP/s against grid size for each number of independent FMA
 * chains. The best of each is the roof; a flat curve means the GPU is full, a rising one that
 * it needs more work.
 */
import type { Ceilings, FmaTrial } from "../record.ts";
import { SCHEMA, VEGA_CONFIG, type VegaChart, type VegaLiteSpec } from "./common.ts";

/** Two panels from the trials `measureCeilings` stores in the record. */
export function ceilingsChart(ceilings: Ceilings, source = ""): VegaChart {
  const bandwidth = (ceilings.bandwidthTrials ?? []).map((t) => ({
    ...t,
    config: `${t.kernel} · workgroup ${t.workgroupSize} · ${t.perInvocation} vec4 each`,
    role: t.gbs === ceilings.bandwidthGBs ? "the ceiling" : "other configurations",
  }));
  const fp32 = ceilings.fp32Trials ?? [];
  const f16 = ceilings.f16Trials ?? [];
  if (!bandwidth.length && !fp32.length) throw new Error("no ceiling trials in the record");
  const mib = (b: number) => `${Math.round(b / 2 ** 20)} MiB`;
  const panels: VegaLiteSpec[] = [];
  if (bandwidth.length) {
    panels.push({
      title: `Streaming bandwidth (buffers of ${mib(bandwidth[0].bufferBytes)})`,
      width: 420,
      height: { step: 22 },
      data: { values: bandwidth },
      encoding: {
        y: {
          field: "config",
          type: "nominal",
          sort: bandwidth.map((t) => t.config),
          title: null,
          axis: { labelLimit: 320 },
        },
        x: {
          field: "gbs",
          type: "quantitative",
          title: "GB/s (bytes read + written)",
          // Room for the value printed after the longest bar.
          scale: { domainMax: 1.15 * Math.max(...bandwidth.map((t) => t.gbs)) },
        },
        tooltip: [
          { field: "config", title: "kernel" },
          { field: "gbs", title: "GB/s", format: ".4~g" },
          { field: "medianMs", title: "median ms", format: ".4~g" },
        ],
      },
      layer: [
        {
          mark: "bar",
          encoding: {
            color: {
              field: "role",
              type: "nominal",
              title: null,
              legend: { labelLimit: 200 },
              scale: {
                domain: ["the ceiling", "other configurations"],
                range: ["#e45756", "#4c78a8"],
              },
            },
          },
        },
        {
          mark: { type: "text", align: "left", dx: 3, fontSize: 10 },
          encoding: { text: { field: "gbs", type: "quantitative", format: ".3~g" } },
        },
      ],
    } as VegaLiteSpec);
  }
  const fma = (trials: FmaTrial[], title: string): VegaLiteSpec => ({
    title,
    width: 420,
    height: 220,
    data: { values: trials },
    mark: { type: "line", point: true },
    encoding: {
      x: {
        field: "invocations",
        type: "quantitative",
        scale: { type: "log", base: 2 },
        axis: { values: [...new Set(trials.map((t) => t.invocations))], format: ",d" },
        title: "Invocations in the grid",
      },
      y: { field: "gflops", type: "quantitative", title: "GFLOP/s" },
      color: {
        field: "chains",
        type: "ordinal",
        title: "FMA chains per invocation",
        legend: { titleLimit: 300 },
      },
      tooltip: [
        { field: "chains", title: "chains" },
        { field: "invocations" },
        { field: "iters", title: "loop iterations" },
        { field: "gflops", title: "GFLOP/s", format: ".4~g" },
      ],
    },
  } as VegaLiteSpec);
  if (fp32.length) panels.push(fma(fp32, "FP32 FMA throughput"));
  if (f16.length) panels.push(fma(f16, "Packed f16 (vec2<f16>) FMA throughput"));
  return {
    kind: "vega-lite",
    name: "ceilings",
    spec: {
      $schema: SCHEMA,
      title: { text: "Measured ceilings: the best of each sweep is the roof", subtitle: source },
      config: VEGA_CONFIG,
      resolve: { scale: { color: "independent" }, legend: { color: "independent" } },
      vconcat: panels,
    } as VegaLiteSpec,
  };
}
