/**
 * The recorded side of the notebooks: the newest GPU-host run record from data/runs/ and its
 * saved tuning search from data/tuning/, shown beside the reader's live numbers (or a plain
 * "no recorded GPU run yet" while none is committed), and live runs as records for the charts.
 */
import { type Ablation, loadAblation } from "./ablation.ts";
import { autotune } from "./autotune.ts";
import { type Shape, shapeLabel } from "./matrix.ts";
import {
  type Cell,
  fmt,
  kernel,
  type Session,
  showBundle,
  showCeilings,
  showNote,
  showTable,
  tableBundle,
} from "./notebook.ts";
import {
  type Ceilings,
  currentCommit,
  type KernelResult,
  newestRecord,
  type PeerResult,
  RECORD_SCHEMA,
  type RunRecord,
  RUNS_DIR,
} from "./record.ts";
import type { Params } from "./registry.ts";
import { fastestTrial, type TuningRecord } from "./tuning.ts";

/** Show the ceilings the newest GPU-host record measured, or say that none exists yet. */
export async function showRecordedCeilings(): Promise<void> {
  const found = await recordedGpuRun();
  if (!found?.record.ceilings) {
    await showNote(
      found
        ? "The newest recorded GPU run has no measured ceilings."
        : "**No recorded GPU run yet**: its ceilings will show here once a record from the GPU " +
          "host is committed to `data/runs/`.",
    );
    return;
  }
  const r = found.record;
  await showCeilings(
    r.ceilings!,
    `recorded GPU run on ${r.device.description}, ${r.date.slice(0, 10)}`,
  );
}

/**
 * The runs a chart should draw: the recorded GPU run (when one is committed) and this
 * session's live results, each as a run record.
 */
export async function chartRuns(
  s: Session,
  live: KernelResult[],
  ceilings?: Ceilings,
): Promise<RunRecord[]> {
  const recorded = await recordedGpuRun();
  const mine = await liveRecord(s, live, ceilings);
  return recorded ? [recorded.record, mine] : [mine];
}

/** A run record of this session's live results, so the chart builders can draw them. */
export async function liveRecord(
  s: Session,
  results: KernelResult[],
  ceilings?: Ceilings,
): Promise<RunRecord> {
  return {
    schema: RECORD_SCHEMA,
    date: new Date().toISOString(),
    commit: await currentCommit(),
    deno: Deno.version.deno,
    device: s.summary,
    ...(ceilings ? { ceilings } : {}),
    results,
    peers: [],
    notes: ["live notebook run"],
  };
}

// ---------------------------------------------------------------------------------------------
// Recorded runs from the GPU host (data/runs/).

/** The newest run record from a real GPU (not a software adapter), if one is committed. */
export async function recordedGpuRun(): Promise<{ path: string; record: RunRecord } | undefined> {
  return await newestRecord(recordsDir, (r) => !r.device.software);
}

let recordsDir: string | URL = RUNS_DIR;

/** Read recorded runs from another folder than data/runs/ (your own records, or tests). */
export function setRecordsDir(dir: string | URL = RUNS_DIR): void {
  recordsDir = dir;
}

const isSquare = (r: { m: number; n: number; k: number }) => r.m === r.n && r.n === r.k;

/** GFLOP/s at square size n, keyed by kernel id or peer name (validated and timed only). */
function gflopsAt(rows: readonly (KernelResult | PeerResult)[], n: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of rows) {
    if (isSquare(r) && r.n === n && r.validated && r.gflops) {
      out.set("peer" in r ? r.peer : r.kernel, r.gflops);
    }
  }
  return out;
}

/** The size a comparison uses: the largest square size at which every kernel has a result. */
function commonSize(rows: readonly KernelResult[], ids: string[]): number | undefined {
  const sizes = [...new Set(rows.filter(isSquare).map((r) => r.n))].sort((a, b) => b - a);
  return sizes.find((n) => ids.every((id) => gflopsAt(rows, n).has(id))) ?? sizes[0];
}

/**
 * Show the committed GPU-host record's numbers for these kernels beside the reader's live ones:
 * GFLOP/s, the speedup over the first kernel listed (comparable across machines), and the share
 * of cuBLAS measured in the same recorded run. Says so plainly when no GPU record exists yet.
 */
