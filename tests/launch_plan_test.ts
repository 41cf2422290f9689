/**
 * The launch plan: one description of padding, copies, tile grid and edge strips that the runner
 * dispatches and the cost model counts, with the edge-strip kernel's geometry mirrored from its
 * WGSL in one place.
 */
import assert from "node:assert/strict";
import { acquireGpu, loadKernelSource } from "../lib/gpu.ts";
import {
  EDGE_STRIPS_FILE,
  type EdgePlan,
  launchModel,
  launchPlan,
  type LaunchSpec,
  STRIP_COLUMNS,
  STRIP_ROWS,
  STRIP_WIDTH,
} from "../lib/steps/launch.ts";
import type { Shape } from "../lib/matrix.ts";
import { findKernel, KERNELS } from "../lib/registry.ts";
import { BoundProblem, kernelParams, prepareKernel } from "../lib/runner.ts";

const gpuTest = { sanitizeResources: false, sanitizeOps: false };

Deno.test("edge strips: the TS geometry is the WGSL's", async () => {
  const wgsl = await loadKernelSource(EDGE_STRIPS_FILE);
  const constant = (name: string) =>
    Number(wgsl.match(new RegExp(`const ${name} = (\\d+)u;`))?.[1]);
  assert.equal(constant("WIDTH"), STRIP_WIDTH);
  assert.equal(constant("LANES"), STRIP_COLUMNS);
  assert.equal(constant("GROUPS"), STRIP_ROWS);
  assert.match(wgsl, /@workgroup_size\(LANES, GROUPS\)/);
});

Deno.test("launch plan: vec4 padding, whole tiles and strips at 4097", () => {
  const spec = findKernel("07_vectorize")!;
  const s = { m: 4097, k: 4097, n: 4097 };
  const plan = launchPlan(spec, spec.params, s);
  // K and N rounded up to whole 128-byte lines; M is free; C is written at its real size.
  assert.deepEqual(plan.padded, { m: 4097, k: 4128, n: 4128 });
  assert.deepEqual(plan.copies, [
    { label: "pad A", rows: 4097, cols: 4097, toRows: 4097, toCols: 4128 },
    { label: "pad B", rows: 4097, cols: 4097, toRows: 4128, toCols: 4128 },
  ]);
  assert.equal(plan.paddedC, false);
  assert.deepEqual(plan.tiles, { m: 4096, k: 4128, n: 4096 });
  assert.deepEqual(plan.grid, [32, 32, 1]);
  assert.deepEqual(plan.edgeStrips, { rowsFrom: 4096, colsFrom: 4096 });
  assert.deepEqual(plan.stripGroups, { bottom: Math.ceil(4097 / 32), right: 4096 / 8 });
  const without = launchPlan(spec, spec.params, s, false);
  assert.equal(without.edgeStrips, undefined);
  assert.deepEqual(without.tiles, without.padded);
  assert.deepEqual(without.stripGroups, { bottom: 0, right: 0 });
});

Deno.test("launch plan: a kernel that pads C copies it back; bad combinations throw", () => {
  const spec: LaunchSpec = {
    id: "padded_c",
    align: () => ({ m: 4, n: 4, k: 4 }),
    dispatch: (s, p) => [Math.ceil(s.n / p.BN), Math.ceil(s.m / p.BM), 1],
    precision: "f32",
  };
  const plan = launchPlan(spec, { BM: 64, BN: 64 }, { m: 5, k: 4, n: 4 });
  assert.deepEqual(plan.copies.map((c) => c.label), ["pad A", "unpad C"]);
  assert.equal(plan.paddedC, true);
  assert.deepEqual(plan.copies[1], { label: "unpad C", rows: 32, cols: 4, toRows: 5, toCols: 4 });
  assert.throws(
    () => launchPlan({ ...spec, precision: "f16" }, { BM: 64, BN: 64 }, { m: 5, k: 4, n: 4 }),
    /padding is implemented for 4-byte elements/,
  );
  assert.throws(
    () => launchPlan({ ...spec, unpaddedC: true }, { BM: 64, BN: 64 }, { m: 5, k: 4, n: 4 }),
    /unpaddedC needs align m = 1/,
  );
  assert.throws(
    () => launchPlan({ ...spec, edgeStrips: true }, { BM: 64, BN: 64 }, { m: 65, k: 4, n: 4 }),
    /edge strips need C at its real size/,
  );
});

Deno.test("cost model: counts the plan's tiles, strips, stores and copies", () => {
  // 06 pads nothing: 128 x 128 whole tiles, a bottom strip of 2 rows, a right strip of 3 columns.
  const spec = findKernel("06_blocktile_2d")!;
  const s = { m: 130, k: 10, n: 131 };
  const tiles = 128 * 10 + 10 * 128;
  const bottom = Math.ceil(131 / 32) * 2 * 10 + 10 * 131;
  const right = 128 * 10 + (128 / 8) * 10 * 3;
  assert.deepEqual(launchModel(spec, s, spec.params), {
    flops: 2 * 130 * 10 * 131,
    bytes: 4 * (tiles + bottom + right + 130 * 131),
  });
  // The padding copies: each padded operand read once at its real size and written padded.
  const vec4 = findKernel("07_vectorize")!;
  const odd = { m: 128, k: 9, n: 128 };
  const plan = launchPlan(vec4, vec4.params, odd);
  const unpadded = launchModel(
    { ...vec4, align: () => ({ m: 1, n: 1, k: 1 }) },
    plan.padded,
    vec4.params,
  );
  const copies = 128 * 9 + 128 * 32 + 9 * 128 + 32 * 128;
  assert.equal(launchModel(vec4, odd, vec4.params).bytes, unpadded.bytes + 4 * copies);
});

// The expected dispatches are written out by hand from each kernel's tiles and padding, not
// taken from launchPlan (which the runner itself calls).
Deno.test("runner: dispatches the plan's steps, in order", gpuTest, async () => {
  const gpu = await acquireGpu();
  const cases: [string, Shape, string[], EdgePlan | undefined][] = [
    // vec4 rows pad K (45) and N (131); one row and three columns past 128 x 128 tiles: strips.
    ["08_bank_conflicts", { m: 129, k: 45, n: 131 }, ["pad A", "pad B", "tiles", "edge strips"], {
      rowsFrom: 128,
      colsFrom: 128,
    }],
    // 64 rows of a 128-row tile: an edge tile, not a strip (64 past the last whole tile).
    ["07_vectorize", { m: 64, k: 64, n: 64 }, ["tiles"], undefined],
    // 7 x 5 of a 128 x 128 tile: strips alone, no tile.
    ["06_blocktile_2d", { m: 7, k: 600, n: 5 }, ["edge strips"], { rowsFrom: 0, colsFrom: 0 }],
    // Square tiles that bound-check every edge themselves.
    ["04_tiled", { m: 33, k: 17, n: 9 }, ["tiles"], undefined],
  ];
  for (const [id, shape, expected, strips] of cases) {
    const spec = findKernel(id, KERNELS)!;
    const params = kernelParams(gpu, spec, undefined, shape);
    const problem = await BoundProblem.random(gpu, await prepareKernel(gpu, spec, params), shape);
    try {
      assert.deepEqual(problem.dispatchLabels, expected, `${id} at ${JSON.stringify(shape)}`);
      assert.deepEqual(problem.edgeStrips, strips);
    } finally {
      problem.destroy();
    }
  }
});
