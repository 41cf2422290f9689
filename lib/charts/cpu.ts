/**
 * The CPU side: the cache-blocking sweep in the lecture's style (block 0 = one block spanning the
 * matrix, the same packed micro-kernel without cache blocking; block 1 =
 * all loop overhead), our matmuls beside OpenBLAS, and the lecture's access model.
 */
import { cpuModelRows } from "../cpu.ts";
import type { CpuRecord, PeerResult } from "../record.ts";
import {
  isSquare,
  measured,
  peerLabel,
  SCHEMA,
  VEGA_CONFIG,
  type VegaChart,
  type VegaLiteSpec,
} from "./common.ts";

/** One point of the block-size sweep; block 0 is one block spanning the matrix. */
export interface CpuSweepRow {
  n: number;
  block: number;
  gflops: number;
}

/** One CPU implementation at one size ("naive ijk", "ikj", "blocked 64", "OpenBLAS 1 thread"). */
export interface CpuImplRow {
  impl: string;
  n: number;
  gflops: number;
  /** A reference library (OpenBLAS) rather than one of ours. */
  reference?: boolean;
}

/** The lecture's model at size n: FLOPs 2N^3, unique accesses 3N^2, all accesses 4N^3. */
export interface CpuModelRow {
  n: number;
  /** e.g. "unique accesses (3N²)" */
  series: string;
  value: number;
}

export interface CpuChartData {
  sweep?: CpuSweepRow[];
  impls?: CpuImplRow[];
  model?: CpuModelRow[];
  /** Where the numbers come from (machine, date, commit), shown as the subtitle. */
  source?: string;
}

/** Up to three panels, each drawn only when its rows are given. */
export function cpuChart(data: CpuChartData): VegaChart {
  const panels: VegaLiteSpec[] = [];
  if (data.sweep?.length) {
    panels.push({
      title: data.sweep.some((r) => r.block === 0)
        ? "Cache blocking: block-size sweep (block 0 = one block spanning the matrix)"
        : "Cache blocking: block-size sweep",
      width: 520,
      height: 260,
      data: { values: data.sweep },
      mark: { type: "line", point: true },
      encoding: {
        x: {
          field: "block",
          type: "ordinal",
          title: "Block size (elements)",
          axis: { labelAngle: 0, labelExpr: "datum.value == 0 ? '0 (none)' : datum.label" },
        },
        y: { field: "gflops", type: "quantitative", title: "GFLOP/s (measured)" },
        color: { field: "n", type: "ordinal", title: "N" },
        tooltip: [
          { field: "n", title: "N" },
          { field: "block", title: "block" },
          { field: "gflops", title: "GFLOP/s", format: ".3~g" },
        ],
      },
    } as VegaLiteSpec);
  }
  if (data.impls?.length) {
    const n = Math.max(...data.impls.map((r) => r.n));
    const atN = data.impls.filter((r) => r.n === n).sort((a, b) => b.gflops - a.gflops)
      .map((r) => ({ ...r, reference: Boolean(r.reference) }));
    panels.push({
      title: `CPU implementations at N = ${n}`,
      width: 520,
      height: { step: 24 },
      data: { values: atN },
      encoding: {
        y: {
          field: "impl",
          type: "nominal",
          sort: atN.map((r) => r.impl),
          title: null,
          axis: { labelLimit: 240 },
        },
        color: {
          field: "reference",
          type: "nominal",
          title: null,
          scale: { domain: [false, true], range: ["#4c78a8", "#f58518"] },
          legend: { labelExpr: "datum.value ? 'peer' : 'ours'" },
        },
        x: {
          field: "gflops",
          type: "quantitative",
          title: "GFLOP/s (measured)",
          scale: { domainMax: 1.15 * Math.max(...atN.map((r) => r.gflops)) },
        },
        tooltip: [
          { field: "impl", title: "implementation" },
          { field: "gflops", title: "GFLOP/s", format: ".3~g" },
        ],
      },
      layer: [
        { mark: "bar" },
        {
          mark: { type: "text", align: "left", dx: 3, fontSize: 10 },
          encoding: { text: { field: "gflops", type: "quantitative", format: ".3~g" } },
        },
      ],
    } as VegaLiteSpec);
  }
  if (data.model?.length) {
    panels.push({
      title: "Memory accesses: unique (perfect cache) vs all (no cache)",
      width: 520,
      height: 240,
      data: { values: data.model },
      mark: { type: "line", point: true },
      encoding: {
        x: { field: "n", type: "quantitative", scale: { type: "log", base: 2 }, title: "N" },
        y: { field: "value", type: "quantitative", scale: { type: "log" }, title: "Count" },
        color: {
          field: "series",
          type: "nominal",
          title: null,
          scale: { scheme: "set2" },
          legend: { labelLimit: 300 },
        },
        tooltip: [
          { field: "series" },
          { field: "n", title: "N" },
          { field: "value", format: ".3~s" },
        ],
      },
    } as VegaLiteSpec);
  }
  if (!panels.length) throw new Error("no CPU measurements to chart");
  return {
    kind: "vega-lite",
    name: "cpu",
    spec: {
      $schema: SCHEMA,
      title: { text: "Matrix multiply on the CPU", subtitle: data.source ?? "" },
      config: VEGA_CONFIG,
      // Each panel's colours mean something different (N, or a model series).
      resolve: { scale: { color: "independent" }, legend: { color: "independent" } },
      vconcat: panels,
    } as VegaLiteSpec,
  };
}