export async function showRecorded(keys: string[], live: KernelResult[] = []): Promise<void> {
  const ids = keys.map((k) => kernel(k).id);
  const found = await recordedGpuRun();
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
  const recRows = record.results.filter((r) => ids.includes(r.kernel));
  const recN = commonSize(recRows, ids);
  const recAt = recN ? gflopsAt(recRows, recN) : new Map<string, number>();
  const peersAt = recN ? gflopsAt(record.peers, recN) : new Map<string, number>();
  const cublas = peersAt.get("cublas");
  const ratio = (m: Map<string, number>, id: string) =>
    m.has(id) && m.has(ids[0]) ? m.get(id)! / m.get(ids[0])! : undefined;
  const rows: Cell[][] = ids.map((id) => [
    id,
    recAt.get(id),
    ratio(recAt, id),
    cublas && recAt.has(id) ? (100 * recAt.get(id)!) / cublas : undefined,
    liveAt.get(id),
    ratio(liveAt, id),
  ]);
  for (const [peer, gflops] of peersAt) {
    if (peer === "cublas" || peer === "tfjs-webgpu") {
      rows.push([
        peerLabel(peer),
        gflops,
        undefined,
        cublas ? (100 * gflops) / cublas : undefined,
        undefined,
        undefined,
      ]);
    }
  }
  const where = `${record.device.description}, ${record.date.slice(0, 10)}, commit ` +
    `${record.commit.slice(0, 7)} (${path.replace(/^.*\/data\//, "data/")})`;
  if (!recAt.size) {
    await showNote(`The newest GPU record (${where}) has no result for ${ids.join(", ")} yet.`);
  }
  await showTable(
    [
      "kernel / peer",
      `recorded GFLOP/s${recN ? ` at ${recN}` : ""}`,
      `x ${ids[0]}`,
      "% of cuBLAS",
      `your GFLOP/s${liveN ? ` at ${liveN}` : ""}`,
      `x ${ids[0]} (yours)`,
    ],
    rows,
    `From the recorded GPU run on ${where}; yours live on this adapter`,
  );
}

function peerLabel(peer: string): string {
  return peer === "cublas" ? "cuBLAS" : peer === "tfjs-webgpu" ? "TF.js WebGPU" : peer;
}

// ---------------------------------------------------------------------------------------------
// Autotuning: a live search on this adapter and the GPU host's saved search.

/** The newest saved tuning search from a real GPU (data/tuning/*.json), if any. */
export async function recordedTuning(): Promise<
  { path: string; record: TuningRecord } | undefined
