/**
 * `deno task bench`: every kernel of the ladder on every size, validated then timed, next to
 * cuBLAS and TF.js measured in the same process, written to a JSON run record.
 *
 *   deno task bench [--kernels naive,2] [--sizes 1024,4096] [--shape 1000x3000x777] [--reps N]
 *                   [--out FILE] [--no-peers] [--no-ceilings] [--no-cpu] [--tune] [--validate N]
 *                   [--knobs]
 *
 * Progress goes to stderr, the table to stdout. The record's name and the checks that keep a run
 * from harming another record are in bench_output.ts. Also bundled to dist/bench.js for GPU hosts
 * without a package registry (tools/bundle.sh), so every import here must be static.
 */
import { type BenchArgs, parseBenchArgs, USAGE } from "./bench_args.ts";
import { defaultShapes, sweepSize } from "./sizes.ts";
import { autotune } from "./autotune.ts";
import { measureCeilings } from "./ceilings.ts";
import { runCpuSuite } from "./cpu_bench.ts";
import {
  checkOut,
  finishRecord,
  type RecordFiles,
  reserveDefault,
  saveProgress,
} from "./bench_output.ts";
import { DeviceLostError, GemmError, LimitError, UsageError } from "./errors.ts";
import { caseSeeds, checkShapes, sweepKernel } from "./fuzz.ts";
import { acquireGpu, type Gpu } from "./gpu.ts";
import { paddedSize } from "./kernels/cost.ts";
import { knobShape, sweepKnob } from "./knob_sweep.ts";
import { freshSeed, rng, type Shape, shapeLabel, uniqueShapes } from "./matrix.ts";
import { openCublas } from "./peers/cublas.ts";
import { openTfjs } from "./peers/tfjs.ts";
import {
  currentCommit,
  type KernelResult,
  type PeerResult,
  RECORD_SCHEMA,
  type RunRecord,
  type ValidationSweep,
} from "./record.ts";
import type { KernelSpec } from "./registry.ts";
import { checkBufferFits, kernelParams, runKernel } from "./runner.ts";
import { loadTuning, tuningUrl } from "./tuning.ts";
import { searchShapes } from "../kernels/13_shapes/search.ts";
import { geomean, ratio, suiteRows } from "./suite.ts";

/** Error kinds that mean "cannot run here" (recorded as skipped), not "ran and was wrong". */
const SKIP_KINDS = new Set(["feature", "limit"]);

/** Exit statuses of the bench (also in the usage text). */
export const EXIT = { ok: 0, failed: 1, usage: 2, deviceLost: 3 } as const;

export interface BenchHooks {
  /** An already acquired device (tests); acquired here otherwise. */
  gpu?: Gpu;
  /** Progress lines (default: stderr). */
  log?: (line: string) => void;
  /** Called after each kernel or peer result is recorded. */
  afterResult?: (result: KernelResult | PeerResult) => void | Promise<void>;
  /** The flags as typed, kept in the record. */
  argv?: readonly string[];
  /** Folder of the default record name (default data/runs). */
  runsDir?: string;
}

export interface BenchOutcome {
  record: RunRecord;
  /** Where the record was written: its final name, or the partial or failed one. */
  path: string;
  exitCode: number;
}

/**
 * Run the bench described by `args` and write its record. Bad input (an --out that cannot take
 * the record, a size beyond a device limit) throws a UsageError before any work. A lost device
 * stops the run; the record then holds what finished and `complete: false`, and the exit code is
 * EXIT.deviceLost.
 */
