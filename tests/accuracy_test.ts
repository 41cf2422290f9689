/**
 * The error bound (lib/accuracy.ts): a float32 dot product summed the way a kernel sums it
 * passes at every K up to 16384, a +1e-3 bias fails at every K from 64 to 8192, and the model
 * sits above what every correct kernel measures on this adapter; the checks catch what each is
 * for (a NaN, one bad element, a bad row nobody sampled); rows are sampled across all of C.
 */
import assert from "node:assert/strict";
import {
  checkProduct,
  F32_NUMERICS,
  meanSquareTail,
  modelError,
  type Numerics,
  SAFETY,
  worstTail,
} from "../lib/accuracy.ts";
import { acquireGpu } from "../lib/gpu.ts";
import { checkRowsFor } from "../lib/measure.ts";
import { freshSeed, randomMatrix, sampleRows, type Shape } from "../lib/matrix.ts";
import { referenceRows } from "../lib/reference.ts";
import { KERNELS } from "../lib/registry.ts";
import { numericsOf } from "../lib/steps/spec.ts";
import { runKernel } from "../lib/runner.ts";

const gpuTest = { sanitizeResources: false, sanitizeOps: false };
const allRows = (m: number) => Array.from({ length: m }, (_, i) => i);

/** C summed in float32, one multiply-add at a time in k order, as a kernel's accumulator does. */
function float32Product(a: Float32Array, b: Float32Array, { m, k, n }: Shape): Float32Array {
  const c = new Float32Array(m * n);
  const acc = new Float32Array(n);
  for (let i = 0; i < m; i++) {
    acc.fill(0);
    for (let p = 0; p < k; p++) {
      const aip = a[i * k + p];
      for (let j = 0; j < n; j++) acc[j] = Math.fround(acc[j] + Math.fround(aip * b[p * n + j]));
    }
    c.set(acc, i * n);
  }
  return c;
}

function inputs(shape: Shape, seed = freshSeed()) {
  return {
    a: randomMatrix(shape.m, shape.k, seed),
    b: randomMatrix(shape.k, shape.n, seed ^ 0x9e3779b9),
    seed,
  };
}

Deno.test("float32 sums pass at every K up to 16384; a +1e-3 bias fails from 64 to 8192", () => {
  for (const k of [1, 7, 64, 256, 1024, 2048, 4096, 8192, 16384]) {
    const shape = { m: 16, k, n: 16 };
    const { a, b, seed } = inputs(shape);
    const c = float32Product(a, b, shape);
    const check = checkProduct(c, a, b, shape, allRows(shape.m), F32_NUMERICS, seed);
    assert.ok(check.passed, `K = ${k} (seed ${seed}): ${check.failure}`);
    if (k < 64 || k > 8192) continue;
    const biased = c.map((x) => x + 1e-3);
    const caught = checkProduct(biased, a, b, shape, allRows(shape.m), F32_NUMERICS, seed);
    assert.equal(caught.passed, false, `K = ${k}: a +1e-3 bias passed`);
    assert.ok(caught.ratios.norm > 1.5, `K = ${k}: norm ratio ${caught.ratios.norm}`);
  }
});

Deno.test("the bound: grows like sqrt(K), f16 far looser, tails that grow slowly with n", () => {
  const f16: Numerics = { storage: "f16", f16Run: 16 };
  assert.ok(Math.abs(modelError(F32_NUMERICS, 4095) / modelError(F32_NUMERICS, 1023) - 2) < 1e-3);
  assert.ok(modelError(f16, 1024) > 1000 * modelError(F32_NUMERICS, 1024));
  assert.ok(modelError(f16, 1024) > modelError({ storage: "f16", f16Run: 0 }, 1024));
  assert.equal(modelError({ storage: "f16", f16Run: 16 }, 8), modelError({ ...f16, f16Run: 8 }, 8));
  assert.ok(meanSquareTail(1) > 6 && meanSquareTail(1e8) < 1.01);
  assert.ok(worstTail(1) > 6 && worstTail(1e8) < 9);
});

