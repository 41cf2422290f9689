/**
 * Teaching demonstrations the notebooks run live: Deno's sync floor against GPU timestamps,
 * WebGPU's workgroup-size validation, which addresses a subgroup touches under each index
 * mapping, and what happens to a tiled kernel when a dimension is not a tile multiple.
 */
import { GemmError } from "./errors.ts";
import { type Gpu, loadKernelSource } from "./gpu.ts";
import type { CpuSuite } from "./cpu_bench.ts";
import type { KernelResult, SweepRow } from "./record.ts";
import { randomMatrix, type Shape, shapeLabel } from "./matrix.ts";
import { type EdgePlan, edgePlan, STRIP_WIDTH } from "./kernels/cost.ts";
import { recordedGpuRun } from "./notebook_records.ts";
import { type Cell, fmt, kernel, type Session, showNote, showTable } from "./notebook.ts";
import type { KernelSpec } from "./registry.ts";
import { BoundProblem, checkKernelFits, kernelParams, prepareKernel, runKernel } from "./runner.ts";
import { median, timePasses } from "./timing.ts";

// ---------------------------------------------------------------------------------------------
// Why timing happens on the GPU.

/** Wall-clock and GPU-timestamp measurements of the same small dispatch. */
export interface SyncFloor {
  shape: Shape;
  /** Wall clock of submit + onSubmittedWorkDone with an empty command buffer. */
  emptyWallMs: number[];
  /** Wall clock of submit + onSubmittedWorkDone around one dispatch. */
  oneWallMs: number[];
  /** Wall clock of one submit holding `batch` dispatches, divided by `batch`. */
  batchedWallMs: number;
  batch: number;
  /** The dispatch's own duration from timestamp queries (median). */
  timestampMs: number;
}

/**
 * Time one small matmul three ways: wall clock around a single submit (what a naive benchmark
 * does), wall clock over a batch, and GPU timestamps. The single-submit wall clock is mostly
 * Deno's queue synchronisation, which an empty submit shows on its own.
 */
export async function measureSyncFloor(
  gpu: Gpu,
  n = 64,
  reps = 12,
  batch = 64,
): Promise<SyncFloor> {
  const shape = { m: n, k: n, n };
  const spec = kernel("02_naive");
  const problem = await BoundProblem.create(
    gpu,
    await prepareKernel(gpu, spec),
    shape,
    randomMatrix(n, n),
    randomMatrix(n, n),
  );
  const { device } = gpu;
  const submit = async (dispatches: number) => {
    const enc = device.createCommandEncoder();
    if (dispatches > 0) {
      const pass = enc.beginComputePass();
      for (let i = 0; i < dispatches; i++) problem.encode(pass);
      pass.end();
    }
    const t0 = performance.now();
    device.queue.submit([enc.finish()]);
    await device.queue.onSubmittedWorkDone();
    return performance.now() - t0;
  };
  try {
    await submit(1); // warm-up: first use compiles and allocates
    const emptyWallMs: number[] = [];
    const oneWallMs: number[] = [];
    for (let i = 0; i < reps; i++) emptyWallMs.push(await submit(0));
    for (let i = 0; i < reps; i++) oneWallMs.push(await submit(1));
    const batchedWallMs = (await submit(batch)) / batch;
    const t = await timePasses(gpu, (pass) => problem.encode(pass), { reps: 32 });
    return { shape, emptyWallMs, oneWallMs, batchedWallMs, batch, timestampMs: t.medianMs };
  } finally {
    problem.destroy();
  }
}

/** Show the three timings of measureSyncFloor side by side. */
export async function showSyncFloor(f: SyncFloor): Promise<void> {
  await showTable(["what was timed", "how", "ms (median)"], [
    ["empty submit, then wait", "wall clock", median(f.emptyWallMs)],
    [`one ${shapeLabel(f.shape)} matmul, then wait`, "wall clock", median(f.oneWallMs)],
    [`${f.batch} matmuls in one submit, then wait`, `wall clock / ${f.batch}`, f.batchedWallMs],
    [`one ${shapeLabel(f.shape)} matmul`, "GPU timestamps", f.timestampMs],
  ], "Timing the same small kernel three ways");
  const floor = median(f.emptyWallMs);
  await showNote(
    `An empty submit-and-wait already costs **${fmt(floor)} ms** here, and a single ` +
      `${shapeLabel(f.shape)} matmul timed that way reads **${fmt(median(f.oneWallMs))} ms**, ` +
      `while the GPU timestamps put the kernel itself at **${fmt(f.timestampMs)} ms**. ` +
      `Timed one submit at a time, the kernel would look ` +
      `${fmt(median(f.oneWallMs) / f.timestampMs)}x slower than it is.`,
  );
}

