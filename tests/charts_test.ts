/**
 * Charts, rendering, display bundles and the export task, all fed by a LIVE run on this
 * machine's adapter (tiny sizes): kernels, a TF.js peer when it starts, the ceilings, CPU
 * timings and a small parameter search. No hand-written numbers anywhere.
 */
import assert from "node:assert/strict";
import { measureCeilings } from "../lib/ceilings.ts";
import { runCpuSuite, sweepBlockSizes } from "../lib/cpu_bench.ts";
import { acquireGpu, type Gpu } from "../lib/gpu.ts";
import {
  currentCommit,
  loadRecord,
  type PeerResult,
  RECORD_SCHEMA,
  type RunRecord,
  type TuningTrial,
} from "../lib/record.ts";
import { findKernel, KERNELS } from "../lib/registry.ts";
import { runKernel } from "../lib/runner.ts";
import { openTfjs } from "../lib/peers/tfjs.ts";
import { assertPngNotBlank, decodePng } from "./png.ts";
import {
  allCharts,
  autotuneChart,
  boundChart,
  ceilingsChart,
  type Chart,
  cpuChart,
  cpuData,
  intensityChart,
  intensityPoints,
  ladderChart,
  MAX_CHART_PX,
  modeledIntensity,
  rooflineChart,
  scalingChart,
  SHAPE_SERIES,
  shapesChart,
  tuneCells,
  type TuneTrial,
} from "../lib/charts/mod.ts";
import { chartBundle } from "../lib/notebook/charts.ts";
import { chartHtml, chartPng, chartSvg, svgToPng } from "../lib/render.ts";
import { exportCharts, parseExportArgs } from "../tools/export.ts";

const SIZES = [24, 40];
const STEPS = KERNELS.filter((k) => !k.demo).slice(0, 3);

interface LiveData {
  gpu: Gpu;
  record: RunRecord;
}

let live: Promise<LiveData> | undefined;
let liveGpu: Gpu | undefined;

/** One live run shared by every test in this file. */
function liveRun(): Promise<LiveData> {
  live ??= (async () => {
    const gpu = await acquireGpu();
    liveGpu = gpu;
    const results = [];
    for (const n of SIZES) {
      for (const spec of STEPS) {
        results.push(await runKernel(gpu, spec, { m: n, k: n, n }, { budgetMs: 10 }));
      }
    }
    const peers: PeerResult[] = [];
    try {
      const tfjs = await openTfjs(gpu);
      try {
        for (const n of SIZES) peers.push(await tfjs.run({ m: n, k: n, n }, { budgetMs: 10 }));
      } finally {
        tfjs.close();
      }
    } catch (e) {
      console.error(`charts test: no TF.js peer (${(e as Error).message})`);
    }
    const naive = KERNELS[0];
    // A search over WG at both sizes; each trial also says its size, so the heatmap can show it.
    const trials: (TuningTrial & TuneTrial)[] = [];
    for (const WG of [4, 8, 16]) {
      for (const n of SIZES) {
        const r = await runKernel(gpu, naive, { m: n, k: n, n }, { params: { WG }, budgetMs: 5 });
        trials.push({ params: r.params, n, gflops: r.gflops, validated: r.validated });
      }
    }
    const ceilings = await measureCeilings(gpu, { bandwidthBytes: 4 << 20, passMs: 3, reps: 3 });
    const cpuSuite = await runCpuSuite({ sizes: [32, 48], reps: 2 });
    cpuSuite.cpu.sweep = await sweepBlockSizes([32, 48], [0, 1, 4, 16], { reps: 2 });
    peers.push(...cpuSuite.peers);
    const record: RunRecord = {
      schema: RECORD_SCHEMA,
      date: new Date().toISOString(),
      commit: await currentCommit(),
      deno: Deno.version.deno,
      device: gpu.summary,
      ceilings,
      results,
      peers,
      cpu: cpuSuite.cpu,
      tuning: [{
        schema: 1,
        device: gpu.summary,
        date: new Date().toISOString(),
        commit: "live",
        shape: { m: SIZES[0], k: SIZES[0], n: SIZES[0] },
        shapes: SIZES.map((n) => ({ m: n, k: n, n })),
        kernel: naive.id,
        space: { WG: [4, 8, 16] },
        trials,
        best: trials.reduce((a, b) => (b.gflops ?? 0) > (a.gflops ?? 0) ? b : a),
      }],
      notes: ["live record from tests/charts_test.ts"],
    };
    return { gpu, record };
  })();
  return live;
}

