/**
 * The CPU side: every CPU matmul against the float64 reference on fresh random shapes, bad
 * input, the validation that keeps wrong results from being timed, OpenBLAS through FFI, the
 * suite's record rows, and the performance bar (blocked >= 6x naive ijk at N = 1024).
 */
import assert from "node:assert/strict";
import {
  blockedMatmul,
  blockedWith,
  cpuAccessModel,
  type CpuMatmul,
  DEFAULT_BLOCK,
  ikjMatmul,
  naiveMatmul,
  timeCpu,
} from "../lib/cpu.ts";
import {
  bestBlock,
  measureCpu,
  runCpuSuite,
  sweepBlockSizes,
  sweepThreads,
} from "../lib/cpu_bench.ts";
import { CPU_LADDER } from "../lib/cpu_ladder.ts";
import {
  blocksFor,
  cacheSizes,
  hasRelaxedSimd,
  kernelModule,
  MR,
  NR,
  simdMatmul,
} from "../lib/cpu_simd.ts";
import { coreCount, CpuThreads } from "../lib/cpu_threads.ts";
import { GemmError, ShapeError } from "../lib/errors.ts";
import { freshSeed, randomMatrix, type Shape } from "../lib/matrix.ts";
import { openOpenBlas } from "../lib/peers/openblas.ts";
import { checkProduct, F32_NUMERICS } from "../lib/accuracy.ts";

/** 1, primes, sizes that are not multiples of any block tried, and rectangular shapes. */
const SHAPES: Shape[] = [
  { m: 1, k: 1, n: 1 },
  { m: 1, k: 37, n: 1 },
  { m: 13, k: 17, n: 19 },
  { m: 31, k: 37, n: 41 },
  { m: 67, k: 61, n: 59 },
  { m: 33, k: 47, n: 18 },
  { m: 5, k: 130, n: 3 },
  { m: 130, k: 3, n: 70 },
  { m: 129, k: 257, n: 131 },
];
const BLOCKS = [0, 1, 2, 3, 4, 5, 7, 16, 64, 128, 1000];

async function checkAgainstReference(name: string, fn: CpuMatmul, shape: Shape) {
  const seed = freshSeed();
  const a = randomMatrix(shape.m, shape.k, seed);
  const b = randomMatrix(shape.k, shape.n, seed ^ 1);
  const c = await fn(a, b, shape);
  assert.equal(c.length, shape.m * shape.n, `${name} output length`);
  const rows = Array.from({ length: shape.m }, (_, i) => i);
  const check = checkProduct(c, a, b, shape, rows, F32_NUMERICS, seed);
  assert.ok(
    check.passed,
    `${name} ${shape.m}x${shape.k}x${shape.n} (seed ${seed}): ${check.failure}`,
  );
}

Deno.test("cpu: naive ijk and ikj match float64 on random shapes", async () => {
  for (const shape of SHAPES) {
    await checkAgainstReference("naive", naiveMatmul, shape);
    await checkAgainstReference("ikj", ikjMatmul, shape);
  }
});

Deno.test("cpu: blocked matches float64 for every block, including non-multiples", async () => {
  for (const shape of SHAPES) {
    for (const block of BLOCKS) {
      await checkAgainstReference(`blocked ${block}`, blockedWith(block), shape);
    }
  }
  await checkAgainstReference("blocked default", blockedMatmul, { m: 200, k: 300, n: 150 });
});

Deno.test("cpu: bad input is a typed error", () => {
  const fns: [string, CpuMatmul][] = [
    ["naive", naiveMatmul],
    ["ikj", ikjMatmul],
    ["blocked", blockedWith(4)],
    ["simd", simdMatmul],
  ];
  const ok = randomMatrix(2, 3);
  for (const [name, fn] of fns) {
    for (const bad of [0, -1, 1.5, NaN, Infinity]) {
      assert.throws(() => fn(ok, ok, { m: bad, k: 3, n: 2 }), ShapeError, `${name} m=${bad}`);
      assert.throws(() => fn(ok, ok, { m: 2, k: bad, n: 3 }), ShapeError, `${name} k=${bad}`);
      assert.throws(() => fn(ok, ok, { m: 2, k: 3, n: bad }), ShapeError, `${name} n=${bad}`);
    }
    const b = randomMatrix(3, 4);
    assert.throws(() => fn(randomMatrix(2, 2), b, { m: 2, k: 3, n: 4 }), ShapeError, `${name} A`);
    assert.throws(() => fn(ok, randomMatrix(3, 5), { m: 2, k: 3, n: 4 }), ShapeError, `${name} B`);
  }
  for (const block of [-1, 1.5, NaN]) {
    assert.throws(
      () => blockedMatmul(ok, randomMatrix(3, 2), { m: 2, k: 3, n: 2 }, block),
      (e) => e instanceof GemmError && e.kind === "params",
      `block ${block}`,
    );
  }
});

