/**
 * The bench layer: flag parsing, default sizes, run records, the results table, the table the
 * bench prints, the TF.js peer on this adapter, and the cuBLAS peer's FFI calls against a host
 * stand-in for the CUDA libraries (tests/mock_cuda/, built with the system C compiler).
 */
import assert from "node:assert/strict";
import * as tf from "@tensorflow/tfjs-core";
import { formatTable, runBench } from "../lib/bench.ts";
import { defaultShapes, parseBenchArgs } from "../lib/bench_args.ts";
import { acquireGpu, readBuffer } from "../lib/gpu.ts";
import { randomMatrix } from "../lib/matrix.ts";
import { openCublas } from "../lib/peers/cublas.ts";
import { type BackendInternals, flush, openTfjs } from "../lib/peers/tfjs.ts";
import { RECORD_SCHEMA, type RunRecord } from "../lib/record.ts";
import {
  currentCommit,
  listRecords,
  loadRecord,
  newestRecord,
  recordFromJson,
  recordPath,
  recordToJson,
  writeRecord,
} from "../lib/records.ts";
import { KERNELS, naive } from "../lib/registry.ts";
import { replaceSection, resultsSection } from "../tools/results_table.ts";

const gpuTest = { sanitizeResources: false, sanitizeOps: false };

Deno.test("bench flags: defaults", () => {
  const args = parseBenchArgs([]);
  assert.deepEqual(args.kernels, KERNELS.filter((k) => !k.demo));
  assert.equal(args.shapes, undefined);
  assert.equal(args.reps, undefined);
  assert.equal(args.out, undefined);
  assert.equal(args.peers, true);
  assert.equal(args.ceilings, true);
  assert.equal(args.tune, false);
  assert.equal(args.validate, 0);
});

Deno.test("bench flags: kernels by name, id or number; sizes, shapes, reps, out, switches", () => {
  const args = parseBenchArgs([
    "--kernels",
    "2,naive,02_naive",
    "--sizes",
    "1024,4096",
    "--shape",
    "1000x3000x777",
    "--shape=5X6X7",
    "--sizes=1024",
    "--reps",
    "7",
    "--out",
    "/tmp/x.json",
    "--no-peers",
    "--no-ceilings",
    "--no-cpu",
    "--tune",
    "--validate=3",
  ]);
  assert.deepEqual(args.kernels, [naive]);
  assert.deepEqual(args.shapes, [
    { m: 1024, k: 1024, n: 1024 },
    { m: 4096, k: 4096, n: 4096 },
    { m: 1000, k: 3000, n: 777 },
    { m: 5, k: 6, n: 7 },
  ]);
  assert.equal(args.reps, 7);
  assert.equal(args.out, "/tmp/x.json");
  assert.deepEqual(
    [args.peers, args.ceilings, args.cpu, args.tune, args.validate],
    [false, false, false, true, 3],
  );
  assert.equal(parseBenchArgs(["--help"]).help, true);
});

Deno.test("default sizes: small on a software adapter, tutorial sizes and odd shapes on a GPU", () => {
  const soft = defaultShapes({ software: true });
  assert.ok(soft.every((s) => s.m <= 256));
  const gpu = defaultShapes({ software: false }).map((s) => `${s.m}x${s.k}x${s.n}`);
  for (const want of ["1024x1024x1024", "2048x2048x2048", "4096x4096x4096", "8192x8192x8192"]) {
    assert.ok(gpu.includes(want), want);
  }
  for (const odd of ["4095x4095x4095", "4097x4097x4097", "1000x3000x777", "1024x3072x768"]) {
    assert.ok(gpu.includes(odd), odd);
  }
});

