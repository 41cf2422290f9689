/**
 * The f16 ceiling kernel on this machine's adapter: its packed FMA chains compute what the CPU
 * computes for the same chains (so the loop ran and nothing was folded away), and the sweep
 * reports a positive throughput that measureCeilings records beside the FP32 one.
 */
import assert from "node:assert/strict";
import { checkF16Chains, f16ChainSum, measureCeilings, measureF16 } from "../lib/ceilings.ts";
import { acquireGpu } from "../lib/gpu.ts";

const gpu = await acquireGpu();
const hasF16 = gpu.has("shader-f16");

Deno.test({
  name: "f16 ceiling: the GPU's chain sums equal the CPU's, and the loop changed them",
  ignore: !hasF16,
  fn: async () => {
    for (const accumulators of [4, 16]) {
      const { gpu: got, cpu } = await checkF16Chains(gpu, accumulators);
      assert.ok(got.length >= 1024);
      assert.deepEqual(Array.from(got), Array.from(cpu), `${accumulators} accumulators`);
      // Without the loop every chain keeps its start value: the sums would differ.
      const unrun = f16ChainSum(0, accumulators, { iters: 0, x: 1, y: 0.5 });
      assert.notEqual(got[0], unrun);
      // 12 iterations x 8 rounds of +0.5 on 2 lanes of each running accumulator.
      assert.equal(got[0] - unrun, 12 * 8 * 0.5 * 2 * accumulators);
    }
  },
});

Deno.test({
  name: "f16 ceiling: every trial times positive FLOP/s; measureCeilings records the best",
  ignore: !hasF16,
  fn: async () => {
    const trials = await measureF16(gpu, { passMs: 3, reps: 3 });
    assert.ok(trials.length > 0);
    for (const t of trials) {
      assert.ok(t.gflops > 0 && Number.isFinite(t.gflops), `${t.chains} chains: ${t.gflops}`);
      assert.equal(t.chains % 2, 0, "two f16 lanes per accumulator");
      assert.equal(t.flops, 2 * t.chains * 8 * t.iters * t.invocations);
    }
    const c = await measureCeilings(gpu, { bandwidthBytes: 1 << 20, passMs: 3, reps: 3 });
    assert.ok(c.f16Gflops! > 0 && c.fp32Gflops > 0);
    assert.equal(c.f16Gflops, Math.max(...c.f16Trials!.map((t) => t.gflops)));
    assert.equal(c.f16Chains, c.f16Trials!.find((t) => t.gflops === c.f16Gflops)!.chains);
  },
});

Deno.test("f16 chain model: rounding to f16 as the GPU stores it", () => {
  // x < 1 with rounding: chains settle where a * x + y rounds back to a, never overflow.
  const settled = f16ChainSum(5, 16, { iters: 1 << 12, x: 0.999, y: 0.001 });
  assert.ok(Number.isFinite(settled) && settled > 0);
  // Accumulators past the count in use keep their start values.
  const none = f16ChainSum(5, 0, { iters: 3, x: 1, y: 0.5 });
  assert.equal(none, f16ChainSum(5, 16, { iters: 0, x: 1, y: 0.5 }));
});
