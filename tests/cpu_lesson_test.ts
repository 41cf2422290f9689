/**
 * Notebook 01's CPU ladder: each rung's and peer's GFLOP/s from its fastest call, recorded and
 * live side by side, the chart that draws them on a log axis, and the thread sweep's table.
 */
import assert from "node:assert/strict";
import { cpuLadderChart } from "../lib/charts/cpu.ts";
import {
  cpuLadderBars,
  loadCpuRecord,
  showCpuLadderRun,
  showThreadSweep,
  sweepPoints,
} from "../lib/notebook/lessons/cpu.ts";
import { threadCounts } from "../lib/cpu_bench.ts";
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

Deno.test("thread counts: powers of two up to the logical cores, the physical count among them", () => {
  const host = (logicalCores: number, physicalCores?: number) => ({
    model: "test",
    logicalCores,
    physicalCores,
    v8: "",
    threads: 1,
  });
  assert.deepEqual(threadCounts(host(64, 64)), [1, 2, 4, 8, 16, 32, 64]);
  assert.deepEqual(threadCounts(host(16, 8)), [1, 2, 4, 8, 16]);
  assert.deepEqual(threadCounts(host(12, 6)), [1, 2, 4, 6, 8, 12]);
  assert.deepEqual(threadCounts(host(1)), [1]);
});

Deno.test("thread sweep table: each count's gain over one thread, and that gain per thread", async () => {
  const row = (n: number, threads: number, minMs: number) => ({
    id: "threads",
    impl: "SIMD, all cores",
    timer: "performance.now (CPU)",
    threads,
    m: n,
    k: n,
    n,
    validated: true,
    relErr: 5e-7,
    seed: 1,
    minMs,
    medianMs: minMs * 1.1,
    maxMs: minMs * 1.2,
    reps: 10,
  });
  const printed: string[] = [];
  const log = console.log;
  console.log = (text: string) => printed.push(text);
  try {
    await showThreadSweep([row(1024, 1, 80), row(1024, 4, 25)], {
      model: "Test Xeon",
      logicalCores: 4,
      physicalCores: 2,
      v8: "",
      threads: 4,
      caches: { l1d: 48 * 1024, l2: 2 << 20, l3: 300 << 20, source: "getconf" },
    });
  } finally {
    console.log = log;
  }
  const table = printed.join("\n");
  assert.match(
    table,
    /Test Xeon, 4 logical cores on 2 physical; 48 KiB L1d and 2 MiB L2 per core, 300 MiB L3 \(getconf\)/,
  );
  // 80 / 25 = 3.2x over one thread, 0.8 per thread.
  assert.match(table, /^1,024\s+4\s+true\s+\S+\s+25\s+\S+\s+3\.2\s+0\.8\s/m);
});
