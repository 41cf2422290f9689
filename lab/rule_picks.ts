/**
 * The per-shape rule's picks timed against the searched winner (lab: not part of the product). At
 * a shape where the rule (lib/tuning.ts tunedParams: a trial's speed at the search's first shape
 * times the share of its waves its grid fills) picks another tile than the search's winner, the
 * pick rests on an estimate; this times both, each validated against float64 first, for 11's,
 * 12's and 14's tuned kernels, on shapes the search never saw as well as its own.
 *   deno run -A lab/rule_picks.ts --out FILE [--shapes 1024x1024x1024,4097x4097x4097,...]
 */
import { acquireGpu } from "../lib/gpu.ts";
import { type Shape, shapeLabel } from "../lib/matrix.ts";
import { currentCommit } from "../lib/record.ts";
import { flag } from "./flags.ts";
import { findKernel } from "../lib/registry.ts";
import { runKernel } from "../lib/runner.ts";
import { tunedParams } from "../lib/tuning.ts";

const out = flag("--out");
if (!out) throw new Error("usage: rule_picks.ts --out FILE [--shapes MxKxN,...]");
const shapes: Shape[] = (flag("--shapes") ?? "1024x1024x1024,4097x4097x4097,1000x3000x777")
  .split(",").map((s) => {
    const [m, k, n] = s.split("x").map(Number);
    return { m, k, n };
  });

const gpu = await acquireGpu();
const rows: Record<string, unknown>[] = [];
const record = {
  schema: 1,
  device: gpu.summary.description,
  date: new Date().toISOString(),
  commit: await currentCommit(),
  source: "lab/rule_picks.ts: runKernel with explicit parameters (validated, then timed)",
  rows,
};
for (const name of ["autotune", "generated", "f16"]) {
  const spec = findKernel(name)!;
  const winner = tunedParams(gpu.summary, name);
  if (!winner) throw new Error(`no tuning record for ${name} on ${gpu.summary.description}`);
  for (const shape of shapes) {
    const rule = tunedParams(gpu.summary, name, shape)!;
    const same = JSON.stringify(rule) === JSON.stringify(winner);
    for (
      const [which, params] of same ? [["winner = rule", winner]] as const : [
        ["winner", winner],
        ["rule", rule],
      ] as const
    ) {
      const r = await runKernel(gpu, spec, shape, { params, budgetMs: 400 });
      rows.push({
        kernel: spec.id,
        shape,
        which,
        params,
        validated: r.validated,
        relErr: r.relErr,
        medianMs: r.medianMs,
        minMs: r.minMs,
        maxMs: r.maxMs,
        gflops: r.gflops,
        ...(r.error ? { error: r.error } : {}),
      });
      console.error(
        `${spec.id} ${shapeLabel(shape)} ${which}: ${
          r.validated ? `${r.gflops!.toFixed(0)} GFLOP/s` : `FAILED ${r.error}`
        } ${JSON.stringify(params)}`,
      );
      await Deno.writeTextFile(out, JSON.stringify(record, null, 1) + "\n");
    }
  }
}
