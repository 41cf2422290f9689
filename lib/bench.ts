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
import {
  checkOut,
  finishRecord,
  type RecordFiles,
  reserveDefault,
  saveProgress,
} from "./bench_output.ts";
import { cpuSuite, isDeviceLost, runPeers } from "./bench_peers.ts";
import { EXIT, exitCodeOf, formatTable, nameOf, progressLine, suiteNote } from "./bench_report.ts";
import { knobSweeps, shapePlans, tuning } from "./bench_tuning.ts";
import { heldoutRun } from "./bench_heldout.ts";
import { resumeFrom } from "./bench_resume.ts";
import { measureCeilings } from "./ceilings.ts";
import { DeviceLostError, GemmError, LimitError, UsageError } from "./errors.ts";
import { caseSeeds, checkShapes, sweepKernel } from "./fuzz.ts";
import { acquireGpu, type Gpu } from "./gpu.ts";
import { paddedSize } from "./steps/launch.ts";
import { freshSeed, rng, type Shape, shapeLabel, uniqueShapes } from "./matrix.ts";
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
import { defaultShapes } from "./sizes.ts";

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
  const resumed = args.resume === undefined
    ? undefined
    : await resumeFrom(args.resume, record, args.heldout?.seed);
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
    log(`  ${progressLine(r)}${resumed?.taken.has(r) ? " (kept from the resumed call)" : ""}`);
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
        const result = resumed?.result("main", spec.id, shape) ??
          await runKernel(gpu, spec, shape, { reps: args.reps });
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
      await runPeers(gpu, shapes, args, record, log, recorded, resumed);
    } else {
      record.notes.push("peers not run (--no-peers)");
    }

    if (args.heldout) await heldoutRun(gpu, args, record, log, recorded, resumed);
    if (resumed) {
      record.notes.push(
        `resumed ${resumed.path}: ${resumed.taken.size} validated rows kept from that call, the rest ` +
          "run in this one",
      );
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
