/**
 * The kernel ladder on the software adapter: every kernel against the float64 reference on many
 * random shapes (fresh inputs, poisoned output), every valid point of each tuning space, the
 * broken-barrier demos and a deliberately wrong kernel caught by validation, the registry's
 * contracts (every param an `override`, grids cover the shape), and the autotuner on a tiny space.
 * Sizes stay small: lavapipe is slow.
 */
import assert from "node:assert/strict";
import { autotune } from "../lib/search.ts";
import { spacePoints } from "../lib/steps/spec.ts";
import { acquireGpu, type DeviceSummary, type Gpu, loadKernelSource } from "../lib/gpu.ts";
import { flops, freshSeed, rng, type Shape } from "../lib/matrix.ts";
import { findKernel, KERNELS, type KernelSpec } from "../lib/registry.ts";
import { edgePlan, STRIP_WIDTH } from "../lib/steps/launch.ts";
import { tailShapes } from "../lib/steps/tails.ts";
import { F32_NUMERICS } from "../lib/accuracy.ts";
import { BoundProblem, kernelParams, prepareKernel, runKernel } from "../lib/runner.ts";
import {
  loadTuning,
  saveTuning,
  tunedParams,
  type TuningRecord,
  tuningUrl,
} from "../lib/tuning.ts";

const gpuTest = { sanitizeResources: false, sanitizeOps: false };
const gpu = await acquireGpu();
const ladder = KERNELS.filter((k) => !k.demo);
const label = ({ m, k, n }: Shape) => `${m}x${k}x${n}`;

/**
 * The kernel's tail shapes (from its own tile sizes and padding: a partial last k tile, K below
 * a tile, K = 1, partial edges and strips, M = 1, N = 1), a few fixed awkward ones, and fresh
 * random ones.
 */
function shapes(spec: KernelSpec, seed: number, count: number): Shape[] {
  const fixed: Shape[] = [
    ...tailShapes(spec, spec.params).map((t) => t.shape),
    { m: 1, k: 1, n: 1 },
    { m: 1, k: 257, n: 3 },
    { m: 127, k: 129, n: 65 },
  ];
  const next = rng(seed);
  const dim = () => 1 + Math.floor(next() * 300);
  const random = Array.from({ length: count }, () => ({ m: dim(), k: dim(), n: dim() }));
  return [...fixed, ...random];
}

async function assertCorrect(spec: KernelSpec, shape: Shape, params?: Record<string, number>) {
  const r = await runKernel(gpu, spec, shape, { params, skipTiming: true });
  assert.ok(
    r.validated,
    `${spec.id} ${JSON.stringify(r.params)} at ${label(shape)} (seed ${r.seed}): ${r.error}`,
  );
  const ratios = Object.values(r.errRatios!);
  assert.ok(ratios.length === 4 && ratios.every((x) => x <= 1), JSON.stringify(r.errRatios));
}

/** Each named kernel (a control or teaching variant) against the reference at each shape. */
async function assertCorrectOn(ids: string[], shapes: Shape[]) {
  for (const id of ids) {
    for (const shape of shapes) await assertCorrect(findKernel(id)!, shape);
  }
}

/** Shapes for the controls: a tile's tails, K below a vec4 row's padding, and a tiny product. */
const CONTROL_SHAPES: Shape[] = [{ m: 131, k: 70, n: 129 }, { m: 256, k: 21, n: 255 }, {
  m: 1,
  k: 3,
  n: 5,
}];

for (const spec of ladder) {
  Deno.test(`${spec.id}: matches the reference on random shapes`, gpuTest, async () => {
    const seed = freshSeed();
    for (const shape of shapes(spec, seed, 8)) await assertCorrect(spec, shape);
  });
}