export async function runBench(args: BenchArgs, hooks: BenchHooks = {}): Promise<BenchOutcome> {
  const log = hooks.log ?? ((line: string) => console.error(line));
  const chosen = args.out === undefined ? undefined : await checkOut(args.out);
  const gpu = hooks.gpu ?? await acquireGpu();
  // Sizes the user named are refused whole; a default size beyond a limit is recorded as
  // skipped by each kernel, as any limit is.
  if (args.shapes) checkSizesFit(gpu, args.kernels, args.shapes);
  // Each kernel's shapes (the suite steps get more by default); peers run on all of them.
  const shapesOf = (spec: KernelSpec) => args.shapes ?? defaultShapes(gpu.summary, spec);
  const shapes = args.shapes ?? uniqueShapes(args.kernels.flatMap(shapesOf));
  const record: RunRecord = {
    schema: RECORD_SCHEMA,
    date: new Date().toISOString(),
    commit: await currentCommit(),
    deno: Deno.version.deno,
    device: gpu.summary,
    results: [],
    peers: [],
    notes: [
      `sizes: ${shapes.map(shapeLabel).join(", ")}${args.shapes ? "" : " (adapter defaults)"}`,
      `kernels: ${args.kernels.map((k) => k.id).join(", ")}`,
    ],
    argv: [...(hooks.argv ?? [])],
    // Set once everything ran: a run killed midway leaves a partial record that says so.
    complete: false,
  };
  const files: RecordFiles = chosen ?? await reserveDefault(record, hooks.runsDir);
  const save = () => saveProgress(record, files);
  log(`bench: ${gpu.summary.description} (${gpu.summary.software ? "software" : "hardware"})`);
  // tools/gpu_bench.sh reads this line to find the partial record when it stops the run.
  log(`bench: saving progress to ${files.partial}`);
  const recorded = async (r: KernelResult | PeerResult) => {
    if (gpu.lostReason !== undefined && !r.validated) {
      // It failed because the device went away, whatever the error on the way said.
      Object.assign(r, { errorKind: "device-lost", error: `GPU device lost: ${gpu.lostReason}` });
    }
    log(`  ${progressLine(r)}`);
    await hooks.afterResult?.(r);
    try {
      gpu.check();
    } catch (e) {
      if (isDeviceLost(e, gpu)) throw e;
      record.notes.push(
        `GPU error reported after ${nameOf(r)} ${shapeLabel(r)}: ${(e as Error).message}`,
      );
    }
    await save();
  };

  let lost = false;
  try {
    if (args.validate > 0) {
      record.validation = [];
      for (const spec of args.kernels) {
        record.validation.push(await validationSweep(gpu, spec, args.validate, log));
      }
    }

    // The autotuner's objective keeps the tutorial's shapes (its odd ones), as before the suite.
    await tuning(gpu, args, args.shapes ?? defaultShapes(gpu.summary), record, log);
    await shapePlans(gpu, args, shapesOf, record, log);

    const skipped = new Set<KernelSpec>();
    let step = 0;
    const total = args.kernels.reduce((sum, spec) => sum + shapesOf(spec).length, 0);
    for (const spec of args.kernels) {
      for (const shape of shapesOf(spec)) {
        step++;
        if (skipped.has(spec)) continue;
        log(`[${step}/${total}] ${spec.id} ${shapeLabel(shape)}`);
        const result = await runKernel(gpu, spec, shape, { reps: args.reps });
        record.results.push(result);
        if (result.errorKind === "feature") {
          skipped.add(spec);
          record.notes.push(`${spec.id} skipped: ${result.error}`);
        }
        await recorded(result);
      }
    }

    if (args.knobs) await knobSweeps(gpu, args, record, log, recorded);

    if (args.peers) {
      await runPeers(gpu, shapes, args, record, log, recorded);
    } else {
      record.notes.push("peers not run (--no-peers)");
    }

    const suite = suiteNote(record);
    if (suite) {
      record.notes.push(suite);
      log(`bench: ${suite}`);
    }

    if (args.ceilings) {
      log("ceilings: bandwidth, FP32 and (with shader-f16) f16 sweeps");
      try {
        record.ceilings = await measureCeilings(gpu);
        await save();
        log(
          `  bandwidth ${record.ceilings.bandwidthGBs.toFixed(1)} GB/s, ` +
            `FP32 ${record.ceilings.fp32Gflops.toFixed(1)} GFLOP/s` +
            (record.ceilings.f16Gflops
              ? `, f16 ${record.ceilings.f16Gflops.toFixed(1)} GFLOP/s`
              : ""),
        );
      } catch (e) {
        if (isDeviceLost(e, gpu)) throw e;
        record.notes.push(`ceilings failed: ${(e as Error).message}`);
      }
    }
    if (args.cpu) await cpuSuite(gpu, args, record, log);
    else record.notes.push("CPU suite not run (--no-cpu)");
    record.complete = true;
  } catch (e) {
    // Stop, but keep what finished: the record is written either way.
    lost = isDeviceLost(e, gpu);
    const why = lost && !(e instanceof DeviceLostError)
      ? `GPU device lost: ${gpu.lostReason}`
      : (e as Error).message;
    record.notes.push(`stopped early: ${why}; the record holds the results that finished`);
    log(`bench: ${record.notes.at(-1)}`);
  }

  const exitCode = lost ? EXIT.deviceLost : exitCodeOf(record);
  const written = await finishRecord(record, files, exitCode !== EXIT.ok);
  log(`bench: ${written.message}`);
  return { record, path: written.path, exitCode };
}