/** One bar of the CPU ladder chart: a rung or a CPU peer, from a record or the reader's run. */
export interface CpuLadderBar {
  impl: string;
  /** Whose measurement: "recorded (<CPU>)" or "yours". */
  source: string;
  gflops: number;
}

/**
 * The CPU ladder at one size, recorded and yours side by side, on a log axis: the rungs span
 * three orders of magnitude, and on a linear axis the first three would not show.
 */
export function cpuLadderChart(bars: CpuLadderBar[], n: number): VegaChart {
  if (!bars.length) throw new Error("no CPU measurements to chart");
  const order = [...new Set(bars.map((b) => b.impl))];
  const sources = [...new Set(bars.map((b) => b.source))];
  return {
    kind: "vega-lite",
    name: "cpu-ladder",
    spec: {
      $schema: SCHEMA,
      title: {
        text: `The CPU ladder at N = ${n}`,
        subtitle: "GFLOP/s from each row's fastest call; log scale",
      },
      config: VEGA_CONFIG,
      width: 520,
      height: { step: 11 * sources.length + 4 },
      data: { values: bars },
      encoding: {
        y: { field: "impl", type: "nominal", sort: order, title: null, axis: { labelLimit: 240 } },
        yOffset: { field: "source", type: "nominal", sort: sources },
        color: {
          field: "source",
          type: "nominal",
          sort: sources,
          title: null,
          legend: { labelLimit: 0 },
        },
        x: {
          field: "gflops",
          type: "quantitative",
          scale: { type: "log" },
          // Bars of one rung sit side by side (yOffset), never stacked: a stack on a log axis
          // has no meaning and draws nothing.
          stack: null,
          title: "GFLOP/s (measured, log scale)",
        },
        tooltip: [
          { field: "impl", title: "rung / peer" },
          { field: "source" },
          { field: "gflops", title: "GFLOP/s", format: ".3~g" },
        ],
      },
      layer: [
        { mark: "bar" },
        {
          mark: { type: "text", align: "left", dx: 3, fontSize: 9 },
          encoding: { text: { field: "gflops", type: "quantitative", format: ".3~g" } },
        },
      ],
    } as VegaLiteSpec,
  };
}

/** The peers that run on the CPU: OpenBLAS and jax-js's WebAssembly backend. */
const CPU_PEERS = ["openblas", "jaxjs"];

/**
 * CPU chart rows from a CPU suite (lib/cpu_bench.ts: `runCpuSuite` or a record's `cpu`):
 * validated rows only, the CPU peers (OpenBLAS, jax-js) added to the implementation bars as
 * references.
 */
export function cpuSuiteRows(
  cpu: Partial<CpuRecord>,
  peers: readonly PeerResult[] = [],
  source?: string,
): CpuChartData {
  const ok = (r: { validated: boolean; gflops?: number }) => r.validated && (r.gflops ?? 0) > 0;
  const sweep = (cpu.sweep ?? []).filter(ok);
  const blas = measured(peers).filter((p) =>
    CPU_PEERS.some((x) => p.peer.startsWith(x)) && isSquare(p)
  )
    .map((p) => ({ impl: peerLabel(p.peer), n: p.n, gflops: p.gflops!, reference: true }));
  const impls = [
    ...(cpu.impls ?? []).filter(ok).map((r) => ({ impl: r.impl, n: r.n, gflops: r.gflops! })),
    ...blas,
  ];
  const sizes = [...new Set([...sweep, ...impls].map((r) => r.n))].sort((a, b) => a - b);
  return {
    sweep,
    impls,
    // The lecture's access model at the sizes that were measured.
    model: cpu.model ?? (sizes.length ? cpuModelRows(sizes) : undefined),
    source: source ?? cpu.machine?.model,
  };
}
