/**
 * The step model (lib/model/bounds.ts): the bank rule on hand-worked warps, each kernel's
 * workgroup-memory reads per multiply-add and wavefronts worked out by hand from its WGSL, the
 * occupancy limits, the wave arithmetic, and every bound at or above what the H200 measured.
 */
import assert from "node:assert/strict";
import { gpuModel, H200, HOPPER_SM, occupancy, waves } from "../lib/model/device.ts";
import { stepModel, wavefronts } from "../lib/model/bounds.ts";
import type { Shape } from "../lib/matrix.ts";
import { modelGap } from "../lib/notebook/models.ts";
import type { RunRecord } from "../lib/record.ts";
import { findKernel, type Params } from "../lib/registry.ts";

const S4096: Shape = { m: 4096, k: 4096, n: 4096 };

const model = (step: string, params: Params = {}, shape = S4096) => {
  const spec = findKernel(step)!;
  return stepModel(spec, { ...spec.params, ...params }, shape, H200);
};

const close = (actual: number, expected: number, what: string) =>
  assert.ok(Math.abs(actual - expected) <= 1e-9 * Math.abs(expected), `${what}: ${actual}`);

Deno.test("model: the bank rule on hand-worked warps", () => {
  const lanes = (f: (lane: number) => number) => Array.from({ length: 32 }, (_, i) => f(i));
  // 32 consecutive words: one per bank.
  assert.equal(wavefronts(lanes((i) => 4 * i), 4), 1);
  // Every lane the same word: one read, broadcast.
  assert.equal(wavefronts(lanes(() => 64), 4), 1);
  // Stride of two words: 16 banks, two words each.
  assert.equal(wavefronts(lanes((i) => 8 * i), 4), 2);
  // Stride of 32 words: one bank, 32 words.
  assert.equal(wavefronts(lanes((i) => 128 * i), 4), 32);
  // 32 consecutive vec4s: four phases of eight lanes, each 128 bytes on 32 banks.
  assert.equal(wavefronts(lanes((i) => 16 * i), 16), 4);
  // vec4s 32 bytes apart: each phase of eight spans 256 bytes, two words per bank.
  assert.equal(wavefronts(lanes((i) => 32 * i), 16), 8);
  // Inactive lanes take no bank.
  assert.equal(wavefronts(lanes((i) => (i < 8 ? 16 * i : undefined) as number), 16), 1);
});

Deno.test("model: 04 with TILE 16 reads 2 words per FMA, one wavefront each", () => {
  const m = model("tiled", { TILE: 16 });
  const w = m.workgroup!;
  // sum += As[ly * 16 + p] * Bs[p * 16 + lx]: two 4-byte reads per multiply-add.
  assert.equal(w.readsPerFma, 2);
  assert.equal(w.bytesPerFma, 8);
  // A warp is lx 0..15 of ly 0 and 1: As is 2 words in banks p and 16 + p, Bs 16 in a row.
  assert.equal(w.wavefrontsPerRead, 1);
  assert.equal(w.conflictDegree, 1);
  // Per tile and warp: 16 x 2 read wavefronts and 2 store ones for 16 x 32 FMAs: 8.5 bytes each.
  close(w.bankBytesPerFma, (34 * 128) / 512, "bank bytes per FMA");
  // 16 FMAs, 32 reads, 2 stores, 2 loads, 2 barriers per tile.
  close(m.instructionsPerFma!, 54 / 16, "instructions per FMA");
});

Deno.test("model: 06 reads a quarter of a word per FMA, with 3 wavefronts a read", () => {
  const w = model("blocktile_2d").workgroup!;
  // 8 scalars of A and 8 of B for an 8 x 8 block: 16 reads for 64 multiply-adds, 1 byte each.
  assert.equal(w.readsPerFma, 1 / 4);
  assert.equal(w.bytesPerFma, 1);
  // A warp holds ty 0 and 1 (tx 0..15): A words ty * 64 + p + 8i are one bank, two words (2);
  // B words tx * 8 + j fall on 4 banks, 4 words each (4). Mean over 8 + 8 reads: 3.
  assert.equal(w.wavefrontsPerRead, 3);
  assert.equal(w.idealWavefrontsPerRead, 1);
});

Deno.test("model: 07's vec4 reads conflict, 08's are conflict-free", () => {
  const v = model("vectorize").workgroup!;
  // A: two vec4s per warp, one per phase (4); B: vec4s 2 * tx, two words per bank a phase (8).
  assert.equal(v.wavefrontsPerRead, 6);
  assert.equal(v.idealWavefrontsPerRead, 4);
  assert.equal(v.conflictDegree, 1.5);
  for (const step of ["bank_conflicts", "subgroup_tiling", "double_buffer"]) {
    const w = model(step).workgroup!;
    assert.equal(w.wavefrontsPerRead, 4, step);
    assert.equal(w.conflictDegree, 1, `${step} conflict-free`);
    assert.equal(w.bytesPerFma, 1, step);
  }
  // 08's padding makes the transposed A stores conflict-free too: (4 x 1 + 4) / 5 per store.
  assert.equal(model("bank_conflicts").workgroup!.wavefrontsPerStore, 1.6);
  assert.equal(model("bank_conflicts", { PAD: 0 }).workgroup!.wavefrontsPerStore, 2.4);
});

