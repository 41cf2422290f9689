/**
 * The run record: what `deno task bench` writes to data/runs/<device-slug>-<date>.json and what
 * the results table, the charts and the notebooks read. Every section's type is defined (or, for
 * the tuning search, re-exported) here, and so are reading, writing and listing records. Each
 * number in a record was validated in the same run and names its device, date and commit.
 */
import type { ErrorRatios } from "./accuracy.ts";
import type { Blocks, CacheSizes } from "./cpu_simd.ts";
import { deviceSlug, type DeviceSummary } from "./gpu.ts";
import type { EdgePlan } from "./steps/launch.ts";
import { stepName } from "./steps/spec.ts";
import type { Params } from "./steps/spec.ts";
import { type Shape, shapeLabel } from "./matrix.ts";
import type { Timing } from "./timing.ts";
import type { TuningRecord } from "./tuning.ts";

export type { ShapeTrial, TuningRecord, TuningTrial } from "./tuning.ts";

export const RECORD_SCHEMA = 1;

export interface RunRecord {
  schema: number;
  /** ISO 8601 time the run started. */
  date: string;
  /** Git commit of the code that ran ("unknown" if not a checkout); "+dirty" if modified. */
  commit: string;
  deno: string;
  device: DeviceSummary;
  ceilings?: Ceilings;
  results: KernelResult[];
  peers: PeerResult[];
  /** CPU-side measurements (our CPU matmuls, block-size sweep), when run. */
  cpu?: CpuRecord;
  /** The autotuner's searches (one per tuned kernel), when run or when a saved one was used. */
  tuning?: TuningRecord[];
  /** Free-form notes on what was run (flags, skipped peers and why). */
  notes: string[];
  /** The bench's command-line flags. */
  argv?: string[];
  /** False when the run stopped early (device lost); the record holds what finished. */
  complete?: boolean;
  /** Kernels checked (not timed) on random shapes by `--validate N`. */
  validation?: ValidationSweep[];
  /** Each step's knob swept at one shape by `--knobs` (absent from older records). */
  knobs?: KnobSweep[];
  /** `--heldout N`: the suite steps and peers on shapes drawn by lib/heldout.ts. */
  heldout?: HeldoutSection;
}

/**
 * What every measured row has, ours or a peer's, GPU or CPU: the shape, the check against the
 * float64 reference, and the timing, which is present only when the check passed.
 */
export interface Measured {
  m: number;
  n: number;
  k: number;
  /** Relative error norm against float64 (sampled rows for large sizes); NaN when unchecked. */
  relErr: number;
  /**
   * Each accuracy check's ratio to its bound (lib/accuracy.ts; at most 1 passes); absent in
   * records from before the bound was derived from K, and where C held a non-finite element.
   */
  errRatios?: ErrorRatios;
  validated: boolean;
  medianMs?: number;
  minMs?: number;
  maxMs?: number;
  reps?: number;
  gflops?: number;
  /** How the GPU time was taken, where the timer gives a choice. */
  timing?: Timing["method"];
  /** Why the row did not run, or failed, and the kind of failure ("wrong-result", "limit"...). */
  error?: string;
  errorKind?: string;
  /** Seed of the random A and B. */
  seed: number;
}

/** One kernel on one shape: the record's `results` entry. */
export interface KernelResult extends Measured {
  kernel: string;
  title: string;
  params: Params;
  /**
   * Why the parameters are not the step's own: its defaults exceed this device's limits, and
   * these are the nearest that fit (lib/runner.ts, fittingParams).
   */
  adapted?: string;
  /** The device whose saved search gave the parameters, when it is not this one (lib/tuning.ts). */
  tunedOn?: string;
  /**
   * Present when thin edges went to the edge-strip kernel: the first row of the bottom strip and
   * the first column of the right strip (M and N when that strip is absent).
   */
  edgeStrips?: EdgePlan;
  /** Modeled global-memory bytes and intensity (FLOP/byte) of this launch. */
  modelBytes: number;
  intensity: number;
}

/** A product a well-known model computes, and where its dimensions come from. */
export interface ModelShape extends Shape {
  /** What it is, short enough for a table cell. */
  name: string;
  /** The model's dimensions it is built from. */
  source: string;
}

/** The distribution as data, for the record: with the seed, enough to draw the shapes again. */
export interface HeldoutDistribution {
  version: string;
  prng: string;
  /** The random shapes' dimensions: log-uniform by octave over min..max. */
  dims: { min: number; max: number; law: string };
  maxBytes: number;
  maxFlop: number;
  modelShare: number;
  /** The model shapes within the caps and not excluded: the pool the model share comes from. */
  models: ModelShape[];
  /** Shapes never drawn. */
  excluded: Shape[];
  /** The whole rule in words. */
  text: string;
}