/**
 * Refuse, before any kernel runs, a shape whose A, B or C (padded as each kernel pads it) does
 * not fit one storage binding of this device; the message names the limit and what fits.
 */
export function checkSizesFit(gpu: Gpu, kernels: KernelSpec[], shapes: Shape[]): void {
  for (const shape of shapes) {
    for (const spec of kernels) {
      const align = spec.align(kernelParams(gpu, spec, undefined, shape));
      const m = paddedSize(shape.m, align.m);
      const k = paddedSize(shape.k, align.k);
      const n = paddedSize(shape.n, align.n);
      const bytes = spec.precision === "f16" ? 2 : 4;
      try {
        for (const [name, r, c] of [["A", m, k], ["B", k, n], ["C", m, n]] as const) {
          checkBufferFits(gpu, name, r, c, bytes);
        }
      } catch (e) {
        if (!(e instanceof LimitError)) throw e;
        throw new UsageError(
          `size ${shapeLabel(shape)} does not fit this device (${spec.id}): ${e.message}`,
        );
      }
    }
  }
}

/**
 * With --tune, search the parameter space of every selected kernel that takes device-tuned
 * parameters (at 4096, or the largest square size of the run) and save the winners; otherwise
 * note which saved tuning the run uses and carry that search in the record.
 */
async function tuning(
  gpu: Gpu,
  args: BenchArgs,
  shapes: Shape[],
  record: RunRecord,
  log: (line: string) => void,
) {
  const tunable = args.kernels.filter((k) => k.space && k.deviceTuned);
  const fileOf = (kernel: string) =>
    tuningUrl(gpu.summary, kernel).pathname.replace(/^.*\/(data\/)/, "$1");
  if (!args.tune) {
    for (const spec of tunable) {
      const saved = loadTuning(gpu.summary, spec.name);
      record.notes.push(
        saved
          ? `tuned parameters of ${spec.id} from ${fileOf(spec.name)} (searched ` +
            `${saved.date.slice(0, 10)} at commit ${saved.commit})`
          : `no tuning of ${spec.id} saved for this device (${
            fileOf(spec.name)
          }): it runs its defaults`,
      );
      // The search behind the parameters travels with the record (it carries its own date and
      // commit), so the autotune chart can be drawn from this run's record.
      if (saved) (record.tuning ??= []).push(saved);
    }
    return;
  }
  if (!tunable.length) {
    record.notes.push("--tune: none of the selected kernels has a tuning space");
    return;
  }
  const size = sweepSize(shapes);
  // Score the shortlist on the run's odd shapes too, so the winner does not trade them away.
  const alsoShapes = shapes.filter((s) => [s.m, s.k, s.n].some((d) => d % 64 !== 0)).slice(-2);
  const results = [];
  for (const spec of tunable) {
    log(
      `tune ${spec.id} at ${size}${alsoShapes.length ? ` and ${alsoShapes.map(shapeLabel)}` : ""}`,
    );
    const t = await autotune(gpu, spec, { m: size, k: size, n: size }, {
      commit: record.commit,
      alsoShapes,
      log: (line) => log(`  ${line}`),
    });
    results.push(t);
    record.notes.push(
      `tuned ${spec.id} at ${size}: ${JSON.stringify(t.best.params)} saved to ${fileOf(spec.name)}`,
    );
  }
  record.tuning = results;
}

