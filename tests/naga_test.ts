import assert from "node:assert/strict";
import { type ClampCounts, loadNagaClamps, type NagaKernelReport } from "../lib/naga.ts";
import { kernelSha256, labKernelOf } from "../lab/naga/kernels.ts";

const report = await loadNagaClamps();
const find = (kernel: string, variant: string) =>
  report.kernels.find((k) => k.kernel === kernel && k.variant === variant)!;
const byKernel = new Map([
  ["11_autotune", find("11_autotune", "as is")],
  ["12_generated", find("12_generated", "all transforms")],
]);

function assertCounts(c: ClampCounts) {
  for (const n of Object.values(c)) assert.ok(Number.isInteger(n) && n >= 0);
  assert.equal(c.total, c.workgroupElement + c.workgroupLane + c.storage);
}

function assertKernel(k: NagaKernelReport) {
  for (const [name, v] of Object.entries(k.params)) assert.ok(Number.isFinite(v), name);
  assert.ok(k.spirvWords > 0 && k.loops >= 1 && k.loopsWithCounter <= k.loops);
  assertCounts(k.clamps.module);
  assertCounts(k.clamps.hotLoop);
  assert.ok(k.clamps.hotLoop.total <= k.clamps.module.total);
  assert.ok(k.clamps.hotLoopInvariant <= k.clamps.hotLoop.total);
  assert.ok(k.clamps.hotLoopDistinct <= k.clamps.hotLoop.total);

  const h = k.hotLoop;
  assert.ok(h.kStepsPerTrip >= 1 && h.instructions > 0);
  assert.equal(h.clampsPerKStep, k.clamps.hotLoop.total / h.kStepsPerTrip);
  assert.ok(h.distinctLoopVariantClampsPerKStep <= h.loopVariantClampsPerKStep);
  assert.ok(h.loopVariantClampsPerKStep <= h.clampsPerKStep);
  assert.match(k.excerpts.fragmentRead, /OpExtInst %\d+ %\d+ UMin/);
  assert.match(k.excerpts.fragmentRead, /OpAccessChain/);
  assert.match(k.excerpts.loopCounter, /OpLoopMerge/);
}

Deno.test("the naga report was made from today's kernel text", async () => {
  for (const k of report.kernels) {
    const current = await kernelSha256(await labKernelOf(k));
    assert.equal(
      k.sourceSha256,
      current,
      `${k.kernel} (${k.variant}): data/naga/clamps.json is of other kernel text; ` +
        "run lab/naga/dump.ts again",
    );
  }
});

Deno.test("the naga report has both kernels, read from captured SPIR-V", () => {
  assert.match(report.naga, /^\d+\.\d+\.\d+$/);
  assert.match(report.wgpu, /^\d+\.\d+\.\d+$/);
  for (const [name, k] of byKernel) assert.ok(k, name);
  // 12 with each of its 2^3 combinations of transforms, so each can be read alone.
  assert.equal(report.kernels.filter((k) => k.kernel === "12_generated").length, 8);
  for (const k of report.kernels) assertKernel(k);
});

Deno.test("both kernels were compiled with the same tile", () => {
  for (const name of ["BM", "BN", "BK", "TN", "PAD"]) {
    assert.equal(
      byKernel.get("11_autotune")!.params[name],
      byKernel.get("12_generated")!.params[name],
    );
  }
});

Deno.test("12 leaves fewer clamps in its k steps than 11 for the driver to run", () => {
  const k11 = byKernel.get("11_autotune")!.hotLoop, k12 = byKernel.get("12_generated")!.hotLoop;
  assert.ok(k12.loopVariantClampsPerKStep < k11.loopVariantClampsPerKStep);
  assert.ok(k12.distinctClampsPerKStep < k11.distinctClampsPerKStep);
  assert.ok(k12.distinctLoopVariantClampsPerKStep < k11.distinctLoopVariantClampsPerKStep);
  assert.ok(k12.counterUpdatesPerKStep < k11.counterUpdatesPerKStep);
  // 12's clamps on literal rows are gone; the column's remain, once per read, outside-computed.
  assert.match(
    byKernel.get("12_generated")!.excerpts.clampedIndexDefinition ?? "",
    /before the loop/,
  );
});
