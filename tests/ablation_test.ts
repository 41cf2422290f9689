/**
 * The ablations: notebook 11's committed data file taken stage by stage, the lab's extractor
 * that writes it (and what it refuses), and that the file is what the extractor makes of the
 * committed probe; the WGSL rewriting that takes any kernel apart (lib/ablation.ts), and the
 * ladder's committed ablation.
 */
import assert from "node:assert/strict";
import { ablatedSource, type LeftOut, loadAblation, loadLadderAblation } from "../lib/ablation.ts";
import { acquireGpu, compileWgsl, loadKernelSource } from "../lib/gpu.ts";
import { findKernel } from "../lib/registry.ts";
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

Deno.test("ablatedSource: each part leaves the kernel's WGSL, and nothing else", async () => {
  const spec = findKernel("double_buffer")!;
  const code = await loadKernelSource(spec.file);
  const noLoads = ablatedSource(code, ["global loads"]);
  assert.doesNotMatch(noLoads, /(?<![\w.&])[AB]\[/, "no read of A or B is left");
  assert.match(noLoads, /_ = &A;\s*_ = &B;/, "both bindings stay in use");
  assert.ok(noLoads.includes("workgroupBarrier();"));
  const noBarriers = ablatedSource(code, ["global loads", "barriers"]);
  assert.ok(!noBarriers.includes("workgroupBarrier();"));
  const noStores = ablatedSource(code, ["global loads", "barriers", "workgroup stores"]);
  assert.doesNotMatch(noStores, /(?<![\w.])(As|Bs)(\[[^\]]*\])+\s*=(?!=)/, "no store is left");
  assert.match(noStores, /(?<![\w.])As\[/, "the reads stay");
  const bare = ablatedSource(code, [
    "global loads",
    "barriers",
    "workgroup stores",
    "workgroup reads",
  ]);
  assert.doesNotMatch(bare, /(?<![\w.])(As|Bs)\[/, "workgroup memory is never touched");
  assert.doesNotMatch(bare, /\/\//, "comments are dropped (an array named in one is no access)");
  // A stand-in is the index as a float of the element's type, a vector splatted.
  const tiny = "var<storage, read> A: array<vec4<f32>>;\nvar<storage, read> B: array<f32>;\n" +
    "@compute @workgroup_size(1) fn main() { let x = A[i + 1u] * B[j[2]]; }";
  assert.match(
    ablatedSource(tiny, ["global loads"]),
    /vec4<f32>\(f32\(\(i \+ 1u\)\)\) \* f32\(\(j\[2\]\)\)/,
  );
  assert.throws(() => ablatedSource(tiny, ["barriers"]), /no barrier/);
  assert.throws(() => ablatedSource(tiny, ["workgroup reads"]), /no workgroup memory/);
});

Deno.test("ablatedSource: every stage of the ladder ablation compiles", async () => {
  const gpu = await acquireGpu();
  const parts: LeftOut[] = ["global loads", "barriers", "workgroup stores", "workgroup reads"];
  for (const name of ["naive", "blocktile_2d", "subgroup_tiling", "generated", "f16_storage"]) {
    const spec = findKernel(name)!;
    const code = spec.generate ? spec.generate(spec.params) : await loadKernelSource(spec.file);
    const usable = parts.filter((p) =>
      p === "global loads" ||
      (p === "barriers" ? code.includes("workgroupBarrier") : code.includes("var<workgroup>"))
    );
    for (let n = 1; n <= usable.length; n++) {
      await compileWgsl(gpu, ablatedSource(code, usable.slice(0, n)), `${name} without ${n} parts`);
    }
  }
});

Deno.test("the ladder ablation: every kernel validated, stages timed and their code counted", async () => {
  const file = await loadLadderAblation(DEVICE);
  const kernels = file.ablations.map((a) => a.kernel);
  for (const step of ["naive", "tiled", "blocktile_2d", "vectorize", "generated", "f16_storage"]) {
    assert.ok(kernels.includes(step), step);
  }
  const order = [
    "nothing (the whole kernel)",
    "the global loads",
    "the barriers",
    "the stores to workgroup memory",
    "the reads of workgroup memory",
  ];
  for (const a of file.ablations) {
    assert.equal(a.device, "NVIDIA H200");
    assert.equal(a.shape, "4096");
    assert.ok(a.validated.relErr < (a.kernel!.startsWith("f16") ? 2e-3 : 1e-5), a.kernel);
    // The whole kernel timed again as the first stage agrees with its validated timing.
    assert.ok(Math.abs(a.validated.gflops / a.stages[0].gflopsEquivalent - 1) < 0.02, a.kernel);
    const labels = a.stages.map((s) => s.leftOut);
    assert.deepEqual(labels, order.filter((l) => labels.includes(l)), a.kernel);
    for (const [i, s] of a.stages.entries()) {
      assert.ok(
        Math.abs(s.gflopsEquivalent - 2 * 4096 ** 3 / (s.ms * 1e6)) < 1e-6 * s.gflopsEquivalent,
      );
      if (i) assert.ok(Math.abs(s.costMs! - (a.stages[i - 1].ms - s.ms)) < 1e-9);
      const code = s.machineCode!;
      assert.ok(code.instructions > 0 && code.multiplyAdds > 0, `${a.kernel}: ${s.leftOut}`);
      assert.ok(code.notCounted || code.issueCeilingGflops, `${a.kernel}: ${s.leftOut}`);
    }
    // With every part out, what is left runs at its issue ceiling: the reading the notebooks take.
    const last = a.stages.at(-1)!;
    if (a.stages.length === 5 && last.machineCode!.issueCeilingGflops) {
      const share = last.gflopsEquivalent / last.machineCode!.issueCeilingGflops;
      assert.ok(share > 0.85 && share < 1.06, `${a.kernel}: ${share}`);
    }
  }
});