// The vec4 kernels point a load outside the matrix at the zero vec4 the runner keeps after A's
// and B's data (ZERO_TAIL). A shape with partial tiles in M, N (wider than an edge strip) and K
// makes them read it: without the zeros, the last partial k tile adds garbage to C.
Deno.test("vec4 kernels: loads past M, N and K read the zero tail", gpuTest, async () => {
  const shape = { m: 148, k: 52, n: 148 };
  const checked: string[] = [];
  for (const spec of ladder) {
    const code = spec.generate ? spec.generate(spec.params) : await loadKernelSource(spec.file);
    if (!code.includes("arrayLength(&A)")) continue;
    await assertCorrect(spec, shape);
    checked.push(spec.name);
  }
  assert.deepEqual(
    checked,
    [
      "vectorize",
      "bank_conflicts",
      "subgroup_tiling",
      "double_buffer",
      "autotune",
      "generated",
      "shapes",
      "f16",
    ],
    "07 to 14 bounds-check by address",
  );
});

/**
 * Every point of a small space; of a large one (a generated kernel compiles slowly on a software
 * adapter), a sample in which every value of every parameter occurs, plus random points.
 */
function coveringSample(
  space: Record<string, number[]>,
  points: Record<string, number>[],
  seed: number,
  limit = 24,
): Record<string, number>[] {
  if (points.length <= limit) return points;
  const picked = new Set<Record<string, number>>();
  for (const [key, values] of Object.entries(space)) {
    for (const v of values) {
      const p = points.find((x) => x[key] === v);
      if (p) picked.add(p);
    }
  }
  const next = rng(seed);
  while (picked.size < limit) picked.add(points[Math.floor(next() * points.length)]);
  return [...picked];
}

Deno.test(
  "every valid point of each tuning space is correct on its own tails",
  gpuTest,
  async () => {
    const seed = freshSeed();
    for (const spec of ladder.filter((s) => s.space)) {
      const points = spacePoints(spec.space!, spec.params).filter((p) =>
        !spec.invalid?.(p) &&
        spec.workgroupStorageBytes(p) <= gpu.device.limits.maxComputeWorkgroupStorageSize
      );
      assert.ok(points.length > 0, `${spec.id}: no valid point in its space`);
      // The point's partial last k tile and partial edges, and K below one of its k tiles.
      for (const params of coveringSample(spec.space!, points, seed)) {
        const [edges, shortK] = tailShapes(spec, { ...spec.params, ...params });
        await assertCorrect(spec, edges.shape, params);
        await assertCorrect(spec, shortK.shape, params);
      }
    }
  },
);

Deno.test("f16 kernels: within their own bound, and really f16", gpuTest, async () => {
  for (
    const id of ["f16", "f16_storage", "f16_vec4", "f16_storage_vec4", "f16_u32", "f16_storage_u32"]
  ) {
    const spec = findKernel(id)!;
    // K and N multiples of 4 (the vec4<f16> loads), K only (B element by element), neither.
    const shapes = [{ m: 96, k: 256, n: 128 }, { m: 200, k: 300, n: 150 }, { m: 33, k: 517, n: 7 }];
    for (const shape of shapes) {
      const r = await runKernel(gpu, spec, shape, { skipTiming: true });
      assert.ok(r.validated, `${id} at ${label(shape)}: ${r.error}`);
      // f16 rounding: far above f32's error, and the f32 bound would fail it.
      assert.ok(r.relErr > 1e-5, `${id} relErr ${r.relErr}`);
      const asF32 = { ...spec, numerics: F32_NUMERICS };
      const strict = await runKernel(gpu, asF32, shape, { skipTiming: true, seed: r.seed });
      assert.equal(strict.validated, false, `${id} at ${label(shape)} passed the f32 bound`);
    }
  }
});

