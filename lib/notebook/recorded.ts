/**
 * The recorded side of the notebooks: the newest GPU-host run record from data/runs/, shown
 * beside the reader's live numbers (or a plain "no recorded GPU run yet" while none is
 * committed), and live runs as records for the charts.
 */
import { isSquare, measured, peerLabel } from "../charts/common.ts";
import {
  type Ceilings,
  coversSteps,
  currentCommit,
  isGpuRecord,
  isGpuRun,
  type KernelResult,
  ladderRecord,
  listRecords,
  liveRunRecord,
  loadRecord,
  newestRecord,
  type PeerResult,
  type RunRecord,
  RUNS_DIR,
} from "../record.ts";
import { type Cell, fmt, showNote, showTable, SPREAD_COLUMN, spreadCell } from "./format.ts";
import { percentOf, referencePeer } from "../compare.ts";
import { type Shape, square } from "../matrix.ts";
import { suiteCompanion } from "../suite.ts";
import { findKernel, KERNELS, stepName } from "../registry.ts";
import { kernel } from "./steps.ts";
import { type Session, showCeilings } from "./session.ts";

/** Every step of the ladder (the teaching variants are optional in a record). */
const LADDER = KERNELS.filter((k) => !k.demo).map((k) => k.name);

/**
 * The newest complete run record from a real GPU (not a software adapter) that validated every
 * one of `steps` (by name or id), if one is committed; failing that, the newest GPU run that
 * stopped after validating them all, with a `note` saying it stopped. Without `steps`, the record
 * of the whole ladder (`ladderRecord`). A later run of only some steps is shown where those steps
 * are, and never hides the ladder.
 */
export async function recordedGpuRun(
  steps?: string[],
): Promise<{ path: string; record: RunRecord; note?: string } | undefined> {
  if (!steps) {
    return pinned
      ? await newestGpuSection(() => true)
      : ladderRecord(await listRecords(recordsDir), LADDER);
  }
  return await newestGpuRun((r) => coversSteps(r, steps)) ??
    await newestGpuSection((r) => coversSteps(r, steps));
}

/**
 * The newest complete run record from a real GPU for which `holds` is true (the notebook's own
 * record, useRecord, when it pinned one).
 */
export async function newestGpuRun(
  holds: (r: RunRecord) => boolean,
): Promise<{ path: string; record: RunRecord } | undefined> {
  // A pinned record is the notebook's explicit choice: shown even if its run stopped early.
  if (pinned) return isGpuRecord(pinned.record) && holds(pinned.record) ? pinned : undefined;
  return await newestRecord(recordsDir, (r) => isGpuRun(r) && holds(r));
}

/**
 * Where `found`'s suite is: `found`, or the run of the same device and commit that measured more
 * of the suite (a held-out run that left the suite to a second call, lib/suite.ts suiteCompanion).
 */
export async function suiteSource(
  found: { path: string; record: RunRecord },
): Promise<{ path: string; record: RunRecord }> {
  return suiteCompanion(found, await listRecords(recordsDir)) ?? found;
}

/**
 * The newest run record from a real GPU, complete or stopped after the section `holds` looks
 * for (isGpuRecord), with a note naming a stopped run as such. With a pinned record (useRecord),
 * that record; `beyondPin` looks further when it lacks the section (a separate measurement
 * such as a knob's sweep, which the cell then names as its own run).
 */
export async function newestGpuSection(
  holds: (r: RunRecord) => boolean,
  opts: { beyondPin?: boolean } = {},
): Promise<{ path: string; record: RunRecord; note: string } | undefined> {
  const fromPin = pinned && isGpuRecord(pinned.record) && holds(pinned.record) ? pinned : undefined;
  const found = fromPin ??
    (pinned && !opts.beyondPin
      ? undefined
      : await newestRecord(recordsDir, (r) => isGpuRecord(r) && holds(r)));
  if (!found) return undefined;
  const stopped = found.record.complete === false;
  return { ...found, note: stopped ? " (a run stopped at the time limit after this part)" : "" };
}

let recordsDir: string | URL = RUNS_DIR;
let pinned: { path: string; record: RunRecord } | undefined;