// ---------------------------------------------------------------------------------------------
// Workgroup size limits.

/** What WebGPU said about one workgroup size. */
export interface WorkgroupTrial {
  size: [number, number];
  invocations: number;
  /** Undefined when accepted; otherwise WebGPU's own validation message. */
  error?: string;
}

/**
 * Ask WebGPU for compute pipelines with literal `@workgroup_size(x, y)` and report each answer
 * raw: accepted, or the validation error text.
 */
export async function tryWorkgroupSizes(
  gpu: Gpu,
  sizes: [number, number][],
): Promise<WorkgroupTrial[]> {
  const { device } = gpu;
  const trials: WorkgroupTrial[] = [];
  for (const [x, y] of sizes) {
    const module = device.createShaderModule({
      code: `@compute @workgroup_size(${x}, ${y}) fn main() {}`,
    });
    device.pushErrorScope("validation");
    device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: "main" } });
    const error = await device.popErrorScope();
    trials.push({ size: [x, y], invocations: x * y, error: error?.message });
  }
  return trials;
}

/** Show workgroup trials with the device's limits. */
export async function showWorkgroupTrials(gpu: Gpu, trials: WorkgroupTrial[]): Promise<void> {
  const lim = gpu.device.limits;
  await showTable(
    ["@workgroup_size", "invocations", "WebGPU says"],
    trials.map((t) => [`(${t.size[0]}, ${t.size[1]})`, t.invocations, t.error ?? "accepted"]),
    `Limits of this device: maxComputeInvocationsPerWorkgroup = ` +
      `${lim.maxComputeInvocationsPerWorkgroup}, maxComputeWorkgroupSizeX/Y = ` +
      `${lim.maxComputeWorkgroupSizeX}/${lim.maxComputeWorkgroupSizeY}`,
  );
}

/**
 * The same request through an `override` constant (the way the ladder sets tile sizes): does
 * pipeline creation catch it, and what does the runner's own limit check say?
 */
export async function overrideWorkgroupCheck(
  gpu: Gpu,
  wg: number,
): Promise<{ pipelineError?: string; runnerError?: string }> {
  const spec = kernel("02_naive");
  const { device } = gpu;
  const module = device.createShaderModule({ code: await loadKernelSource(spec.file) });
  device.pushErrorScope("validation");
  device.createComputePipeline({
    layout: "auto",
    compute: { module, entryPoint: spec.entryPoint, constants: { WG: wg } },
  });
  const pipelineError = (await device.popErrorScope())?.message;
  let runnerError: string | undefined;
  try {
    checkKernelFits(gpu, spec, { ...spec.params, WG: wg });
  } catch (e) {
    runnerError = e instanceof GemmError ? `${e.name}: ${e.message}` : String(e);
  }
  return { pipelineError, runnerError };
}

// ---------------------------------------------------------------------------------------------
// Coalescing: which addresses one subgroup touches.

/** Addresses (in floats) the invocations of one subgroup touch at one step of the k loop. */
export interface AccessRow {
  mapping: string;
  matrix: "A" | "B" | "C";
  addresses: number[];
  /** Distinct 32-byte segments those addresses fall in. */
  segments: number;
}

/**
 * For `lanes` consecutive invocations (x = 0..lanes-1, y = 0) of an N x N problem at loop step
 * p, list what each mapping reads of A and B and writes of C. "x → row" is the naive kernel's
 * mapping, "x → column" the coalesced one. Pure index arithmetic: nothing is timed.
 */
export function subgroupAccesses(n: number, lanes: number, p = 0): AccessRow[] {
  const rows: AccessRow[] = [];
  const segment = (addrs: number[]) => new Set(addrs.map((a) => Math.floor((a * 4) / 32))).size;
  for (const mapping of ["x → row", "x → column"]) {
    const lane = Array.from({ length: lanes }, (_, x) => x);
    const rowOf = (x: number) => (mapping === "x → row" ? x : 0);
    const colOf = (x: number) => (mapping === "x → row" ? 0 : x);
    const a = lane.map((x) => rowOf(x) * n + p);
    const b = lane.map((x) => p * n + colOf(x));
    const c = lane.map((x) => rowOf(x) * n + colOf(x));
    for (const [matrix, addresses] of [["A", a], ["B", b], ["C", c]] as const) {
      rows.push({ mapping, matrix, addresses, segments: segment(addresses) });
    }
  }
  return rows;
}