function sampleRecord(overrides: Partial<RunRecord> = {}): RunRecord {
  const device = {
    description: "NVIDIA H100 80GB HBM3 (test)",
    vendor: "nvidia",
    architecture: "hopper",
    device: "",
    isFallbackAdapter: false,
    software: false,
    features: [],
    limits: {},
  };
  const shape = { m: 4096, k: 4096, n: 4096 };
  return {
    schema: RECORD_SCHEMA,
    date: "2026-01-02T03:04:05.000Z",
    commit: "0123456789abcdef",
    deno: "2.9.6",
    device,
    results: [
      {
        kernel: "02_naive",
        title: "Naive",
        ...shape,
        params: {},
        relErr: 2e-7,
        validated: true,
        medianMs: 100,
        minMs: 99,
        maxMs: 101,
        reps: 10,
        gflops: 1374.4,
        modelBytes: 1,
        intensity: 0.25,
        seed: 1,
      },
      {
        kernel: "03_broken",
        title: "Broken",
        ...shape,
        params: {},
        relErr: NaN,
        validated: false,
        error: "relative error NaN exceeds 0.0001",
        errorKind: "wrong-result",
        modelBytes: 1,
        intensity: 0.25,
        seed: 2,
      },
    ],
    peers: [{
      peer: "cublas",
      kernel: "cublas_sgemm",
      title: "cuBLAS SGEMM (TF32 off)",
      timer: "CUDA events",
      ...shape,
      relErr: 1e-7,
      validated: true,
      medianMs: 5,
      minMs: 5,
      maxMs: 5,
      reps: 10,
      gflops: 27487.8,
    }],
    notes: [],
    complete: true,
    ...overrides,
  };
}

Deno.test("records: default path, NaN survives the JSON round trip, newest by date", async () => {
  const record = sampleRecord();
  assert.equal(recordPath(record), "data/runs/nvidia-h100-80gb-hbm3-2026-01-02.json");
  const back = recordFromJson(recordToJson(record));
  assert.ok(Number.isNaN(back.results[1].relErr));
  assert.equal(back.results[0].gflops, 1374.4);

  const dir = await Deno.makeTempDir();
  const older = sampleRecord({ date: "2025-12-31T00:00:00.000Z" });
  const software = sampleRecord({
    date: "2026-02-01T00:00:00.000Z",
    device: { ...record.device, description: "llvmpipe", software: true },
  });
  await writeRecord(older, recordPath(older, dir));
  await writeRecord(record, `${dir}/nested/today.json`);
  await writeRecord(software, recordPath(software, dir));
  await Deno.writeTextFile(`${dir}/tuning.json`, JSON.stringify({ winner: {} }));
  assert.equal(
    (await listRecords(dir)).length,
    2,
    "the nested one is not in dir; tuning.json is no record",
  );
  assert.equal((await newestRecord(dir))?.record.device.description, "llvmpipe");
  assert.equal(
    (await newestRecord(dir, (r) => !r.device.software))?.record.date,
    older.date,
  );
  assert.equal((await loadRecord(`${dir}/nested/today.json`)).date, record.date);
  assert.deepEqual(await listRecords(`${dir}/missing`), []);
  assert.throws(() => recordFromJson(`{"hello": 1}`), /not a gemm-ladder run record/);
});

Deno.test("commit: GEMM_COMMIT wins, else git (or unknown)", async () => {
  const saved = Deno.env.get("GEMM_COMMIT");
  try {
    Deno.env.set("GEMM_COMMIT", "cafef00d");
    assert.equal(await currentCommit(), "cafef00d");
    Deno.env.delete("GEMM_COMMIT");
    assert.match(await currentCommit(), /^([0-9a-f]{40}(\+dirty)?|unknown)$/);
  } finally {
    if (saved !== undefined) Deno.env.set("GEMM_COMMIT", saved);
  }
});

