import { acquireGpu, type Gpu } from "../lib/gpu.ts";
import { currentCommit, type KernelResult } from "../lib/record.ts";
import type { BoundProblem } from "../lib/runner.ts";
import { timePasses, type Timing } from "../lib/timing.ts";

/**
 * A lab probe's start: its output folder (`--out DIR`, else `fallbackDir`; created), whether it is
 * a `--quick` dry run, the GPU, and when and at which commit it started (printed to stderr).
 */
export async function startProbe(fallbackDir: string): Promise<
  { outDir: string; quick: boolean; gpu: Gpu; started: string; commit: string }
> {
  const args = Deno.args;
  const outDir = args.includes("--out") ? args[args.indexOf("--out") + 1] : fallbackDir;
  await Deno.mkdir(outDir, { recursive: true });
  const gpu = await acquireGpu();
  const started = new Date().toISOString();
  const commit = await currentCommit();
  console.error(`device: ${gpu.summary.description}, ${started}, commit ${commit}`);
  return { outDir, quick: args.includes("--quick"), gpu, started, commit };
}

/**
 * A lab probe's record: the rows it measured, written whole to `path` after each one (so a probe
 * the device's time limit stops keeps what it measured), as `{ ...header, rows }`.
 */
export function probeRecord<Row>(
  path: string,
  header: Record<string, unknown>,
): { rows: Row[]; save: () => void } {
  const rows: Row[] = [];
  const save = () => Deno.writeTextFileSync(path, JSON.stringify({ ...header, rows }, null, 1));
  return { rows, save };
}

/** A validated-then-timed run's fields as a probe records them. */
export function runFields(r: KernelResult): Record<string, unknown> {
  const { gflops, medianMs, minMs, maxMs, reps, relErr, validated, params, error } = r;
  return { gflops, medianMs, minMs, maxMs, reps, relErr, validated, params, error };
}

/** A validated-then-timed run in one printed line: speed, median, runs and error, or the failure. */
export function runLine(r: KernelResult): string {
  return r.validated
    ? `${r.gflops!.toFixed(0).padStart(7)} GFLOP/s ${r.medianMs!.toFixed(4)} ms ` +
      `(${r.minMs!.toFixed(4)}-${r.maxMs!.toFixed(4)}, ${r.reps} runs) err ${
        r.relErr.toExponential(2)
      }`
    : `FAILED ${r.error}`;
}

/**
 * GPU time of each dispatch of one product alone, then of all of them together (`all: true`), to
 * see where a product's time goes (the result of a lone dispatch is incomplete: time only).
 */
export async function dispatchTimes(
  gpu: Gpu,
  problem: BoundProblem,
  budgetMs: number,
): Promise<{ label: string; all: boolean; timing: Timing }[]> {
  const labels = problem.dispatchLabels;
  const timed = [];
  for (const only of [...labels.map((label) => [label]), labels]) {
    const all = only === labels;
    const timing = await timePasses(gpu, (pass) => problem.encode(pass, only), { budgetMs });
    timed.push({ label: all ? "all" : only[0], all, timing });
  }
  return timed;
}
