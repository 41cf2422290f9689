/**
 * `deno task fuzz`: every (non-demo) kernel on N random shapes, 1..300 per dimension, mixing
 * uniform draws, primes and tile multiples +-1 (lib/fuzz.ts). Each shape goes through the
 * runner's validation (fresh inputs, C poisoned with NaN, float64 reference), untimed. For
 * release checks beyond the sample CI runs; exits 1 on any failure, printing the shape and seed
 * that reproduce it.
 */
import { parseDim, parseKernels, parseShape, splitOnce } from "../lib/bench_args.ts";
import { GemmError, UsageError } from "../lib/errors.ts";
import { caseSeeds, FUZZ_MAX_DIM, fuzzShapes, sweepKernel, tileSizes } from "../lib/fuzz.ts";
import { acquireGpu, type Gpu } from "../lib/gpu.ts";
import { freshSeed, rng, type Shape, shapeLabel } from "../lib/matrix.ts";
import { KERNELS, type KernelSpec } from "../lib/registry.ts";

export const USAGE = `Usage: deno task fuzz [--count N] [--kernels LIST] [--seed S] [--shape MxKxN]

  --count N        random shapes per kernel (default 200; 1..${FUZZ_MAX_DIM} per dimension)
  --kernels LIST   registry names, ids or numbers, comma-separated; default: every non-demo kernel
  --seed S         the run's seed (default: fresh); the same seed replays the same shapes and inputs
  --shape MxKxN    check only this shape (repeatable), with inputs from --seed: how a reported
                   failure is reproduced
Exit status: 0 every shape validated, 1 a shape failed, 2 usage error.`;

export interface FuzzArgs {
  count: number;
  kernels: KernelSpec[];
  seed?: number;
  shapes: Shape[];
  help: boolean;
}

/** Parse fuzz flags; a UsageError (message plus usage text) on anything malformed. */
export function parseFuzzArgs(argv: readonly string[], registry = KERNELS): FuzzArgs {
  const args: FuzzArgs = {
    count: 200,
    kernels: registry.filter((k) => !k.demo),
    shapes: [],
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
    const shapes = args.shapes.length
      ? args.shapes
      : fuzzShapes(args.count, tileSizes(gpu, spec), next);
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
    const reports = await fuzz(await acquireGpu(), args);
    const failed = reports.reduce((sum, r) => sum + r.failures.length, 0);
    const checked = reports.reduce((sum, r) => sum + r.shapes, 0);
    console.log(
      `fuzz: ${checked - failed}/${checked} shapes passed over ${reports.length} kernels`,
    );
    return failed ? 1 : 0;
  } catch (e) {
    if (!(e instanceof GemmError)) throw e;
    console.error(`fuzz: ${e.message}`);
    return 1;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