/** One held-out shape and where it came from: a model shape's name, or "log-uniform". */
export interface HeldoutShape extends Shape {
  from: string;
}

/**
 * The record's `heldout` section: the draw and every row measured on it, kept apart from the
 * record's `results` and `peers` (the suite and the tutorial sizes). Its rows have the record's
 * own row types, so every one is validated and timed as the rest of the record is.
 */
export interface HeldoutSection {
  distribution: HeldoutDistribution;
  seed: number;
  /** N, as asked for: `shapes` holds N shapes. */
  count: number;
  /** In draw order (heldoutShapes). */
  shapes: HeldoutShape[];
  /** Our kernels at each shape. */
  results: KernelResult[];
  /** cuBLAS, TF.js and any other peer at each shape. */
  peers: PeerResult[];
}

/** A reference implementation measured in the same process (cuBLAS, TF.js, OpenBLAS). */
export interface PeerResult extends Omit<Measured, "seed"> {
  /** "cublas", "tfjs-webgpu", "openblas-1t", "openblas-all". */
  peer: string;
  kernel: string;
  title: string;
  /** Where the number comes from, e.g. "CUDA events" or "tf.time() kernelMs". */
  timer: string;
  seed?: number;
  /** Peer-specific facts: library version and path, math mode, the programs TF.js ran. */
  details?: Record<string, string | number | boolean>;
}

/** What the record's `cpu` field holds (OpenBLAS rows go to `peers`). */
export interface CpuRecord {
  /** The CPU the numbers come from. */
  machine: CpuMachine;
  impls: CpuResult[];
  sweep: SweepRow[];
  /** The lecture's model (FLOPs, unique and all accesses) at the suite's sizes. */
  model: { n: number; series: string; value: number }[];
  /** Why something was skipped (e.g. OpenBLAS not found). */
  notes: string[];
}

/** The machine a CPU measurement ran on. */
export interface CpuMachine {
  model: string;
  logicalCores: number;
  /** The physical cores under the logical ones, by lscpu's threads per core (absent in older records). */
  physicalCores?: number;
  v8: string;
  /** Threads the threaded rung ran on (1 when it did not run). */
  threads: number;
  /** The caches the block sizes came from, the blocks, and whether relaxed SIMD was there. */
  caches?: CacheSizes;
  blocks?: Blocks;
  relaxedSimd?: boolean;
  /** 1-minute load average when measuring began (other work on the box skews wall clocks). */
  loadAverage?: number;
}

/** One CPU matmul at one size: an entry of the record's `cpu.impls`. */
export interface CpuResult extends Measured {
  /** The CPU ladder rung's id (lib/cpu_ladder.ts), e.g. "simd". */
  id: string;
  /** Display label, e.g. "SIMD, cache blocks" (what the CPU chart shows). */
  impl: string;
  /** The block size, for "blocked". */
  block?: number;
  timer: string;
}

/** One point of the block-size sweep (block 0 = one block spanning the matrix). */
export interface SweepRow {
  n: number;
  block: number;
  gflops: number;
  medianMs: number;
  minMs: number;
  maxMs: number;
  reps: number;
  relErr: number;
  validated: boolean;
  seed: number;
  error?: string;
}

/** Measured machine ceilings the roofline is drawn from (lib/ceilings.ts measures them). */
export interface Ceilings {
  /** Streaming bandwidth, bytes read + written per second, in GB/s. */
  bandwidthGBs: number;
  /** FP32 FMA throughput in GFLOP/s (2 FLOP per FMA). */
  fp32Gflops: number;
  /** Which streaming kernel gave the best bandwidth ("copy" or "read") and its buffer size. */
  bandwidthKernel?: string;
  bandwidthBufferBytes?: number;
  /** Independent scalar FMA chains per invocation and invocations of the best FP32 trial. */
  fp32Chains?: number;
  fp32Invocations?: number;
  /**
   * Packed f16 (vec2<f16>) FMA throughput in GFLOP/s, its best trial's scalar chains per
   * invocation and invocations; absent when the adapter lacks shader-f16 or the record predates
   * the f16 sweep.
   */
  f16Gflops?: number;
  f16Chains?: number;
  f16Invocations?: number;
  /** The GPU clock the sweeps were timed with. */
  timing?: Timing["method"];
  /** Every configuration tried; the ceilings are the best of each sweep. */
  bandwidthTrials?: BandwidthTrial[];
  fp32Trials?: FmaTrial[];
  f16Trials?: FmaTrial[];
}