/** One record of the records folder, by file name. */
async function namedRecord(file: string): Promise<{ path: string; record: RunRecord }> {
  const base = (recordsDir instanceof URL ? recordsDir.pathname : recordsDir).replace(/\/$/, "");
  const path = `${base}/${file}`;
  return { path, record: await loadRecord(path) };
}

/** Read recorded runs from another folder than data/runs/ (your own records, or tests). */
export function setRecordsDir(dir: string | URL = RUNS_DIR): void {
  recordsDir = dir;
}

/**
 * The notebook's one record: every recorded table, model and chart after this reads the record
 * `file` (a name in the records folder) and no other; where it lacks what a cell shows, the
 * cell says so. Without `file`, back to the newest record that has it.
 */
export async function useRecord(file?: string): Promise<void> {
  if (!file) {
    pinned = undefined;
    return;
  }
  pinned = await namedRecord(file);
}

/** Show the ceilings the newest GPU-host record measured, or say that none exists yet. */
export async function showRecordedCeilings(): Promise<void> {
  const found = await newestGpuSection((r) => r.ceilings !== undefined);
  if (!found?.record.ceilings) {
    await showNote(
      found
        ? "The recorded GPU runs have no measured ceilings."
        : "**No recorded GPU run yet**: its ceilings will show here once a record from the GPU " +
          "host is committed to `data/runs/`.",
    );
    return;
  }
  const r = found.record;
  await showCeilings(
    r.ceilings!,
    `recorded GPU run on ${r.device.description}, ${r.date.slice(0, 10)}${found.note}`,
  );
}

/**
 * The runs a chart should draw: the recorded GPU run (when one is committed) and this
 * session's live results, each as a run record. With an f16 kernel among the live results the
 * recorded run is the newest GPU run that measured the f16 ceiling with those steps, so the
 * roofline can put the f16 kernel under its own roof.
 */
export async function chartRuns(
  s: Session,
  live: KernelResult[],
  ceilings?: Ceilings,
): Promise<RunRecord[]> {
  const steps = live.map((r) => r.kernel);
  const withF16Roof = steps.some((id) => kernel(id).precision === "f16")
    ? await newestGpuSection((r) => r.ceilings?.f16Gflops !== undefined && coversSteps(r, steps))
    : undefined;
  const recorded = withF16Roof ?? await recordedGpuRun(steps.length ? steps : undefined);
  const mine = await liveRecord(s, live, ceilings);
  if (!recorded) return [mine];
  // The recorded ladder up to this lesson's step: later steps are not met yet.
  const last = Math.max(...steps.map((id) => kernel(id).number));
  const upTo = (r: KernelResult) => (findKernel(r.kernel)?.number ?? Infinity) <= last;
  const shown = steps.length
    ? { ...recorded.record, results: recorded.record.results.filter(upTo) }
    : recorded.record;
  return [shown, mine];
}

/** A run record of this session's live results, so the chart builders can draw them. */
export async function liveRecord(
  s: Session,
  results: KernelResult[],
  ceilings?: Ceilings,
): Promise<RunRecord> {
  return liveRunRecord(s.summary, results, {
    commit: await currentCommit(),
    runtime: Deno.version.deno,
    note: "live notebook run",
    ceilings,
  });
}

/**
 * The validated, timed result at square size n, keyed by kernel id or peer name (the last one
 * where a size ran twice).
 */
function resultsAt<T extends KernelResult | PeerResult>(
  rows: readonly T[],
  n: number,
): Map<string, T> {
  const out = new Map<string, T>();
  for (const r of measured(rows)) {
    if (isSquare(r) && r.n === n) out.set("peer" in r ? r.peer : r.kernel, r);
  }
  return out;
}

/** GFLOP/s at square size n, keyed as resultsAt keys. */
function gflopsAt(rows: readonly (KernelResult | PeerResult)[], n: number): Map<string, number> {
  return new Map([...resultsAt(rows, n)].map(([key, r]) => [key, r.gflops!]));
}

/**
 * The size a comparison uses: `preferred` when every kernel has a result there, else the largest
 * square size at which every kernel has one (else the largest size of any).
 */
