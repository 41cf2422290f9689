/**
 * Tuning files, data/tuning/<device-slug>/<step-name>.json, one per device and tuned step: the
 * one module that reads and writes them (and a search's progress, <step-name>.partial.json, which
 * none reads). lib/search.ts saves its searches here; the runner
 * asks for the tuned parameters of a step (KernelSpec.deviceTuned) by the step's name, so a
 * renumbering of the steps leaves the files where they are.
 *
 * A device with no search of its own uses the nearest saved device's (`nearestTuning`): one of
 * the same vendor and subgroup size, preferring one whose workgroup limits (invocations and
 * workgroup memory) are the same as this device's, then the newest search. The runner still
 * checks every parameter set against this device's limits, and a result run with borrowed
 * tuning names the device it came from (KernelResult.tunedOn).
 */
import { deviceSlug, type DeviceSummary } from "./gpu.ts";
import { type Params, stepName } from "./steps/spec.ts";
import type { Shape } from "./matrix.ts";
import { deviceModel } from "./model/device.ts";
import { platform, projectUrl } from "./platform.ts";
import { writeWhole } from "./files.ts";

/** One candidate on one shape (gflops absent when it failed or was invalid). */
export interface ShapeTrial {
  shape: Shape;
  validated: boolean;
  medianMs?: number;
  gflops?: number;
  relErr?: number;
  error?: string;
}

/** One candidate the autotuner measured: its result at the record's `shape`, and the score. */
export interface TuningTrial {
  params: Params;
  validated: boolean;
  medianMs?: number;
  gflops?: number;
  relErr?: number;
  error?: string;
  /** Its results at the record's other `shapes` (only candidates that were shortlisted). */
  others?: ShapeTrial[];
  /** The objective: geometric mean of GFLOP/s over every shape (absent if any failed). */
  score?: number;
  /** Where it was measured, in a per-shape search (the record's `shape` otherwise). */
  shape?: Shape;
}

/** A per-shape search's winner at one shape (lib/tuning.ts keeps it; the step's picker reads). */
export interface ShapeWinner {
  shape: Shape;
  params: Params;
  gflops: number;
}

/** The saved result of one autotuning search on one device. */
export interface TuningRecord {
  schema: 1;
  device: DeviceSummary;
  date: string;
  commit: string;
  shape: Shape;
  /** Every shape of the objective, `shape` first (absent in files from a one-shape search). */
  shapes?: Shape[];
  /** Id of the kernel whose parameters were searched (compare by stepName). */
  kernel: string;
  space: Record<string, number[]>;
  trials: TuningTrial[];
  best: TuningTrial;
  /** A per-shape search (step 13's plans): the winner at each shape it measured. */
  perShape?: ShapeWinner[];
  /** The SM count the search assumed for its wave arithmetic (WebGPU does not report it). */
  sms?: number;
  /** A quick search: where its points came from (lib/search.ts quickPoints). */
  seededBy?: string;
}

/** A saved search, where it is, and the device it was run on when that is not this one. */
export interface TuningSource {
  record: TuningRecord;
  path: string;
  /** The device the search ran on, when it is another device's (the nearest saved one). */
  borrowedFrom?: string;
}

const TUNING_DIR = projectUrl("data/tuning/");

/** A step's tuning file on a device, relative to the project root. */
const tuningPath = (device: DeviceSummary, kernel: string) =>
  `data/tuning/${deviceSlug(device)}/${stepName(kernel)}.json`;

/** Where the tuning file of a step (by name or id) on a device lives. */
export function tuningUrl(device: DeviceSummary, kernel: string): URL {
  return projectUrl(tuningPath(device, kernel));
}

/**
 * The tuning record for this device, or undefined when there is none or it may not be read
 * (no --allow-read; a browser), in which case callers use their defaults. A malformed file
 * throws.
 */
