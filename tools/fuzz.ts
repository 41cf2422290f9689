/**
 * `deno task fuzz`: every (non-demo) kernel on its tail shapes (lib/steps/tails.ts) and N
 * random shapes, 1..300 per dimension, mixing uniform draws, primes and tile multiples +-1
 * (lib/fuzz.ts). Each shape goes through the runner's validation (fresh inputs, C poisoned with
 * NaN, float64 reference), untimed. For release checks beyond the sample CI runs; exits 1 on any
 * failure, printing the shape and seed that reproduce it, and on a kernel it had to skip unless
 * --allow-missing asked for that.
 */
import { parseDim, parseKernels, parseShape, splitOnce } from "../lib/bench_args.ts";
import { GemmError, UsageError } from "../lib/errors.ts";
import { caseSeeds, checkShapes, FUZZ_MAX_DIM, sweepKernel } from "../lib/fuzz.ts";
import { acquireGpu, type Gpu } from "../lib/gpu.ts";
import { freshSeed, rng, type Shape, shapeLabel } from "../lib/matrix.ts";
import { KERNELS, type KernelSpec } from "../lib/registry.ts";

export const USAGE =
  `Usage: deno task fuzz [--count N] [--kernels LIST] [--seed S] [--shape MxKxN] [--allow-missing]

  --count N        random shapes per kernel after its tail shapes (default 200; 1..${FUZZ_MAX_DIM}
                   per dimension)
  --kernels LIST   registry names, ids or numbers, comma-separated; default: every non-demo kernel
  --seed S         the run's seed (default: fresh); the same seed replays the same shapes and inputs
  --shape MxKxN    check only this shape (repeatable), with inputs from --seed: how a reported
                   failure is reproduced
  --allow-missing  a kernel that needs a feature this device lacks (shader-f16) is skipped and
                   the run may still pass; without it such a skip fails the run
Exit status: 0 every shape validated, 1 a shape failed or a kernel was skipped, 2 usage error.`;

export interface FuzzArgs {
  count: number;
  kernels: KernelSpec[];
  seed?: number;
  shapes: Shape[];
  /** A kernel skipped for a missing feature does not fail the run. */
  allowMissing: boolean;
  help: boolean;
}

/** Parse fuzz flags; a UsageError (message plus usage text) on anything malformed. */
export function parseFuzzArgs(argv: readonly string[], registry = KERNELS): FuzzArgs {
  const args: FuzzArgs = {
    count: 200,
    kernels: registry.filter((k) => !k.demo),
    shapes: [],
    allowMissing: false,
    help: false,
  };
  try {
    for (let i = 0; i < argv.length; i++) {
      const [flag, inline] = argv[i].includes("=") ? splitOnce(argv[i]) : [argv[i], undefined];
      const value = () => {
        const v = inline ?? argv[++i];
        if (v === undefined || v === "") throw new UsageError(`${flag} needs a value`);
        return v;
      };
      if (flag === "--count") args.count = parseDim(value(), "--count");
      else if (flag === "--kernels") args.kernels = parseKernels(value(), registry);
      else if (flag === "--seed") args.seed = parseSeed(value());
      else if (flag === "--shape") args.shapes.push(parseShape(value()));
      else if (flag === "--allow-missing" && inline === undefined) args.allowMissing = true;
      else if (flag === "--help" || flag === "-h") args.help = true;
      else throw new UsageError(`unknown flag ${JSON.stringify(argv[i])}`);
    }
    if (args.shapes.length && args.seed === undefined) {
      throw new UsageError("--shape needs --seed (the seed printed with the failure)");
    }
  } catch (e) {
    if (e instanceof UsageError) throw new UsageError(`fuzz: ${e.message}\n\n${USAGE}`);
    throw e;
  }
  return args;
}