> {
  const dir = new URL("../data/tuning/", import.meta.url);
  const found: { path: string; record: TuningRecord }[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (!entry.isFile || !entry.name.endsWith(".json")) continue;
      const url = new URL(entry.name, dir);
      try {
        const record = JSON.parse(await Deno.readTextFile(url)) as TuningRecord;
        if (record?.trials && !record.device?.software) found.push({ path: url.pathname, record });
      } catch {
        // Not a tuning record.
      }
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return found.sort((a, b) => a.record.date.localeCompare(b.record.date)).at(-1);
}

/**
 * Search `key`'s tile parameters on this adapter at `shape` (a reduced `space` keeps it quick
 * on a software adapter), showing progress in place; nothing is saved.
 */
export async function tuneLive(
  s: Session,
  key: string,
  shape: Shape,
  space?: Record<string, number[]>,
): Promise<TuningRecord> {
  const displayId = `tune-${crypto.randomUUID()}`;
  // Progress updates are chained so none can land after (and overwrite) the final table.
  let progress = Promise.resolve();
  let shown = false;
  const record = await autotune(s.gpu, kernel(key), shape, {
    space,
    save: false,
    budgetMs: s.software ? 200 : 150,
    log: (line) => {
      const update = shown;
      shown = true;
      progress = progress.then(() => showBundle({ "text/plain": line }, { displayId, update }));
    },
  });
  await progress;
  await showTuning(record, displayId);
  return record;
}

/** Show a tuning search: the best trials, how many failed or were invalid, and the winner. */
export async function showTuning(record: TuningRecord, displayId?: string): Promise<void> {
  const label = (p: Params) => Object.entries(p).map(([k, v]) => `${k}=${v}`).join(" ");
  const timed = record.trials.filter((t) => t.gflops !== undefined)
    .sort((a, b) => b.gflops! - a.gflops!);
  const invalid = record.trials.filter((t) => !t.validated && t.medianMs === undefined).length;
  // A search over several shapes ranks its shortlist by the score (geometric mean over shapes).
  const shapes = record.shapes ?? [record.shape];
  const multi = shapes.length > 1;
  const ranked = multi
    ? record.trials.filter((t) => t.score !== undefined).sort((a, b) => b.score! - a.score!)
    : timed;
  const rows: Cell[][] = ranked.slice(0, 8).map((t, i) => [
    i === 0 ? "winner" : String(i + 1),
    label(t.params),
    t.gflops,
    ...(multi ? [t.score] : []),
    t.relErr,
  ]);
  const caption = `Tuning ${record.kernel} on ${record.device.description} at ` +
    `${shapes.map(shapeLabel).join(", ")} (${
      record.date.slice(0, 10)
    }, commit ${record.commit}): ` +
    `${record.trials.length} points, ${timed.length} timed, ${invalid} invalid or failed` +
    (multi ? `; the ${ranked.length} fastest at ${shapeLabel(record.shape)} ranked by score` : "");
  const head = multi
    ? [
      "rank",
      "parameters",
      `GFLOP/s at ${shapeLabel(record.shape)}`,
      "geomean GFLOP/s",
      "rel. error",
    ]
    : ["rank", "parameters", "GFLOP/s", "rel. error"];
  await showBundle(
    tableBundle(head, rows, caption),
    displayId ? { displayId, update: true } : {},
  );
  const fastest = fastestTrial(record);
  if (multi && fastest && label(fastest.params) !== label(record.best.params)) {
    await showNote(
      `Grids with at least as many workgroups as ${shapeLabel(record.shape)} has under its tile ` +
        `run the fastest point at ${shapeLabel(record.shape)} instead of the winner: ` +
        `${label(fastest.params)} (${fmt(fastest.gflops)} GFLOP/s there, geometric mean ` +
        `${fmt(fastest.score)}); smaller grids run the winner.`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Where the time goes: an ablation probe of the GPU host, taken apart stage by stage.

/**
 * Show one configuration of an ablation probe (data/probes/): the time with each stage of the
 * tile loop taken out on top of the ones above, what each stage costs, and how the loop with
 * only its multiply-adds left compares with cuBLAS measured in the same run.
 */
export async function showAblation(file: string, config: string): Promise<Ablation> {
  const a = await loadAblation(file, config);
  const whole = a.stages[0].ms;
  await showTable(
    [
      "left out (with the rows above)",
      "µs",
      "GFLOP/s-equivalent",
      "the stage costs µs",
      "% of the whole",
    ],
    a.stages.map((s) => [
      s.leftOut,
      s.ms * 1e3,
      s.gflopsEquivalent,
      s.costMs === undefined ? undefined : s.costMs * 1e3,
      s.costMs === undefined ? undefined : (100 * s.costMs) / whole,
    ]),
    `11 ${config} at ${a.shape}, ${a.device}, ${a.started.slice(0, 16)}Z` +
      `${a.commit ? `, commit ${a.commit.slice(0, 7)}` : ""} (data/probes/` +
      `${file.replace(/^.*\//, "")}); median GPU time of each variant`,
  );
  const last = a.stages.at(-1)!;
  const ofCublas = (g: number) => a.cublasGflops ? ` (${fmt(g / a.cublasGflops)} of cuBLAS)` : "";
  await showNote(
    `In the same run the whole kernel was validated (relative error ${fmt(a.validated.relErr)}) ` +
      `at ${fmt(a.validated.gflops)} GFLOP/s${ofCublas(a.validated.gflops)}` +
      (a.cublasGflops ? `, and cuBLAS ran at ${fmt(a.cublasGflops)}` : "") +
      `. With only its multiply-adds left the loop runs at ${fmt(last.gflopsEquivalent)}` +
      `${ofCublas(last.gflopsEquivalent)}.`,
  );
  return a;
}
