/**
 * Device probe (lab: not part of the product): why does step 12's tile cut 32 ways beat it cut 8
 * ways at 256x65536x256 by 2.81x? Cut 32 ways, each SM holds about 4 of its workgroups (8 warps)
 * instead of 1, and each workgroup's walk over K is 4x shorter; 13 names both. Here the two are
 * taken apart with step 13's split-K plan of 12's 64x64x8 tile (TN 8) at M = N = 256:
 *   - the walk held at 2,048 values of k per workgroup, the slices (so workgroups per SM) varied:
 *     K = 2,048 x SLICES for SLICES 8, 16, 32, 64;
 *   - the slices held at 8 (about one workgroup per SM), the walk varied: K = 8 x 512 ... 8 x 8,192.
 * Each validated against the float64 reference (sampled rows), then timed with GPU timestamps.
 *
 *   deno run -A lab/probe_walk.ts --out DIR [--quick]
 *
 * Writes DIR/probe.json and prints one line per row. --quick: walks of 64 (the software adapter).
 */
import { shapeLabel } from "../lib/matrix.ts";
import { findKernel } from "../lib/registry.ts";
import { runKernel } from "../lib/runner.ts";
import { probeRecord, runFields, runLine, startProbe } from "./probe_record.ts";

const { outDir, quick, gpu, started, commit } = await startProbe("/tmp/probe");
const walk = quick ? 64 : 2048;
const { rows, save } = probeRecord<Record<string, unknown>>(`${outDir}/probe.json`, {
  device: gpu.summary,
  started,
  commit,
  shape: { m: 256, n: 256, walk },
});

const tile = { PLAN: 0, BM: 64, BN: 64, BK: 8, TN: 8 };
const cases: [string, number, number][] = [
  ...[8, 16, 32, 64].map((s): [string, number, number] => [`walk ${walk}, ${s} slices`, s, walk]),
  ...[walk / 4, walk / 2, walk * 2, walk * 4].map((w): [string, number, number] => [
    `8 slices, walk ${w}`,
    8,
    w,
  ]),
];
const spec = findKernel("shapes")!;
for (const [label, slices, w] of cases) {
  const shape = { m: 256, k: slices * w, n: 256 };
  const r = await runKernel(gpu, spec, shape, {
    params: { ...tile, SLICES: slices },
    budgetMs: quick ? 20 : 300,
    checkRows: 8,
  });
  rows.push({
    label,
    slices,
    walk: w,
    workgroups: 16 * slices,
    shape: shapeLabel(shape),
    ...runFields(r),
  });
  save();
  console.log(`${label.padEnd(24)} ${shapeLabel(shape).padEnd(18)} ${runLine(r)}`);
}
