/**
 * Device probe (lab: not part of the product): 13's 22.7x at 256x65536x256 split into busy SMs and
 * the tile. Step 12's plan there (64x64x8, TN 8: 16 workgroups), the same tile split 8 ways (128
 * workgroups, as many as the pick) and 32 ways, the pick's tile unsplit, and the pick itself (32
 * slices of 128x128x16). Each validated against the float64 reference (sampled rows), then timed
 * with GPU timestamps. Imports only lib/ (the GPU host has no package registry).
 *
 *   deno run -A lab/probe_split.ts --out DIR [--quick]
 *
 * Writes DIR/probe.json and prints one line per row. --quick: 32 x 4096 x 32 (the software
 * adapter).
 */
import { acquireGpu } from "../lib/gpu.ts";
import { shapeLabel } from "../lib/matrix.ts";
import { findKernel, type Params } from "../lib/registry.ts";
import { runKernel } from "../lib/runner.ts";
import { currentCommit } from "../lib/record.ts";
import { probeRecord } from "./probe_record.ts";

const args = Deno.args;
const outDir = args.includes("--out") ? args[args.indexOf("--out") + 1] : "/tmp/probe";
const quick = args.includes("--quick");
await Deno.mkdir(outDir, { recursive: true });

const gpu = await acquireGpu();
const started = new Date().toISOString();
const commit = await currentCommit();
const shape = quick ? { m: 32, k: 4096, n: 32 } : { m: 256, k: 65536, n: 256 };
const budgetMs = quick ? 20 : 300;
const { rows, save } = probeRecord<Record<string, unknown>>(`${outDir}/probe.json`, {
  device: gpu.summary,
  started,
  commit,
  shape,
});
console.error(`device: ${gpu.summary.description}, ${started}, commit ${commit}`);

const small = { BM: 64, BN: 64, BK: 8, TN: 8 };
const pickTile = { BM: 128, BN: 128, BK: 16, TN: 8 };
const cases: [string, string, Params][] = [
  ["12's plan (64x64x8)", "generated", small],
  ["split-K 8 x 64x64x8", "shapes", { PLAN: 0, SLICES: 8, ...small }],
  ["split-K 32 x 64x64x8", "shapes", { PLAN: 0, SLICES: 32, ...small }],
  ["128x128x16 unsplit", "shapes", { PLAN: 0, SLICES: 1, ...pickTile }],
  ["split-K 32 x 128x128x16 (the pick)", "shapes", { PLAN: 0, SLICES: 32, ...pickTile }],
];
for (const [label, name, params] of cases) {
  const spec = findKernel(name)!;
  const r = await runKernel(gpu, spec, shape, { params, budgetMs, checkRows: 8 });
  rows.push({
    label,
    kernel: spec.id,
    shape: shapeLabel(shape),
    gflops: r.gflops,
    medianMs: r.medianMs,
    minMs: r.minMs,
    maxMs: r.maxMs,
    reps: r.reps,
    relErr: r.relErr,
    validated: r.validated,
    params: r.params,
    error: r.error,
  });
  save();
  console.log(
    `${label.padEnd(36)} ` +
      (r.validated
        ? `${r.gflops!.toFixed(0).padStart(7)} GFLOP/s ${r.medianMs!.toFixed(4)} ms ` +
          `(${r.minMs!.toFixed(4)}-${r.maxMs!.toFixed(4)}, ${r.reps} runs) err ${
            r.relErr.toExponential(2)
          }`
        : `FAILED ${r.error}`),
  );
}
