/**
 * Command-line flags of `deno task bench`: parsed strictly, so a typo is a UsageError with the
 * usage text rather than a silently different run.
 */
import { UsageError } from "./errors.ts";
import type { DeviceSummary } from "./gpu.ts";
import { checkShape, type Shape, uniqueShapes } from "./matrix.ts";
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
  /** Run the autotuner's search before timing the autotuned kernel. */
  tune: boolean;
  /** Run step 13's per-shape plan search over its shapes before timing. */
  tuneShapes: boolean;
  /** Validate every kernel on this many random shapes (1..300 per dimension) before timing. */
  validate: number;
  /** Sweep each selected step's knob (KernelSpec.knob) at one size. */
  knobs: boolean;
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
  --tune-shapes    run the shapes step's per-shape plan search over its shapes (the suite
                   on a GPU) and save it before timing
  --validate N     also check every kernel on N random shapes (1..300 per dimension)
  --knobs          also sweep each selected step's knob (its step.ts) at one size: 4096 on a
                   GPU (the largest square size of --sizes when 4096 is not one of them)
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
    tune: false,
    tuneShapes: false,
    validate: 0,
    knobs: false,
    help: false,
  };
  const sizes: Shape[] = [];
  let sawShapes = false;
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
        args.tune = true;
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
  return args;
}

/**
 * The shapes real programs multiply (M x K x N): squares, an odd square and an odd rectangle, a
 * language model's prefill (2048 x 4096 x 11008, 512 x 4096 x 4096) and decode (16 and 1 rows),
 * a long reduction with a small output (256 x 65536 x 256) and a tall, thin product.
 */
export const SHAPE_SUITE: readonly Shape[] = [
  ...[1024, 2048, 4096, 8192, 4097].map(square),
  { m: 1000, k: 3000, n: 777 },
  { m: 2048, k: 4096, n: 11008 },
  { m: 512, k: 4096, n: 4096 },
  { m: 16, k: 4096, n: 4096 },
  { m: 1, k: 4096, n: 4096 },
  { m: 256, k: 65536, n: 256 },
  { m: 32768, k: 512, n: 128 },
];

/** Steps a GPU run measures on the shape suite too (the early steps would take too long). */
export const SUITE_STEPS: readonly string[] = ["autotune", "generated", "shapes"];

/**
 * Sizes a run uses when none are given. Software adapters are thousands of times slower, so
 * they get small sizes that finish in about a minute; a real GPU gets the tutorial's sizes plus
 * the odd shapes that prove edge handling costs little (issue 3) and their aligned neighbours,
 * and for the steps of SUITE_STEPS (`step` given) the shape suite as well.
 */
export function defaultShapes(
  device: Pick<DeviceSummary, "software">,
  step?: Pick<KernelSpec, "name">,
): Shape[] {
  if (device.software) return [64, 128, 256].map(square);
  const tutorial = [
    ...[1024, 2048, 4096, 8192].map(square),
    square(4095),
    square(4097),
    { m: 1000, k: 3000, n: 777 },
    // The odd rectangle's aligned neighbour: what its throughput is compared with.
    { m: 1024, k: 3072, n: 768 },
  ];
  return step && SUITE_STEPS.includes(step.name)
    ? uniqueShapes([...tutorial, ...SHAPE_SUITE])
    : tutorial;
}

/**
 * The one square size a search or a sweep runs at: 4096 when the run has it (a GPU's defaults
 * do), else the run's largest square size (a software adapter's, or the sizes given).
 */
export function sweepSize(shapes: Shape[]): number {
  const squares = shapes.filter((s) => s.m === s.k && s.k === s.n).map((s) => s.m);
  return squares.includes(4096) ? 4096 : Math.max(...squares, 64);
}

/** Each odd shape of a GPU run and the aligned shape its throughput is compared with. */
export const ODD_SHAPE_PAIRS: readonly [Shape, Shape][] = [
  [square(4095), square(4096)],
  [square(4097), square(4096)],
  [{ m: 1000, k: 3000, n: 777 }, { m: 1024, k: 3072, n: 768 }],
];

function fail(message: string): never {
  throw new UsageError(message);
}

/** `--flag=value` as [flag, value]. */
export function splitOnce(arg: string): [string, string] {
  const at = arg.indexOf("=");
  return [arg.slice(0, at), arg.slice(at + 1)];
}

function square(n: number): Shape {
  return { m: n, k: n, n };
}

/** A positive integer in plain decimal; anything else (0, -3, 1.5, NaN, 1e3, "") is a usage error. */
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