Deno.test("table: % of cuBLAS for validated rows; failed rows show the error, never a speed", () => {
  const table = formatTable(sampleRecord());
  const [naiveRow] = table.split("\n").filter((l) => l.startsWith("02_naive"));
  assert.match(naiveRow, /100\.000\s+1374\.4\s+5\.0% cublas\s+2\.0e-7/);
  const [broken] = table.split("\n").filter((l) => l.startsWith("03_broken"));
  assert.match(broken, /FAILED \(wrong-result\)/);
  assert.doesNotMatch(broken, /GFLOP|\d+\.\d%/);
  assert.match(formatTable(sampleRecord({ complete: false })), /INCOMPLETE/);
});

Deno.test("results section: from a GPU record, or says there is none", async () => {
  assert.match(resultsSection(undefined), /No run record from a real GPU/);
  const section = resultsSection(sampleRecord(), "data/runs/x.json");
  assert.match(section, /NVIDIA H100 80GB HBM3 \(test\).*2026-01-02.*0123456789ab/);
  assert.match(section, /\| 02_naive Naive \| 1374 \| 5\.0% \|/);
  assert.match(section, /\| 03_broken Broken \| failed \(wrong-result\) \| - \|/);
  assert.match(section, /\| cuBLAS SGEMM \(TF32 off\) \| 27488 \| 100\.0% \|/);
  const readme = await Deno.readTextFile(new URL("../README.md", import.meta.url));
  const updated = replaceSection(readme, section);
  assert.ok(updated.includes(section));
  assert.equal(replaceSection(updated, "x"), replaceSection(readme, "x"), "idempotent");
  assert.throws(() => replaceSection("# no markers", section), /no results markers/);
});

Deno.test(
  "bench end to end on this adapter: kernels and the TF.js peer validated",
  gpuTest,
  async () => {
    const gpu = await acquireGpu();
    const dir = await Deno.makeTempDir();
    const saved = Deno.env.get("GEMM_CUDA_LIB_DIR");
    Deno.env.set("GEMM_CUDA_LIB_DIR", dir); // nothing there: cuBLAS is found only if installed
    try {
      const args = parseBenchArgs([
        "--kernels",
        "naive",
        "--sizes",
        "16",
        "--shape",
        "7x13x5",
        "--reps",
        "5",
        "--no-ceilings",
        "--no-cpu",
        "--out",
        `${dir}/run.json`,
      ]);
      const lines: string[] = [];
      const { record, path, exitCode } = await runBench(args, { gpu, log: (l) => lines.push(l) });
      assert.equal(exitCode, 0, lines.join("\n"));
      assert.equal(record.complete, true);
      assert.equal(record.results.length, 2);
      assert.ok(record.results.every((r) => r.validated && r.gflops! > 0 && r.reps === 5));
      const tfjs = record.peers.filter((p) => p.peer === "tfjs-webgpu");
      assert.equal(tfjs.length, 2);
      assert.ok(
        tfjs.every((p) => p.validated && p.relErr < 1e-4 && p.medianMs! > 0),
        JSON.stringify(tfjs),
      );
      if (!record.peers.some((p) => p.peer === "cublas")) {
        assert.ok(
          record.notes.some((n) => n.startsWith("cuBLAS peer skipped")),
          record.notes.join("\n"),
        );
      }
      const saved = await loadRecord(path);
      assert.equal(saved.results.length, 2);
      assert.equal(saved.device.description, gpu.summary.description);
    } finally {
      if (saved === undefined) Deno.env.delete("GEMM_CUDA_LIB_DIR");
      else Deno.env.set("GEMM_CUDA_LIB_DIR", saved);
    }
  },
);

/** Build the CUDA stand-ins into a temp dir with the system C compiler. */
async function buildMockCuda(): Promise<string> {
  const dir = await Deno.makeTempDir();
  for (const [src, lib] of [["cudart.c", "libcudart.so.13"], ["cublas.c", "libcublas.so.13"]]) {
    const cc = await new Deno.Command("cc", {
      args: [
        "-O2",
        "-shared",
        "-fPIC",
        "-o",
        `${dir}/${lib}`,
        new URL(`./mock_cuda/${src}`, import.meta.url).pathname,
      ],
    }).output();
    assert.ok(cc.success, `cc failed (install gcc): ${new TextDecoder().decode(cc.stderr)}`);
  }
  return dir;
}

