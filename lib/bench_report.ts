/**
 * What a bench run reports: a line per result as it finishes, the results table, the suite in
 * one line, and the exit status.
 */
import { shapeLabel } from "./matrix.ts";
import type { KernelResult, PeerResult, RunRecord } from "./record.ts";
import { geomean, percentOf, ratio, referencePeer } from "./compare.ts";
import { type SuiteRow, suiteRows } from "./suite.ts";

/** Exit statuses of `deno task bench`. */
export const EXIT = { ok: 0, failed: 1, usage: 2, deviceLost: 3 } as const;

/** Kinds of failure that skip a row rather than fail the run. */
const SKIP_KINDS = new Set(["feature", "limit"]);

/**
 * The shape suite in one line: the geometric mean of the planning step's GFLOP/s over the
 * reference's (lib/compare.ts) and its lowest row, when the run measured both on suite shapes.
 */
export function suiteNote(record: RunRecord): string | undefined {
  const of = (r: SuiteRow) => ratio(r.step, r.reference?.gflops);
  const rows = suiteRows(record).filter((r) => of(r) !== undefined);
  if (!rows.length) return undefined;
  const low = rows.reduce((a, r) => (of(r)! < of(a)! ? r : a));
  const refs = [...new Set(rows.map((r) => r.reference!.peer))].join(" or ");
  return `shape suite: planned / ${refs} geometric mean ${
    geomean(rows.map(of))!.toFixed(3)
  } over ${rows.length} shapes; lowest ${of(low)!.toFixed(3)} at ${low.label}`;
}

/** 1 if the run stopped early or any result failed (skips excepted), else 0. */
export function exitCodeOf(record: RunRecord): number {
  if (record.complete === false) return EXIT.failed;
  const knobResults = (record.knobs ?? []).flatMap((k) => k.points.map((p) => p.result));
  const failed = [...record.results, ...record.peers, ...knobResults].some((r) =>
    !r.validated && !SKIP_KINDS.has(r.errorKind ?? "")
  );
  const sweepFailed = record.validation?.some((v) => v.passed < v.shapes);
  return failed || sweepFailed ? EXIT.failed : EXIT.ok;
}

export function nameOf(r: KernelResult | PeerResult): string {
  return "peer" in r ? `peer:${r.peer}` : r.kernel;
}

export function progressLine(r: KernelResult | PeerResult): string {
  const what = `${nameOf(r)} ${shapeLabel(r)}`;
  if (!r.validated) return `${what}: ${statusOf(r)}`;
  if (r.medianMs === undefined) return `${what}: validated (relErr ${fmtErr(r.relErr)})`;
  return `${what}: ${r.medianMs.toFixed(3)} ms, ${r.gflops!.toFixed(1)} GFLOP/s, ` +
    `relErr ${fmtErr(r.relErr)}`;
}

function statusOf(r: KernelResult | PeerResult): string {
  const kind = r.errorKind ?? "error";
  return `${SKIP_KINDS.has(kind) ? "skipped" : "FAILED"} (${kind}): ${r.error ?? "not validated"}`;
}

const fmtErr = (x: number) => Number.isFinite(x) ? x.toExponential(1) : "NaN";

/**
 * The results as a text table: kernel, shape, median ms, GFLOP/s, % of the reference at that
 * shape (lib/compare.ts), relative error. Failed and
 * skipped rows show why instead of a speed.
 */
export function formatTable(record: RunRecord): string {
  const rows: string[][] = [["kernel", "shape", "median ms", "GFLOP/s", "% of ref", "rel err"]];
  const notes: string[] = [];
  for (const r of [...record.results, ...record.peers]) {
    const row = [nameOf(r), shapeLabel(r)];
    if (!r.validated || r.medianMs === undefined || r.gflops === undefined) {
      row.push(r.validated ? "validated, not timed" : statusOf(r).slice(0, 160));
      rows.push(row);
      continue;
    }
    const ref = referencePeer(record.peers, r);
    row.push(
      r.medianMs.toFixed(3),
      r.gflops.toFixed(1),
      ref ? `${percentOf(r.gflops, ref)!.toFixed(1)}% ${ref.peer}` : "-",
      fmtErr(r.relErr),
    );
    rows.push(row);
  }
  if (!record.peers.some((p) => p.peer === "cublas" && p.validated)) {
    notes.push("ref: cuBLAS did not run; % is of the fastest validated GPU peer at the same shape");
  }
  if (record.complete === false) notes.push("INCOMPLETE: the run stopped early (see notes)");
  const widths = rows[0].map((_, c) =>
    Math.max(...rows.filter((r) => r.length > 3 || c < 2).map((r) => (r[c] ?? "").length))
  );
  const line = (r: string[]) =>
    r.length <= 3
      ? `${r[0].padEnd(widths[0])}  ${r[1].padEnd(widths[1])}  ${r[2]}`
      : r.map((cell, c) => c < 2 ? cell.padEnd(widths[c]) : cell.padStart(widths[c])).join("  ");
  return [
    `${record.device.description} | ${record.date} | commit ${record.commit}`,
    ...rows.map(line),
    ...notes,
  ].join("\n");
}
