/**
 * The lab's outputs-per-invocation control (lab/outputs_per_invocation.ts): step 05's kernel
 * rewritten to one output per invocation compiles, and computes the product.
 */
import assert from "node:assert/strict";
import { oneOutput } from "../lab/outputs_per_invocation.ts";
import { acquireGpu, compileWgsl, loadKernelSource } from "../lib/gpu.ts";
import { validateThenTime } from "../lib/measure.ts";
import { findKernel, numericsOf } from "../lib/registry.ts";
import { BoundProblem } from "../lib/runner.ts";

Deno.test("oneOutput: step 05 at TM 1 keeps one sum and one store, and validates", async () => {
  const spec = findKernel("blocktile_1d")!;
  const out = oneOutput(await loadKernelSource(spec.file));
  assert.match(out, /^const TM: u32 = 1u;$/m);
  assert.doesNotMatch(out, /\bacc[01]\b/);
  assert.equal(out.match(/\bstore\(row, c/g)?.length, 1, "one store of C");
  assert.throws(() => oneOutput("fn f() {}"), /has no/);
  const gpu = await acquireGpu();
  const params = { BM: 16, BN: 16, BK: 8 };
  const pipeline = await gpu.device.createComputePipelineAsync({
    layout: "auto",
    compute: {
      module: await compileWgsl(gpu, out, "05 at TM 1"),
      entryPoint: "main",
      constants: params,
    },
  });
  const shape = { m: 33, k: 40, n: 35 };
  const r = await validateThenTime({ ...shape, relErr: NaN, validated: false }, {
    numerics: numericsOf(spec, params),
    compute: async (a, b) => {
      const p = await BoundProblem.create(gpu, { spec, params, pipeline }, shape, a, b);
      try {
        return await p.compute();
      } finally {
        p.destroy();
      }
    },
  });
  assert.ok(r.validated, `rel. error ${r.relErr}`);
});
