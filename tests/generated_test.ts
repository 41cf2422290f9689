/**
 * Step 12's generator: the text is deterministic and cached, the transforms do what they say in
 * the text (literal rows and buffers, no loop), and every combination of them computes the right
 * product on the software adapter.
 */
import assert from "node:assert/strict";
import {
  ALL_TRANSFORMS,
  type GeneratedParams,
  generateWgsl,
  tileBody,
  whyInvalid,
} from "../kernels/12_generated/generate.ts";
import { acquireGpu } from "../lib/gpu.ts";
import { findKernel } from "../lib/registry.ts";
import { runKernel } from "../lib/runner.ts";

const small: GeneratedParams = {
  BM: 64,
  BN: 64,
  BK: 8,
  TN: 8,
  PAD: 1,
  GROUP_M: 2,
  AHEAD: 0,
  ...ALL_TRANSFORMS,
};

Deno.test("generated WGSL: the same parameters give the same text, generated once", () => {
  const first = generateWgsl(small);
  assert.equal(generateWgsl({ ...small }), first);
  assert.notEqual(generateWgsl({ ...small, BK: 16 }), first);
  assert.match(first, /BM=64 BN=64 BK=8 TN=8 PAD=1 GROUP_M=2 AHEAD=0/);
});

Deno.test("generated WGSL: the written-out loop reads literal buffers and k rows", () => {
  for (const buf of [0, 1]) {
    const body = tileBody(small, buf);
    assert.doesNotMatch(body, /for \(/);
    const reads = [...body.matchAll(/([AB]s)\[([^\]]+)\]\[([^\]]+)\]\[(\w+)\]/g)];
    assert.equal(reads.length, small.BK * (2 + small.TN / 4));
    for (const [, , b, k, col] of reads) {
      assert.equal(b, String(buf));
      assert.match(k, /^\d+$/);
      assert.match(col, /^[ab]\dAt$/, "the only dynamic index is loop-invariant");
    }
  }
});

Deno.test("generated WGSL: each transform off is visible in the text", () => {
  assert.match(tileBody({ ...small, UNROLL: 0 }, 0), /for \(var p = 0u; p < 8u; p\+\+\)/);
  assert.match(tileBody({ ...small, NESTED: 0 }, 1), /As\[\d+u \+ a0At\]/);
  assert.match(generateWgsl({ ...small, LITERAL_BUFFER: 0 }), /let cur = t % 2u;/);
  assert.doesNotMatch(generateWgsl(small), /t % 2u/);
});

Deno.test("generated WGSL: parameters it cannot generate are refused with the reason", () => {
  assert.match(whyInvalid({ ...small, TN: 4 })!, /TN must be 8 or 16/);
  assert.match(whyInvalid({ ...small, BM: 48 })!, /BM must be a multiple of 32/);
  assert.match(whyInvalid({ ...small, UNROLL: 0, AHEAD: 1 })!, /needs UNROLL/);
  assert.equal(whyInvalid(small), undefined);
  assert.throws(() => generateWgsl({ ...small, TN: 4 }), RangeError);
});

const gpu = await acquireGpu();
const generated = findKernel("generated")!;

Deno.test(
  "generated WGSL: every combination of the transforms matches the reference",
  { sanitizeResources: false, sanitizeOps: false },
  async () => {
    const shapes = [{ m: 1, k: 257, n: 3 }, { m: 131, k: 9, n: 127 }, { m: 148, k: 52, n: 148 }];
    for (const UNROLL of [0, 1]) {
      for (const NESTED of [0, 1]) {
        for (const LITERAL_BUFFER of [0, 1]) {
          const params = { ...small, UNROLL, NESTED, LITERAL_BUFFER, AHEAD: UNROLL };
          for (const shape of shapes) {
            const r = await runKernel(gpu, generated, shape, { params, skipTiming: true });
            assert.ok(
              r.validated,
              `${JSON.stringify(params)} ${JSON.stringify(shape)}: ${r.error}`,
            );
          }
        }
      }
    }
  },
);