/** Show subgroupAccesses as a table (addresses abbreviated when long). */
export async function showAccesses(rows: AccessRow[], n: number, lanes: number): Promise<void> {
  const list = (xs: number[]) =>
    xs.length <= 8 ? xs.join(", ") : `${xs.slice(0, 4).join(", ")}, ..., ${xs.at(-1)}`;
  const distinct = (xs: number[]) => new Set(xs).size;
  await showTable(
    ["mapping", "matrix", "float offsets touched", "distinct floats", "32-byte segments"],
    rows.map((r) => [r.mapping, r.matrix, list(r.addresses), distinct(r.addresses), r.segments]),
    `${lanes} neighbouring invocations, N = ${n}, one step of the k loop`,
  );
}

// ---------------------------------------------------------------------------------------------
// Shapes that are not tile multiples.

/** How one kernel deals with a shape, and what happens when the safety net is removed. */
export interface ShapeCheck {
  kernel: string;
  shape: Shape;
  /** "any size (bounds checks)" or the tile multiples the runner pads to. */
  handling: string;
  validated: boolean;
  relErr: number;
  /** With padding switched off: still correct, or the error the validation reported. */
  withoutPadding?: { validated: boolean; relErr: number; error?: string };
}

/**
 * Validate each kernel at `shape` as registered, and, for kernels that rely on the runner's
 * zero padding, once more with padding switched off, to show what the padding prevents.
 */
export async function checkShapes(
  s: Session,
  keys: string[],
  shape: Shape,
): Promise<ShapeCheck[]> {
  const out: ShapeCheck[] = [];
  for (const key of keys) {
    const spec = kernel(key);
    const al = spec.align(spec.params);
    const pads = al.m > 1 || al.n > 1 || al.k > 1;
    const r = await runKernel(s.gpu, spec, shape, { skipTiming: true });
    const check: ShapeCheck = {
      kernel: spec.id,
      shape,
      handling: (pads
        ? `runner pads M, N, K up to multiples of ${al.m}, ${al.n}, ${al.k}`
        : "any size (bounds checks in the kernel)") +
        (spec.edgeStrips ? `; 1-${STRIP_WIDTH} rows or columns past a tile: edge strips` : ""),
      validated: r.validated,
      relErr: r.relErr,
    };
    if (pads) {
      const unpadded: KernelSpec = { ...spec, align: () => ({ m: 1, n: 1, k: 1 }) };
      const u = await runKernel(s.gpu, unpadded, shape, { skipTiming: true });
      check.withoutPadding = { validated: u.validated, relErr: u.relErr, error: u.error };
    }
    out.push(check);
  }
  return out;
}

/** Show checkShapes results. */
export async function showShapeChecks(checks: ShapeCheck[]): Promise<void> {
  const rows: Cell[][] = checks.map((c) => [
    c.kernel,
    shapeLabel(c.shape),
    c.handling,
    c.validated,
    c.relErr,
    c.withoutPadding ? c.withoutPadding.validated : "n/a",
    c.withoutPadding?.relErr,
  ]);
  await showTable(
    [
      "kernel",
      "shape",
      "how it handles edges",
      "validated",
      "rel. error",
      "validated without padding",
      "rel. error without padding",
    ],
    rows,
    "Shapes that are not tile multiples",
  );
}

// ---------------------------------------------------------------------------------------------
// Thin edges: one more row of tiles for one row of C, or the edge-strip kernel.

/** One big-tile kernel one row and column past a tile multiple, with edge strips and without. */
export interface EdgeStripCheck {
  kernel: string;
  tile: { bm: number; bn: number };
  aligned: Shape;
  odd: Shape;
  plan: EdgePlan;
  /** Workgroups of tiles: every edge tile without strips, whole tiles only with them. */
  tilesWithout: number;
  tilesWith: number;
  atAligned: KernelResult;
  withStrips: KernelResult;
  withoutStrips: KernelResult;
}

/**
 * Run a kernel that allows edge strips (06-11) at a multiple of its tile, then one past it with
 * the strips and with bounds-checked edge tiles instead. Sizes near `n`, at least one tile.
 */
export async function checkEdgeStrips(s: Session, key: string, n: number): Promise<EdgeStripCheck> {
  const spec = kernel(key);
  if (!spec.edgeStrips) throw new GemmError("params", `${spec.id} has no edge strips`);
  const p = kernelParams(s.gpu, spec);
  const t = Math.max(p.BM, p.BN);
  const base = Math.max(1, Math.floor(n / t)) * t;
  const aligned = { m: base, k: base, n: base };
  const odd = { m: base + 1, k: base + 1, n: base + 1 };
  const run = (shape: Shape, edgeStrips: boolean) =>
    runKernel(s.gpu, spec, shape, { edgeStrips, budgetMs: s.software ? 300 : 400 });
  return {
    kernel: spec.id,
    tile: { bm: p.BM, bn: p.BN },
    aligned,
    odd,
    plan: edgePlan(odd, p.BM, p.BN),
    tilesWithout: Math.ceil(odd.m / p.BM) * Math.ceil(odd.n / p.BN),
    tilesWith: Math.floor(odd.m / p.BM) * Math.floor(odd.n / p.BN),
    atAligned: await run(aligned, true),
    withStrips: await run(odd, true),
    withoutStrips: await run(odd, false),
  };
}

