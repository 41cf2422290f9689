/**
 * The jax-js peer (lib/peers/jaxjs.ts) at small sizes on this machine: its WebGPU backend on our
 * adapter, validated and timed by its profiler's timestamps on odd and degenerate shapes; the
 * poison that makes an unwritten product fail; and its WebAssembly backend.
 */
import assert from "node:assert/strict";
import { getWebGPUDevice, numpy as np } from "@jax-js/jax";
import { acquireGpu } from "../lib/gpu.ts";
import { randomMatrix, type Shape } from "../lib/matrix.ts";
import { validateProduct } from "../lib/measure.ts";
import { F32_NUMERICS } from "../lib/accuracy.ts";
import { JAXJS_GPU_TIMER, openJaxjsGpu, runJaxCpu } from "../lib/peers/jaxjs.ts";

const gpuTest = { sanitizeResources: false, sanitizeOps: false };

Deno.test(
  "jax-js WebGPU peer: odd and degenerate shapes validated, timed by timestamp-query",
  gpuTest,
  async () => {
    const gpu = await acquireGpu();
    const peer = await openJaxjsGpu(gpu);
    assert.equal(peer.details.timestampQuery, true);
    const shapes: Shape[] = [
      { m: 64, k: 64, n: 64 },
      { m: 100, k: 300, n: 77 },
      { m: 1, k: 300, n: 1 }, // a dot product
      { m: 100, k: 1, n: 77 }, // an outer product
      { m: 1, k: 64, n: 37 },
      { m: 37, k: 64, n: 1 },
      { m: 1, k: 1, n: 1 },
      { m: 100, k: 300, n: 77 }, // again: nothing left over from the first run's trace
    ];
    const seeds = new Set<number>();
    for (const shape of shapes) {
      const r = await peer.run(shape, { reps: 5 });
      const row = JSON.stringify(r);
      assert.ok(r.validated && !r.error, row);
      assert.deepEqual([r.m, r.k, r.n], [shape.m, shape.k, shape.n]);
      assert.equal(r.peer, "jaxjs-webgpu");
      assert.equal(r.timer, JAXJS_GPU_TIMER);
      assert.equal(r.timing, "timestamp-query", row);
      assert.equal(r.reps, 5, row);
      assert.ok(0 < r.minMs! && r.minMs! <= r.medianMs! && r.medianMs! <= r.maxMs!, row);
      assert.ok(r.gflops! > 0, row);
      // Judged against the error model, not a fixed relative error: a dot product's one value
      // can be a sum with cancellation, whose relative error is large and still within f32's.
      assert.ok(Object.values(r.errRatios!).every((x) => x <= 1), row);
      assert.equal(r.details?.poisonedOutput, true, row);
      // jax-js folds a one-element operand into the kernel: at 1x1x1 both are constants.
      assert.equal(r.details?.kernelInputs, shape.m * shape.k * shape.n === 1 ? 0 : 2, row);
      seeds.add(r.seed!);
    }
    assert.equal(seeds.size, shapes.length, "fresh inputs for every row");
  },
);

Deno.test(
  "jax-js WebGPU peer: without reps, as many as the budget allows (at least 5)",
  gpuTest,
  async () => {
    const peer = await openJaxjsGpu(await acquireGpu());
    const r = await peer.run({ m: 33, k: 17, n: 9 }, { budgetMs: 1 });
    assert.ok(r.validated && r.reps! >= 5, JSON.stringify(r));
  },
);

Deno.test(
  "jax-js WebGPU peer: the product's output is the poisoned buffer, so unwritten reads NaN",
  gpuTest,
  async () => {
    await openJaxjsGpu(await acquireGpu());
    const device = getWebGPUDevice();
    const read = async (buffer: GPUBuffer, bytes: number) => {
      const staging = device.createBuffer({
        size: bytes,
        usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.MAP_READ,
      });
      const enc = device.createCommandEncoder();
      enc.copyBufferToBuffer(buffer, 0, staging, 0, bytes);
      device.queue.submit([enc.finish()]);
      await staging.mapAsync(GPUMapMode.READ);
      const out = new Float32Array(staging.getMappedRange().slice(0));
      staging.destroy();
      return out;
    };
    const [m, k, n] = [20, 30, 10];
    const a = randomMatrix(m, k) as Float32Array<ArrayBuffer>;
    const b = randomMatrix(k, n) as Float32Array<ArrayBuffer>;
    const ja = np.array(a, { shape: [m, k], device: "webgpu" });
    const jb = np.array(b, { shape: [k, n], device: "webgpu" });
    // As the peer does: a NaN array of C's size, uploaded, then freed into jax-js's pool.
    const poison = np.array(new Float32Array(m * n).fill(NaN), { shape: [m, n], device: "webgpu" });
    const poisoned = await poison.gpuBuffer();
    const unwritten = await read(poisoned, m * n * 4);
    assert.ok(unwritten.every(Number.isNaN), "C's buffer before the product: NaN");
    const seed = 7;
    assert.equal(
      validateProduct(unwritten, a, b, { m, k, n }, F32_NUMERICS, seed).passed,
      false,
      "a product that wrote nothing fails the check",
    );
    const c = np.matmul(ja, jb);
    assert.equal(await c.ref.gpuBuffer(), poisoned, "the product writes the poisoned buffer");
    const product = await c.data() as Float32Array;
    assert.deepEqual(await read(poisoned, m * n * 4), product);
    assert.ok(validateProduct(product, a, b, { m, k, n }, F32_NUMERICS, seed).passed);
  },
);

Deno.test(
  "jax-js WebGPU peer: a dispatch other than the product while timing fails the row",
  gpuTest,
  async () => {
    const peer = await openJaxjsGpu(await acquireGpu());
    const x = np.array(randomMatrix(1, 5) as Float32Array<ArrayBuffer>, { device: "webgpu" });
    let done = false;
    const row = peer.run({ m: 40, k: 30, n: 20 }, { reps: 50 }).finally(() => done = true);
    // Other GPU work of jax-js's, all along: its profiler reports it as well.
    while (!done) {
      await np.add(x.ref, 1).gpuBuffer();
      await new Promise((r) => setTimeout(r, 1));
    }
    x.dispose();
    const r = await row;
    assert.equal(r.validated, false, JSON.stringify(r));
    assert.equal(r.errorKind, "timing");
    assert.match(r.error!, /dispatch other than the product/);
    assert.equal(r.medianMs, undefined);
  },
);

Deno.test(
  "jax-js WebGPU peer: refuses an adapter other than ours",
  gpuTest,
  async () => {
    const gpu = await acquireGpu();
    const { vendor, architecture, device } = gpu.adapter.info;
    const info = { vendor, architecture, device, description: "another GPU" };
    const other = { ...gpu, adapter: { info } as GPUAdapter };
    await assert.rejects(openJaxjsGpu(other), /jax-js's device is on .*, ours on .*another GPU/);
  },
);

Deno.test("jax-js wasm peer: an odd shape validated and timed", gpuTest, async () => {
  const r = await runJaxCpu({ m: 48, k: 61, n: 33 }, { reps: 2, budgetMs: 50 });
  assert.ok(r.validated && r.gflops! > 0 && r.peer === "jaxjs-wasm", JSON.stringify(r));
});
