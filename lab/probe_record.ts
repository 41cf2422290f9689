import type { Gpu } from "../lib/gpu.ts";
import type { BoundProblem } from "../lib/runner.ts";
import { timePasses, type Timing } from "../lib/timing.ts";

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
