/**
 * The bench layer: flag parsing, default sizes, run records, the results table, the table the
 * bench prints, the TF.js peer on this adapter, and the cuBLAS peer's FFI calls against a host
 * stand-in for the CUDA libraries (tests/mock_cuda/, built with the system C compiler).
 */
import assert from "node:assert/strict";
import * as tf from "@tensorflow/tfjs-core";
import { runBench } from "../lib/bench.ts";
import { formatTable, suiteNote } from "../lib/bench_report.ts";
import { parseBenchArgs } from "../lib/bench_args.ts";
import { defaultShapes } from "../lib/sizes.ts";
import { SHAPE_SUITE } from "../lib/suite.ts";
import {
  checkOut,
  finishRecord,
  recordFiles,
  reserveDefault,
  saveProgress,
} from "../lib/bench_output.ts";
import { DeviceLostError, UsageError } from "../lib/errors.ts";
import { FUZZ_MAX_DIM, fuzzShapes } from "../lib/fuzz.ts";
import { acquireGpu, type Gpu, readBuffer } from "../lib/gpu.ts";
import { randomMatrix } from "../lib/matrix.ts";
import { openCublas } from "../lib/peers/cublas.ts";
import { type BackendInternals, flush, openTfjs } from "../lib/peers/tfjs.ts";
import {
  currentCommit,
  listRecords,
  loadRecord,
  newestRecord,
  RECORD_SCHEMA,
  recordFromJson,
  recordPath,
  recordToJson,
  type RunRecord,
  writeRecord,
} from "../lib/record.ts";
import { findKernel, KERNELS, type KernelSpec } from "../lib/registry.ts";
import { chooseRecord, MANIFEST, removeStale } from "../tools/export.ts";
import { fuzz, fuzzStatus, parseFuzzArgs } from "../tools/fuzz.ts";
import { tailShapes } from "../lib/steps/tails.ts";
import { replaceSection, resultsSection, suiteTable } from "../tools/results_table.ts";

const naive = findKernel("naive")!;

const gpuTest = { sanitizeResources: false, sanitizeOps: false };

Deno.test("bench flags: defaults", () => {
  const args = parseBenchArgs([]);
  assert.deepEqual(args.kernels, KERNELS.filter((k) => !k.demo));
  assert.equal(args.shapes, undefined);
  assert.equal(args.reps, undefined);
  assert.equal(args.out, undefined);
  assert.equal(args.peers, true);
  assert.equal(args.ceilings, true);
  assert.equal(args.tune, "saved");
  assert.equal(args.validate, 0);
  assert.equal(args.heldout, undefined);
});