/**
 * The shape suite in one line: the geometric mean of the shapes step's GFLOP/s over cuBLAS's and
 * its lowest row, when the run measured both on shapes of the suite.
 */
export function suiteNote(record: RunRecord): string | undefined {
  const rows = suiteRows(record).filter((r) => ratio(r.step, r.cublas) !== undefined);
  if (!rows.length) return undefined;
  const low = rows.reduce((a, r) => (ratio(r.step, r.cublas)! < ratio(a.step, a.cublas)! ? r : a));
  return `shape suite: shapes / cuBLAS geometric mean ${
    geomean(rows.map((r) => ratio(r.step, r.cublas)))!.toFixed(3)
  } over ${rows.length} shapes; lowest ${ratio(low.step, low.cublas)!.toFixed(3)} at ${low.label}`;
}

/** Shapes without repeats, in first-seen order. */

/**
 * With --tune-shapes, run the shapes step's per-shape plan search over its shapes and save it;
 * either way, note which per-shape tuning the run's picks come from.
 */
async function shapePlans(
  gpu: Gpu,
  args: BenchArgs,
  shapesOf: (spec: KernelSpec) => Shape[],
  record: RunRecord,
  log: (line: string) => void,
) {
  const spec = args.kernels.find((k) => k.planFor);
  if (!spec) {
    if (args.tuneShapes) record.notes.push("--tune-shapes: the shapes step was not selected");
    return;
  }
  const file = tuningUrl(gpu.summary, spec.name).pathname.replace(/^.*\/(data\/)/, "$1");
  if (args.tuneShapes) {
    log(`tune-shapes: ${spec.id} plans at ${shapesOf(spec).length} shapes`);
    const searched = await searchShapes(gpu, shapesOf(spec), {
      commit: record.commit,
      log: (line) => log(`  ${line}`),
    });
    record.notes.push(
      `searched ${spec.id}'s plans at ${searched.perShape?.length} shapes: saved to ${file}`,
    );
    return;
  }
  const saved = loadTuning(gpu.summary, spec.name);
  record.notes.push(
    saved
      ? `${spec.id}'s plans: per-shape search from ${file} (${saved.date.slice(0, 10)}, ` +
        `commit ${saved.commit}) where a shape's class was searched, the model elsewhere`
      : `${spec.id}'s plans: no per-shape search saved for this device (${file}): the model picks`,
  );
}

/**
 * The CPU ladder and, unless --no-peers, OpenBLAS with one and all threads and jax-js's CPU
 * backend: small sizes next to a software adapter, up to 2048 next to a real GPU (--cpu-sizes).
 */
async function cpuSuite(
  gpu: Gpu,
  args: BenchArgs,
  record: RunRecord,
  log: (line: string) => void,
) {
  const sizes = args.cpuSizes ?? (gpu.summary.software ? [128, 256] : [256, 512, 1024, 2048]);
  log(`cpu: the CPU ladder${args.peers ? ", OpenBLAS, jax-js" : ""} at ${sizes.join(", ")}`);
  const suite = await runCpuSuite({
    sizes,
    openblas: args.peers,
    jax: args.peers,
    onRow: (row) => {
      const name = "peer" in row
        ? `peer:${row.peer}`
        : "impl" in row
        ? `cpu ${row.impl}`
        : `cpu blocked ${row.block}`;
      const speed = row.validated && row.gflops !== undefined
        ? `${row.gflops.toFixed(2)} GFLOP/s`
        : `FAILED: ${row.error ?? "not validated"}`;
      log(`  ${name} ${row.n}: ${speed}`);
    },
  });
  record.cpu = suite.cpu;
  record.peers.push(...suite.peers);
  record.notes.push(...suite.cpu.notes.map((n) => `cpu: ${n}`));
}

