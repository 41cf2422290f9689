/**
 * Measuring the CPU side: every CPU matmul is validated against the float64 reference on fresh
 * inputs before it is timed; the block-size sweep (the lecture's chart) and the suite the bench
 * and the CPU notebook run (the CPU ladder, OpenBLAS 1 thread and all, jax-js's CPU backend).
 */
import { blockedWith, type CpuMatmul, cpuModelRows, timeCpu } from "./cpu.ts";
import { CPU_LADDER } from "./cpu_ladder.ts";
import { cacheSizes, defaultBlocks, hasRelaxedSimd } from "./cpu_simd.ts";
import { commandOutput } from "./platform.ts";
import { CpuThreads } from "./cpu_threads.ts";
import { runJaxCpu } from "./peers/jaxjs.ts";
import { freshSeed, type Shape } from "./matrix.ts";
import { timerNumbers, validateThenTime } from "./measure.ts";
import { openOpenBlas } from "./peers/openblas.ts";
import type { CpuMachine, CpuRecord, CpuResult, PeerResult, SweepRow } from "./record.ts";
import { F32_NUMERICS } from "./accuracy.ts";

/** Pause after the peers' threaded runs before our next rungs (OpenBLAS's threads spin idle). */
const PEER_PAUSE_MS = 1000;

/** Every wall-clock CPU row says so: GPU rows use timestamp-query instead. */
const CPU_TIMER = "performance.now (CPU)";

/** Timing knobs shared by the sweep and the suite. */
export interface CpuRunOptions {
  /** Timed calls per row (default 3), cut short after `budgetMs` (default 4000) of timing. */
  reps?: number;
  budgetMs?: number;
  /** Called after each row, awaited (notebooks update a chart in place). */
  onRow?: (row: SweepRow | CpuResult | PeerResult) => void | Promise<void>;
}

/** Validate `fn` on fresh inputs (sampled rows for large N), then time it on the same inputs. */
export function measureCpu(
  fn: CpuMatmul,
  shape: Shape,
  opts: CpuRunOptions = {},
): Promise<Omit<CpuResult, "id" | "impl">> {
  let inputs: { a: Float32Array; b: Float32Array } | undefined;
  return validateThenTime(
    { ...shape, relErr: NaN, validated: false, timer: CPU_TIMER, seed: freshSeed() },
    {
      numerics: F32_NUMERICS,
      compute: (a, b) => {
        inputs = { a, b };
        // This first call is also the JIT warm-up for the timed calls.
        return fn(a, b, shape);
      },
      time: async () =>
        timerNumbers(
          await timeCpu(fn, shape, opts.reps ?? 3, {
            ...inputs,
            warmup: 0,
            budgetMs: opts.budgetMs ?? 4000,
          }),
        ),
    },
  );
}

/** The lecture's chart: blocked matmul GFLOP/s for every (N, block), each row validated. */
export async function sweepBlockSizes(
  sizes: readonly number[],
  blocks: readonly number[],
  opts: CpuRunOptions = {},
): Promise<SweepRow[]> {
  const rows: SweepRow[] = [];
  for (const n of sizes) {
    for (const block of blocks) {
      const r = await measureCpu(blockedWith(block), { m: n, k: n, n }, opts);
      const row: SweepRow = {
        n,
        block,
        gflops: r.gflops ?? NaN,
        medianMs: r.medianMs ?? NaN,
        minMs: r.minMs ?? NaN,
        maxMs: r.maxMs ?? NaN,
        reps: r.reps ?? 0,
        relErr: r.relErr,
        validated: r.validated,
        seed: r.seed,
        ...(r.error ? { error: r.error } : {}),
      };
      rows.push(row);
      await opts.onRow?.(row);
    }
  }
  return rows;
}

/** The fastest validated block at size n in a sweep, if any. */
export function bestBlock(sweep: readonly SweepRow[], n: number): SweepRow | undefined {
  return sweep.filter((r) => r.n === n && r.validated)
    .reduce<SweepRow | undefined>(
      (best, r) => (!best || r.gflops > best.gflops ? r : best),
      undefined,
    );
}

/** The threaded rung at one thread count (a row of the thread sweep). */
export interface ThreadSweepRow extends CpuResult {
  threads: number;
}

/**
 * Thread counts worth timing on this machine: powers of two up to its logical cores, with the
 * physical core count and the logical count themselves.
 */
export function threadCounts(machine: CpuMachine = cpuHost()): number[] {
  const counts = new Set<number>();
  for (let t = 1; t < machine.logicalCores; t *= 2) counts.add(t);
  if (machine.physicalCores) counts.add(machine.physicalCores);
  counts.add(machine.logicalCores);
  return [...counts].sort((a, b) => a - b);
}

/**
 * The threaded rung (WebAssembly SIMD, rows of C split over workers) at each thread count and
 * size, each row validated before it is timed: how speed grows with cores, and where it stops.
 */
export async function sweepThreads(
  sizes: readonly number[],
  counts: readonly number[] = threadCounts(),
  opts: CpuRunOptions = {},
): Promise<ThreadSweepRow[]> {
  const threaded = CPU_LADDER.find((s) => s.id === "threads")!;
  const rows: ThreadSweepRow[] = [];
  for (const threads of counts) {
    const pool = await CpuThreads.start(threads);
    try {
      for (const n of sizes) {
        const row: ThreadSweepRow = {
          id: threaded.id,
          impl: threaded.title,
          threads,
          ...await measureCpu(threaded.matmul(pool)!, { m: n, k: n, n }, opts),
        };
        rows.push(row);
        await opts.onRow?.(row);
      }
    } finally {
      pool.close();
    }
  }
  return rows;
}