Deno.test("bench flags: --quick-tune, --heldout N --seed S; --seed alone is refused", () => {
  assert.equal(parseBenchArgs(["--quick-tune"]).tune, "quick");
  assert.deepEqual(parseBenchArgs(["--heldout", "40", "--seed", "7"]).heldout, {
    count: 40,
    seed: 7,
  });
  const dated = parseBenchArgs(["--heldout=3"]).heldout!;
  assert.equal(dated.count, 3);
  assert.ok(Number.isInteger(dated.seed) && dated.seed > 0 && dated.seed < 2 ** 32);
  assert.throws(() => parseBenchArgs(["--seed", "7"]), /--seed needs --heldout/);
  // A dated default seed is larger than any dimension: a recorded draw can be drawn again.
  assert.equal(
    parseBenchArgs(["--heldout", "40", "--seed", String(dated.seed)]).heldout?.seed,
    dated.seed,
  );
  assert.equal(parseBenchArgs(["--heldout", "4", "--seed", "29928452"]).heldout?.seed, 29928452);
  assert.throws(() => parseBenchArgs(["--heldout", "0"]), /positive integer/);
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
    [false, false, false, "full", 3],
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

Deno.test("default sizes: the shape suite for the late steps on a GPU, not for the early ones", () => {
  const labels = (step?: { suite?: boolean }) =>
    defaultShapes({ software: false }, step).map((s) => `${s.m}x${s.k}x${s.n}`);
  const suiteSteps = KERNELS.filter((k) => k.suite);
  assert.ok(suiteSteps.length > 0 && !KERNELS[0].suite, "late steps join the suite, not the first");
  for (const spec of suiteSteps) {
    const shapes = labels(spec);
    for (const s of SHAPE_SUITE) {
      assert.ok(shapes.includes(`${s.m}x${s.k}x${s.n}`), `${spec.name} ${s.m}`);
    }
    assert.ok(shapes.includes("4095x4095x4095"), "the tutorial's shapes stay");
  }
  assert.equal(SHAPE_SUITE.length, 12);
  assert.deepEqual(labels(KERNELS[0]), labels());
  assert.ok(!labels(KERNELS[0]).includes("1x4096x4096"));
  assert.deepEqual(
    defaultShapes({ software: true }, { suite: true }),
    defaultShapes({ software: true }),
  );
  assert.equal(parseBenchArgs(["--tune-shapes"]).tuneShapes, true);
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

Deno.test("results section: the shape suite with each row's ratio to cuBLAS and the means", () => {
  const at = (m: number, k: number, n: number, gflops: number) => ({
    m,
    k,
    n,
    validated: true,
    relErr: 1e-6,
    medianMs: 1,
    gflops,
  });
  const record = sampleRecord({
    results: [
      {
        ...at(1, 4096, 4096, 500),
        kernel: "13_shapes",
        title: "Every shape",
        params: { PLAN: 1, SLICES: 8, BM: 1, BN: 256 },
      },
      { ...at(1, 4096, 4096, 600), kernel: "11_autotune", title: "Autotuned" },
      {
        ...at(256, 65536, 256, 2000),
        kernel: "13_shapes",
        title: "Every shape",
        params: { PLAN: 0, SLICES: 16, BM: 64, BN: 64, BK: 16 },
      },
    ],
    peers: [
      { ...at(1, 4096, 4096, 1000), peer: "cublas", title: "cuBLAS" },
      { ...at(256, 65536, 256, 4000), peer: "cublas", title: "cuBLAS" },
    ],
  } as unknown as Partial<RunRecord>);
  const table = suiteTable(record)!;
  assert.match(
    table,
    /\| 1x4096x4096 \| 500 \| matrix-vector 1 row, 8 slices \| 600 \(11_autotune\) \| 1000 \| - \| - \| 0\.50 \| 0\.60 \|/,
  );
  assert.match(table, /\| 256x65536x256 \| 2000 \| split-K 16 x 64x64x16 \|/);
  assert.match(table, /\| geometric mean \| \| \| \| \| \| \| 0\.50 \| 0\.55 \|/);
  assert.equal(suiteTable(sampleRecord()), undefined, "no suite, no table");
  assert.equal(
    suiteNote(record),
    "shape suite: planned / cublas geometric mean 0.500 over 2 shapes; lowest 0.500 at 1x4096x4096",
  );
  assert.equal(suiteNote(sampleRecord()), undefined);
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
      const r = await peer.run(shape, { reps: 3 });
      assert.ok(r.validated, `${JSON.stringify(shape)}: ${r.error}`);
      assert.equal(r.reps, 3);
      assert.ok(r.relErr < 1e-5);
      assert.match(r.timer, /queued behind a head start/);
    }
    // A GPU that catches up with the host: the row says its times may hold launch gaps.
    Deno.env.set("MOCK_CUDA_QUEUE_DRY", "1");
    const dry = await peer.run({ m: 8, k: 8, n: 8 }, { reps: 3 });
    Deno.env.delete("MOCK_CUDA_QUEUE_DRY");
    assert.ok(dry.validated);
    assert.match(dry.timer, /launch gaps may be timed/);
    Deno.env.set("MOCK_CUBLAS_SKIP_LAST_COLUMN", "1");
    const bad = await peer.run({ m: 9, k: 4, n: 6 }, { reps: 3 });
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

// ---------------------------------------------------------------------------------------------
// The bench never harms a record.

/** A stand-in device that fails the test if anything touches it: proof no work was done. */
const untouchableGpu = new Proxy({}, {
  get(_t, prop) {
    throw new Error(`the GPU was used (${String(prop)}) before the bad input was refused`);
  },
}) as Gpu;

const tinyRun = ["--kernels", "naive", "--sizes", "16", "--reps", "2", "--no-peers"];
const tinyFlags = [...tinyRun, "--no-ceilings", "--no-cpu"];

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

/** Copies without .git (a GPU host's) track nothing: the git cases need a checkout. */
const inCheckout = (await new Deno.Command("git", {
  args: ["ls-files", "--error-unmatch", "deno.json"],
  cwd: new URL("..", import.meta.url).pathname,
  stdout: "null",
  stderr: "null",
}).output().catch(() => ({ success: false }))).success;

Deno.test("record name: the start time, a -N suffix, reserved; never an existing file", async () => {
  const dir = await Deno.makeTempDir();
  const record = sampleRecord({ date: "2026-01-02T03:04:05.000Z" });
  // A committed record of the same day and one of the same minute are both left alone.
  await writeRecord(record, recordPath(record, dir));
  await writeRecord(record, `${dir}/nvidia-h100-80gb-hbm3-2026-01-02T0304.json`);
  const before = await Deno.readTextFile(recordPath(record, dir));
  const first = await reserveDefault(record, dir);
  assert.equal(first.final, `${dir}/nvidia-h100-80gb-hbm3-2026-01-02T0304-2.json`);
  assert.ok(await exists(first.partial), "the partial file reserves the name");
  const second = await reserveDefault(record, dir);
  assert.equal(second.final, `${dir}/nvidia-h100-80gb-hbm3-2026-01-02T0304-3.json`);
  assert.equal(await Deno.readTextFile(recordPath(record, dir)), before);
});

Deno.test("an incomplete or failed run never replaces a complete record", async () => {
  const dir = await Deno.makeTempDir();
  const files = recordFiles(`${dir}/run.json`);
  const good = sampleRecord({ results: sampleRecord().results.slice(0, 1) });
  await writeRecord(good, files.final);
  const goodText = await Deno.readTextFile(files.final);

  const stopped = sampleRecord({ complete: false, notes: ["stopped early"] });
  await saveProgress(stopped, files);
  const kept = await finishRecord(stopped, files, true);
  assert.equal(kept.path, files.partial);
  assert.match(kept.message, /partial record kept at .*run\.partial\.json.*nothing was written/);
  assert.equal(await Deno.readTextFile(files.final), goodText);

  const failed = await finishRecord(sampleRecord(), files, true);
  assert.equal(failed.path, files.failed);
  assert.match(failed.message, /already holds a complete record/);
  assert.equal(await Deno.readTextFile(files.final), goodText);
  assert.equal(await exists(files.partial), false, "the partial is gone once a run finished");

  const ok = await finishRecord(good, files, false);
  assert.equal(ok.path, files.final);
  assert.deepEqual(
    [...Deno.readDirSync(dir)].map((e) => e.name).sort(),
    ["run.failed.json", "run.json"],
    "no temporary file left behind",
  );
});

Deno.test(
  "bench: a run that stops early leaves the record at --out as it was",
  gpuTest,
  async () => {
    const gpu = await acquireGpu();
    const dir = await Deno.makeTempDir();
    const out = `${dir}/mine.json`;
    await writeRecord(sampleRecord(), out);
    const before = await Deno.readTextFile(out);
    const lines: string[] = [];
    const { path, exitCode, record } = await runBench(
      parseBenchArgs([...tinyFlags, "--out", out]),
      {
        gpu,
        log: (l) => lines.push(l),
        afterResult: () => {
          throw new DeviceLostError("pulled out by the test");
        },
      },
    );
    assert.equal(exitCode, 3);
    assert.equal(record.complete, false);
    assert.equal(path, `${dir}/mine.partial.json`);
    assert.equal((await loadRecord(path)).results.length, 1);
    assert.equal(await Deno.readTextFile(out), before);
    assert.match(lines.at(-1)!, /partial record kept at .*mine\.partial\.json/);
  },
);

Deno.test(
  "bench: --resume keeps a partial run's validated rows and runs the rest; another run's is refused",
  gpuTest,
  async () => {
    const gpu = await acquireGpu();
    const dir = await Deno.makeTempDir();
    // A run stopped after its second result, as a time limit stops one.
    const stoppedAfterTwo = (argv: string[]) => {
      let results = 0;
      return runBench(parseBenchArgs(argv), {
        gpu,
        argv,
        log: () => {},
        afterResult: () => {
          if (++results === 2) throw new DeviceLostError("stopped by the test");
        },
      });
    };
    const flags = [...tinyFlags, "--sizes", "16,24,32", "--out", `${dir}/run.json`];
    const stopped = await stoppedAfterTwo(flags);
    assert.equal(stopped.record.complete, false);
    // As a GPU host's call does: the partial of the earlier call, resumed into a fresh --out.
    const partial = `${dir}/earlier.partial.json`;
    await Deno.rename(stopped.path, partial);
    const kept = (await loadRecord(partial)).results;
    assert.equal(kept.length, 2);

    const again = [...flags, "--resume", partial];
    const lines: string[] = [];
    const { record, exitCode } = await runBench(parseBenchArgs(again), {
      gpu,
      argv: again,
      log: (l) => lines.push(l),
    });
    assert.equal(exitCode, 0);
    assert.equal(record.complete, true);
    // The first call's two rows, as they were, and the third measured now.
    assert.equal(record.results.length, 3);
    assert.deepEqual(record.results.slice(0, 2), kept);
    assert.ok(record.results[2].validated && record.results[2].n === 32);
    assert.equal(lines.filter((l) => l.endsWith("(kept from the resumed call)")).length, 2);
    assert.ok(record.notes.some((n) => n.startsWith(`resumed ${partial}: 2 validated rows kept`)));

    const refuse = async (argv: string[], why: RegExp) =>
      await assert.rejects(
        runBench(parseBenchArgs(argv), { gpu, argv, log: () => {} }),
        (e: Error) => e instanceof UsageError && why.test(e.message),
      );
    // Other flags, and a complete record.
    await refuse([...tinyFlags, "--sizes", "16", "--resume", partial], /ran other flags/);
    await writeRecord(record, `${dir}/done.json`);
    await refuse([...flags, "--resume", `${dir}/done.json`], /is a complete record/);

    // Held-out rows are kept in their own section.
    const held = [...tinyRun, "--no-ceilings", "--no-cpu", "--kernels", "generated", "--heldout"];
    const drawn = [...held, "2", "--seed", "7", "--out", `${dir}/held.json`];
    const first = await stoppedAfterTwo(drawn);
    assert.equal(first.record.heldout!.results.length, 1);
    const resumedDraw = [...drawn, "--resume", first.path];
    const done = await runBench(parseBenchArgs(resumedDraw), {
      gpu,
      argv: resumedDraw,
      log: () => {},
    });
    assert.equal(done.record.complete, true);
    assert.deepEqual(done.record.heldout!.results[0], first.record.heldout!.results[0]);
    assert.equal(done.record.heldout!.results.length, 2);
    await Deno.remove(dir, { recursive: true });
  },
);

Deno.test("--out: checked before any work; one-line reasons; any writable path works", async () => {
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(`${dir}/notes.json`, "{}");
  const tracked: [string, RegExp][] = [
    ["deno.json", /is tracked by git/],
    ["README.md", /is tracked by git/],
  ];
  const refused: [string, RegExp][] = [
    ...(inCheckout ? tracked : []),
    [dir, /is a folder/],
    [`${dir}/notes.json`, /exists and is not a run record/],
    [`${dir}/sibling.json`, /would overwrite .*sibling\.partial\.json, which is not a run record/],
    ["/var/no/such/run.json", /may not write .*--allow-write=\/var\/no\/such/],
  ];
  await Deno.writeTextFile(`${dir}/sibling.partial.json`, "my notes");
  for (const [out, why] of refused) {
    await assert.rejects(
      runBench(parseBenchArgs([...tinyFlags, "--out", out]), { gpu: untouchableGpu }),
      (e: Error) => e instanceof UsageError && why.test(e.message) && !e.message.includes("\n"),
      out,
    );
  }
  // Absolute, relative, in a folder not made yet, or an untracked record to replace: all fine.
  await writeRecord(sampleRecord(), `${dir}/old.json`);
  const cwd = Deno.cwd();
  try {
    Deno.chdir(dir);
    assert.equal((await checkOut("myrun.json")).final, `${dir}/myrun.json`);
  } finally {
    Deno.chdir(cwd);
  }
  for (const out of [`${dir}/x.json`, `${dir}/new/folder/x.json`, `${dir}/old.json`]) {
    const files = await checkOut(out);
    assert.equal(files.final, out);
    assert.equal(files.partial, out.replace(/\.json$/, ".partial.json"));
  }
  assert.equal(await exists(`${dir}/x.json`), false, "checking writes nothing");
});

Deno.test("bench CLI: a bad --out is one line on stderr, exit 2, no stack trace", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read=.,/tmp",
      "--allow-write=.,/tmp",
      "--allow-env",
      "--allow-run=git",
      "lib/bench.ts",
      ...tinyFlags,
      "--out",
      inCheckout ? "deno.json" : "lib",
    ],
    cwd: new URL("..", import.meta.url).pathname,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr).trim();
  assert.equal(out.code, 2, stderr);
  assert.equal(stderr.split("\n").length, 1, stderr);
  assert.match(
    stderr,
    inCheckout
      ? /^bench: --out deno\.json: is tracked by git.*nothing was written$/
      : /^bench: --out lib: is a folder.*nothing was written$/,
  );
});

Deno.test(
  "bench: a size beyond a device limit is refused before any kernel, naming the limit",
  gpuTest,
  async () => {
    const gpu = await acquireGpu();
    const dir = await Deno.makeTempDir();
    const lines: string[] = [];
    const args = parseBenchArgs([...tinyFlags, "--sizes", "100000", "--out", `${dir}/big.json`]);
    await assert.rejects(
      runBench(args, { gpu, log: (l) => lines.push(l) }),
      (e: Error) =>
        e instanceof UsageError &&
        /size 100000 does not fit.*40000000000 bytes.*exceeds max\w+ = \d+ bytes/.test(e.message) &&
        /the largest square matrix that fits is \d+ x \d+/.test(e.message),
    );
    assert.deepEqual(lines, [], "nothing ran");
    assert.deepEqual([...Deno.readDirSync(dir)], [], "nothing written");
  },
);

Deno.test(
  "bench with the default name: git status shows no change to tracked files",
  gpuTest,
  async () => {
    const root = new URL("..", import.meta.url).pathname;
    const status = async () =>
      new TextDecoder().decode(
        (await new Deno.Command("git", {
          args: ["status", "--porcelain", "--untracked-files=no"],
          cwd: root,
          stdout: "piped",
        }).output()).stdout,
      );
    const before = await status();
    const { path, exitCode } = await runBench(parseBenchArgs(tinyFlags), {
      gpu: await acquireGpu(),
      log: () => {},
      runsDir: `${root}data/runs`,
    });
    try {
      assert.equal(exitCode, 0);
      assert.match(path, /data\/runs\/.+-\d{4}-\d\d-\d\dT\d{4}(-\d+)?\.json$/);
      assert.equal(await status(), before);
      assert.equal(await exists(path.replace(/\.json$/, ".partial.json")), false);
    } finally {
      await Deno.remove(path);
    }
  },
);

Deno.test("export: the newest complete GPU-host record, else a visible fallback", async () => {
  const dir = await Deno.makeTempDir();
  const at = (date: string, overrides: Partial<RunRecord> = {}) =>
    writeRecord(sampleRecord({ date, ...overrides }), `${dir}/${date.slice(0, 13)}.json`);
  const software = { ...sampleRecord().device, description: "llvmpipe", software: true };
  await at("2026-01-01T01:00:00.000Z", { device: software });
  assert.match((await chooseRecord(dir))!.why!, /software adapter/);
  const naive = sampleRecord().results[0];
  await at("2026-01-02T01:00:00.000Z", {
    results: [...sampleRecord().results, { ...naive, kernel: "03_coalesce" }],
  });
  await at("2026-01-03T01:00:00.000Z", { device: software });
  await at("2026-01-04T01:00:00.000Z", { complete: false });
  await at("2026-01-05T01:00:00.000Z", {
    results: sampleRecord().results.map((r) => ({ ...r, validated: false })),
  });
  // A later GPU run of fewer steps is not the ladder's record.
  await at("2026-01-06T01:00:00.000Z", { results: [naive] });
  const chosen = await chooseRecord(dir);
  assert.equal(chosen?.record.date, "2026-01-02T01:00:00.000Z");
  assert.equal(chosen?.why, undefined);
  assert.equal(await chooseRecord(`${dir}/none`), undefined);
});

Deno.test("export CLI: bad --run and --out are one line on stderr, exit 2, nothing written", async () => {
  const run = async (...args: string[]) => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-read", "--allow-write=exports", "tools/export.ts", ...args],
      cwd: new URL("../", import.meta.url).pathname,
      stdout: "piped",
      stderr: "piped",
    }).output();
    return { code: out.code, stderr: new TextDecoder().decode(out.stderr).trim() };
  };
  const cases: [string[], RegExp][] = [
    [["--run", "data/runs/nosuch.json"], /--run data\/runs\/nosuch\.json: no such file/],
    [["--run", "README.md"], /--run README\.md is not a run record/],
    [["--run", "data/runs"], /--run data\/runs is a folder/],
    [["--out", "/tmp/gemm-export-elsewhere"], /may write only under exports\//],
    [["--out", "README.md"], /--out README\.md is a file/],
    [["--bogus"], /unknown argument --bogus/],
  ];
  for (const [args, message] of cases) {
    const r = await run(...args);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.ok(!/\n.*at /.test(r.stderr), `${args.join(" ")}: a stack trace\n${r.stderr}`);
  }
  assert.equal(await Deno.stat("/tmp/gemm-export-elsewhere").catch(() => undefined), undefined);
});