/** cuBLAS (FFI) and TF.js (same GPUDevice) on every shape; a missing peer becomes a note. */
async function runPeers(
  gpu: Gpu,
  shapes: Shape[],
  args: BenchArgs,
  record: RunRecord,
  log: (line: string) => void,
  recorded: (r: PeerResult) => Promise<void>,
) {
  const cublas = openCublas();
  if (typeof cublas === "string") {
    record.notes.push(cublas);
    log(`peers: ${cublas}`);
  } else {
    record.notes.push(`cuBLAS: ${cublas.details.mathMode}; cuBLAS ${cublas.details.cublasVersion}`);
    try {
      for (const shape of shapes) {
        log(`peer cublas ${shapeLabel(shape)}`);
        const r = await cublas.run(shape, { reps: args.reps });
        record.peers.push(r);
        await recorded(r);
      }
    } finally {
      try {
        cublas.close();
      } catch (e) {
        record.notes.push(`cuBLAS: ${(e as Error).message}`);
      }
    }
  }

  let tfjs;
  try {
    tfjs = await openTfjs(gpu);
  } catch (e) {
    if (isDeviceLost(e, gpu)) throw e;
    record.notes.push(`TF.js peer skipped: ${(e as Error).message}`);
    return;
  }
  try {
    for (const shape of shapes) {
      log(`peer tfjs-webgpu ${shapeLabel(shape)}`);
      const r = await tfjs.run(shape, { reps: args.reps });
      record.peers.push(r);
      await recorded(r);
    }
  } finally {
    tfjs.close();
  }
}

/**
 * With --knobs, each selected step's knob swept at one size (lib/knob_sweep.ts): every point
 * validated, then timed, into the record's `knobs` section.
 */
async function knobSweeps(
  gpu: Gpu,
  args: BenchArgs,
  record: RunRecord,
  log: (line: string) => void,
  recorded: (r: KernelResult) => Promise<void>,
) {
  const n = sweepSize(args.shapes ?? defaultShapes(gpu.summary));
  record.knobs = [];
  for (const spec of args.kernels.filter((k) => k.knob && !k.demo)) {
    log(`knob ${spec.id} ${spec.knob!.name} at ${shapeLabel(knobShape(spec, n))}`);
    const sweep = await sweepKnob(gpu, spec, n, {
      reps: args.reps,
      onResult: (point) => recorded(point.result),
    });
    record.knobs.push(sweep);
  }
  record.notes.push(`knobs swept at ${n}: ${record.knobs.map((k) => k.kernel).join(", ")}`);
}

/** Check one kernel (no timing) on its tail shapes and `count` random ones (lib/fuzz.ts). */
async function validationSweep(
  gpu: Gpu,
  spec: KernelSpec,
  count: number,
  log: (line: string) => void,
): Promise<ValidationSweep> {
  const next = rng(freshSeed());
  const shapes = checkShapes(gpu, spec, count, next);
  const sweep = await sweepKernel(gpu, spec, shapes, caseSeeds(shapes.length, next));
  log(`validate ${spec.id}: ${sweep.passed}/${sweep.shapes} tail and random shapes passed`);
  return sweep;
}

function isDeviceLost(e: unknown, gpu: Gpu): boolean {
  return e instanceof DeviceLostError || gpu.lostReason !== undefined;
}

/** 1 if the run stopped early or any result failed (skips excepted), else 0. */
export function exitCodeOf(record: RunRecord): number {
  if (record.complete === false) return EXIT.failed;
  const knobResults = (record.knobs ?? []).flatMap((k) => k.points.map((p) => p.result));
  const failed = [...record.results, ...record.peers, ...knobResults].some((r) =>
    !r.validated && !SKIP_KINDS.has(r.errorKind ?? "")
  );
  const sweepFailed = record.validation?.some((v) => v.passed < v.shapes);
  return failed || sweepFailed ? EXIT.failed : EXIT.ok;
}

function nameOf(r: KernelResult | PeerResult): string {
  return "peer" in r ? `peer:${r.peer}` : r.kernel;
}