Deno.test("cpu: wrong or NaN results are never timed", async () => {
  const shape = { m: 9, k: 5, n: 7 };
  const wrong: CpuMatmul = (a, b, s) => naiveMatmul(a, b, s).map((x, i) => (i === 3 ? x + 1 : x));
  const nan: CpuMatmul = (a, b, s) => naiveMatmul(a, b, s).fill(NaN, 10, 11);
  for (const fn of [wrong, nan]) {
    const r = await measureCpu(fn, shape);
    assert.equal(r.validated, false);
    assert.equal(r.gflops, undefined);
    assert.ok(r.error);
  }
  const good = await measureCpu(ikjMatmul, shape, { reps: 2 });
  assert.ok(good.validated && good.gflops! > 0 && good.reps === 2, JSON.stringify(good));
});

Deno.test("cpu: the lecture's access model", () => {
  const model = cpuAccessModel(4);
  assert.equal(model.flops, 2 * 4 ** 3);
  assert.equal(model.uniqueAccesses, 3 * 4 ** 2);
  assert.equal(model.allAccesses, 4 * 4 ** 3);
  assert.equal(model.intensityAll, 1 / 2);
  assert.equal(model.flopsPerByteAll, 1 / 8);
  assert.equal(model.intensityUnique, (2 * 4) / 3);
  assert.equal(cpuAccessModel({ m: 2, k: 3, n: 5 }).uniqueAccesses, 6 + 15 + 10);
});

Deno.test("cpu: timer, sweep and suite rows", async () => {
  const t = await timeCpu(ikjMatmul, { m: 16, k: 16, n: 16 }, 4);
  assert.equal(t.reps, 4);
  assert.ok(t.minMs <= t.medianMs && t.medianMs <= t.maxMs);

  const sweep = await sweepBlockSizes([24, 40], [0, 1, 8], { reps: 2 });
  assert.equal(sweep.length, 6);
  for (const row of sweep) assert.ok(row.validated && row.gflops > 0, JSON.stringify(row));
  assert.equal(bestBlock(sweep, 40)?.n, 40);

  const seen: string[] = [];
  const suite = await runCpuSuite({
    sizes: [48, 61],
    reps: 2,
    onRow: (r) => void seen.push("peer" in r ? r.peer : "id" in r ? r.id : `block ${r.block}`),
  });
  const ladder = CPU_LADDER.map((s) => s.id);
  assert.deepEqual(suite.cpu.impls.map((r) => r.id), [...ladder, ...ladder]);
  for (const r of suite.cpu.impls) assert.ok(r.validated && r.gflops! > 0, JSON.stringify(r));
  assert.equal(suite.cpu.model.length, 6);
  assert.ok(suite.cpu.machine.logicalCores >= 1);
  assert.equal(suite.cpu.machine.threads, coreCount());
  assert.ok(suite.cpu.machine.caches!.l1d > 0 && suite.cpu.machine.blocks!.kc > 0);
  assert.deepEqual(seen.slice(0, ladder.length), ladder);
  const peerIds = ["openblas-1t", "jaxjs-wasm", "openblas-all"];
  assert.deepEqual(suite.peers.map((p) => p.peer), [...peerIds, ...peerIds]);
  for (const p of suite.peers) {
    assert.ok(
      p.validated && p.gflops! > 0 && p.timer.startsWith("performance.now (CPU)"),
      JSON.stringify(p),
    );
  }
});

Deno.test("cpu suite: a rung whose time would pass the limit is skipped, and says so", async () => {
  const suite = await runCpuSuite({
    sizes: [32, 320],
    steps: ["naive-ijk", "ikj"],
    maxSeconds: 0.001,
    openblas: false,
    jax: false,
    reps: 1,
  });
  assert.deepEqual(suite.cpu.impls.map((r) => `${r.id} ${r.n}`), ["naive-ijk 32", "ikj 32"]);
  assert.ok(
    suite.cpu.notes.some((n) => /naive ijk not run at N=320/.test(n)),
    suite.cpu.notes.join(),
  );
});

Deno.test("cpu ladder: every rung matches float64 on awkward shapes, any block", async () => {
  const pool = await CpuThreads.start(3);
  try {
    for (const step of CPU_LADDER) {
      const fn = step.matmul(pool)!;
      for (
        const shape of [...SHAPES, { m: 1, k: 1, n: 1 }, { m: 1, k: 700, n: 9 }, {
          m: 200,
          k: 3,
          n: 1,
        }]
      ) {
        await checkAgainstReference(step.id, fn, shape);
      }
    }
    // Blocks smaller than the product in every direction, and rows split over more threads than MR-row panels.
    for (const blocks of [{ kc: 16, mc: MR }, { kc: 40, mc: 3 * MR }]) {
      await checkAgainstReference(
        `simd ${JSON.stringify(blocks)}`,
        (a, b, s) => simdMatmul(a, b, s, blocks),
        { m: 67, k: 101, n: 35 },
      );
      await checkAgainstReference(
        `threads ${JSON.stringify(blocks)}`,
        (a, b, s) => pool.multiply(a, b, s, blocks),
        { m: 67, k: 101, n: 35 },
      );
    }
    await checkAgainstReference(
      "threads, fewer rows than threads",
      (a, b, s) => pool.multiply(a, b, s),
      { m: 2, k: 5, n: 3 },
    );
  } finally {
    pool.close();
  }
});