/** One streaming-kernel configuration of the bandwidth sweep. */
export interface BandwidthTrial {
  kernel: "copy" | "read";
  workgroupSize: number;
  /** vec4 elements each invocation streams. */
  perInvocation: number;
  bufferBytes: number;
  /** Bytes read + written per pass. */
  bytesMoved: number;
  medianMs: number;
  gbs: number;
}

/** One configuration of an FMA sweep (FP32 or f16). */
export interface FmaTrial {
  /** Independent scalar FMA chains per invocation (4 per vec4<f32>, 2 per vec2<f16>). */
  chains: number;
  invocations: number;
  workgroupSize: number;
  iters: number;
  flops: number;
  medianMs: number;
  gflops: number;
}

/** One kernel checked on many random shapes against the float64 reference. */
export interface ValidationSweep {
  kernel: string;
  shapes: number;
  passed: number;
  /** The worst relative error seen, and failures (shape and message), if any. */
  maxRelErr: number;
  failures: { m: number; k: number; n: number; error: string }[];
}

/** One step's knob (KernelSpec.knob) swept at one shape: each point validated, then timed. */
export interface KnobSweep {
  /** The step's id and the knob's name. */
  kernel: string;
  knob: string;
  /** The points in sweep order, each named as the table and the chart show it. */
  points: { label: string; result: KernelResult }[];
}

/** How a live run (a notebook session, a browser page) describes itself in its record. */
export interface LiveRun {
  commit: string;
  /** The record's `deno` field: Deno's version, or what ran instead (a browser). */
  runtime: string;
  note: string;
  ceilings?: Ceilings;
}

/** Live results as a run record, so the chart builders can draw them and readers keep them. */
export function liveRunRecord(
  device: DeviceSummary,
  results: KernelResult[],
  run: LiveRun,
): RunRecord {
  return {
    schema: RECORD_SCHEMA,
    date: new Date().toISOString(),
    commit: run.commit,
    deno: run.runtime,
    device,
    ...(run.ceilings ? { ceilings: run.ceilings } : {}),
    results,
    peers: [],
    notes: [run.note],
  };
}

/** Where records live, relative to the project root. */
export const RUNS_DIR: URL = new URL("../data/runs/", import.meta.url);

/** The default record path for a device and run date: `<dir>/<device-slug>-<YYYY-MM-DD>.json`. */
export function recordPath(record: Pick<RunRecord, "device" | "date">, dir = "data/runs"): string {
  return `${dir.replace(/\/$/, "")}/${deviceSlug(record.device)}-${record.date.slice(0, 10)}.json`;
}

/**
 * JSON has no NaN: a failed result's relErr (NaN) is written as null and read back as NaN, so a
 * loaded record compares exactly like a live one.
 */
export function recordToJson(record: RunRecord): string {
  return JSON.stringify(
    record,
    (_k, v) => typeof v === "number" && !Number.isFinite(v) ? null : v,
    2,
  ) +
    "\n";
}

/** Parse a record's JSON text; throws if it is not a run record of a schema this code reads. */
export function recordFromJson(text: string, source = "record"): RunRecord {
  const record = JSON.parse(text) as RunRecord;
  if (
    typeof record !== "object" || record === null || typeof record.schema !== "number" ||
    !Array.isArray(record.results) || !Array.isArray(record.peers)
  ) {
    throw new Error(`${source} is not a gemm-ladder run record`);
  }
  if (record.schema > RECORD_SCHEMA) {
    throw new Error(
      `${source} has schema ${record.schema}; this code reads up to ${RECORD_SCHEMA}`,
    );
  }
  const knobResults = (record.knobs ?? []).flatMap((k) => k.points.map((p) => p.result));
  const heldout = [...record.heldout?.results ?? [], ...record.heldout?.peers ?? []];
  for (const r of [...record.results, ...record.peers, ...knobResults, ...heldout]) {
    if (r.relErr === null) r.relErr = NaN;
  }
  record.notes ??= [];
  return record;
}

/** Write a record (creating its folder) and return the path written. */
export async function writeRecord(record: RunRecord, path: string | URL): Promise<string> {
  const file = path instanceof URL ? path.pathname : path;
  const slash = file.lastIndexOf("/");
  if (slash > 0) await Deno.mkdir(file.slice(0, slash), { recursive: true });
  await Deno.writeTextFile(file, recordToJson(record));
  return file;
}

