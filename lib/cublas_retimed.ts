/**
 * cuBLAS re-timed without launches at a held-out record's shapes and its suite companion's
 * (lab/cublas/retime.ts writes data/probes/<device>-<date>-cublas-retimed.json). Records written
 * before the cuBLAS peer queued its calls behind a head start could hold a launch inside cuBLAS's
 * events at the smallest shapes; our kernels' times never did. The bars read both ways, our
 * kernels' recorded speeds unchanged.
 */
import { readJsonIfPresent } from "./files.ts";
import { heldoutOf, heldoutRows, type HeldoutSummary, heldoutSummary } from "./heldout.ts";
import { sameShape, type Shape } from "./matrix.ts";
import type { PeerResult, RunRecord } from "./record.ts";
import { suiteRows } from "./suite.ts";

export interface CublasRetimed {
  schema: 1;
  device: string;
  date: string;
  commit: string;
  /** The held-out run record (data/runs/) and its suite companion, whose cuBLAS times these are. */
  record: string;
  suiteRecord: string;
  rows: {
    set: "suite" | "heldout";
    shape: Shape;
    recorded?: { gflops?: number; medianMs?: number; validated: boolean };
    queued: PeerResult;
  }[];
}

/** One probe file of data/probes/, or undefined when there is none. */
export function loadCublasRetimed(file: string): Promise<CublasRetimed | undefined> {
  return readJsonIfPresent<CublasRetimed>(new URL(`../data/probes/${file}`, import.meta.url));
}

/** The probe files of data/probes/ that re-time a record, by that record's file name. */
export async function retimingsByRecord(): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for await (const entry of Deno.readDir(new URL("../data/probes/", import.meta.url))) {
    if (!entry.isFile || !entry.name.endsWith("-cublas-retimed.json")) continue;
    const probe = await loadCublasRetimed(entry.name);
    if (probe) found.set(probe.record, entry.name);
  }
  return found;
}

/** The bars' figures over one set, against cuBLAS as recorded and as re-timed. */
export interface RetimedSet {
  set: "suite" | "heldout";
  recorded: HeldoutSummary;
  retimed: HeldoutSummary;
}

/** Both sets' figures both ways, from the probe and the two records it re-timed. */
export function retimedSummaries(
  probe: CublasRetimed,
  heldout: RunRecord,
  suite: RunRecord,
): RetimedSet[] {
  const section = heldoutOf(heldout);
  if (!section) throw new Error(`${probe.record} has no held-out section`);
  const ours = {
    heldout: heldoutRows(heldout, section),
    suite: suiteRows(suite),
  };
  return (["suite", "heldout"] as const).map((set) => {
    const rows = probe.rows.filter((r) => r.set === set);
    const oursAt = (shape: Shape) => ours[set].find((r) => sameShape(r.shape, shape))?.best?.gflops;
    const speeds = (pick: (r: CublasRetimed["rows"][number]) => number | undefined) =>
      rows.map((r) => ({ shape: r.shape, ours: oursAt(r.shape), cublas: pick(r) }));
    return {
      set,
      recorded: heldoutSummary(
        speeds((r) => r.recorded?.validated ? r.recorded.gflops : undefined),
      ),
      retimed: heldoutSummary(speeds((r) => r.queued.validated ? r.queued.gflops : undefined)),
    };
  });
}