Deno.test("cuBLAS peer: row-major trick, TF32 off, poison catches unwritten output", async () => {
  const saved = Deno.env.get("GEMM_CUDA_LIB_DIR");
  Deno.env.set("GEMM_CUDA_LIB_DIR", await buildMockCuda());
  const peer = openCublas();
  try {
    assert.ok(typeof peer !== "string", String(peer));
    assert.equal(peer.details.mathMode, "CUBLAS_DEFAULT_MATH (TF32 off)");
    // Non-square shapes: a swapped operand or leading dimension fails validation.
    for (const shape of [{ m: 1, k: 1, n: 1 }, { m: 17, k: 33, n: 5 }, { m: 64, k: 3, n: 41 }]) {
      const r = peer.run(shape, { reps: 3 });
      assert.ok(r.validated, `${JSON.stringify(shape)}: ${r.error}`);
      assert.equal(r.reps, 3);
      assert.ok(r.relErr < 1e-5);
    }
    Deno.env.set("MOCK_CUBLAS_SKIP_LAST_COLUMN", "1");
    const bad = peer.run({ m: 9, k: 4, n: 6 }, { reps: 3 });
    assert.equal(bad.validated, false);
    assert.ok(Number.isNaN(bad.relErr));
    assert.equal(bad.gflops, undefined);
  } finally {
    Deno.env.delete("MOCK_CUBLAS_SKIP_LAST_COLUMN");
    if (typeof peer !== "string") peer.close();
    if (saved === undefined) Deno.env.delete("GEMM_CUDA_LIB_DIR");
    else Deno.env.set("GEMM_CUDA_LIB_DIR", saved);
  }
});

Deno.test("cuBLAS peer: missing libraries give a reason, not a crash", () => {
  const saved = Deno.env.get("GEMM_CUDA_LIB_DIR");
  Deno.env.set("GEMM_CUDA_LIB_DIR", "/nonexistent");
  try {
    const peer = openCublas();
    if (typeof peer === "string") assert.match(peer, /^cuBLAS peer skipped: /);
    else peer.close(); // a machine with CUDA installed: found on the standard paths
  } finally {
    if (saved === undefined) Deno.env.delete("GEMM_CUDA_LIB_DIR");
    else Deno.env.set("GEMM_CUDA_LIB_DIR", saved);
  }
});

Deno.test(
  "TF.js trap: its output is stale until flushed; the peer's poison reaches it",
  gpuTest,
  async () => {
    const gpu = await acquireGpu();
    await openTfjs(gpu);
    const backend = tf.backend() as unknown as BackendInternals & {
      tensorMap: { get(id: object): { resource?: GPUBuffer } };
    };
    const n = 32;
    const a = tf.tensor2d(randomMatrix(n, n), [n, n]);
    const b = tf.tensor2d(randomMatrix(n, n), [n, n]);
    // As the peer does: a NaN tensor of C's size, flushed, disposed back into TF.js's pool.
    const poison = tf.fill([n, n], NaN);
    const poisonBuffer = backend.tensorMap.get(poison.dataId).resource;
    flush(backend);
    poison.dispose();
    const c = tf.matMul(a, b);
    const out = backend.tensorMap.get(c.dataId).resource!;
    assert.equal(out, poisonBuffer, "the product reuses the poisoned buffer");
    const unflushed = new Float32Array(await readBuffer(gpu, out, n * n * 4));
    assert.ok(unflushed.every(Number.isNaN), "not run yet: still the poison");
    flush(backend);
    const flushed = new Float32Array(await readBuffer(gpu, out, n * n * 4));
    assert.ok(flushed.every(Number.isFinite), "after the flush: the product");
    assert.deepEqual(flushed, await c.data());
    tf.dispose([a, b, c]);
  },
);
