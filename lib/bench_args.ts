/**
 * Command-line flags of `deno task bench`: parsed strictly, so a typo is a UsageError with the
 * usage text rather than a silently different run.
 */
import { UsageError } from "./errors.ts";
import { checkShape, type Shape, square, uniqueShapes } from "./matrix.ts";
import { findKernel, KERNELS, type KernelSpec } from "./registry.ts";

/** What one bench run should do. */
export interface BenchArgs {
  /** Kernels in story order (default: every non-demo kernel of the registry). */
  kernels: KernelSpec[];
  /** Shapes to run; undefined means the adapter's defaults (see defaultShapes). */
  shapes?: Shape[];
  /** Exact timed repetitions per result; undefined lets the timer fill its time budget. */
  reps?: number;
  /** Record path; undefined means data/runs/<device-slug>-<date>T<hhmm>.json (bench_output.ts). */
  out?: string;
  /** Measure cuBLAS, TF.js and OpenBLAS as well. */
  peers: boolean;
  /** Measure the bandwidth and FP32 ceilings for the roofline. */
  ceilings: boolean;
  /** Run the CPU suite (the CPU ladder, OpenBLAS and jax-js). */
  cpu: boolean;
  /** The CPU suite's sizes (default: 256 to 2048 on a GPU host, small on a software adapter). */
  cpuSizes?: number[];
  /**
   * Before timing, search the tuned steps' spaces: every point ("full"), the points a saved
   * search on the nearest device ranked highest ("quick", lib/search.ts quickTune), or not at
   * all ("saved": this device's saved search, else the nearest device's).
   */
  tune: "saved" | "full" | "quick";
  /** Run step 13's per-shape plan search over its shapes before timing. */
  tuneShapes: boolean;
  /** Validate every kernel on this many random shapes (1..300 per dimension) before timing. */
  validate: number;
  /** Sweep each selected step's knob (KernelSpec.knob) at one size. */
  knobs: boolean;
  /** Also run the suite steps and the peers on `count` held-out shapes (lib/heldout.ts). */
  heldout?: { count: number; seed: number };
  /** A partial record of the same command whose validated rows this run keeps (bench_resume.ts). */
  resume?: string;
  help: boolean;
}

export const USAGE = `Usage: deno task bench [flags]

  --kernels LIST   registry names, ids or numbers, comma-separated (naive,2,02_naive);
                   "all" includes demo kernels; default: every non-demo kernel
  --sizes LIST     square sizes, comma-separated (1024,4096)
  --shape MxKxN    one M x K times K x N product; repeatable; adds to --sizes
                   (default sizes: chosen from the adapter)
  --reps N         timed repetitions per result (default: fill a ~0.4 s GPU-time budget)
  --out FILE       where the JSON run record goes (default data/runs/<device>-<date>T<hhmm>.json);
                   checked first: never a file git tracks, never an existing non-record
  --no-peers       skip cuBLAS, TF.js WebGPU and OpenBLAS
  --no-ceilings    skip the bandwidth / FP32 / f16 ceiling measurements
  --no-cpu         skip the CPU suite
  --cpu-sizes LIST the CPU suite's square sizes (default 256,512,1024,2048; 128,256 on a
                   software adapter); a rung is skipped where it would take over 20 s a call
  --cpu-only       only the CPU suite: no GPU kernels, GPU peers or ceilings
  --tune           run the autotuner's search (slow) instead of reusing saved tuning
  --quick-tune     a quick search instead (at most 24 points, seeded by the nearest device's
                   saved search); without either, a device with no saved search uses the
                   nearest saved device's, and says so
  --tune-shapes    run the shapes step's per-shape plan search over its shapes (the suite
                   on a GPU) and save it before timing
  --validate N     also check every kernel on N random shapes (1..300 per dimension)
  --knobs          also sweep each selected step's knob (its step.ts) at one size: 4096 on a
                   GPU (the largest square size of --sizes when 4096 is not one of them)
  --heldout N      also run the suite steps, cuBLAS, TF.js and jax-js on N held-out shapes
                   drawn by lib/heldout.ts (no tuning, search or test reads them)
  --seed S         the held-out draw's seed (default: from the run's date and time)
  --resume FILE    finish the partial record FILE of the same flags, commit and device (a run
                   its time limit stopped): its validated rows are kept, the rest run now
  --help           this text

Progress goes to stderr, the results table to stdout. Progress is saved to <record>.partial.json;
only a complete run takes the record's name. Exit status: 0 all validated, 1 a result failed,
2 usage error (nothing run), 3 the GPU device was lost (the partial record holds what finished).`;

/** Parse bench flags; throws UsageError (message plus usage text) on anything malformed. */
export function parseBenchArgs(argv: readonly string[], registry = KERNELS): BenchArgs {
  try {
    return parseFlags(argv, registry);
  } catch (e) {
    if (e instanceof UsageError) throw new UsageError(`${e.message}\n\n${USAGE}`);
    throw e;
  }
}