function progressLine(r: KernelResult | PeerResult): string {
  const what = `${nameOf(r)} ${shapeLabel(r)}`;
  if (!r.validated) return `${what}: ${statusOf(r)}`;
  if (r.medianMs === undefined) return `${what}: validated (relErr ${fmtErr(r.relErr)})`;
  return `${what}: ${r.medianMs.toFixed(3)} ms, ${r.gflops!.toFixed(1)} GFLOP/s, ` +
    `relErr ${fmtErr(r.relErr)}`;
}

function statusOf(r: KernelResult | PeerResult): string {
  const kind = r.errorKind ?? "error";
  return `${SKIP_KINDS.has(kind) ? "skipped" : "FAILED"} (${kind}): ${r.error ?? "not validated"}`;
}

const fmtErr = (x: number) => Number.isFinite(x) ? x.toExponential(1) : "NaN";

/**
 * The results as a text table: kernel, shape, median ms, GFLOP/s, % of cuBLAS (or of the
 * fastest validated peer at that shape when cuBLAS did not run), relative error. Failed and
 * skipped rows show why instead of a speed.
 */
export function formatTable(record: RunRecord): string {
  const rows: string[][] = [["kernel", "shape", "median ms", "GFLOP/s", "% of ref", "rel err"]];
  const notes: string[] = [];
  for (const r of [...record.results, ...record.peers]) {
    const row = [nameOf(r), shapeLabel(r)];
    if (!r.validated || r.medianMs === undefined || r.gflops === undefined) {
      row.push(r.validated ? "validated, not timed" : statusOf(r).slice(0, 160));
      rows.push(row);
      continue;
    }
    const ref = referenceFor(record, r);
    row.push(
      r.medianMs.toFixed(3),
      r.gflops.toFixed(1),
      ref ? `${(100 * r.gflops / ref.gflops!).toFixed(1)}% ${ref.peer}` : "-",
      fmtErr(r.relErr),
    );
    rows.push(row);
  }
  if (!record.peers.some((p) => p.peer === "cublas" && p.validated)) {
    notes.push("ref: cuBLAS did not run; % is of the fastest validated peer at the same shape");
  }
  if (record.complete === false) notes.push("INCOMPLETE: the run stopped early (see notes)");
  const widths = rows[0].map((_, c) =>
    Math.max(...rows.filter((r) => r.length > 3 || c < 2).map((r) => (r[c] ?? "").length))
  );
  const line = (r: string[]) =>
    r.length <= 3
      ? `${r[0].padEnd(widths[0])}  ${r[1].padEnd(widths[1])}  ${r[2]}`
      : r.map((cell, c) => c < 2 ? cell.padEnd(widths[c]) : cell.padStart(widths[c])).join("  ");
  return [
    `${record.device.description} | ${record.date} | commit ${record.commit}`,
    ...rows.map(line),
    ...notes,
  ].join("\n");
}

/** cuBLAS at the same shape, else the fastest validated peer there. */
function referenceFor(record: RunRecord, r: KernelResult | PeerResult): PeerResult | undefined {
  const same = record.peers.filter((p) =>
    p.validated && p.gflops !== undefined && p.m === r.m && p.k === r.k && p.n === r.n
  );
  return same.find((p) => p.peer === "cublas") ??
    same.sort((a, b) => b.gflops! - a.gflops!)[0];
}

/** CLI entry: parse, run, print the table; returns the exit status. */
export async function main(argv: readonly string[]): Promise<number> {
  let args: BenchArgs;
  try {
    args = parseBenchArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`bench: ${e.message}`);
    return EXIT.usage;
  }
  if (args.help) {
    console.log(USAGE);
    return EXIT.ok;
  }
  try {
    const { record, exitCode } = await runBench(args, { argv });
    console.log(formatTable(record));
    return exitCode;
  } catch (e) {
    if (!(e instanceof GemmError)) throw e;
    console.error(`bench: ${e.message}; nothing was written`);
    return e instanceof UsageError ? EXIT.usage : EXIT.failed;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