Deno.test("f16 vec4 loads: A and B bound as vec4<f16>, one load per four values where aligned", () => {
  for (const id of ["f16_vec4", "f16_storage_vec4"]) {
    const spec = findKernel(id)!;
    const text = spec.generate!(spec.params);
    assert.match(text, /var<storage, read> A: array<vec4<f16>>/);
    assert.match(
      text,
      /if \(dims\.K % 4u == 0u\) \{\n\s+return .*A\[select\(arrayLength\(&A\) - 1u, at \/ 4u/,
    );
    assert.match(text, /var<storage, read_write> C: array<f16>/);
  }
  const scalar = findKernel("f16")!;
  assert.match(scalar.generate!(scalar.params), /var<storage, read> A: array<f16>/);
});

Deno.test("f16 u32 loads: A and B bound as vec2<u32>, four f16 unpacked per load where aligned", () => {
  for (const id of ["f16_u32", "f16_storage_u32"]) {
    const spec = findKernel(id)!;
    const text = spec.generate!(spec.params);
    assert.match(text, /var<storage, read> A: array<vec2<u32>>/);
    assert.match(text, /unpack2x16float\(w\.x\), unpack2x16float\(w\.y\)/);
    assert.match(
      text,
      /if \(dims\.K % 4u == 0u\) \{\n\s+return .*quadA\(select\(arrayLength\(&A\) - 1u, at \/ 4u/,
    );
    assert.match(text, /var<storage, read_write> C: array<f16>/);
  }
});

Deno.test("demo: the local-array 2D blocktile computes the same result", gpuTest, async () => {
  await assertCorrect(findKernel("blocktile_2d_local_array")!, { m: 131, k: 70, n: 129 });
});

Deno.test(
  "demo: the 2D blocktile with its loads issued first or written out in order computes the same result",
  gpuTest,
  async () => {
    await assertCorrectOn(["blocktile_2d_loads_first", "blocktile_2d_written_out"], CONTROL_SHAPES);
    const spec = findKernel("blocktile_2d_loads_first")!;
    assert.match(spec.invalid!({ BM: 64, BN: 128, BK: 8 }) ?? "", /4 x the invocations/);
    assert.match(spec.invalid!({ ...spec.params, IN_ORDER: 2 }) ?? "", /IN_ORDER is 0 or 1/);
    assert.equal(findKernel("blocktile_2d_written_out")!.params.IN_ORDER, 1);
  },
);

Deno.test(
  "demo: the four-sums tile and its one-sum control compute the same result, tails included",
  gpuTest,
  async () => {
    const ids = ["tiled_four_sums", "tiled_one_sum_by_four"];
    await assertCorrectOn(ids, [{ m: 64, k: 80, n: 64 }, { m: 37, k: 101, n: 53 }, {
      m: 1,
      k: 3,
      n: 5,
    }]);
    for (const id of ids) {
      assert.match(findKernel(id)!.invalid!({ TILE: 6 }) ?? "", /multiple of 4/);
    }
  },
);

Deno.test(
  "demo: the one-sum tile computes the same result at every STEPS, and STEPS must divide TILE",
  gpuTest,
  async () => {
    const spec = findKernel("tiled_steps")!;
    for (const STEPS of [1, 2, 8, 16]) {
      await assertCorrect(spec, { m: 37, k: 101, n: 53 }, { ...spec.params, STEPS });
    }
    await assertCorrectOn(["tiled_steps"], [{ m: 64, k: 80, n: 64 }, { m: 1, k: 3, n: 5 }]);
    assert.match(spec.invalid!({ TILE: 16, STEPS: 3 }) ?? "", /divide TILE/);
  },
);

Deno.test(
  "demo: vectorize's five controls compute the same result, padding and strips included",
  gpuTest,
  async () => {
    await assertCorrectOn([
      "vectorize_scalar_loads",
      "vectorize_scalar_loads_first",
      "vectorize_scalar_reads",
      "vectorize_loads_first",
      "vectorize_written_out",
    ], CONTROL_SHAPES);
    assert.equal(findKernel("vectorize_written_out")!.params.IN_ORDER, 1);
  },
);

Deno.test(
  "demo: 09 in 08's mapping, with its loads issued first or written out in order, in both mappings, computes the same result",
  gpuTest,
  async () => {
    await assertCorrectOn(
      [
        "subgroup_tiling_flat",
        "subgroup_tiling_loads_first",
        "subgroup_tiling_flat_loads_first",
        "subgroup_tiling_written_out",
        "subgroup_tiling_flat_written_out",
      ],
      CONTROL_SHAPES,
    );
    const spec = findKernel("subgroup_tiling_loads_first")!;
    assert.match(spec.invalid!({ BM: 64, BN: 128, BK: 8, PAD: 1 }) ?? "", /4 x the invocations/);
    assert.match(spec.invalid!({ ...spec.params, WARP_TILES: 2 }) ?? "", /WARP_TILES is 0 or 1/);
    assert.match(spec.invalid!({ ...spec.params, IN_ORDER: 2 }) ?? "", /IN_ORDER is 0 or 1/);
    assert.equal(findKernel("subgroup_tiling_written_out")!.params.IN_ORDER, 1);
    assert.equal(findKernel("subgroup_tiling_flat_written_out")!.params.WARP_TILES, 0);
  },
);

/** Shapes for 10's controls: tails, several k tiles (both copies in use), K below one tile. */
const BUFFER_SHAPES: Shape[] = [{ m: 131, k: 70, n: 129 }, { m: 256, k: 520, n: 256 }, {
  m: 33,
  k: 7,
  n: 41,
}];

Deno.test(
  "demo: the prefetch with one buffer computes the same result, tails included",
  gpuTest,
  async () => {
    assert.equal(findKernel("double_buffer_single")!.params.BUFFERS, 1);
    await assertCorrectOn(["double_buffer_single"], BUFFER_SHAPES);
  },
);

Deno.test(
  "demo: double buffering stored before the multiply-adds computes the same result",
  gpuTest,
  async () => {
    const spec = findKernel("double_buffer_stash_first")!;
    assert.equal(spec.params.STASH_FIRST, 1);
    await assertCorrectOn(["double_buffer_stash_first"], BUFFER_SHAPES);
    assert.match(spec.invalid!({ ...spec.params, BUFFERS: 1 }) ?? "", /two copies/);
  },
);

Deno.test(
  "demo: double buffering stored before the multiply-adds in 09's load order computes the same result",
  gpuTest,
  async () => {
    await assertCorrectOn(["double_buffer_stored_in_order"], BUFFER_SHAPES);
  },
);

Deno.test(
  "demo: the stored-in-order control with 09's second barrier computes the same result",
  gpuTest,
  async () => {
    const spec = findKernel("double_buffer_two_barriers")!;
    assert.equal(spec.params.EXTRA_BARRIER, 1);
    await assertCorrectOn(["double_buffer_two_barriers"], BUFFER_SHAPES);
    assert.match(spec.invalid!({ ...spec.params, STASH_FIRST: 0 }) ?? "", /STASH_FIRST 2/);
    assert.match(spec.invalid!({ ...spec.params, BUFFERS: 1 }) ?? "", /two copies/);
  },
);

// lavapipe runs a workgroup's invocations in chunks of 8 that take turns at barriers, so with a
// barrier missing some chunks read tiles that others have not written yet (RAW) or have already
// overwritten (WAR). In every run here the race showed up, given K spans several tiles and a
// tile spans several chunks.
for (const id of ["tiled_no_raw_barrier", "tiled_no_war_barrier"]) {
  Deno.test(`demo ${id}: the validation catches the race`, gpuTest, async () => {
    const spec = findKernel(id)!;
    assert.equal(spec.demo, true);
    for (const shape of [{ m: 64, k: 80, n: 64 }, { m: 37, k: 101, n: 53 }]) {
      const r = await runKernel(gpu, spec, shape, { skipTiming: true });
      assert.equal(r.validated, false, `${id} passed at ${label(shape)}`);
      assert.equal(r.errorKind, "wrong-result");
      assert.equal(r.gflops, undefined);
    }
  });
}

Deno.test("a deliberately wrong kernel is caught by validation", gpuTest, async () => {
  const vec4 = findKernel("vectorize")!;
  // Claims it handles any K and N, but reads vec4 rows: misaligned rows give wrong sums.
  const misaligned: KernelSpec = {
    ...vec4,
    id: "wrong_align",
    align: () => ({ m: 1, n: 1, k: 1 }),
  };
  // Launches one row of tiles too few: the poisoned (NaN) rows of C stay unwritten.
  const shortGrid: KernelSpec = {
    ...vec4,
    id: "wrong_grid",
    dispatch: (s, p) => {
      const [x, y, z] = vec4.dispatch(s, p);
      return [x, Math.max(1, y - 1), z];
    },
  };
  for (
    const [spec, shape] of [[misaligned, { m: 33, k: 45, n: 70 }], [shortGrid, {
      m: 200,
      k: 16,
      n: 64,
    }]] as const
  ) {
    const r = await runKernel(gpu, spec, shape, { skipTiming: true });
    assert.equal(r.validated, false, `${spec.id} passed`);
    assert.equal(r.errorKind, "wrong-result");
  }
});

Deno.test("registry: ids, files, every param an override, grids cover the shape", async () => {
  const ids = new Set<string>();
  for (const spec of KERNELS) {
    assert.ok(!ids.has(spec.id), `duplicate id ${spec.id}`);
    ids.add(spec.id);
    assert.equal(spec.id, `${String(spec.number).padStart(2, "0")}_${spec.name}`);
    // A step's WGSL lives in its own folder, kernels/NN_name/ (a variant's in its step's); a
    // generated step names the generator it uses, which may be an earlier step's (14 uses 12's).
    const folder = spec.generate ? "\\d{2}" : String(spec.number).padStart(2, "0");
    assert.match(spec.file, new RegExp(`^${folder}_[a-z0-9_]+/`));
    assert.equal(findKernel(spec.name), spec, `${spec.name} is found by name`);
    assert.equal(findKernel(spec.id), spec, `${spec.id} is found by id`);
    const keys = new Set([
      ...Object.keys(spec.params),
      ...Object.keys(spec.space ?? {}),
    ]);
    if (spec.generate) {
      // A generated kernel has its parameters written into its text, and names them in its header.
      const code = spec.generate(spec.params);
      for (const key of keys) {
        if (!["UNROLL", "NESTED", "LITERAL_BUFFER"].includes(key)) {
          assert.match(code, new RegExp(`\\b${key}=${spec.params[key]}\\b`), `${spec.id}: ${key}`);
        }
      }
      assert.doesNotMatch(code, /\boverride\b/);
    } else {
      const code = await loadKernelSource(spec.file);
      for (const key of keys) {
        assert.match(code, new RegExp(`override ${key}\\b`), `${spec.file} lacks override ${key}`);
      }
    }
    assert.equal(spec.invalid?.(spec.params), undefined, `${spec.id}: default params invalid`);
    const shape = { m: 131, k: 45, n: 197 };
    const p = spec.params;
    const [wx, wy] = spec.workgroupSize(p);
    const [gx, gy] = spec.dispatch(shape, p);
    const covered = gx * gy * wx * wy * outputsPerInvocation(spec);
    assert.ok(covered >= shape.m * shape.n, `${spec.id}: grid covers ${covered} outputs`);
    assert.equal(spec.model(shape, p).flops, flops(shape));
    assert.ok(spec.model(shape, p).bytes > 0);
  }
});

/** Outputs each invocation writes, from the kernel's workgroup size and tile. */
function outputsPerInvocation(spec: KernelSpec): number {
  const p = spec.params;
  if (p.BM === undefined) return 1;
  const [x, y, z] = spec.workgroupSize(p);
  return (p.BM * p.BN) / (x * y * z);
}

Deno.test("edge strips: which rows and columns go to the strip kernel", () => {
  assert.deepEqual(edgePlan({ m: 4097, k: 4097, n: 4097 }, 128, 128), {
    rowsFrom: 4096,
    colsFrom: 4096,
  });
  assert.deepEqual(edgePlan({ m: 4095, k: 9, n: 4096 }, 128, 128), {
    rowsFrom: 4095,
    colsFrom: 4096,
  }, "127 past a tile: edge tiles; a multiple: nothing to do");
  const widest = 4096 + STRIP_WIDTH;
  assert.deepEqual(edgePlan({ m: widest, k: 1, n: widest + 1 }, 64, 128), {
    rowsFrom: 4096,
    colsFrom: widest + 1,
  });
  assert.deepEqual(edgePlan({ m: 5, k: 1, n: 3 }, 64, 128), { rowsFrom: 0, colsFrom: 0 });
});

Deno.test(
  "edge strips: every kernel that allows them is correct with and without",
  gpuTest,
  async () => {
    const withStrips = ladder.filter((s) => s.edgeStrips);
    assert.deepEqual(withStrips.map((s) => s.name), [
      "blocktile_2d",
      "vectorize",
      "bank_conflicts",
      "subgroup_tiling",
      "double_buffer",
      "autotune",
      "generated",
      "shapes",
    ]);
    // Strips of 1 and 8 rows, a right strip only, a shape covered by strips alone, K over
    // several of the strip kernel's chunks.
    const cases: Shape[] = [
      { m: 129, k: 300, n: 257 },
      { m: 136, k: 70, n: 136 },
      { m: 256, k: 33, n: 131 },
      { m: 7, k: 600, n: 5 },
    ];
    for (const spec of withStrips) {
      assert.ok(spec.params.BM && spec.params.BN, `${spec.id}: edge strips need BM and BN`);
      assert.ok(
        spec.unpaddedC || spec.align(spec.params).n === 1,
        `${spec.id}: C must be unpadded`,
      );
      for (const shape of cases) {
        for (const edgeStrips of [true, false]) {
          // The shapes step at its tiles plan: for thin shapes its picker takes plans without tiles.
          const params = spec.planFor ? spec.params : undefined;
          const r = await runKernel(gpu, spec, shape, { skipTiming: true, edgeStrips, params });
          assert.ok(r.validated, `${spec.id} at ${label(shape)}, strips ${edgeStrips}: ${r.error}`);
          assert.equal(r.edgeStrips !== undefined, edgeStrips, `${spec.id} at ${label(shape)}`);
        }
      }
    }
    const spec = findKernel("bank_conflicts")!;
    const shape = { m: 129, k: 45, n: 131 };
    const problem = await BoundProblem.random(
      gpu,
      await prepareKernel(gpu, spec, kernelParams(gpu, spec, undefined, shape)),
      shape,
    );
    assert.deepEqual(problem.dispatchLabels, ["pad A", "pad B", "tiles", "edge strips"]);
    problem.destroy();
  },
);

/** A saved search whose winner is `best` (and, at `shape`, fastest is `fastest`). */
function savedSearch(
  device: DeviceSummary,
  best: Record<string, number>,
  fastest = best,
  kernel = "11_autotune",
): TuningRecord {
  const shape = { m: 4096, k: 4096, n: 4096 };
  const trial = (params: Record<string, number>, gflops: number, score: number) => ({
    params,
    validated: true,
    gflops,
    score,
  });
  return {
    schema: 1,
    device,
    date: new Date().toISOString(),
    commit: "test",
    shape,
    shapes: [shape, { m: 1000, k: 3000, n: 777 }],
    kernel,
    space: {},
    trials: [trial(fastest, 32000, 17000), trial(best, 31000, 21000)],
    best: trial(best, 31000, 21000),
  };
}

/** A made-up device, so saved tuning files never touch a real one's. */
const testDevice = (): DeviceSummary => ({
  ...gpu.summary,
  description: `test device ${freshSeed()}`,
});
const onDevice = (device: DeviceSummary): Gpu => ({ ...gpu, summary: device });

Deno.test("autotune: tuned parameters layer between defaults and overrides", async () => {
  const spec = findKernel("autotune")!;
  const device = testDevice();
  const url = await saveTuning(savedSearch(device, { BK: 16 }));
  try {
    assert.deepEqual(kernelParams(onDevice(device), spec), { ...spec.params, BK: 16 });
    assert.deepEqual(kernelParams(onDevice(device), spec, { BK: 8 }), { ...spec.params, BK: 8 });
    const untuned = findKernel("double_buffer")!;
    assert.deepEqual(kernelParams(onDevice(device), untuned), untuned.params);
  } finally {
    await Deno.remove(new URL(".", url), { recursive: true });
  }
});

Deno.test(
  "autotune: correct with 8 x 8 and 8 x 16 blocks; vec4 loads pad K and N",
  gpuTest,
  async () => {
    const spec = findKernel("autotune")!;
    const odd = { m: 100, k: 300, n: 77 };
    const picked = kernelParams(gpu, spec, undefined, odd);
    assert.deepEqual(spec.align(picked), { m: 1, n: 4, k: 4 }, "vec4 loads pad K and N");
    const seed = freshSeed();
    for (const shape of shapes(spec, seed, 2)) {
      await assertCorrect(spec, shape);
      await assertCorrect(spec, shape, { BM: 128, BN: 128, BK: 8, TN: 16, PAD: 0 });
    }
  },
);

Deno.test("autotune: tiny space on the software adapter, saved and loaded", gpuTest, async () => {
  const spec = findKernel("autotune")!;
  const space = { BM: [64], BN: [64, 128], BK: [8, 32], PAD: [1] };
  const record = await autotune(gpu, spec, { m: 70, k: 64, n: 130 }, {
    space,
    save: false,
    budgetMs: 20,
  });
  assert.equal(record.trials.length, 4);
  const invalid = record.trials.filter((t) => t.error && !t.medianMs);
  assert.ok(invalid.some((t) => t.params.BK === 32), "BK 32 at 64 x 64 must be rejected");
  const measured = record.trials.filter((t) => t.validated);
  assert.ok(measured.length >= 2);
  assert.equal(record.best.gflops, Math.max(...measured.map((t) => t.gflops!)));
  assert.equal(record.best.score, record.best.gflops, "one shape: the score is its GFLOP/s");
  assert.equal(spec.invalid?.(record.best.params), undefined);

  // Save under a made-up device name, read it back, remove it.
  const device = testDevice();
  const url = await saveTuning({ ...record, device });
  try {
    assert.deepEqual(loadTuning(device, spec.name)?.best.params, record.best.params);
    assert.deepEqual(tunedParams(device, spec.name), record.best.params);
    const other = { ...record, device, kernel: "10_double_buffer", best: record.trials[0] };
    await saveTuning(other);
    assert.deepEqual(
      tunedParams(device, spec.name),
      record.best.params,
      "another kernel's tuning must not apply",
    );
    assert.deepEqual(tunedParams(device, "double_buffer"), other.best.params);
    await Deno.writeTextFile(url, JSON.stringify(other));
    assert.throws(() => loadTuning(device, spec.name), /holds a search of 10_double_buffer/);
  } finally {
    await Deno.remove(new URL(".", url), { recursive: true });
  }
  assert.equal(loadTuning(device, spec.name), undefined);
  assert.ok(tuningUrl(device, "11_autotune").pathname.endsWith("/autotune.json"));
});

Deno.test("tuned parameters: the search's point expected fastest at the shape (its speed times its grid's wave fill)", async () => {
  const device = testDevice();
  const big = { BM: 128, BN: 256, BK: 16, PAD: 0, TN: 16, GROUP_M: 8 };
  const robust = { BM: 64, BN: 128, BK: 8, PAD: 0, TN: 8, GROUP_M: 8 };
  const shape = { m: 4096, k: 4096, n: 4096 };
  // Saved under the step's numbered id, as committed files are: looked up by name.
  const record = savedSearch(device, robust, big, "11_autotune");
  const url = await saveTuning(record);
  try {
    assert.deepEqual(tunedParams(device, "autotune"), robust, "no shape: the winner");
    assert.deepEqual(tunedParams(device, "autotune", shape), big);
    assert.deepEqual(tunedParams(device, "autotune", { m: 8192, k: 64, n: 8192 }), big);
    assert.deepEqual(tunedParams(device, "autotune", { m: 4095, k: 4095, n: 4095 }), big);
    // The made-up device has the model's default 64 SMs: 128 workgroups of the big tile fill two
    // waves (32 000 GFLOP/s expected) where the winner's 512 fill eight (31 000).
    assert.deepEqual(tunedParams(device, "autotune", { m: 2048, k: 2048, n: 2048 }), big);
    // 32 big tiles fill half a wave (16 000 expected), the winner's 128 two whole ones.
    assert.deepEqual(tunedParams(device, "autotune", { m: 1024, k: 1024, n: 1024 }), robust);
    // 162 big tiles leave a third wave 84% full (27 000), the winner's 648 92% (28 500).
    assert.deepEqual(tunedParams(device, "autotune", { m: 2304, k: 512, n: 2304 }), robust);
    assert.deepEqual(tunedParams(device, "autotune", { m: 1000, k: 3000, n: 777 }), robust);
    const spec = findKernel("autotune")!;
    assert.deepEqual(kernelParams(onDevice(device), spec, undefined, shape), {
      ...spec.params,
      ...big,
    });
  } finally {
    await Deno.remove(new URL(".", url), { recursive: true });
  }
});

Deno.test(
  "autotune over several shapes: the shortlist's geometric mean picks the winner",
  gpuTest,
  async () => {
    const spec = findKernel("autotune")!;
    const space = { BM: [32, 64], BN: [64, 128], BK: [8], PAD: [0] };
    const odd = { m: 37, k: 29, n: 71 };
    const record = await autotune(gpu, spec, { m: 64, k: 32, n: 128 }, {
      space,
      save: false,
      budgetMs: 10,
      alsoShapes: [odd],
      shortlist: 2,
    });
    assert.deepEqual(record.shapes, [record.shape, odd]);
    const shortlisted = record.trials.filter((t) => t.others);
    assert.equal(shortlisted.length, 2);
    for (const t of shortlisted) {
      const all = [t.gflops!, ...t.others!.map((o) => o.gflops!)];
      assert.ok(t.others!.every((o) => o.validated), JSON.stringify(t.others));
      const geomean = Math.sqrt(all[0] * all[1]);
      assert.ok(Math.abs(t.score! - geomean) < 1e-9 * geomean);
    }
    // Candidates left off the shortlist have no score and cannot win.
    assert.ok(record.trials.filter((t) => !t.others).every((t) => t.score === undefined));
    assert.equal(record.best.score, Math.max(...shortlisted.map((t) => t.score!)));
  },
);

Deno.test(
  "defaults beyond the device's limits: the nearest parameters that fit run, and say so",
  gpuTest,
  async () => {
    // WebGPU's default limits, as an adapter that offers no more would give them.
    const limits = {
      ...gpu.device.limits,
      maxComputeInvocationsPerWorkgroup: 256,
      maxComputeWorkgroupStorageSize: 16384,
    };
    const device = new Proxy(gpu.device, {
      get(target, key) {
        if (key === "limits") return limits;
        const value = Reflect.get(target, key);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const small: Gpu = { ...gpu, device };
    const spec = findKernel("blocktile_1d")!;
    const shape = { m: 70, k: 33, n: 65 };
    const r = await runKernel(small, spec, shape, { skipTiming: true });
    assert.ok(r.validated, r.error);
    assert.match(
      r.adapted!,
      /512 invocations exceeds maxComputeInvocationsPerWorkgroup \(256\); ran /,
    );
    const [x, y, z] = spec.workgroupSize(r.params);
    assert.ok(x * y * z <= 256 && spec.workgroupStorageBytes(r.params) <= 16384);
    // Parameters the caller chose are run as given, and refused by the limit.
    const asked = await runKernel(small, spec, shape, { skipTiming: true, params: spec.params });
    assert.equal(asked.errorKind, "limit");
    assert.equal(asked.adapted, undefined);
    // On this adapter the defaults fit: nothing adapted.
    assert.equal((await runKernel(gpu, spec, shape, { skipTiming: true })).adapted, undefined);
  },
);