function parseFlags(argv: readonly string[], registry: KernelSpec[]): BenchArgs {
  const args: BenchArgs = {
    kernels: registry.filter((k) => !k.demo),
    peers: true,
    ceilings: true,
    cpu: true,
    tune: "saved",
    tuneShapes: false,
    validate: 0,
    knobs: false,
    help: false,
  };
  const sizes: Shape[] = [];
  let sawShapes = false;
  let heldoutCount: number | undefined, heldoutSeed: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].includes("=") ? splitOnce(argv[i]) : [argv[i], undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined || v === "") fail(`${flag} needs a value`);
      return v;
    };
    const noValue = () => {
      if (inline !== undefined) fail(`${flag} takes no value`);
    };
    switch (flag) {
      case "--kernels":
        args.kernels = parseKernels(value(), registry);
        break;
      case "--sizes":
        sawShapes = true;
        for (const n of value().split(",")) sizes.push(square(parseDim(n, "--sizes")));
        break;
      case "--shape":
        sawShapes = true;
        sizes.push(parseShape(value()));
        break;
      case "--reps":
        args.reps = parseDim(value(), "--reps");
        break;
      case "--validate":
        args.validate = parseDim(value(), "--validate");
        break;
      case "--out":
        args.out = value();
        break;
      case "--no-peers":
        noValue();
        args.peers = false;
        break;
      case "--no-ceilings":
        noValue();
        args.ceilings = false;
        break;
      case "--no-cpu":
        noValue();
        args.cpu = false;
        break;
      case "--cpu-sizes":
        args.cpuSizes = value().split(",").map((n) => parseDim(n, "--cpu-sizes"))
          .sort((a, b) => a - b);
        break;
      case "--cpu-only":
        noValue();
        args.kernels = [];
        args.ceilings = false;
        break;
      case "--tune":
        noValue();
        args.tune = "full";
        break;
      case "--quick-tune":
        noValue();
        args.tune = "quick";
        break;
      case "--heldout":
        heldoutCount = parseDim(value(), "--heldout");
        break;
      case "--seed":
        heldoutSeed = parseSeed(value());
        break;
      case "--resume":
        args.resume = value();
        break;
      case "--tune-shapes":
        noValue();
        args.tuneShapes = true;
        break;
      case "--knobs":
        noValue();
        args.knobs = true;
        break;
      case "--help":
      case "-h":
        noValue();
        args.help = true;
        break;
      default:
        fail(`unknown flag ${JSON.stringify(argv[i])}`);
    }
  }
  if (sawShapes) args.shapes = uniqueShapes(sizes);
  if (heldoutSeed !== undefined && heldoutCount === undefined) fail("--seed needs --heldout N");
  if (heldoutCount !== undefined) {
    args.heldout = { count: heldoutCount, seed: heldoutSeed ?? dateSeed(new Date()) };
  }
  return args;
}

/** A seed no code of ours has read: the minutes since 1970 at the run's start. */
export function dateSeed(d: Date): number {
  return Math.floor(d.getTime() / 60_000);
}

function fail(message: string): never {
  throw new UsageError(message);
}

/** `--flag=value` as [flag, value]. */
export function splitOnce(arg: string): [string, string] {
  const at = arg.indexOf("=");
  return [arg.slice(0, at), arg.slice(at + 1)];
}

/** A positive integer in plain decimal; anything else (0, -3, 1.5, NaN, 1e3, "") is a usage error. */
/**
 * A held-out draw's seed: an integer of 0 to 2^32 - 1, the range a dated default falls in, so
 * any recorded draw can be drawn again with --seed.
 */
function parseSeed(text: string): number {
  const t = text.trim();
  if (!/^\d+$/.test(t) || Number(t) >= 2 ** 32) {
    fail(`--seed: ${JSON.stringify(text)} is not an integer of 0 to 2^32 - 1`);
  }
  return Number(t);
}

export function parseDim(text: string, flag: string): number {
  const t = text.trim();
  if (!/^\d+$/.test(t) || Number(t) < 1) {
    fail(`${flag}: ${JSON.stringify(text)} is not a positive integer`);
  }
  const n = Number(t);
  try {
    checkShape({ m: n, k: 1, n: 1 });
  } catch (e) {
    fail(`${flag}: ${(e as Error).message}`);
  }
  return n;
}

/** `MxKxN` as a shape; a UsageError otherwise. */
export function parseShape(text: string): Shape {
  const parts = text.toLowerCase().split("x");
  if (parts.length !== 3) {
    fail(`--shape: ${JSON.stringify(text)} is not MxKxN (e.g. 1000x3000x777)`);
  }
  const [m, k, n] = parts.map((p) => parseDim(p, "--shape"));
  return { m, k, n };
}

/** A comma-separated list of registry names, ids or numbers ("all": every kernel), in story order. */
export function parseKernels(text: string, registry: KernelSpec[]): KernelSpec[] {
  if (text.trim().toLowerCase() === "all") return [...registry];
  const picked = new Set<KernelSpec>();
  for (const key of text.split(",")) {
    const spec = findKernel(key, registry);
    if (!spec) {
      fail(
        `--kernels: unknown kernel ${JSON.stringify(key)}; known: ` +
          registry.map((k) => `${k.id} (${k.name})`).join(", "),
      );
    }
    picked.add(spec);
  }
  // Story order, whatever order the flag listed them in.
  return registry.filter((k) => picked.has(k));
}