Deno.test("cpu simd: blocks from the caches, whole tiles, and the generated module is valid", () => {
  const blocks = blocksFor({ l1d: 32768, l2: 1 << 20, l3: 32 << 20, source: "test" });
  assert.equal(blocks.kc % 16, 0);
  assert.equal(blocks.mc % MR, 0);
  assert.ok((MR + NR) * blocks.kc * 4 <= 32768 / 2, "a panel pair fits half of L1");
  assert.ok(blocks.mc * blocks.kc * 4 <= (1 << 20) / 2, "a block of A fits half of L2");
  for (const relaxed of [false, true]) {
    for (const shared of [false, true]) {
      assert.ok(
        WebAssembly.validate(kernelModule(relaxed, shared)) || (relaxed && !hasRelaxedSimd()),
      );
    }
  }
  const caches = cacheSizes();
  assert.ok(caches.l1d >= 1024 && caches.l2 >= caches.l1d, JSON.stringify(caches));
});

Deno.test("openblas: sgemm matches float64, 1 thread and all", async () => {
  const blas = openOpenBlas();
  // tools/ensure_system.sh installs libopenblas0-pthread before the tests run.
  assert.ok(blas.available, blas.available ? "" : blas.reason);
  const { peer } = blas;
  try {
    assert.ok(peer.maxThreads >= 1);
    for (const threads of [1, peer.maxThreads]) {
      peer.setThreads(threads);
      for (const shape of SHAPES) {
        await checkAgainstReference(`openblas ${threads}t`, peer.sgemm.bind(peer), shape);
      }
    }
    const row = await peer.run({ m: 65, k: 33, n: 17 }, { threads: "all", reps: 3 });
    assert.ok(row.validated, JSON.stringify(row));
    assert.equal(row.peer, "openblas-all");
    assert.throws(() => peer.setThreads(0), RangeError);
    assert.throws(
      () => peer.sgemm(randomMatrix(2, 2), randomMatrix(2, 2), { m: 2, k: 3, n: 2 }),
      ShapeError,
    );
  } finally {
    peer.close();
  }
});

Deno.test("openblas: a missing library is an 'unavailable' outcome with the reason", () => {
  const saved = Deno.env.get("GEMM_OPENBLAS");
  Deno.env.set("GEMM_OPENBLAS", "/nonexistent/libopenblas.so.0");
  try {
    const blas = openOpenBlas();
    assert.equal(blas.available, false);
    assert.match(!blas.available ? blas.reason : "", /GEMM_OPENBLAS=\/nonexistent/);
  } finally {
    if (saved === undefined) Deno.env.delete("GEMM_OPENBLAS");
    else Deno.env.set("GEMM_OPENBLAS", saved);
  }
});

Deno.test("cpu: blocked is at least 6x naive ijk at N = 1024 (one core)", async () => {
  const n = 1024;
  // Naive ijk is timed on a 32-row slab of the N = 1024 product: every row of C walks a row of
  // A and all of B in the same order, so the per-FLOP rate is the full product's, 32x sooner.
  const slab = { m: 32, k: n, n };
  const full = { m: n, k: n, n };
  const blocked = blockedWith(DEFAULT_BLOCK);
  // JIT warm-up on small problems (same code paths), so the big calls are all timed work.
  await timeCpu(naiveMatmul, { m: 64, k: 64, n: 64 }, 1);
  await timeCpu(blocked, { m: 256, k: 256, n: 256 }, 1);
  // Interleaved rounds, best of each: a busy box slows both alike instead of just one.
  let naiveMs = Infinity, blockedMs = Infinity;
  for (let round = 0; round < 3; round++) {
    naiveMs = Math.min(naiveMs, (await timeCpu(naiveMatmul, slab, 1, { warmup: 0 })).minMs);
    blockedMs = Math.min(blockedMs, (await timeCpu(blocked, full, 1, { warmup: 0 })).minMs);
  }
  const naiveGflops = (2 * slab.m * n * n) / (naiveMs * 1e6);
  const blockedGflops = (2 * n ** 3) / (blockedMs * 1e6);
  const ratio = blockedGflops / naiveGflops;
  console.log(
    `N=${n}: naive ijk ${naiveGflops.toFixed(3)} GFLOP/s, blocked ${DEFAULT_BLOCK} ` +
      `${blockedGflops.toFixed(2)} GFLOP/s, ratio ${ratio.toFixed(1)}x`,
  );
  assert.ok(ratio >= 6, `blocked/naive = ${ratio.toFixed(2)}, want >= 6`);
});

Deno.test("thread sweep: the threaded rung at each count and size, each row validated first", async () => {
  const rows = await sweepThreads([48, 67], [1, 3], { reps: 2, budgetMs: 200 });
  assert.deepEqual(rows.map((r) => [r.threads, r.n]), [[1, 48], [1, 67], [3, 48], [3, 67]]);
  for (const r of rows) {
    assert.ok(r.validated, `${r.threads} threads at ${r.n}: ${r.error ?? r.relErr}`);
    assert.equal(r.id, "threads");
    assert.ok(r.minMs! > 0 && r.reps! >= 1);
  }
});
