/**
 * Notebook 11's ablation: the committed data file taken stage by stage, the lab's extractor
 * that writes it (and what it refuses), and that the file is what the extractor makes of the
 * committed probe.
 */
import assert from "node:assert/strict";
import { loadAblation } from "../lib/ablation.ts";
import { ablationFile, ablationFromProbe, type ProbeFile } from "../lab/extract_ablation.ts";

const DEVICE = "nvidia-h200";
const CONFIG = "128x256x16 TN16";
const PROBE = new URL("../lab/probes/nvidia-h200-2026-11-27-ablate-0dbd066.json", import.meta.url);
/** The configurations the data file holds: the winner, and double_buffer's tile in 11's kernel. */
const CONFIGS = [CONFIG, "128x128x8 TN8"];

Deno.test("ablation: the committed data file, stage by stage", async () => {
  const a = await loadAblation(DEVICE, CONFIG);
  assert.equal(a.device, "NVIDIA H200");
  assert.equal(a.shape, "4096");
  assert.equal(a.stages.length, 5);
  assert.equal(a.stages[0].costMs, undefined);
  // Each stage taken out makes the loop faster, and the costs add up to the whole difference.
  for (const s of a.stages.slice(1)) assert.ok(s.costMs! > 0, s.leftOut);
  const total = a.stages.slice(1).reduce((sum, s) => sum + s.costMs!, 0);
  assert.ok(Math.abs(total - (a.stages[0].ms - a.stages[4].ms)) < 1e-9);
  // The whole kernel was validated in the same run and times like its ablation row.
  assert.ok(a.validated.relErr < 1e-4);
  assert.ok(Math.abs(a.validated.gflops / a.stages[0].gflopsEquivalent - 1) < 0.02);
  assert.ok(a.cublasGflops! > a.stages[4].gflopsEquivalent);
  await assert.rejects(loadAblation(DEVICE, "nope"), /no ablation of nope/);
});

Deno.test("ablation: the data file is the extractor's output for the committed probe", async () => {
  const probe = JSON.parse(await Deno.readTextFile(PROBE)) as ProbeFile;
  const file = JSON.parse(
    await Deno.readTextFile(new URL(`../data/ablation/${DEVICE}.json`, import.meta.url)),
  );
  assert.deepEqual(file, JSON.parse(JSON.stringify(ablationFile(probe, CONFIGS))));
});

Deno.test("ablation: refuses a configuration without a validated whole kernel", () => {
  const row = (bits: number) => ({
    label: `ablate X: ${bits}`,
    kernel: "ablation",
    shape: "64",
    medianMs: 1 - bits / 100,
    gflops: 1,
    params: { BM: 64, ABLATE: bits },
  });
  const probe = {
    device: { description: "test" },
    started: "2026-01-01T00:00:00Z",
    rows: [0, 1, 2, 6, 14].map(row),
  };
  assert.throws(() => ablationFromProbe(probe, "X"), /not validated in the same run/);
  assert.throws(() => ablationFromProbe(probe, "Y"), /no timing with ABLATE 0/);
  const validated = { label: "11", kernel: "11_autotune", shape: "64", gflops: 1, relErr: 1e-7 };
  probe.rows.push({ ...validated, validated: true, params: { BM: 64 } } as never);
  assert.equal(ablationFromProbe(probe, "X").stages.length, 5);
});
