/**
 * The lab's outputs-per-invocation control (lab/outputs_per_invocation.ts): step 05's kernel
 * rewritten to one output per invocation compiles, and computes the product.
 */
import assert from "node:assert/strict";
import { measureVariant, oneOutput } from "../lab/outputs_per_invocation.ts";
import { acquireGpu, loadKernelSource } from "../lib/gpu.ts";
import { findKernel } from "../lib/registry.ts";

Deno.test("oneOutput: step 05 at TM 1 keeps one sum and one store, and validates", async () => {
  const spec = findKernel("blocktile_1d")!;
  const out = oneOutput(await loadKernelSource(spec.file));
  assert.match(out, /^const TM: u32 = 1u;$/m);
  assert.doesNotMatch(out, /\bacc[01]\b/);
  assert.equal(out.match(/\bstore\(row, c/g)?.length, 1, "one store of C");
  assert.throws(() => oneOutput("fn f() {}"), /has no/);
  const r = await measureVariant(
    await acquireGpu(),
    out,
    { BM: 16, BN: 16, BK: 8 },
    { m: 33, k: 40, n: 35 },
    "05 at TM 1",
  );
  assert.ok(r.validated, `rel. error ${r.relErr}`);
});