Deno.test("model: occupancy limits", () => {
  // 06: 256 invocations of an estimated 64 accumulators + 16 fragments + 8 staged + 24 = 112
  // registers: 65 536 / (256 x 112) = 2.29, so 2 workgroups.
  const m = model("blocktile_2d");
  assert.equal(m.registersEstimate, 112);
  assert.equal(m.occupancy.resident, 2);
  assert.equal(m.occupancy.limitedBy, "registers");
  assert.equal(m.occupancy.invocations, 512);
  // Workgroup memory: 48 KiB plus the 1 KiB reserve, four in 228 KiB.
  assert.equal(occupancy(HOPPER_SM, 64, 32, 48 * 1024).byLimit["workgroup memory"], 4);
  assert.equal(occupancy(HOPPER_SM, 64, 32, 48 * 1024).resident, 4);
  // Invocations: two workgroups of 1 024.
  const big = occupancy(HOPPER_SM, 1024, 32, 0);
  assert.equal(big.resident, 2);
  assert.equal(big.limitedBy, "invocations");
  // Workgroup slots: 32, however small the workgroups.
  const small = occupancy(HOPPER_SM, 32, 16, 1024);
  assert.equal(small.resident, 32);
  assert.equal(small.limitedBy, "workgroups");
  // Registers are granted in multiples of 8: 65 granted as 72.
  assert.equal(occupancy(HOPPER_SM, 256, 65, 0).registers, 72);
});

Deno.test("model: waves of 128 x 128 tiles at 4096 on 132 SMs", () => {
  // 32 x 32 = 1 024 workgroups; with 2 per SM, 264 a wave: 4 waves, 1 024 / 1 056 filled.
  const w = waves(1024, 132, 2);
  assert.equal(w.waves, 4);
  close(w.fill, 1024 / 1056, "fill");
  const m = model("vectorize");
  assert.equal(m.waves.workgroups, 1024);
  assert.equal(m.waves.waves, 4);
  close(m.waves.fill, 1024 / 1056, "07's fill");
  // The busiest SM holds ceil(1 024 / 132) = 8 of 7.76 on average.
  close(m.smBalance, 1024 / 132 / 8, "07's balance");
  close(m.boundGflops, m.binding.gflops * m.smBalance, "bound");
});

Deno.test("model: the naive kernels are bound by the L1, not by the no-cache DRAM figure", () => {
  for (const [step, sectorBytes] of [["naive", 17], ["coalesce", 4]] as const) {
    const m = model(step);
    // 02: a warp's 16 rows of A are 16 sectors and its 2 columns of B one; 03: 2 + 2 sectors.
    assert.equal(m.l1SectorBytesPerFma, sectorBytes, step);
    assert.equal(m.binding.limit, "L1", step);
    assert.ok(m.bounds.find((b) => b.limit === "DRAM")!.notABound, step);
  }
});

Deno.test("model: another adapter is modeled for the H200, its unknowns named", () => {
  const summary = {
    description: "llvmpipe (LLVM 19.1.7, 256 bits)",
    vendor: "mesa",
    architecture: "",
    device: "",
    isFallbackAdapter: false,
    software: true,
    features: [],
    limits: {},
  };
  const d = gpuModel(summary);
  assert.match(d.source, /modeled for the H200/);
  assert.ok(d.unknown!.includes("SM count"));
  assert.equal(d.sms, H200.sms);
  assert.equal(gpuModel({ ...summary, description: "NVIDIA H200" }), H200);
});

Deno.test("model: every bound is at or above what the H200 measured, at every recorded shape", async () => {
  const dir = new URL("../data/runs/", import.meta.url);
  let checked = 0;
  for await (const f of Deno.readDir(dir)) {
    if (!f.name.startsWith("nvidia-h200")) continue;
    const record: RunRecord = JSON.parse(await Deno.readTextFile(new URL(f.name, dir)));
    for (const r of record.results) {
      if (!r.validated || r.gflops === undefined) continue;
      const gap = modelGap(r.kernel, r.gflops, r, record.device, r.params);
      assert.ok(
        gap.ratio <= 1,
        `${f.name} ${r.kernel} ${r.m}x${r.k}x${r.n}: ${r.gflops} measured, bound ` +
          `${gap.boundGflops} (${gap.binding})`,
      );
      for (const b of gap.bounds) assert.ok(b.ratio <= 1, `${r.kernel}: ${b.limit}`);
      checked++;
    }
  }
  assert.ok(checked >= 96, `${checked} results checked`);
});