Deno.test("export: its folder holds only the current export", async () => {
  const dir = await Deno.makeTempDir();
  for (const f of ["old.svg", "ladder.svg", "mine.txt"]) {
    await Deno.writeTextFile(`${dir}/${f}`, "");
  }
  await Deno.writeTextFile(`${dir}/${MANIFEST}`, JSON.stringify(["old.svg", "ladder.svg"]));
  assert.deepEqual(await removeStale(dir, ["ladder.svg", "ladder.png"]), ["old.svg"]);
  assert.deepEqual(
    [...Deno.readDirSync(dir)].map((e) => e.name).sort(),
    [MANIFEST, "ladder.svg", "mine.txt"],
    "files the export did not make stay",
  );
  assert.deepEqual(JSON.parse(await Deno.readTextFile(`${dir}/${MANIFEST}`)), [
    "ladder.svg",
    "ladder.png",
  ]);
});

// ---------------------------------------------------------------------------------------------
// Fuzz on demand.

Deno.test("fuzz shapes: 1..300, primes and tile multiples +-1 among them", () => {
  let s = 1;
  const next = () => (s = (s * 16807) % 2147483647) / 2147483647;
  const dims = fuzzShapes(300, [4, 64], next).flatMap((x) => [x.m, x.k, x.n]);
  assert.ok(dims.every((d) => Number.isInteger(d) && d >= 1 && d <= FUZZ_MAX_DIM));
  for (const d of [63, 64, 65, 127, 129]) assert.ok(dims.includes(d), `${d}`);
  assert.ok(dims.filter((d) => [2, 3, 5, 7, 11, 13, 251, 257, 293].includes(d)).length > 5);
});