export function loadTuning(device: DeviceSummary, kernel: string): TuningRecord | undefined {
  const url = tuningUrl(device, kernel);
  const text = platform.readTextSyncIfPresent(tuningPath(device, kernel));
  if (text === undefined) return undefined;
  const record = JSON.parse(text) as TuningRecord;
  if (!record?.best?.params) throw new Error(`${url.pathname}: no best.params`);
  if (!isTuningOf(record, kernel)) {
    throw new Error(`${url.pathname}: holds a search of ${record.kernel}, not of ${kernel}`);
  }
  return record;
}

/** Same vendor and subgroup size: tile parameters mean the same there. */
function sameFamily(a: DeviceSummary, b: DeviceSummary): boolean {
  return a.vendor === b.vendor && !a.software && !b.software &&
    a.subgroupMinSize === b.subgroupMinSize && a.subgroupMaxSize === b.subgroupMaxSize;
}

/** The workgroup limits a tile configuration needs are the same on both. */
function sameWorkgroupLimits(a: DeviceSummary, b: DeviceSummary): boolean {
  const keys = ["maxComputeWorkgroupStorageSize", "maxComputeInvocationsPerWorkgroup"] as const;
  return keys.every((k) => a.limits?.[k] === b.limits?.[k]);
}

/**
 * The saved search of `kernel` on the nearest other device (the rule in this module's header),
 * or undefined when no device of the same family has one (or files may not be read).
 */
export function nearestTuning(device: DeviceSummary, kernel: string): TuningSource | undefined {
  const mine = deviceSlug(device);
  const found: TuningSource[] = [];
  for (const slug of platform.listSyncIfPresent("data/tuning/") ?? []) {
    if (slug === mine) continue;
    const path = `data/tuning/${slug}/${stepName(kernel)}.json`;
    const text = platform.readTextSyncIfPresent(path);
    if (text === undefined) continue;
    const record = JSON.parse(text) as TuningRecord;
    if (!record?.best?.params || !isTuningOf(record, kernel)) continue;
    if (!record.device || !sameFamily(record.device, device)) continue;
    found.push({ record, path, borrowedFrom: record.device.description });
  }
  const rank = (t: TuningSource) => sameWorkgroupLimits(t.record.device, device) ? 0 : 1;
  return found.sort((a, b) => rank(a) - rank(b) || b.record.date.localeCompare(a.record.date))[0];
}

/** The search a device's runs use: its own, else the nearest saved device's. */
export function tuningFor(device: DeviceSummary, kernel: string): TuningSource | undefined {
  const own = loadTuning(device, kernel);
  return own ? { record: own, path: tuningPath(device, kernel) } : nearestTuning(device, kernel);
}

/** Write a tuning record to data/tuning/<device-slug>/<step-name>.json. */
export async function saveTuning(record: TuningRecord): Promise<URL> {
  const url = tuningUrl(record.device, record.kernel);
  await Deno.mkdir(new URL(".", url), { recursive: true });
  await Deno.writeTextFile(url, JSON.stringify(record, null, 2) + "\n");
  await Deno.remove(progressUrl(url)).catch((e) => {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  });
  return url;
}

/** Where a search still running keeps what it measured: <step-name>.partial.json beside it. */
const progressUrl = (url: URL) => new URL(url.href.replace(/\.json$/, ".partial.json"));

/** What a search has measured so far, for a run stopped before it saves (saveTuning removes it). */
export interface SearchProgress {
  device: DeviceSummary;
  kernel: string;
  date: string;
  commit: string;
  /**
   * Every shape the search will measure, how many it has measured, and how many of those it has
   * measured again (the confirming pass, which may lower a trial's speed).
   */
  shapes: Shape[];
  measured: number;
  confirmed: number;
  trials: TuningTrial[];
}

/**
 * Write a search's progress to data/tuning/<device-slug>/<step-name>.partial.json, which no run
 * reads: a run stopped by a time limit leaves its measured trials there (tools/gpu_bench.sh
 * copies it back) instead of nothing. Written whole (a temporary file renamed over it), so a run
 * stopped mid-write keeps the previous progress.
 */
