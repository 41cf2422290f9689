/**
 * Notebook 01's thread sweep on a GPU host's CPU (lab: not part of the product): the threaded
 * rung (WebAssembly SIMD, rows of C split over workers) at 1, 2, 4, ... threads up to every
 * logical core, at each size, each row validated against float64 before it is timed. Prints the
 * lesson's table and writes every row, with the host's model, cores and caches, as JSON.
 *   deno run -A lab/thread_sweep.ts --out FILE [--sizes 1024,2048]
 */
import { cpuHost, sweepThreads, threadCounts } from "../lib/cpu_bench.ts";
import { showThreadSweep } from "../lib/notebook/lessons/cpu.ts";
import { currentCommit } from "../lib/record.ts";
import { flag } from "./flags.ts";

const out = flag("--out");
if (!out) throw new Error("usage: thread_sweep.ts --out FILE [--sizes 1024,2048]");
const sizes = (flag("--sizes") ?? "1024,2048").split(",").map(Number);
const host = cpuHost();
const rows = await sweepThreads(sizes, threadCounts(host), { reps: 10, budgetMs: 4000 });
await showThreadSweep(rows, host);
const record = {
  schema: 1,
  host,
  date: new Date().toISOString(),
  commit: await currentCommit(),
  source: "lab/thread_sweep.ts: sweepThreads (lib/cpu_bench.ts), 10 timed calls or 4 s per row",
  rows,
};
await Deno.writeTextFile(out, JSON.stringify(record, null, 1) + "\n");
