/**
 * The GPU timer (lib/timing.ts) on this machine's adapter: exact repetition counts, the default
 * count, a queued submit that fails, and the wall-clock path of adapters without timestamps.
 */
import assert from "node:assert/strict";
import { acquireGpu, type Gpu } from "../lib/gpu.ts";
import { findKernel } from "../lib/registry.ts";
import { BoundProblem, kernelParams, prepareKernel } from "../lib/runner.ts";
import { randomMatrix } from "../lib/matrix.ts";
import { timePasses, timeQueued } from "../lib/timing.ts";

const gpu = await acquireGpu();
const shape = { m: 32, k: 32, n: 32 };
const spec = findKernel("naive")!;
const problem = await BoundProblem.create(
  gpu,
  await prepareKernel(gpu, spec, kernelParams(gpu, spec, undefined, shape)),
  shape,
  randomMatrix(32, 32, 1),
  randomMatrix(32, 32, 2),
);
const encode = (pass: GPUComputePassEncoder) => problem.encode(pass);

Deno.test("timer: an exact count gives exactly that many samples, each a GPU time", async () => {
  for (const reps of [1, 7, 70]) {
    const t = await timePasses(gpu, encode, { reps });
    assert.equal(t.reps, reps);
    assert.equal(t.samplesMs.length, reps);
    assert.ok(t.samplesMs.every((x) => Number.isFinite(x) && x > 0), `${t.samplesMs}`);
    assert.ok(t.minMs <= t.medianMs && t.medianMs <= t.maxMs);
    assert.equal(t.method, gpu.has("timestamp-query") ? "timestamp-query" : "wall-clock-batch");
  }
});

Deno.test("timer: by default 5 to 200 samples fill the time budget", async () => {
  const t = await timePasses(gpu, encode, { budgetMs: 20 });
  assert.ok(t.reps >= 5 && t.reps <= 200, `${t.reps}`);
});

Deno.test("timer: a pass that fails to encode rejects, and leaves nothing queued", async () => {
  let passes = 0;
  const failing = (pass: GPUComputePassEncoder) => {
    if (++passes > 4) throw new Error("encode failed");
    encode(pass);
  };
  await assert.rejects(() => timePasses(gpu, failing, { reps: 50 }), /encode failed/);
  // The device still times work afterwards.
  assert.equal((await timePasses(gpu, encode, { reps: 3 })).reps, 3);
});

Deno.test("timer: without timestamps each sample is one submit's mean per pass", async () => {
  const noTimestamps: Gpu = { ...gpu, has: (f) => f !== "timestamp-query" && gpu.has(f) };
  const t = await timePasses(noTimestamps, encode, { reps: 4 });
  assert.equal(t.method, "wall-clock-batch");
  assert.equal(t.reps, 4);
  assert.ok(t.samplesMs.every((x) => x > 0));
});

globalThis.addEventListener("unload", () => problem.destroy());

Deno.test(
  "queued timer: on a hardware adapter it warms until two batches agree, then samples only passes queued apart",
  async () => {
    // A fake GPU whose passes speed up (clocks rising) after 200 ms of work, then hold.
    let done = 0;
    const calls: { count: number; apart: boolean }[] = [];
    const queue = (count: number, apart: boolean) => {
      calls.push({ count, apart });
      const times = Array.from({ length: count }, () => {
        const ms = done < 200 ? 4 : 2;
        done += ms;
        return ms;
      });
      return Promise.resolve(times);
    };
    const timing = await timeQueued(queue, { software: false, reps: 30 });
    assert.equal(timing.reps, 30);
    assert.ok(timing.samplesMs.every((ms) => ms === 2), "no sample from before the clocks rose");
    assert.ok(done >= 300 + 30 * 2, "warmed for at least warmMs before sampling");
    assert.ok(calls.some((c) => c.apart) && calls.some((c) => !c.apart));
    assert.ok(calls.every((c) => c.count <= 1024));
  },
);

Deno.test("queued timer: batches stay under maxBatch; a software adapter samples after one", async () => {
  const counts: number[] = [];
  const queue = (count: number) => {
    counts.push(count);
    return Promise.resolve(Array.from({ length: count }, () => 0.01));
  };
  const timing = await timeQueued(queue, { software: false, maxBatch: 7, reps: 20 });
  assert.equal(timing.reps, 20);
  assert.ok(counts.every((c) => c <= 7), JSON.stringify(counts));
  counts.length = 0;
  await timeQueued(queue, { software: true, reps: 5 });
  assert.deepEqual(counts.slice(0, 1), [3], "the first warm-up submit");
  assert.ok(counts.length <= 3, "one warm-up readback, then samples");
});
