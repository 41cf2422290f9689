/**
 * Autotuning in notebooks: a live search on the reader's adapter, shown with progress in place,
 * and a saved search shown as a table (lib/tuning.ts reads data/tuning/).
 */
import { autotune } from "../search.ts";
import { type Shape, shapeLabel } from "../matrix.ts";
import { fastestTrial, type TuningRecord } from "../tuning.ts";
import { type Cell, fmt, paramsLabel, showNote, tableBundle } from "./format.ts";
import { type LiveDisplay, liveDisplay, showBundle } from "./jupyter.ts";
import { kernel } from "./steps.ts";
import type { Session } from "./session.ts";

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
  const live = liveDisplay(`tune-${crypto.randomUUID()}`);
  const record = await autotune(s.gpu, kernel(key), shape, {
    space,
    save: false,
    budgetMs: s.software ? 200 : 150,
    // Not awaited: the live display keeps the updates in order, the table last; a failed
    // update also fails every later one, so the final table's await reports it.
    log: (line) => void live.update(line).catch(() => {}),
  });
  await showTuning(record, live);
  return record;
}

/**
 * Show a tuning search: the best trials, how many failed or were invalid, and the winner; with
 * `live`, the table replaces that display's progress.
 */
export async function showTuning(record: TuningRecord, live?: LiveDisplay): Promise<void> {
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
    paramsLabel(t.params),
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
  const table = tableBundle(head, rows, caption);
  await (live ? live.update(table) : showBundle(table));
  const fastest = fastestTrial(record);
  if (multi && fastest) {
    await showNote(
      `At each shape the runner takes the point it expects fastest there: its speed at ` +
        `${shapeLabel(record.shape)} times the share of its waves (one workgroup per SM) its ` +
        `grid fills. Grids that fill the GPU run the fastest point at ` +
        `${shapeLabel(record.shape)}, ${paramsLabel(fastest.params)} (${fmt(fastest.gflops)} ` +
        `GFLOP/s there); smaller grids run smaller tiles.`,
    );
  }
}