Deno.test("fuzz: a kernel skipped for a missing feature fails the run unless allowed", () => {
  const skipped = {
    kernel: "14_f16",
    shapes: 0,
    passed: 0,
    skipped: "no shader-f16",
    failures: [],
  };
  const ok = { kernel: naive.id, shapes: 3, passed: 3, failures: [] };
  const lines: string[] = [];
  assert.equal(fuzzStatus([ok, skipped], { allowMissing: false }, (l) => lines.push(l)), 1);
  assert.match(lines.join("\n"), /skipped 14_f16[\s\S]*FAILED/);
  assert.equal(fuzzStatus([ok, skipped], { allowMissing: true }, () => {}), 0);
  assert.equal(parseFuzzArgs(["--allow-missing"]).allowMissing, true);
  assert.throws(() => parseFuzzArgs(["--allow-missing=1"]), UsageError);
});

Deno.test("fuzz flags: count, kernels, seed; --shape needs --seed", () => {
  const args = parseFuzzArgs(["--count", "2", "--kernels=naive", "--seed", "7"]);
  assert.deepEqual([args.count, args.kernels, args.seed], [2, [naive], 7]);
  assert.equal(parseFuzzArgs([]).count, 200);
  assert.deepEqual(parseFuzzArgs([]).kernels, KERNELS.filter((k) => !k.demo));
  assert.throws(() => parseFuzzArgs(["--shape", "3x4x5"]), /--shape needs --seed/);
  assert.throws(() => parseFuzzArgs(["--count", "0"]), UsageError);
  assert.throws(() => parseFuzzArgs(["--kernels", "nope"]), /unknown kernel/);
});