export async function saveSearchProgress(progress: SearchProgress): Promise<URL> {
  const url = progressUrl(tuningUrl(progress.device, progress.kernel));
  await Deno.mkdir(new URL(".", url), { recursive: true });
  await writeWhole(url, JSON.stringify(progress, null, 1) + "\n");
  return url;
}

/**
 * The newest saved tuning search of a step (by name or id) from a real GPU, if any; with `device`
 * (a folder name of data/tuning/, e.g. "nvidia-h200"), that GPU's search, so a notebook that reads
 * one GPU's record shows that GPU's search.
 */
export async function recordedTuning(kernel: string, device?: string): Promise<
  { path: string; record: TuningRecord } | undefined
> {
  const found: { path: string; record: TuningRecord }[] = [];
  try {
    for await (const folder of Deno.readDir(TUNING_DIR)) {
      if (!folder.isDirectory || (device !== undefined && folder.name !== device)) continue;
      const url = new URL(`${folder.name}/${stepName(kernel)}.json`, TUNING_DIR);
      let text: string;
      try {
        text = await Deno.readTextFile(url);
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) continue;
        throw e;
      }
      const record = JSON.parse(text) as TuningRecord;
      if (record?.trials && !record.device?.software) found.push({ path: url.pathname, record });
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return found.sort((a, b) => a.record.date.localeCompare(b.record.date)).at(-1);
}

/** Whether a saved search was of this kernel (given by name or id). */
function isTuningOf(record: TuningRecord, kernel: string): boolean {
  return stepName(record.kernel) === stepName(kernel);
}

/** The search's fastest point at its first shape (the winner's ranking also weighs the rest). */
export function fastestTrial(record: TuningRecord): TuningTrial | undefined {
  return record.trials.filter((t) => t.validated && t.gflops)
    .reduce<TuningTrial | undefined>((a, t) => (a && a.gflops! >= t.gflops! ? a : t), undefined);
}

/** Workgroups of a BM x BN tiling of C. */
const tilesOf = (s: Shape, p: Params) => Math.ceil(s.m / p.BM) * Math.ceil(s.n / p.BN);

/**
 * The share of its waves a grid of `workgroups` keeps busy, a wave being one workgroup on each of
 * `sms` SMs: 1 when the last wave is full, 32 / 132 for 32 workgroups on 132 SMs.
 */
export const waveFill = (workgroups: number, sms: number): number =>
  workgroups / (Math.ceil(workgroups / sms) * sms);

/**
 * The parameters tuned for `kernel` (a step name; an id is matched by its name) on this device
 * (or on the nearest saved device, tuningFor), or undefined (no tuning saved, or it was saved
 * for another kernel) to use the kernel's defaults. Without `shape`, the winner: the best over
 * all the search's shapes, small and odd ones included. With `shape`, the point of the search
 * expected fastest there: its speed at the search's first shape times the share of its waves its
 * grid would fill at `shape` (a wave: one workgroup per SM). A big tile on a grid too small to
 * fill the SMs leaves them idle, so small grids get smaller tiles; on grids that fill the GPU the
 * first shape's ranking holds. Ties go to the winner.
 */
export function tunedParams(
  device: DeviceSummary,
  kernel: string,
  shape?: Shape,
): Params | undefined {
  const found = tuningFor(device, kernel);
  if (!found) return undefined;
  const { record } = found;
  if (!shape) return record.best.params;
  const sms = deviceModel(device, record).sms;
  const expected = (p: Params, gflops: number) => gflops * waveFill(tilesOf(shape, p), sms);
  let pick = record.best.params;
  let best = expected(pick, record.best.gflops ?? 0);
  for (const t of record.trials) {
    if (!t.validated || !t.gflops) continue;
    const e = expected(t.params, t.gflops);
    if (e > best) [pick, best] = [t.params, e];
  }
  return pick;
}
