/**
 * Step 13: every plan validated on shapes that force it (fresh inputs, poisoned C and
 * workspace), the split-K sum deterministic, the launch plan's extra dispatch, and the picker's
 * rules on the recorded device.
 */
import assert from "node:assert/strict";
import { acquireGpu, type DeviceSummary, namedDevice } from "../lib/gpu.ts";
import { launchPlan } from "../lib/steps/launch.ts";
import { findKernel } from "../lib/registry.ts";
import { BoundProblem, kernelParams, prepareKernel, runKernel } from "../lib/runner.ts";
import { type Shape, shapeLabel } from "../lib/matrix.ts";
import type { Params } from "../lib/steps/spec.ts";
import {
  candidates,
  fallbackPlan,
  gemvRowChoices,
  gemvRows,
  modelPlan,
  pickPlan,
  samePlan,
  shapeClass,
} from "../kernels/13_shapes/plans.ts";
import { PLAN_GEMV, PLAN_TILES, planKind } from "../kernels/13_shapes/launch.ts";
import { residentPerSm } from "../kernels/13_shapes/predict.ts";
import { deviceModel, waves } from "../lib/model/device.ts";
import { generateWgsl } from "../kernels/12_generated/generate.ts";
import { generatedParams } from "../kernels/12_generated/step.ts";
import { searchPlans } from "../lib/search.ts";
import { saveTuning } from "../lib/tuning.ts";
import { scaledSuite } from "../lib/notebook/lessons/shapes.ts";
import { SHAPE_SUITE } from "../lib/suite.ts";

const spec = findKernel("shapes")!;
const small = { BM: 64, BN: 64, BK: 16, TN: 8, GROUP_M: 2 };
const tiles = (p: Params = {}): Params => ({ ...small, PLAN: PLAN_TILES, SLICES: 1, ...p });
const gemv = (rows: number, slices: number, loads = 4): Params => ({
  PLAN: PLAN_GEMV,
  SLICES: slices,
  BM: rows,
  BN: 256,
  LOADS: loads,
});

/** Each plan at shapes that force its edges: odd sizes, short and empty slices, row blocks. */
const CASES: [string, Shape, Params][] = [
  ["tiles", { m: 70, k: 50, n: 90 }, tiles()],
  ["tiles", { m: 1, k: 1, n: 1 }, tiles()],
  ["split-K", { m: 40, k: 600, n: 36 }, tiles({ SLICES: 4 })],
  ["split-K", { m: 67, k: 130, n: 70 }, tiles({ SLICES: 3 })],
  // K of 20 in 8 slices of 16: slice 1 is short and slices 2-7 are empty (they store zeros).
  ["split-K", { m: 9, k: 20, n: 5 }, tiles({ SLICES: 8 })],
  ["matrix-vector", { m: 1, k: 300, n: 517 }, gemv(1, 1)],
  ["matrix-vector", { m: 5, k: 64, n: 1000 }, gemv(5, 4)],
  ["matrix-vector", { m: 3, k: 7, n: 3 }, gemv(16, 2)],
  // Two row blocks of 16 (M = 20) and a slice count that leaves an empty slice.
  ["matrix-vector", { m: 20, k: 37, n: 260 }, gemv(16, 5)],
  // Scalar loads: the same edges with A and B read as they are (no padded copies).
  ["matrix-vector", { m: 1, k: 300, n: 517 }, gemv(1, 1, 1)],
  ["matrix-vector", { m: 3, k: 7, n: 3 }, gemv(16, 2, 1)],
  ["matrix-vector", { m: 20, k: 37, n: 260 }, gemv(16, 5, 1)],
];

Deno.test("shapes: every plan validates on shapes that force it", async () => {
  const gpu = await acquireGpu();
  for (const [kind, shape, params] of CASES) {
    assert.equal(planKind(params), kind);
    const r = await runKernel(gpu, spec, shape, { params, skipTiming: true });
    assert.ok(r.validated, `${kind} ${JSON.stringify(params)} at ${shapeLabel(shape)}: ${r.error}`);
  }
});