/** Peers a GPU chart shows (OpenBLAS rows belong to the CPU chart). */
const gpuPeersAt = (record: RunRecord, n: number) =>
  record.peers.filter((p) => p.validated && p.n === n && !p.peer.startsWith("openblas"));

/** Text of every <text> element in an SVG. */
/** A measured row at `shape` (validated, timed) for synthetic records. */
const measuredRow = (shape: { m: number; k: number; n: number }, gflops: number) => ({
  ...shape,
  validated: true,
  relErr: 1e-6,
  medianMs: 1,
  gflops,
});

/** A synthetic H200 record holding these results and peers. */
const syntheticRecord = (results: unknown[], peers: unknown[]) =>
  ({
    schema: RECORD_SCHEMA,
    date: "2026-11-23T00:00:00Z",
    commit: "abc1234",
    deno: Deno.version.deno,
    device: { description: "NVIDIA H200 (test)", software: false },
    results,
    peers,
    notes: [],
  }) as unknown as RunRecord;

const svgTexts = (svg: string) => [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
const countRole = (svg: string, role: string) =>
  svg.split(`aria-roledescription="${role}"`).length - 1;

function assertAxisTitles(svg: string, titles: string[]) {
  const texts = svgTexts(svg);
  for (const t of titles) assert.ok(texts.includes(t), `axis title "${t}" missing`);
}

Deno.test("roofline: roofs from measured ceilings, one point per kernel, peers marked", async () => {
  const { record } = await liveRun();
  const n = Math.max(...SIZES);
  const chart = rooflineChart(record);
  const svg = await chartSvg(chart);
  assertAxisTitles(svg, [
    "Arithmetic intensity (FLOP per byte of global memory, modeled)",
    "GFLOP/s (measured)",
  ]);
  const kernels = new Set(
    record.results.filter((r) => r.validated && r.n === n).map((r) => r.kernel),
  );
  const peers = gpuPeersAt(record, n).length;
  // Kernel and peer points, plus a ridge diamond per roof (FP32, and f16 where measured and an
  // f16 kernel is on the chart).
  const f16Point = record.results.some((r) =>
    r.validated && r.n === n && findKernel(r.kernel)?.precision === "f16"
  );
  const roofs = record.ceilings?.f16Gflops && f16Point ? 2 : 1;
  assert.equal(countRole(svg, "point"), kernels.size + peers + roofs);
  assert.equal(countRole(svg, "line mark"), roofs, "one line per roof");
  assert.ok(svgTexts(svg).some((t) => t.startsWith("ridge ")));
  assert.ok(svgTexts(svg).some((t) => t.startsWith("FP32 ")));
  // Recorded host and live adapter are told apart by colour and legend label.
  const both = await chartSvg(rooflineChart([record, record], { labels: ["recorded", "yours"] }));
  const texts = svgTexts(both);
  assert.ok(texts.includes("recorded") && texts.includes("yours"));
  assert.equal(countRole(both, "line mark"), 2 * roofs, "its roofs for each run");
  // Unlabelled, a notebook's own run reads "your run" beside the record's "recorded run".
  const live = { ...record, notes: ["live notebook run"] };
  const named = svgTexts(await chartSvg(rooflineChart([record, live])));
  assert.ok(named.some((t) => t.startsWith("recorded run")), "recorded run named");
  assert.ok(named.some((t) => t.startsWith("your run")), "your run named");
});

Deno.test("ceilings, ladder, bound, scaling, intensity, cpu, autotune: marks and axis titles", async () => {
  const { record } = await liveRun();
  const n = Math.max(...SIZES);

  const ladder = await chartSvg(ladderChart(record));
  assertAxisTitles(ladder, ["GFLOP/s (measured)"]);
  const bars = new Set(record.results.filter((r) => r.validated && r.n === n).map((r) => r.kernel))
    .size + gpuPeersAt(record, n).length;
  const panels = gpuPeersAt(record, n).length ? 2 : 1;
  assert.equal(countRole(ladder, "bar"), bars * panels);
  if (panels === 2) assert.ok(svgTexts(ladder).some((t) => t.startsWith("% of ")));

  const bound = await chartSvg(boundChart(record));
  assert.equal(countRole(bound, "bar"), bars - gpuPeersAt(record, n).length);
  assert.equal(countRole(bound, "tick"), bars - gpuPeersAt(record, n).length);

  const scaling = await chartSvg(scalingChart(record));
  assertAxisTitles(scaling, ["N (square M = K = N)", "GFLOP/s (measured)"]);
  const series = new Set(record.results.filter((r) => r.validated).map((r) => r.kernel)).size +
    new Set(record.peers.filter((p) => p.validated).map((p) => p.peer)).size;
  assert.equal(countRole(scaling, "line mark"), series);

  const c = record.ceilings!;
  const ceilings = await chartSvg(ceilingsChart(c));
  assertAxisTitles(ceilings, ["GB/s (bytes read + written)", "Invocations in the grid", "GFLOP/s"]);
  assert.equal(countRole(ceilings, "bar"), c.bandwidthTrials!.length);
  const chainCounts = (trials?: { chains: number }[]) => new Set(trials?.map((t) => t.chains)).size;
  assert.equal(
    countRole(ceilings, "line mark"),
    chainCounts(c.fp32Trials) + chainCounts(c.f16Trials),
  );

  const rows = modeledIntensity(STEPS, SIZES);
  const intensity = await chartSvg(intensityChart(rows));
  assertAxisTitles(intensity, ["Modeled FLOP per byte"]);
  const distinct = new Set(rows.map((r) => `${r.kernel} ${r.n} ${r.intensity.toPrecision(3)}`));
  assert.equal(countRole(intensity, "tick"), distinct.size);
  const naive = rows.find((r) => r.kernel === "02_naive" && r.isDefault)!;
  assert.equal(naive.intensity, naive.flops / naive.bytes);

  const cpuRows = cpuData(record);
  const cpu = await chartSvg(cpuChart(cpuRows));
  assertAxisTitles(cpu, ["Block size (elements)", "GFLOP/s (measured)", "Count"]);
  const largest = Math.max(...cpuRows.impls!.map((r) => r.n));
  assert.equal(countRole(cpu, "bar"), cpuRows.impls!.filter((r) => r.n === largest).length);
  assert.ok(cpuRows.impls!.some((r) => r.impl === "SIMD, all cores"));
  assert.deepEqual(
    cpuRows.impls!.filter((r) => r.reference && r.n === largest).map((r) => r.impl).sort(),
    ["OpenBLAS (1 thread)", "OpenBLAS (all threads)", "jax-js (wasm, all threads)"],
  );

  const trials = record.tuning![0].trials;
  const tune = autotuneChart(trials);
  assert.equal(tune.figure.data[0].type, "heatmap");
  const cells = tuneCells(trials, "WG", "n");
  assert.equal(cells.length, 3 * SIZES.length);
  assert.equal(cells.filter((c) => c.winner).length, 1);
  const tuneSvg = await chartSvg(tune);
  assertAxisTitles(tuneSvg, ["WG", "n"]);
  assert.equal(countRole(tuneSvg, "rect mark"), cells.length + 1, "cells plus the winner's frame");
});

Deno.test("shape view: ours, cuBLAS and TF.js per suite shape as a ratio to cuBLAS", async () => {
  const shapes = [{ m: 1, k: 4096, n: 4096 }, { m: 4096, k: 4096, n: 4096 }, {
    m: 16,
    k: 4096,
    n: 4096,
  }];
  const row = measuredRow;
  // 16 x 4096 x 4096 has ours and cuBLAS but no TF.js: two bars there.
  const record = syntheticRecord(
    shapes.map((s, i) => ({ ...row(s, 100 * (i + 1)), kernel: "13_shapes", title: "Every shape" })),
    [
      ...shapes.map((s) => ({ ...row(s, 400), peer: "cublas", title: "cuBLAS" })),
      ...shapes.slice(0, 2).map((s) => ({ ...row(s, 50), peer: "tfjs-webgpu", title: "TF.js" })),
    ],
  );
  const chart = shapesChart(record);
  const bars = (chart.spec as { data: { values: { who: string; ratio: number }[] } }).data.values;
  assert.deepEqual(
    bars.filter((b) => b.who === SHAPE_SERIES[0]).map((b) => b.ratio),
    [0.5, 0.75, 0.25],
  );
  const svg = await chartSvg(chart);
  assertAxisTitles(svg, ["M x K x N", "GFLOP/s / cuBLAS's"]);
  assert.equal(countRole(svg, "bar"), 8);
  assert.match(JSON.stringify(chart.spec.title), /geometric mean of ours \/ cuBLAS: 0\.45/);
  assert.ok(allCharts(record).charts.some((c) => c.name === "suite"));
});

/** The data rows of every view of a vega-lite spec, at any depth. */
function dataRows(spec: unknown): Record<string, unknown>[][] {
  if (typeof spec !== "object" || spec === null) return [];
  const found: Record<string, unknown>[][] = [];
  for (const [key, value] of Object.entries(spec)) {
    if (key === "data" && typeof value === "object" && value && "values" in value) {
      found.push((value as { values: Record<string, unknown>[] }).values);
    } else found.push(...dataRows(value));
  }
  return found;
}

Deno.test("intensity: one row per point drawn, however many tile configurations share it", async () => {
  const ladder = KERNELS.filter((k) => !k.demo);
  const rows = modeledIntensity(ladder, [1024, 4096]);
  const chart = intensityChart(rows);
  const [ticks, defaults] = dataRows(chart.spec);
  assert.equal(defaults.length, rows.filter((r) => r.isDefault).length);
  assert.deepEqual(ticks, intensityPoints(rows));
  const keys = ticks.map((t) => `${t.title} ${t.n} ${(t.intensity as number).toPrecision(3)}`);
  assert.equal(new Set(keys).size, ticks.length, "no two ticks the same point");
  assert.equal(ticks.reduce((sum, t) => sum + (t.configs as number), 0), rows.length);
  assert.ok(
    ticks.length < rows.length / 5,
    `${ticks.length} ticks for ${rows.length} configurations`,
  );
  const svg = await chartSvg(chart);
  assert.equal(countRole(svg, "tick"), ticks.length);
  assert.equal(countRole(svg, "point"), defaults.length);
});

Deno.test("scaling: lines join multiples of 4; 4095 and 4097 stand apart beside 4096", async () => {
  const sizes = [2048, 4095, 4096, 4097, 8192];
  const row = (n: number, gflops: number) => measuredRow({ m: n, k: n, n }, gflops);
  const record = syntheticRecord(
    sizes.map((n) => ({ ...row(n, n % 4 ? 20 : 40), kernel: "07_vectorize", title: "Vec" })),
    sizes.map((n) => ({ ...row(n, n % 4 ? 5 : 50), peer: "tfjs-webgpu", title: "TF.js" })),
  );
  const chart = scalingChart(record);
  const [line, apart] = dataRows(chart.spec);
  assert.deepEqual([...new Set(line.map((r) => r.n))], [2048, 4096, 8192]);
  assert.deepEqual([...new Set(apart.map((r) => r.n))].sort(), [4095, 4096, 4097]);
  const svg = await chartSvg(chart);
  assert.equal(countRole(svg, "line mark"), 2, "one line per series");
  assert.equal(countRole(svg, "point"), line.length + apart.length);
  const texts = svgTexts(svg);
  for (const label of ["2,048", "4,096", "8,192", "4095", "4096", "4097"]) {
    assert.ok(texts.includes(label), `axis label ${label}`);
  }
  assert.ok(!texts.includes("4,095") && !texts.includes("4,097"), "no odd size on the lines' axis");
  // Without odd sizes, one panel of lines and nothing apart.
  const squares = { ...record, results: record.results.filter((r) => r.n % 4 === 0), peers: [] };
  assert.equal(dataRows(scalingChart(squares).spec).length, 1);
});

Deno.test("builders refuse records with nothing measured", () => {
  const empty = {
    schema: RECORD_SCHEMA,
    date: new Date().toISOString(),
    commit: "none",
    deno: Deno.version.deno,
    device: { description: "none" },
    results: [],
    peers: [],
    notes: [],
  } as unknown as RunRecord;
  assert.throws(() => rooflineChart(empty), /no measured/);
  assert.throws(() => ladderChart(empty), /no measured/);
  assert.throws(() => scalingChart(empty), /no measured/);
  assert.throws(() => cpuChart({}), /no CPU/);
  assert.throws(() => autotuneChart([{ params: { WG: 8 }, validated: false }]), /no measured/);
  const { charts, skipped } = allCharts(empty);
  assert.deepEqual(charts, []);
  assert.deepEqual(skipped.map((s) => s.name), [
    "roofline",
    "ceilings",
    "ladder",
    "bound",
    "scaling",
    "intensity",
    "cpu",
    "tuning",
  ]);
});

Deno.test("chart builders import neither the renderer nor the notebook wing", async () => {
  const dir = new URL("../lib/charts/", import.meta.url);
  const renderer = new URL("../lib/render.ts", import.meta.url).href;
  const wing = new URL("../lib/notebook/", import.meta.url).href;
  let read = 0;
  for await (const entry of Deno.readDir(dir)) {
    if (!entry.name.endsWith(".ts")) continue;
    const file = new URL(entry.name, dir);
    const source = await Deno.readTextFile(file);
    const imported = [...source.matchAll(/\b(?:from|import)\s*\(?\s*"([^"]+)"/g)]
      .map((m) => new URL(m[1], file).href);
    read += imported.length;
    for (const href of imported) {
      assert.ok(
        href !== renderer && !href.startsWith(wing),
        `lib/charts/${entry.name} imports ${href}`,
      );
    }
  }
  assert.ok(read > 10, `only ${read} imports read in lib/charts/`);
});

Deno.test("PNG: 2x scale, decodes, not blank, text drawn with the embedded fonts", async () => {
  const { record } = await liveRun();
  const chart = ladderChart(record);
  const svg = await chartSvg(chart);
  const width = Number(/<svg[^>]*width="(\d+)"/.exec(svg)![1]);
  const img = await assertPngNotBlank(await chartPng(chart), 100);
  assert.equal(img.width, 2 * width);
  // The same chart with its text removed differs: the labels really were rasterised.
  const bare = await decodePng(await svgToPng(svg.replace(/<text[^>]*>[^<]*<\/text>/g, "")));
  let differing = 0;
  for (let i = 0; i < img.pixels.length; i++) if (img.pixels[i] !== bare.pixels[i]) differing++;
  assert.ok(differing > 1000, `only ${differing} bytes differ without text`);
});

/** The PNG of a notebook bundle, decoded from its base64. */
const bundlePng = (bundle: Record<string, unknown>) =>
  Uint8Array.from(atob(bundle["image/png"] as string), (c) => c.charCodeAt(0));

Deno.test("notebook bundles: vega-lite JSON + SVG + PNG at the SVG's size, plotly JSON + PNG", async () => {
  const { record } = await liveRun();
  const vl = await chartBundle(ladderChart(record));
  assert.ok("application/vnd.vegalite.v5+json" in vl);
  const svg = vl["image/svg+xml"] as string;
  assert.match(svg, /^<svg/);
  const svgWidth = Number(/<svg[^>]*width="([\d.]+)"/.exec(svg)![1]);
  const { width } = await assertPngNotBlank(bundlePng(vl), 100);
  assert.equal(width, Math.ceil(svgWidth), "the PNG is drawn at the size the chart is shown");
  const trials = record.tuning![0].trials;
  const pl = await chartBundle(autotuneChart(trials));
  assert.equal(
    (pl["application/vnd.plotly.v1+json"] as { data: { type: string }[] }).data[0].type,
    "heatmap",
  );
  const heatmap = await assertPngNotBlank(bundlePng(pl), 100);
  const fallback = await chartSvg(autotuneChart(trials));
  assert.equal(heatmap.width, Math.ceil(Number(/<svg[^>]*width="([\d.]+)"/.exec(fallback)![1])));
});

/**
 * Open an HTML file in headless Chromium once: the DOM after the scripts ran (the page writes
 * thrown errors into it as #chart-error), every console line (stderr logging), a screenshot.
 */
async function openInChromium(htmlPath: string, dir: string) {
  const shotPath = `${dir}/shot.png`;
  const out = await new Deno.Command("chromium", {
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--hide-scrollbars",
      "--enable-logging=stderr",
      "--v=0",
      "--virtual-time-budget=5000",
      "--window-size=1000,900",
      `--user-data-dir=${dir}/profile`,
      "--dump-dom",
      `--screenshot=${shotPath}`,
      `file://${htmlPath}`,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    dom: new TextDecoder().decode(out.stdout),
    console: new TextDecoder().decode(out.stderr).split("\n").filter((l) => l.includes(":CONSOLE")),
    screenshot: await Deno.readFile(shotPath),
  };
}

Deno.test("HTML exports open offline in headless Chromium without console errors", async () => {
  const { record } = await liveRun();
  const dir = await Deno.makeTempDir({ prefix: "gemm-charts-" });
  try {
    const { files, skipped } = await exportCharts(record, dir);
    assert.deepEqual(skipped, []);
    const names = [...new Set(files.map((f) => f.chart))];
    assert.deepEqual(names, [
      "roofline",
      "ceilings",
      "ladder",
      "bound",
      "scaling",
      "intensity",
      "cpu",
      "tuning",
    ]);
    for (const f of files.filter((f) => f.format === "png")) {
      await assertPngNotBlank(await Deno.readFile(f.path), 100);
    }
    for (const f of files.filter((f) => f.format === "html")) {
      const html = await Deno.readTextFile(f.path);
      assert.doesNotMatch(
        html,
        /<script[^>]+src=|<link[^>]+href=/,
        `${f.chart}: external resource`,
      );
      const page = await openInChromium(f.path, dir);
      assert.match(page.dom, /data-rendered="true"/, `${f.chart}: chart did not finish drawing`);
      assert.doesNotMatch(page.dom, /id="chart-error"/, `${f.chart}: error in page`);
      assert.deepEqual(page.console, [], `${f.chart}: console output`);
      assert.match(page.dom, /<svg/, `${f.chart}: no SVG drawn`);
      await assertPngNotBlank(page.screenshot, 500);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("HTML check catches a chart that fails to draw", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gemm-charts-" });
  try {
    const broken = { kind: "vega-lite", name: "broken", spec: { mark: "no-such-mark" } };
    const path = `${dir}/broken.html`;
    await Deno.writeTextFile(path, await chartHtml(broken as unknown as Chart));
    const page = await openInChromium(path, dir);
    assert.match(page.dom, /id="chart-error"/);
    assert.doesNotMatch(page.dom, /data-rendered="true"/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("export flags", () => {
  assert.deepEqual(parseExportArgs([]), { out: "exports" });
  assert.deepEqual(parseExportArgs(["--run", "a.json", "--out=x"]), { run: "a.json", out: "x" });
  assert.throws(() => parseExportArgs(["--bogus"]), /unknown argument/);
  assert.throws(() => parseExportArgs(["--run"]), /needs a value/);
});

Deno.test("ceilings: every trial measured, the best reported, roofs above every kernel", async () => {
  const { record } = await liveRun();
  const c = record.ceilings!;
  assert.ok(c.bandwidthGBs > 0 && c.fp32Gflops > 0);
  assert.equal(c.bandwidthGBs, Math.max(...c.bandwidthTrials!.map((t) => t.gbs)));
  assert.equal(c.fp32Gflops, Math.max(...c.fp32Trials!.map((t) => t.gflops)));
  assert.deepEqual(new Set(c.bandwidthTrials!.map((t) => t.kernel)), new Set(["copy", "read"]));
  // A kernel above the FP32 roof would mean the microbenchmark missed the real peak.
  for (const r of record.results.filter((r) => r.validated)) {
    assert.ok(r.gflops! <= c.fp32Gflops, `${r.kernel} at ${r.n} beats the FP32 ceiling`);
  }
});

/** The committed GPU-host records the notebooks and the export show. */
const H200_RECORDS = [
  "nvidia-h200-2026-11-23T1828.json",
  "nvidia-h200-2026-11-23T1835.json",
  "nvidia-h200-2026-11-26T0725.json",
];

/** Every color encoding of a spec, at any depth (layers, concatenations). */
function colorEncodings(spec: unknown): Record<string, unknown>[] {
  if (typeof spec !== "object" || spec === null) return [];
  const found: Record<string, unknown>[] = [];
  for (const [key, value] of Object.entries(spec)) {
    if (key === "color" && typeof value === "object" && value && "field" in value) {
      found.push(value as Record<string, unknown>);
    }
    found.push(...colorEncodings(value));
  }
  return found;
}

Deno.test("charts of the H200 records fit a 900 px output area, legends uncut, colours unique", async () => {
  for (const file of H200_RECORDS) {
    const record = await loadRecord(new URL(`../data/runs/${file}`, import.meta.url));
    for (const chart of allCharts(record).charts) {
      const svg = await chartSvg(chart);
      const width = Number(/<svg[^>]*width="([\d.]+)"/.exec(svg)![1]);
      assert.ok(width <= MAX_CHART_PX, `${file} ${chart.name}: ${width} px wide`);
      assert.doesNotMatch(svg, /…/, `${file} ${chart.name}: a label was cut short`);
      const spec = chart.kind === "plotly" ? chart.fallback : chart.spec;
      for (const color of colorEncodings(spec)) {
        if (color.type !== "nominal" || color.legend === null) continue;
        const legend = color.legend as { labelLimit?: number } | undefined;
        if (chart.name === "roofline" || chart.name === "scaling") {
          assert.ok((legend?.labelLimit ?? 0) >= 400, `${chart.name}: legend labelLimit`);
          const scale = color.scale as { domain: string[]; range: string[] };
          assert.equal(new Set(scale.range).size, scale.domain.length, `${chart.name}: colours`);
        }
      }
      if (chart.kind === "plotly") {
        const { width: shown } = await decodePng(bundlePng(await chartBundle(chart)));
        assert.ok(shown <= MAX_CHART_PX, `${chart.name}: PNG shown ${shown} px wide`);
      }
    }
  }
});

// Reported as ignored (with the reason on the console), never passed, without shader-f16.
const hasF16 = (await acquireGpu()).has("shader-f16");
if (!hasF16) console.log("roofline f16 test ignored: this adapter has no shader-f16");
Deno.test({
  name: "roofline: f16 roof drawn when measured, the f16 kernel bounded by it",
  ignore: !hasF16,
}, async () => {
  const { record } = await liveRun();
  const f16 = KERNELS.find((k) => k.precision === "f16" && !k.demo)!;
  const n = Math.max(...SIZES);
  const result = await runKernel(liveGpu!, f16, { m: n, k: n, n }, { budgetMs: 10 });
  assert.ok(result.validated && record.ceilings?.f16Gflops, "f16 kernel and f16 ceiling measured");
  const withF16 = { ...record, results: [...record.results, result] };
  const chart = rooflineChart(withF16);
  const layers = (chart.spec as { layer: { data: { values: Record<string, unknown>[] } }[] })
    .layer;
  const rows = layers.flatMap((l) => l.data.values);
  const c = record.ceilings;
  assert.ok(rows.some((r) => r.roof === "f16" && r.gflops === c.f16Gflops), "no f16 roof");
  const point = rows.find((r) => r.role === "kernel" && r.precision === "f16")!;
  assert.equal(point.intensity, result.intensity, "its own (2-byte) modeled intensity");
  assert.equal(
    point.boundGflops,
    Math.min(c.f16Gflops!, c.bandwidthGBs * result.intensity),
  );
  const svg = await chartSvg(chart);
  assert.ok(svgTexts(svg).some((t) => /f16 (\(vec2\) )?[\d,.]+( GFLOP\/s)?$/.test(t)));
  assert.equal(countRole(svg, "line mark"), 2, "FP32 and f16 roofs");
});

Deno.test("roofline: roofs within 1.26x share a ridge label and keep their labels apart", () => {
  // Synthetic ceilings, f16 1.06x FP32 as the H200's measured ones; one f16 kernel under them.
  const record = {
    schema: 1,
    date: "2026-01-01T00:00:00Z",
    commit: "abcdef1234567",
    deno: "2.9.6",
    device: { description: "Test GPU", software: false, features: [], limits: {} },
    ceilings: { bandwidthGBs: 1000, fp32Gflops: 10000, f16Gflops: 10600 },
    results: [{
      kernel: "14_f16",
      title: "f16",
      m: 512,
      k: 512,
      n: 512,
      params: {},
      validated: true,
      gflops: 5000,
      intensity: 60,
      modelBytes: 1,
      seed: 1,
    }],
    peers: [],
    notes: [],
  } as unknown as RunRecord;
  const layers = (rooflineChart(record).spec as {
    layer: { data: { values: Record<string, unknown>[] } }[];
  }).layer;
  const texts = layers.flatMap((l) => l.data.values.map((r) => r.text)).filter(Boolean);
  assert.ok(texts.includes("FP32 10,000 · f16 10,600"), "one roof label");
  assert.ok(texts.includes("ridge 10 (f16 10.6) FLOP/B"), "one ridge label");
  assert.ok(!texts.some((t) => /^(FP32 10,000 GFLOP|f16 ridge|f16 \(vec2\))/.test(String(t))));
});

Deno.test("roofline: labels in one column never overlap", async () => {
  const record = await loadRecord(new URL(`../data/runs/${H200_RECORDS[0]}`, import.meta.url));
  const spec = rooflineChart(record).spec as {
    height: number;
    layer: { mark: { type: string }; data: { values: Record<string, number | string>[] } }[];
  };
  const labels = spec.layer.filter((l) => l.mark.type === "text")
    .flatMap((l) => l.data.values).filter((v) => "labelGflops" in v);
  assert.ok(labels.length >= 12);
  const columns = Map.groupBy(labels, (l) => l.labelIntensity);
  for (const column of columns.values()) {
    const ys = column.map((l) => Math.log10(l.labelGflops as number)).sort((a, b) => a - b);
    // 13 px at this chart's vertical decades.
    for (let i = 1; i < ys.length; i++) assert.ok(ys[i] - ys[i - 1] > 0.05, `${ys}`);
  }
});

Deno.test("roofline: two runs of one device and day stay two runs, their shared roofs labelled once", async () => {
  const recorded = await loadRecord(new URL(`../data/runs/${H200_RECORDS[0]}`, import.meta.url));
  // A live run beside it: same device and day, its bandwidth 2% off, its peers at their places.
  const live = structuredClone(recorded);
  live.ceilings = { ...recorded.ceilings!, bandwidthGBs: recorded.ceilings!.bandwidthGBs * 1.02 };
  const spec = rooflineChart([recorded, live]).spec as {
    layer: {
      mark: { type: string; filled?: boolean };
      data: { values: Record<string, unknown>[] };
    }[];
  };
  const pointLayers = spec.layer.filter((l) =>
    l.mark.type === "point" && l.data.values.some((v) => "role" in v)
  );
  assert.equal(pointLayers.length, 2, "filled and hollow points");
  assert.deepEqual(pointLayers.map((l) => l.mark.filled), [true, false], "filled, then hollow");
  const [first, second] = pointLayers.map((l) => new Set(l.data.values.map((v) => v.source)));
  assert.equal(first.size, 1);
  assert.ok(!second.has([...first][0]), "each layer holds one run's points, not both");
  const texts = spec.layer.filter((l) => l.mark.type === "text")
    .flatMap((l) => l.data.values.map((v) => v.text)).filter(Boolean) as string[];
  for (const pattern of [/^ridge /, /GB\/s$/, /^FP32 /]) {
    assert.equal(texts.filter((t) => pattern.test(t)).length, 1, `one label like ${pattern}`);
  }
  const tags = spec.layer.filter((l) => l.mark.type === "text")
    .flatMap((l) => l.data.values.map((v) => v.tag)).filter(Boolean);
  assert.equal(tags.filter((t) => t === "cuBLAS").length, 1, "a peer named once");
});
