/**
 * Measuring the CPU side: every CPU matmul is validated against the float64 reference on fresh
 * inputs before it is timed; the block-size sweep (the lecture's chart) and the suite the bench
 * and the CPU notebook run (naive, ikj, blocked at its best block, OpenBLAS 1 thread and all).
 */
import {
  blockedWith,
  type CpuMatmul,
  cpuModelRows,
  ikjMatmul,
  naiveMatmul,
  timeCpu,
} from "./cpu.ts";
import { freshSeed, type Shape } from "./matrix.ts";
import { timerNumbers, validateThenTime } from "./measure.ts";
import { openOpenBlas } from "./peers/openblas.ts";
import type { CpuMachine, CpuRecord, CpuResult, PeerResult, SweepRow } from "./record.ts";
import { F32_NUMERICS } from "./accuracy.ts";

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
      time: () =>
        timerNumbers(
          timeCpu(fn, shape, opts.reps ?? 3, {
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

export interface CpuSuiteOptions extends CpuRunOptions {
  /** Square sizes (default 256, 512, 1024). */
  sizes?: number[];
  /** Blocks tried at each size to find the best (default 32, 64, 128, 256). */
  blocks?: number[];
  /** Run OpenBLAS 1 thread and all threads (default true). */
  openblas?: boolean;
  /** Skip naive ijk above this N (its time grows as N³ at a low rate); default none. */
  naiveMaxN?: number;
}

/** The suite's output: the record's `cpu` field and the OpenBLAS rows for its `peers`. */
export interface CpuSuite {
  cpu: CpuRecord;
  peers: PeerResult[];
}

/**
 * Naive ijk, ikj, blocked (sweeping `blocks`, reporting the best) and OpenBLAS with 1 and all
 * threads at each size; every row validated against float64 before it is timed.
 */
export async function runCpuSuite(opts: CpuSuiteOptions = {}): Promise<CpuSuite> {
  const sizes = opts.sizes ?? [256, 512, 1024];
  const blocks = opts.blocks ?? [32, 64, 128, 256];
  const cpu: CpuRecord = {
    machine: cpuMachine(),
    impls: [],
    sweep: [],
    model: cpuModelRows(sizes),
    notes: [],
  };
  const peers: PeerResult[] = [];
  const blas = opts.openblas === false
    ? { available: false as const, reason: "OpenBLAS not run (disabled)" }
    : openOpenBlas();
  if (!blas.available) cpu.notes.push(blas.reason);
  else cpu.notes.push(`OpenBLAS: ${blas.peer.path} (${blas.peer.config})`);
  try {
    for (const n of sizes) {
      const shape = { m: n, k: n, n };
      const ours: [string, string, CpuMatmul][] = [["ikj", "ikj", ikjMatmul]];
      if (opts.naiveMaxN === undefined || n <= opts.naiveMaxN) {
        ours.unshift(["naive-ijk", "naive ijk", naiveMatmul]);
      } else cpu.notes.push(`naive ijk skipped at N=${n} (naiveMaxN ${opts.naiveMaxN})`);
      for (const [id, impl, fn] of ours) {
        const r: CpuResult = { id, impl, ...await measureCpu(fn, shape, opts) };
        cpu.impls.push(r);
        await opts.onRow?.(r);
      }
      cpu.sweep.push(...await sweepBlockSizes([n], blocks, opts));
      const best = bestBlock(cpu.sweep, n);
      if (best) {
        const r: CpuResult = {
          id: "blocked",
          impl: `blocked ${best.block}`,
          ...shape,
          block: best.block,
          relErr: best.relErr,
          validated: true,
          medianMs: best.medianMs,
          minMs: best.minMs,
          maxMs: best.maxMs,
          reps: best.reps,
          gflops: best.gflops,
          timer: CPU_TIMER,
          seed: best.seed,
        };
        cpu.impls.push(r);
        await opts.onRow?.(r);
      }
      if (blas.available) {
        for (const threads of [1, "all"] as const) {
          const r = await blas.peer.run(shape, {
            threads,
            reps: opts.reps,
            budgetMs: opts.budgetMs,
          });
          peers.push(r);
          await opts.onRow?.(r);
        }
      }
    }
  } finally {
    if (blas.available) blas.peer.close();
  }
  return { cpu, peers };
}

/** This machine's CPU model, core count and load (from /proc where readable). */
function cpuMachine(): CpuMachine {
  const machine: CpuMachine = {
    model: "unknown",
    logicalCores: navigator.hardwareConcurrency,
    v8: Deno.version.v8,
    threads: 1,
  };
  try {
    const info = Deno.readTextFileSync("/proc/cpuinfo");
    machine.model = info.match(/^model name\s*:\s*(.+)$/m)?.[1]?.trim() ?? machine.model;
    machine.loadAverage = Number(Deno.readTextFileSync("/proc/loadavg").split(" ")[0]);
  } catch {
    // No /proc (macOS) or no read permission: model and load stay unknown.
  }
  return machine;
}