/** Show checkEdgeStrips, and the GPU host's recorded 4096 and 4097 for the same kernel. */
export async function showEdgeStrips(c: EdgeStripCheck): Promise<void> {
  const ratio = (r: KernelResult) =>
    r.gflops && c.atAligned.gflops ? r.gflops / c.atAligned.gflops : undefined;
  const row = (what: string, r: KernelResult, tiles: number | string): Cell[] => [
    what,
    shapeLabel({ m: r.m, k: r.k, n: r.n }),
    tiles,
    r.validated,
    r.relErr,
    r.gflops,
    ratio(r),
  ];
  const tiles = (shape: Shape) => Math.ceil(shape.m / c.tile.bm) * Math.ceil(shape.n / c.tile.bn);
  await showTable(
    ["launch", "shape", "workgroups of tiles", "validated", "rel. error", "GFLOP/s", "x aligned"],
    [
      row("aligned", c.atAligned, tiles(c.aligned)),
      row("edge tiles (bounds-checked)", c.withoutStrips, c.tilesWithout),
      row("whole tiles + edge strips", c.withStrips, `${c.tilesWith} + strips`),
    ],
    `${c.kernel} (${c.tile.bm} x ${c.tile.bn} tiles) one past a tile multiple, on this adapter`,
  );
  const found = await recordedGpuRun();
  const at = (m: number) =>
    found?.record.results.find((r) =>
      r.kernel === c.kernel && r.m === m && r.k === m && r.n === m && r.validated
    );
  const [r4096, r4097] = [at(4096), at(4097)];
  if (!found || !r4096?.gflops || !r4097?.gflops) {
    await showNote("No GPU record with this kernel at 4096 and 4097 is committed yet.");
    return;
  }
  const how = r4097.edgeStrips ? "whole tiles plus edge strips" : "bounds-checked edge tiles";
  await showNote(
    `Recorded on ${found.record.device.description} (${found.record.date.slice(0, 10)}, commit ` +
      `${found.record.commit}): **${fmt(r4096.gflops)}** GFLOP/s at 4096 and ` +
      `**${fmt(r4097.gflops)}** at 4097 (${how}), **${fmt(r4097.gflops / r4096.gflops)}x**.`,
  );
}

// ---------------------------------------------------------------------------------------------
// The CPU side (measured by lib/cpu_bench.ts).

/** Show a block-size sweep as a table (block 0 = unblocked). */
export async function showSweep(rows: SweepRow[]): Promise<void> {
  await showTable(
    ["N", "block", "validated", "rel. error", "median ms", "GFLOP/s"],
    rows.map((r) => [r.n, r.block, r.validated, r.relErr, r.medianMs, r.gflops]),
    "Cache blocking: block-size sweep, one core (block 0 = unblocked)",
  );
}

/**
 * Show a CPU suite: our matmuls and OpenBLAS at each size, each as a multiple of naive ijk and
 * as a share of single-threaded OpenBLAS.
 */
export async function showCpuSuite(suite: CpuSuite): Promise<void> {
  const rows = [
    ...suite.cpu.impls.map((r) => ({ ...r, label: r.impl })),
    ...suite.peers.map((p) => ({
      ...p,
      label: p.peer === "openblas-1t" ? "OpenBLAS (1 thread)" : "OpenBLAS (all threads)",
    })),
  ];
  const at = (label: string, n: number) =>
    rows.find((r) => r.label === label && r.n === n && r.validated)?.gflops;
  await showTable(
    [
      "implementation",
      "N",
      "validated",
      "rel. error",
      "median ms",
      "GFLOP/s",
      "x naive ijk",
      "% of OpenBLAS 1t",
    ],
    rows.map((r) => {
      const naive = at("naive ijk", r.n);
      const blas = at("OpenBLAS (1 thread)", r.n);
      return [
        r.label,
        r.n,
        r.validated,
        r.relErr,
        r.medianMs,
        r.gflops,
        naive && r.gflops ? r.gflops / naive : undefined,
        blas && r.gflops ? (100 * r.gflops) / blas : undefined,
      ];
    }),
    `CPU matmuls on ${suite.cpu.machine.model} (${suite.cpu.machine.logicalCores} logical cores)`,
  );
  if (suite.cpu.notes.length) await showNote(suite.cpu.notes.map((n) => `- ${n}`).join("\n"));
}