Deno.test("shapes: the split-K plan adds a timed slice sum, deterministic run to run", async () => {
  const gpu = await acquireGpu();
  const shape = { m: 70, k: 257, n: 66 };
  const params = kernelParams(gpu, spec, tiles({ SLICES: 4 }), shape);
  const plan = launchPlan(spec, params, shape);
  assert.equal(plan.slices, 4);
  assert.equal(plan.grid[2], 4);
  const a = Float32Array.from({ length: shape.m * shape.k }, (_, i) => Math.sin(i));
  const b = Float32Array.from({ length: shape.k * shape.n }, (_, i) => Math.cos(i));
  const kernel = await prepareKernel(gpu, spec, params);
  const problem = await BoundProblem.create(gpu, kernel, shape, a, b);
  try {
    assert.deepEqual(problem.dispatchLabels, [
      "pad A",
      "pad B",
      "tiles",
      "sum slices",
      "edge strips",
    ]);
    const first = await problem.compute();
    const second = await problem.compute();
    assert.deepEqual(new Uint32Array(second.buffer), new Uint32Array(first.buffer));
  } finally {
    problem.destroy();
  }
  // One slice: no workspace, no sum, and the text is step 12's.
  const one = launchPlan(spec, tiles(), shape);
  assert.equal(one.slices, 1);
  // The cost model counts the partial products written and read back by the sum.
  const whole = { m: 128, k: 1024, n: 128 };
  const extra = spec.model(whole, tiles({ SLICES: 4 })).bytes - spec.model(whole, tiles()).bytes;
  assert.equal(extra, 4 * 2 * 4 * whole.m * whole.n);
  const text = spec.generate!(tiles());
  assert.match(text, /^\/\/ Step 13, plan tiles 64x64x16 TN 8: PLAN=0 SLICES=1\n/);
  assert.ok(text.endsWith(generateWgsl(generatedParams(tiles()))), "after it, step 12's text");
  assert.doesNotMatch(spec.generate!(tiles()), /kBegin/);
  assert.match(spec.generate!(tiles({ SLICES: 2 })), /let sliceBegin = min\(wid\.z \* kChunk/);
});

Deno.test("shapes: the picker's plan validates when no parameters are given", async () => {
  const gpu = await acquireGpu();
  for (
    const shape of [{ m: 1, k: 256, n: 300 }, { m: 64, k: 2048, n: 64 }, { m: 200, k: 64, n: 136 }]
  ) {
    const r = await runKernel(gpu, spec, shape, { skipTiming: true });
    assert.ok(r.validated, `${shapeLabel(shape)} ${JSON.stringify(r.params)}: ${r.error}`);
  }
});

Deno.test("shapes: plans that cannot run are refused with the reason", () => {
  assert.match(spec.invalid!(gemv(17, 1))!, /1 to 16 rows/);
  assert.match(spec.invalid!({ ...gemv(4, 1), BN: 128 })!, /BN is 256/);
  assert.match(spec.invalid!(tiles({ SLICES: 0 }))!, /SLICES/);
  assert.match(spec.invalid!(tiles({ BM: 48 }))!, /multiple of 32/);
  assert.equal(spec.invalid!(tiles({ SLICES: 8 })), undefined);
});

const H200: DeviceSummary = namedDevice("NVIDIA H200", "nvidia", "hopper");

Deno.test("shapes: the picker's rules on an H200 (132 SMs, no per-shape search saved)", () => {
  const model = deviceModel(H200);
  assert.equal(model.sms, 132);
  const unknown = deviceModel({ ...H200, description: "Some GPU" });
  assert.match(unknown.source, /not in the table/);
  // Wave arithmetic: 8 x 4 tiles of 128 x 256 at 1000 x 777, one per SM: 32 of 132 slots.
  const big = {
    BM: 128,
    BN: 256,
    BK: 16,
    TN: 16,
    PAD: 0,
    GROUP_M: 8,
    AHEAD: 0,
    UNROLL: 1,
    NESTED: 1,
    LITERAL_BUFFER: 1,
  };
  const w = waves(Math.ceil(1000 / 128) * Math.ceil(777 / 256), 132, residentPerSm(big));
  assert.equal(w.waves, 1);
  assert.ok(w.fill < 0.25, `fill ${w.fill}`);
  // The model's rules, whatever per-shape search is committed for the H200.
  const kindAt = (s: Shape) => modelPlan(s, H200).kind;
  assert.equal(kindAt({ m: 1, k: 4096, n: 4096 }), "matrix-vector");
  assert.equal(kindAt({ m: 12, k: 4096, n: 4096 }), "matrix-vector");
  // vec4 loads where K and N allow them, scalar loads (no padded copy of B) where they do not.
  assert.equal(modelPlan({ m: 12, k: 4096, n: 4096 }, H200).params.LOADS, 4);
  assert.equal(modelPlan({ m: 3, k: 13476, n: 14829 }, H200).params.LOADS, 1);
  assert.equal(kindAt({ m: 256, k: 65536, n: 256 }), "split-K");
  assert.equal(kindAt({ m: 4096, k: 4096, n: 4096 }), "tiles");
  assert.equal(kindAt({ m: 8192, k: 8192, n: 8192 }), "tiles");
  // Small grids take smaller tiles than the 4096 configuration.
  const odd = modelPlan({ m: 1000, k: 3000, n: 777 }, H200).params;
  assert.ok(odd.BM * odd.BN < 128 * 256 || odd.SLICES > 1, JSON.stringify(odd));
  assert.equal(gemvRows(20), 10);
  // Past 4 rows, the fewest rows, that rounded up to 4, and 16, all in as many row blocks.
  assert.deepEqual(gemvRowChoices(3), [3]);
  assert.deepEqual(gemvRowChoices(15), [15, 16]);
  assert.deepEqual(gemvRowChoices(16), [16]);
  assert.deepEqual(gemvRowChoices(17), [9, 12, 16]);
  assert.deepEqual(gemvRowChoices(33), [11, 12, 16]);
  assert.deepEqual(gemvRowChoices(60), [15, 16]);
  assert.equal(
    shapeClass({ m: 4097, k: 4097, n: 4097 }),
    shapeClass({ m: 4096, k: 4096, n: 4096 }),
  );
  assert.ok(candidates({ m: 1, k: 4096, n: 4096 }, H200).length > 5);
});

Deno.test("shapes: the model counts the workgroups the runner launches (edge strips at 4097^3)", () => {
  const at = (s: Shape) =>
    candidates(s, H200).find((c) =>
      c.kind === "tiles" && c.params.BM === 128 && c.params.BN === 256 && c.params.TN === 16
    )!;
  const odd = { m: 4097, k: 4097, n: 4097 };
  const big = at(odd);
  // Whole tiles only: the last row and column go to the edge-strip kernel, not to 33 x 17 tiles.
  assert.deepEqual(launchPlan(spec, big.params, odd).grid, [16, 32, 1]);
  assert.equal(big.waves.workgroups, 512);
  assert.equal(big.waves.waves, 4);
  // The strips and the padding copies are charged on top of the 4096^3 plan's time.
  assert.ok(big.modelMs > at({ m: 4096, k: 4096, n: 4096 }).modelMs);
});

Deno.test("shapes: the per-shape search keeps each shape's fastest plan, and the picker uses it", async () => {
  const gpu = await acquireGpu();
  const shapes = [{ m: 1, k: 64, n: 64 }, { m: 40, k: 600, n: 36 }];
  const record = await searchPlans(gpu, findKernel("shapes")!, shapes, {
    perShape: 2,
    everyPlanBelow: 0,
    confirm: 1,
    budgetMs: 5,
    save: false,
  });
  assert.equal(record.kernel, "13_shapes");
  assert.equal(record.perShape?.length, 2);
  assert.equal(record.best.params, record.perShape![0].params);
  for (const [i, shape] of shapes.entries()) {
    const here = record.trials.filter((t) => t.shape === shape);
    assert.ok(here.length >= 2, `${shapeLabel(shape)}: ${here.length} plans measured`);
    assert.ok(here.every((t) => t.validated), JSON.stringify(here.map((t) => t.error)));
    const fastest = Math.max(...here.map((t) => t.gflops!));
    assert.equal(record.perShape![i].gflops, fastest);
  }
  // The planner's own pick and 12's plan are measured at every shape (the plans a saved
  // winner must beat to be used).
  for (const shape of shapes) {
    const here = record.trials.filter((t) => t.shape === shape);
    for (const plan of [modelPlan(shape, gpu.summary).params, fallbackPlan(shape, gpu.summary)]) {
      assert.ok(here.some((t) => samePlan(t.params, plan)), `${shapeLabel(shape)}: not measured`);
    }
  }
  // Saved for a made-up device: at its own shape the winner is picked unless it is the rule's
  // pick already; at a shape of its class it is the winner or the rule's pick; elsewhere never.
  const device = { ...gpu.summary, description: `test device ${crypto.randomUUID()}` };
  const url = await saveTuning({ ...record, device });
  try {
    const winner = record.perShape![1].params;
    const atShape = pickPlan(shapes[1], device);
    const rule = modelPlan(shapes[1], device);
    if (samePlan(winner, rule.params)) assert.deepEqual(atShape, rule);
    else assert.deepEqual([atShape.from, atShape.params], ["tuned", winner]);
    const near = { m: 40, k: 640, n: 40 };
    assert.equal(shapeClass(near), shapeClass(shapes[1]));
    const pick = pickPlan(near, device);
    assert.ok(
      pick.from === "tuned"
        ? samePlan(pick.params, winner)
        : samePlan(pick.params, modelPlan(near, device).params),
    );
    assert.notEqual(pickPlan({ m: 4096, k: 64, n: 4096 }, device).from, "tuned");
  } finally {
    await Deno.remove(new URL(".", url), { recursive: true });
  }
});

Deno.test("shapes: the live suite keeps a dimension that is not a multiple of 4 off one", () => {
  for (const by of [4, 32]) {
    const scaled = scaledSuite(by);
    assert.equal(scaled.length, SHAPE_SUITE.length);
    SHAPE_SUITE.forEach((s, i) => {
      // A decode shape keeps its few rows.
      if (s.m <= 16) assert.equal(scaled[i].m, s.m);
      for (const d of ["m", "k", "n"] as const) {
        if (s[d] % 4 !== 0) assert.notEqual(scaled[i][d] % 4, 0, `${shapeLabel(s)} / ${by}: ${d}`);
      }
    });
  }
  assert.deepEqual(scaledSuite(4)[SHAPE_SUITE.findIndex((s) => s.m === 4097)], {
    m: 1025,
    k: 1025,
    n: 1025,
  });
});