/** Load one record from a file path or URL. */
export async function loadRecord(path: string | URL): Promise<RunRecord> {
  return recordFromJson(await Deno.readTextFile(path), String(path));
}

/** Every record in a folder (default data/runs/), oldest run first; other JSON files are skipped. */
export async function listRecords(
  dir: string | URL = RUNS_DIR,
): Promise<{ path: string; record: RunRecord }[]> {
  const base = (dir instanceof URL ? dir.pathname : dir).replace(/\/$/, "");
  const found: { path: string; record: RunRecord }[] = [];
  try {
    for await (const entry of Deno.readDir(base)) {
      if (!entry.isFile || !entry.name.endsWith(".json")) continue;
      const path = `${base}/${entry.name}`;
      try {
        found.push({ path, record: await loadRecord(path) });
      } catch {
        // Not a run record (e.g. saved tuning results): not ours to read.
      }
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return found.sort((a, b) => a.record.date.localeCompare(b.record.date));
}

/**
 * The newest record in a folder, by run date; `filter` narrows the choice (e.g. real GPUs only,
 * `(r) => !r.device.software`). Undefined when there is none.
 */
export async function newestRecord(
  dir: string | URL = RUNS_DIR,
  filter: (r: RunRecord) => boolean = () => true,
): Promise<{ path: string; record: RunRecord } | undefined> {
  return (await listRecords(dir)).filter((x) => filter(x.record)).at(-1);
}

/**
 * The commit that ran: $GEMM_COMMIT (copies without .git, such as the GPU host's), else
 * `git rev-parse HEAD` with "+dirty" when tracked files differ, else "unknown".
 */
export async function currentCommit(): Promise<string> {
  const fromEnv = envOrUndefined("GEMM_COMMIT");
  if (fromEnv) return fromEnv;
  try {
    const git = (...args: string[]) =>
      new Deno.Command("git", { args, stdout: "piped", stderr: "null" }).output();
    const head = await git("rev-parse", "HEAD");
    if (!head.success) return "unknown";
    const status = await git("status", "--porcelain", "--untracked-files=no");
    const sha = new TextDecoder().decode(head.stdout).trim();
    const dirty = status.success && new TextDecoder().decode(status.stdout).trim() !== "";
    return dirty ? `${sha}+dirty` : sha;
  } catch {
    // No git binary, or no --allow-run=git.
    return "unknown";
  }
}

/** An environment variable, or undefined when unset or when env access is not permitted. */
export function envOrUndefined(name: string): string | undefined {
  try {
    return Deno.env.get(name) || undefined;
  } catch {
    return undefined;
  }
}

/** A complete run on a real GPU (not a software adapter, not stopped midway). */
export const isGpuRun = (r: RunRecord): boolean => !r.device.software && r.complete !== false;

/**
 * A run on a real GPU, complete or stopped midway. A stopped run's record holds each section it
 * finished (a knob's whole sweep, the ceilings), so those sections may be read from it; its
 * results table never stands for the ladder (isGpuRun).
 */
export const isGpuRecord = (r: RunRecord): boolean => !r.device.software;

/** Whether a record has a validated result of each of these steps (by name or id). */
export function coversSteps(record: RunRecord, steps: string[]): boolean {
  const names = new Set(record.results.filter((r) => r.validated).map((r) => stepName(r.kernel)));
  return steps.every((s) => names.has(stepName(s)));
}

/**
 * The record that shows the whole ladder: of the complete GPU runs, the newest of those that
 * validated the most of `steps` at the most shapes (so a step no GPU host has run yet, a later run
 * of only some steps, or a later run of every step at one size does not hide the ladder).
 * `records` sorted by date, as listRecords returns them.
 */
export function ladderRecord<T extends { record: RunRecord }>(
  records: T[],
  steps: string[],
): T | undefined {
  const covered = (r: RunRecord) => steps.filter((s) => coversSteps(r, [s])).length;
  const shapes = (r: RunRecord) =>
    new Set(r.results.filter((x) => x.validated).map(shapeLabel)).size;
  const gpu = records.filter((x) => isGpuRun(x.record));
  const most = Math.max(0, ...gpu.map((x) => covered(x.record)));
  const widest = gpu.filter((x) => covered(x.record) === most && most > 0);
  const mostShapes = Math.max(0, ...widest.map((x) => shapes(x.record)));
  return widest.filter((x) => shapes(x.record) === mostShapes).at(-1);
}