function parseSeed(text: string): number {
  if (!/^\d+$/.test(text) || Number(text) >= 2 ** 32) {
    throw new UsageError(`--seed: ${JSON.stringify(text)} is not an integer in 0..2^32-1`);
  }
  return Number(text);
}

/** One kernel's outcome; each failure carries the command that checks it again. */
export interface FuzzReport {
  kernel: string;
  shapes: number;
  passed: number;
  skipped?: string;
  failures: { shape: Shape; seed: number; error: string; rerun: string }[];
}

/**
 * Check each kernel of `args` on its shapes. With `--shape`, those shapes and `--seed` as the
 * input seed; otherwise `count` shapes and input seeds drawn from the run's seed.
 */
export async function fuzz(
  gpu: Gpu,
  args: FuzzArgs,
  log: (line: string) => void = (line) => console.error(line),
): Promise<FuzzReport[]> {
  const runSeed = args.seed ?? freshSeed();
  if (!args.shapes.length) log(`fuzz: seed ${runSeed}, ${args.count} shapes per kernel`);
  const reports: FuzzReport[] = [];
  for (const spec of args.kernels) {
    const next = rng(runSeed);
    const shapes = args.shapes.length ? args.shapes : checkShapes(gpu, spec, args.count, next);
    const seeds = args.shapes.length ? shapes.map(() => runSeed) : caseSeeds(shapes.length, next);
    const sweep = await sweepKernel(gpu, spec, shapes, seeds);
    const report: FuzzReport = {
      kernel: spec.id,
      shapes: sweep.shapes,
      passed: sweep.passed,
      failures: [],
    };
    if (sweep.skipped) report.skipped = sweep.skipped;
    for (const f of sweep.failures) {
      if (sweep.skipped && f.error.startsWith("skipped:")) continue;
      const shape = { m: f.m, k: f.k, n: f.n };
      report.failures.push({
        shape,
        seed: f.seed,
        error: f.error,
        rerun: `deno task fuzz --kernels ${spec.id} --shape ${f.m}x${f.k}x${f.n} --seed ${f.seed}`,
      });
    }
    log(
      report.skipped
        ? `fuzz ${spec.id}: skipped (${report.skipped})`
        : `fuzz ${spec.id}: ${report.passed}/${report.shapes} shapes passed` +
          ` (worst relative error ${sweep.maxRelErr.toExponential(1)})`,
    );
    for (const f of report.failures) {
      log(`  FAILED ${shapeLabel(f.shape)} seed ${f.seed}: ${f.error}`);
      log(`    rerun: ${f.rerun}`);
    }
    reports.push(report);
  }
  return reports;
}

/**
 * The run's summary line and exit status: 1 when a shape failed, or when a kernel was skipped
 * and --allow-missing did not ask for that; else 0.
 */
export function fuzzStatus(
  reports: FuzzReport[],
  args: Pick<FuzzArgs, "allowMissing">,
  log: (line: string) => void = (line) => console.log(line),
): number {
  const failed = reports.reduce((sum, r) => sum + r.failures.length, 0);
  const checked = reports.reduce((sum, r) => sum + r.shapes, 0);
  const skipped = reports.filter((r) => r.skipped).map((r) => r.kernel);
  log(
    `fuzz: ${checked - failed}/${checked} shapes passed over ${reports.length} kernels` +
      (skipped.length ? `; skipped ${skipped.join(", ")}` : ""),
  );
  if (skipped.length && !args.allowMissing) {
    log("fuzz: FAILED: a skipped kernel was not checked (--allow-missing accepts that)");
    return 1;
  }
  return failed ? 1 : 0;
}

async function main(argv: readonly string[]): Promise<number> {
  let args: FuzzArgs;
  try {
    args = parseFuzzArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(e.message);
    return 2;
  }
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  try {
    return fuzzStatus(await fuzz(await acquireGpu(), args), args);
  } catch (e) {
    if (!(e instanceof GemmError)) throw e;
    console.error(`fuzz: ${e.message}`);
    return 1;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