Deno.test("checks: NaN and infinity fail, one bad element, one bad row nobody sampled", () => {
  const shape = { m: 64, k: 100, n: 48 };
  const { a, b, seed } = inputs(shape);
  const exact = Float32Array.from(referenceRows(a, b, shape));
  const rows = sampleRows(shape.m, 8, seed);
  const check = (c: Float32Array, sampled = rows) =>
    checkProduct(c, a, b, shape, sampled, F32_NUMERICS, seed);
  assert.ok(check(exact).passed);
  for (const bad of [NaN, Infinity, -Infinity]) {
    const c = exact.slice();
    c[shape.m * shape.n - 1] = bad;
    const r = check(c);
    assert.equal(r.passed, false);
    assert.ok(Number.isNaN(r.relErr));
    assert.match(r.failure!, /element 3071 \(row 63\)/);
  }
  // One element off by 1e-4 of its size: a relative error norm of about 5e-6, twenty times under
  // a fixed tolerance of 1e-4; the worst-element check catches it.
  const oneOff = exact.slice();
  oneOff[rows[1] * shape.n + 5] += 1e-4 * Math.sqrt(shape.k / 9);
  const r = check(oneOff);
  assert.equal(r.passed, false);
  assert.ok(r.ratios.worst > 1, JSON.stringify(r.ratios));
  assert.ok(r.relErr < 1e-5, `relErr ${r.relErr}`);
  // A row the sample skips, off by 1e-3 throughout: only the projection sees it.
  const skipped = allRows(shape.m).find((i) => !rows.includes(i))!;
  const badRow = exact.slice();
  for (let j = 0; j < shape.n; j++) badRow[skipped * shape.n + j] += 1e-3;
  const p = check(badRow);
  assert.equal(p.passed, false, JSON.stringify(p.ratios));
  assert.ok(p.ratios.norm <= 1 && p.ratios.worst <= 1, "the sampled rows are right");
  assert.ok(p.ratios.worstRow > 1);
});

Deno.test("sampled rows: first and last, one in every band, distinct and sorted", () => {
  for (const [m, count] of [[4096, 35], [8192, 8], [100, 8], [10, 9], [3, 2]]) {
    const rows = sampleRows(m, count, freshSeed());
    assert.equal(rows.length, count);
    assert.equal(rows[0], 0);
    assert.equal(rows.at(-1), m - 1);
    assert.ok(rows.every((r, i) => i === 0 || r > rows[i - 1]), JSON.stringify(rows));
    const bands = count - 2, width = (m - 2) / bands;
    rows.slice(1, -1).forEach((r, i) => {
      assert.ok(r - 1 >= Math.floor(i * width) && r - 1 < Math.floor((i + 1) * width), `${r}`);
    });
  }
  assert.deepEqual(sampleRows(5, 9), [0, 1, 2, 3, 4]);
  // The reference's budget: every row of small products, at least 8 of large ones.
  assert.equal(checkRowsFor({ m: 300, k: 300, n: 300 }), 300);
  assert.equal(checkRowsFor({ m: 8192, k: 8192, n: 8192 }), 8);
  assert.equal(checkRowsFor({ m: 4096, k: 4096, n: 4096 }), 35);
  assert.equal(checkRowsFor({ m: 4096, k: 4096, n: 4096 }, 3), 3);
});

// The calibration: the model (before its safety factor) bounds what every correct kernel
// measures here, across K from one tile to many.
Deno.test("every correct kernel's errors sit under the model", gpuTest, async () => {
  const gpu = await acquireGpu();
  const worst: string[] = [];
  for (const spec of KERNELS.filter((s) => !s.demo)) {
    for (const k of [1, 64, 1024]) {
      const shape = { m: 96, k, n: 96 };
      const r = await runKernel(gpu, spec, shape, { skipTiming: true });
      assert.ok(r.validated, `${spec.id} at K = ${k}: ${r.error}`);
      // Ratio to the model itself: the check's ratio times its safety factor.
      const norm = r.errRatios!.norm * SAFETY;
      assert.ok(norm <= 1, `${spec.id} at K = ${k}: ${norm.toFixed(2)} of the model`);
      worst.push(`${spec.id} K=${k} ${norm.toFixed(2)}`);
      assert.deepEqual(
        numericsOf(spec, r.params),
        numericsOf(spec, { ...spec.params, ...r.params }),
      );
    }
  }
  console.log(`errors as a share of the model: ${worst.join(", ")}`);
});
