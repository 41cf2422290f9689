/**
 * Notebook 01's CPU ladder: each rung's and peer's GFLOP/s from its fastest call, recorded and
 * live side by side, and the chart that draws them on a log axis.
 */
import assert from "node:assert/strict";
import { cpuLadderChart } from "../lib/charts/cpu.ts";
import {
  cpuLadderBars,
  loadCpuRecord,
  showCpuLadderRun,
  sweepPoints,
} from "../lib/notebook/lessons/cpu.ts";
import type { SweepRow } from "../lib/record.ts";
import { chartSvg } from "../lib/render.ts";

const XEON = "gpu-host-xeon-16cores-2026-11-26T0700.json";

Deno.test("CPU ladder bars: every rung and peer at N from its fastest call, per source", async () => {
  const recorded = await loadCpuRecord(XEON);
  const yours = { cpu: recorded.cpu!, peers: recorded.peers };
  const bars = cpuLadderBars(yours, recorded, 1024);
  // Six rungs and three peers, once recorded and once "yours".
  assert.equal(bars.length, 18);
  const naive = recorded.cpu!.impls.find((r) => r.id === "naive-ijk" && r.n === 1024)!;
  const bar = bars.find((b) => b.impl === "naive ijk" && b.source === "yours")!;
  assert.ok(Math.abs(bar.gflops - 2 * 1024 ** 3 / naive.minMs! / 1e6) < 1e-9);
  // The packed rung's median at 1024 is one slow call of two; the fastest is the kernel's cost.
  const packed = bars.find((b) => b.impl === "packed, 2x4 registers" && b.source === "yours")!;
  assert.ok(packed.gflops > 3.8 && packed.gflops < 3.9, String(packed.gflops));
  // A size the record did not run gives no bars rather than empty ones.
  assert.deepEqual(cpuLadderBars(yours, recorded, 4096), []);
});

Deno.test("CPU ladder table: each live row's spread over its calls, and the cores it ran on", async () => {
  const recorded = await loadCpuRecord(XEON);
  const cpu = { ...recorded.cpu!, machine: { ...recorded.cpu!.machine, physicalCores: 8 } };
  const printed: string[] = [];
  const log = console.log;
  console.log = (text: string) => printed.push(text);
  try {
    await showCpuLadderRun({ cpu, peers: recorded.peers }, recorded, 1024);
  } finally {
    console.log = log;
  }
  const table = printed.join("\n");
  assert.match(table, /your spread, calls/);
  assert.match(table, /16 logical cores, 8 physical\)$/m);
  // The packed rung's two recorded calls, 556 and 3,919 ms: the spread is their range over the
  // median.
  const packed = cpu.impls.find((r) => r.id === "packed" && r.n === 1024)!;
  const spread = (100 * (packed.maxMs! - packed.minMs!)) / packed.medianMs!;
  const line = table.split("\n").find((l) => l.startsWith("packed, 2x4 registers"))!;
  assert.match(line, new RegExp(`${Math.round(spread)}(\\.\\d+)?%, ${packed.reps}\\s*$`));
});

Deno.test("CPU ladder chart: side-by-side bars on a log axis, never stacked", async () => {
  const chart = cpuLadderChart([
    { impl: "naive ijk", source: "recorded", gflops: 0.27 },
    { impl: "naive ijk", source: "yours", gflops: 0.64 },
    { impl: "OpenBLAS (all threads)", source: "recorded", gflops: 832 },
  ], 1024);
  const x = (chart.spec as { encoding: { x: Record<string, unknown> } }).encoding.x;
  assert.equal(x.stack, null);
  const svg = await chartSvg(chart);
  // Three bars drawn with a width (a stacked log axis draws none).
  const widths = [...svg.matchAll(/aria-roledescription="bar" d="M[\d.]+,[\d.]+h([\d.]+)v/g)]
    .map((m) => Number(m[1]));
  assert.equal(widths.length, 3);
  assert.ok(widths.every((w) => w > 0));
  assert.throws(() => cpuLadderChart([], 1024), /no CPU/);
});

Deno.test("sweep points: validated rows only, GFLOP/s from the fastest call", () => {
  const row = (block: number, minMs: number, validated = true): SweepRow => ({
    n: 100,
    block,
    gflops: 1,
    medianMs: 10 * minMs,
    minMs,
    maxMs: 10 * minMs,
    reps: 3,
    relErr: 1e-7,
    validated,
    seed: 1,
  });
  assert.deepEqual(sweepPoints([row(0, 2), row(8, 1, false)]), [
    { n: 100, block: 0, gflops: 2 * 100 ** 3 / 2 / 1e6 },
  ]);
});
