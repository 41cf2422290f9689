/**
 * Device probe (lab: not part of the product): 13's 22.7x at 256x65536x256 split into busy SMs and
 * the tile. Step 12's plan there (64x64x8, TN 8: 16 workgroups), the same tile split 8 ways (128
 * workgroups, as many as the pick) and 32 ways, the pick's tile unsplit, the pick itself (32
 * slices of 128x128x16) and that tile in 16 and 64 slices. Each validated against the float64
 * reference (sampled rows), then timed with GPU timestamps. Then, at 16, 32 and 64 slices, each
 * dispatch of the product timed alone: the slices' partial products, and the pass that sums them.
 * Imports only lib/ (the GPU host has no package registry).
 *
 *   deno run -A lab/probe_split.ts --out DIR [--quick]
 *
 * Writes DIR/probe.json and prints one line per row. --quick: 32 x 4096 x 32 (the software
 * adapter).
 */
import { shapeLabel } from "../lib/matrix.ts";
import { findKernel, type Params } from "../lib/registry.ts";
import { BoundProblem, kernelParams, prepareKernel, runKernel } from "../lib/runner.ts";
import { dispatchTimes, probeRecord, runFields, runLine, startProbe } from "./probe_record.ts";

const { outDir, quick, gpu, started, commit } = await startProbe("/tmp/probe");
const shape = quick ? { m: 32, k: 4096, n: 32 } : { m: 256, k: 65536, n: 256 };
const budgetMs = quick ? 20 : 300;
const { rows, save } = probeRecord<Record<string, unknown>>(`${outDir}/probe.json`, {
  device: gpu.summary,
  started,
  commit,
  shape,
});

const small = { BM: 64, BN: 64, BK: 8, TN: 8 };
const pickTile = { BM: 128, BN: 128, BK: 16, TN: 8 };
const cases: [string, string, Params][] = [
  ["12's plan (64x64x8)", "generated", small],
  ["split-K 8 x 64x64x8", "shapes", { PLAN: 0, SLICES: 8, ...small }],
  ["split-K 32 x 64x64x8", "shapes", { PLAN: 0, SLICES: 32, ...small }],
  ["128x128x16 unsplit", "shapes", { PLAN: 0, SLICES: 1, ...pickTile }],
  ["split-K 32 x 128x128x16 (the pick)", "shapes", { PLAN: 0, SLICES: 32, ...pickTile }],
  ["split-K 16 x 128x128x16", "shapes", { PLAN: 0, SLICES: 16, ...pickTile }],
  ["split-K 64 x 128x128x16", "shapes", { PLAN: 0, SLICES: 64, ...pickTile }],
];
for (const [label, name, params] of cases) {
  const spec = findKernel(name)!;
  const r = await runKernel(gpu, spec, shape, { params, budgetMs, checkRows: 8 });
  rows.push({ label, kernel: spec.id, shape: shapeLabel(shape), ...runFields(r) });
  save();
  console.log(`${label.padEnd(36)} ${runLine(r)}`);
}

// Where a split-K product's time goes: each dispatch alone, then all of them (time only: the
// whole product was validated above with the same parameters).
const shapes = findKernel("shapes")!;
for (const slices of [16, 32, 64]) {
  const params = kernelParams(gpu, shapes, { PLAN: 0, SLICES: slices, ...pickTile }, shape);
  const problem = await BoundProblem.random(gpu, await prepareKernel(gpu, shapes, params), shape);
  for (const { label: part, all, timing: t } of await dispatchTimes(gpu, problem, budgetMs)) {
    const label = `split-K ${slices}: ${all ? "all dispatches" : part}`;
    rows.push({
      label,
      kernel: shapes.id,
      shape: shapeLabel(shape),
      medianMs: t.medianMs,
      minMs: t.minMs,
      maxMs: t.maxMs,
      reps: t.reps,
      params,
      timeOnly: true,
    });
    save();
    console.log(`${label.padEnd(36)} ${t.medianMs.toFixed(4)} ms (${t.reps} runs)`);
  }
  problem.destroy();
}