Deno.test(
  "fuzz: N=2 on one kernel passes; a failure names its shape and seed",
  gpuTest,
  async () => {
    const gpu = await acquireGpu();
    const log: string[] = [];
    const [ok] = await fuzz(
      gpu,
      parseFuzzArgs(["--count", "2", "--kernels", "naive"]),
      (l) => log.push(l),
    );
    const tails = tailShapes(naive, naive.params).length;
    assert.deepEqual(
      [ok.kernel, ok.shapes, ok.passed, ok.failures],
      [naive.id, tails + 2, tails + 2, []],
      "its tail shapes, then two random ones",
    );

    // The same kernel launched with no workgroups: C stays poisoned, every shape fails, each
    // reproducibly.
    const strict: KernelSpec = { ...naive, dispatch: () => [0, 0, 0] };
    const [bad] = await fuzz(
      gpu,
      { ...parseFuzzArgs(["--count", "2"]), kernels: [strict] },
      (l) => log.push(l),
    );
    assert.equal(bad.failures.length, tails + 2);
    const f = bad.failures[0];
    assert.match(
      f.rerun,
      new RegExp(`--shape ${f.shape.m}x${f.shape.k}x${f.shape.n} --seed ${f.seed}$`),
    );
    const [again] = await fuzz(
      gpu,
      {
        ...parseFuzzArgs([
          "--shape",
          `${f.shape.m}x${f.shape.k}x${f.shape.n}`,
          "--seed",
          `${f.seed}`,
        ]),
        kernels: [strict],
      },
      () => {},
    );
    assert.equal(again.failures[0].error, f.error, "the rerun reproduces the failure");
    assert.equal(fuzzStatus([ok], { allowMissing: false }, () => {}), 0);
    assert.equal(fuzzStatus([ok, bad], { allowMissing: true }, () => {}), 1);
    assert.ok(
      log.some((l) => l.includes(`seed ${f.seed}`)),
      log.join("\n"),
    );
  },
);