function commonSize(
  rows: readonly KernelResult[],
  ids: string[],
  preferred?: number,
): number | undefined {
  const sizes = [...new Set(rows.filter(isSquare).map((r) => r.n))].sort((a, b) => b - a);
  const complete = (n: number, among = ids) => among.every((id) => gflopsAt(rows, n).has(id));
  // The lesson's size wins when its steps ran there, even if a teaching variant did not.
  const steps = ids.filter((id) => !kernel(id).demo);
  if (preferred !== undefined && complete(preferred, steps)) return preferred;
  return sizes.find((n) => complete(n)) ?? sizes.find((n) => complete(n, steps)) ?? sizes[0];
}

/**
 * A notebook's one size: the record's numbers it quotes and the model it shows are at 4096, where
 * the record has it.
 */
export const RECORDED_SIZE = 4096;

/** Options of showRecorded. */
export interface RecordedOptions {
  /**
   * The square size of the recorded numbers (default RECORDED_SIZE); where the record lacks a
   * kernel at it, the largest size at which it has them all.
   */
  size?: number;
}

/**
 * Show the committed GPU-host record's numbers for these kernels at one size beside the reader's
 * live ones: GFLOP/s, the speedup over the first kernel listed (comparable across machines), and
 * the share of cuBLAS measured in the same recorded run. Says so plainly when no GPU record exists
 * yet.
 */
export async function showRecorded(
  keys: string[],
  live: KernelResult[] = [],
  opts: RecordedOptions = {},
): Promise<void> {
  const ids = keys.map((k) => kernel(k).id);
  // Teaching variants (a demo such as the local-array kernel) are in no bench record: the
  // record of the ladder steps among the keys is shown, the variants' rows left empty.
  const found = await recordedGpuRun(keys) ??
    await recordedGpuRun(keys.filter((k) => !kernel(k).demo));
  const liveN = commonSize(live, ids);
  const liveAt = liveN ? gflopsAt(live, liveN) : new Map<string, number>();
  if (!found) {
    await showNote(
      "**No recorded GPU run yet.** When a run record from the GPU host is committed to " +
        "`data/runs/` (written by `deno task bench`), this cell shows its numbers for these " +
        "kernels beside cuBLAS and TF.js, and beside yours.",
    );
    return;
  }
  const { record, path } = found;
  // Matched by step name, so a record from before a renumbering still shows (under today's id).
  const idOf = new Map(keys.map((k) => [kernel(k).name, kernel(k).id]));
  const recRows = record.results.flatMap((r) => {
    const id = idOf.get(stepName(r.kernel));
    return id ? [{ ...r, kernel: id }] : [];
  });
  const recN = commonSize(recRows, ids, opts.size ?? RECORDED_SIZE);
  const recResults = recN ? resultsAt(recRows, recN) : new Map<string, KernelResult>();
  const recAt = new Map([...recResults].map(([id, r]) => [id, r.gflops!]));
  const peersAt = recN ? resultsAt(record.peers, recN) : new Map<string, PeerResult>();
  const reference = recN ? referencePeer(record.peers, square(recN)) : undefined;
  const ratio = (m: Map<string, number>, id: string) =>
    m.has(id) && m.has(ids[0]) ? m.get(id)! / m.get(ids[0])! : undefined;
  const rows: Cell[][] = ids.map((id) => [
    id,
    recAt.get(id),
    spreadCell(recResults.get(id)),
    ratio(recAt, id),
    percentOf(recAt.get(id), reference),
    liveAt.get(id),
    ratio(liveAt, id),
  ]);
  for (const [peer, result] of peersAt) {
    if (peer === "cublas" || peer === "tfjs-webgpu" || peer === "jaxjs-webgpu") {
      rows.push([
        peerLabel(peer),
        result.gflops,
        spreadCell(result),
        undefined,
        percentOf(result.gflops, reference),
        undefined,
        undefined,
      ]);
    }
  }
  const where = `${record.device.description}, ${record.date.slice(0, 10)}, commit ` +
    `${record.commit.slice(0, 7)} (${dataPath(path)})${found.note ?? ""}`;
  if (!recAt.size) {
    await showNote(`The newest GPU record (${where}) has no result for ${ids.join(", ")} yet.`);
  }
  await showTable(
    [
      "kernel / peer",
      `recorded GFLOP/s${recN ? ` at ${recN}` : ""}`,
      `recorded ${SPREAD_COLUMN}`,
      `x ${ids[0]}`,
      `% of ${reference?.title ?? "cuBLAS"}`,
      `your GFLOP/s${liveN ? ` at ${liveN}` : ""}`,
      `x ${ids[0]} (yours)`,
    ],
    rows,
    `From the recorded GPU run on ${where}${ceilingsNote(record.ceilings)}; yours live on ` +
      "this adapter",
  );
}