export interface CpuSuiteOptions extends CpuRunOptions {
  /** Square sizes, ascending (default 256, 512, 1024, 2048). */
  sizes?: number[];
  /**
   * A rung is skipped at a size where its time at the size before, scaled by N³, passes this
   * many seconds per call (default 20): naive ijk stops where it would take minutes.
   */
  maxSeconds?: number;
  /** Rungs to run, by id (default: the whole CPU ladder). */
  steps?: string[];
  /** Run OpenBLAS 1 thread and all threads (default true). */
  openblas?: boolean;
  /** Run jax-js's WebAssembly backend (default true). */
  jax?: boolean;
  /** Threads of the threaded rung (default: one per core). */
  threads?: number;
}

/** The suite's output: the record's `cpu` field and the peers' rows for its `peers`. */
export interface CpuSuite {
  cpu: CpuRecord;
  peers: PeerResult[];
}

/**
 * The CPU ladder (lib/cpu_ladder.ts), OpenBLAS with 1 and all threads, and jax-js's CPU backend
 * at each size; every row validated against float64 before it is timed.
 */
export async function runCpuSuite(opts: CpuSuiteOptions = {}): Promise<CpuSuite> {
  const sizes = opts.sizes ?? [256, 512, 1024, 2048];
  const steps = CPU_LADDER.filter((s) => !opts.steps || opts.steps.includes(s.id));
  const cpu: CpuRecord = {
    machine: cpuHost(),
    impls: [],
    sweep: [],
    model: cpuModelRows(sizes),
    notes: [],
  };
  cpu.machine.blocks = defaultBlocks();
  cpu.machine.relaxedSimd = hasRelaxedSimd();
  const peers: PeerResult[] = [];
  const blas = opts.openblas === false
    ? { available: false as const, reason: "OpenBLAS not run (disabled)" }
    : openOpenBlas();
  if (!blas.available) cpu.notes.push(blas.reason);
  else cpu.notes.push(`OpenBLAS: ${blas.peer.path} (${blas.peer.config})`);
  let pool: CpuThreads | undefined;
  if (steps.some((s) => s.id === "threads")) {
    try {
      pool = await CpuThreads.start(opts.threads);
      cpu.machine.threads = pool.threads;
    } catch (e) {
      cpu.notes.push(`threads not run: ${(e as Error).message}`);
    }
  }
  const maxMs = (opts.maxSeconds ?? 20) * 1000;
  const last = new Map<string, { n: number; ms: number }>();
  try {
    for (const n of sizes) {
      const shape = { m: n, k: n, n };
      for (const step of steps) {
        const fn = step.matmul(pool);
        const before = last.get(step.id);
        if (!fn) continue;
        if (before && before.ms * (n / before.n) ** 3 > maxMs) {
          cpu.notes.push(
            `${step.title} not run at N=${n}: about ${
              Math.round(before.ms * (n / before.n) ** 3 / 1000)
            } s a call at its last size's rate (limit ${maxMs / 1000} s)`,
          );
          continue;
        }
        const r: CpuResult = {
          id: step.id,
          impl: step.title,
          ...await measureCpu(fn, shape, opts),
        };
        if (r.medianMs) last.set(step.id, { n, ms: r.medianMs });
        cpu.impls.push(r);
        await opts.onRow?.(r);
      }
      // OpenBLAS's idle threads spin for a while after a call: its all-threads run goes last,
      // and the next size's rungs start after a pause.
      const timing = { reps: opts.reps, budgetMs: opts.budgetMs };
      const runs: (() => Promise<PeerResult>)[] = [];
      if (blas.available) runs.push(() => blas.peer.run(shape, { threads: 1, ...timing }));
      if (opts.jax !== false) runs.push(() => runJaxCpu(shape, timing));
      if (blas.available) runs.push(() => blas.peer.run(shape, { threads: "all", ...timing }));
      for (const run of runs) {
        const r = await run();
        peers.push(r);
        await opts.onRow?.(r);
      }
      if (runs.length) await new Promise((resolve) => setTimeout(resolve, PEER_PAUSE_MS));
    }
  } finally {
    if (blas.available) blas.peer.close();
    pool?.close();
  }
  return { cpu, peers };
}

/** This machine's CPU model, core counts, caches and load (from lscpu, getconf and uptime). */
export function cpuHost(): CpuMachine {
  const machine: CpuMachine = {
    model: "unknown",
    logicalCores: navigator.hardwareConcurrency,
    v8: Deno.version.v8,
    threads: 1,
    caches: cacheSizes(),
  };
  // Deno reads /proc only with --allow-all, so the model comes from lscpu and the load from
  // uptime (each with --allow-run); without them both stay unknown.
  const lscpu = commandOutput("lscpu", []).text;
  const model = lscpu?.match(/^Model name:\s*(.+)$/m)?.[1]?.trim();
  if (model) machine.model = model;
  // The physical cores under this process's logical ones, from lscpu's threads per core (the
  // host's count would mislead where the process is pinned to some of its cores; a virtual
  // machine reports its own topology).
  const threadsPerCore = Number(lscpu?.match(/^Thread\(s\) per core:\s*(\d+)$/m)?.[1]);
  if (threadsPerCore > 0) {
    machine.physicalCores = Math.max(1, Math.round(machine.logicalCores / threadsPerCore));
  }
  const load = commandOutput("uptime", []).text?.match(/load average:\s*([\d.]+)/)?.[1];
  if (load) machine.loadAverage = Number(load);
  return machine;
}