/** A record's path as captions print it: from `data/` on. */
export const dataPath = (path: string): string => path.replace(/^.*\/data\//, "data/");

/** The record's measured ceilings, for a caption: the numbers the lessons' bounds start from. */
function ceilingsNote(c: Ceilings | undefined): string {
  if (!c) return "";
  return ` (measured in that run: ${fmt(c.bandwidthGBs / 1000)} TB/s DRAM bandwidth, ` +
    `${fmt(c.fp32Gflops / 1000)} TFLOP/s FP32 peak)`;
}

/**
 * The committed record's numbers for these kernels at every size and shape it measured them all
 * at (M x K x N, in the record's order), with the last kernel's speedup over the first and
 * cuBLAS's share beside each: the evidence a lesson cites from sizes other than its own. The
 * notebook's record, or `opts.record`, a record file of the records folder that a separate run
 * wrote (a sweep of one dimension, a control), named in the caption.
 */
export async function showRecordedShapes(
  keys: string[],
  opts: { record?: string } = {},
): Promise<void> {
  const found = opts.record ? await namedRecord(opts.record) : await recordedGpuRun(keys);
  if (!found) {
    await showNote(
      "**No recorded GPU run yet.** Once a record from the GPU host is committed to `data/runs/`, " +
        "this cell shows its numbers for these kernels at every size and shape it ran.",
    );
    return;
  }
  const { record, path } = found;
  const ids = keys.map((k) => kernel(k).id);
  const idOf = new Map(keys.map((k) => [kernel(k).name, kernel(k).id]));
  // Each shape's fastest validated result per kernel, keyed by its label, in the record's order.
  const at = new Map<string, { shape: Shape; gflops: Map<string, number> }>();
  for (const r of measured(record.results)) {
    const id = idOf.get(stepName(r.kernel));
    if (!id) continue;
    const label = `${r.m} x ${r.k} x ${r.n}`;
    const row = at.get(label) ?? { shape: { m: r.m, k: r.k, n: r.n }, gflops: new Map() };
    row.gflops.set(id, Math.max(row.gflops.get(id) ?? 0, r.gflops!));
    at.set(label, row);
  }
  const first = ids[0], last = ids[ids.length - 1];
  const shown = [...at].filter(([, row]) => ids.every((id) => row.gflops.has(id)));
  // A run without peers (a sweep of one dimension, a control) has no cuBLAS column.
  const withPeer = shown.some(([, { shape }]) => referencePeer(record.peers, shape));
  const rows = shown.map(([label, { shape, gflops }]): Cell[] => [
    label,
    ...ids.map((id) => gflops.get(id)),
    ...(ids.length > 1 ? [gflops.get(last)! / gflops.get(first)!] : []),
    ...(withPeer ? [percentOf(gflops.get(last), referencePeer(record.peers, shape))] : []),
  ]);
  await showTable(
    [
      "M x K x N",
      ...ids.map((id) => `${id} GFLOP/s`),
      ...(ids.length > 1 ? [`x ${first}`] : []),
      ...(withPeer
        ? [`${last} % of ${referencePeer(record.peers, square(RECORDED_SIZE))?.title ?? "cuBLAS"}`]
        : []),
    ],
    rows,
    `Every size and shape in the recorded GPU run on ${record.device.description}, ` +
      `${record.date.slice(0, 10)}, commit ${record.commit} (${dataPath(path)})`,
  );
}
