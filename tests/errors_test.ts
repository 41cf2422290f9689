/**
 * Every bad input gets a clear, typed error (issue 2), tested at the runner and bench layer:
 * bad dimensions, shapes over the buffer limits, operand lengths, workgroups over the device
 * limits, missing features, WGSL compile errors, a lost device, bad flags, and a wrong kernel.
 */
import assert from "node:assert/strict";
import { main, runBench } from "../lib/bench.ts";
import { EXIT, formatTable } from "../lib/bench_report.ts";
import { parseBenchArgs } from "../lib/bench_args.ts";
import {
  DeviceLostError,
  FeatureError,
  LimitError,
  ShapeError,
  UsageError,
  WgslCompileError,
} from "../lib/errors.ts";
import { acquireGpu, compileWgsl, type Gpu } from "../lib/gpu.ts";
import { randomMatrix, type Shape } from "../lib/matrix.ts";
import { findKernel, type KernelSpec } from "../lib/registry.ts";
import {
  BoundProblem,
  checkBufferFits,
  multiply,
  prepareKernel,
  runKernel,
} from "../lib/runner.ts";

const naive = findKernel("naive")!;

const gpuTest = { sanitizeResources: false, sanitizeOps: false };
let shared: Gpu | undefined;
const gpu = async () => shared ??= await acquireGpu();
const tmpOut = async () => `${await Deno.makeTempDir()}/run.json`;
const quiet = () => {};

Deno.test(
  "dimensions 0, negative, fractional, NaN: ShapeError naming the dimension",
  gpuTest,
  async () => {
    const g = await gpu();
    for (const bad of [0, -4, 2.5, NaN]) {
      for (
        const shape of [{ m: bad, k: 4, n: 4 }, { m: 4, k: bad, n: 4 }, { m: 4, k: 4, n: bad }]
      ) {
        await assert.rejects(
          () => runKernel(g, naive, shape),
          (e) => e instanceof ShapeError && /(m|k|n) must be a positive integer/.test(e.message),
        );
        await assert.rejects(() => multiply(g, naive, [1], [1], shape), ShapeError);
      }
    }
  },
);

Deno.test("array lengths that do not match the shape: ShapeError", gpuTest, async () => {
  const g = await gpu();
  const shape = { m: 3, k: 4, n: 5 };
  await assert.rejects(
    () => multiply(g, naive, randomMatrix(3, 5), randomMatrix(4, 5), shape),
    (e) => e instanceof ShapeError && /A has 15 elements, expected m\*k = 12/.test(e.message),
  );
  await assert.rejects(
    () => multiply(g, naive, randomMatrix(3, 4), randomMatrix(4, 4), shape),
    (e) => e instanceof ShapeError && /B has 16 elements, expected k\*n = 20/.test(e.message),
  );
});

Deno.test(
  "too large for the device: LimitError names the limit and the largest size that fits",
  gpuTest,
  async () => {
    const g = await gpu();
    const lim = g.device.limits;
    const cap = Math.min(lim.maxStorageBufferBindingSize, lim.maxBufferSize);
    const side = Math.floor(Math.sqrt(cap / 4));
    // C of (side+1)^2 floats is one row too many; A and B stay tiny.
    const shape: Shape = { m: side + 1, k: 1, n: side + 1 };
    const kernel = await prepareKernel(g, naive);
    await assert.rejects(
      () =>
        BoundProblem.create(g, kernel, shape, randomMatrix(side + 1, 1), randomMatrix(1, side + 1)),
      (e) =>
        e instanceof LimitError && e.message.includes(e.limit) &&
        e.message.includes(`largest square matrix that fits is ${side} x ${side}`),
    );
    const result = await runKernel(g, naive, shape);
    assert.equal(result.validated, false);
    assert.equal(result.errorKind, "limit");
    assert.equal(result.gflops, undefined);

    // Which limit is named depends on which is smaller.
    const fake = (binding: number, buffer: number) =>
      ({
        device: { limits: { maxStorageBufferBindingSize: binding, maxBufferSize: buffer } },
      }) as unknown as Gpu;
    assert.throws(
      () => checkBufferFits(fake(1 << 30, 1 << 20), "C", 1024, 1024, 4),
      (e) => e instanceof LimitError && e.limit === "maxBufferSize" && /512 x 512/.test(e.message),
    );
    assert.throws(
      () => checkBufferFits(fake(1 << 20, 1 << 30), "C", 1024, 1024, 4),
      (e) => e instanceof LimitError && e.limit === "maxStorageBufferBindingSize",
    );
    checkBufferFits(fake(1 << 22, 1 << 22), "C", 1024, 1024, 4); // exactly fits
  },
);

Deno.test(
  "workgroup size or storage over the device limit: LimitError, recorded not thrown",
  gpuTest,
  async () => {
    const g = await gpu();
    const lim = g.device.limits;
    const tooMany: KernelSpec = { ...naive, id: "test_wide", workgroupSize: () => [64, 64, 1] };
    await assert.rejects(
      () => prepareKernel(g, tooMany),
      (e) => e instanceof LimitError && e.limit === "maxComputeInvocationsPerWorkgroup",
    );
    const tooMuchShared: KernelSpec = {
      ...naive,
      id: "test_shared",
      workgroupStorageBytes: () => lim.maxComputeWorkgroupStorageSize + 4,
    };
    const r = await runKernel(g, tooMuchShared, { m: 8, k: 8, n: 8 });
    assert.equal(r.errorKind, "limit");
    assert.match(
      r.error!,
      new RegExp(`maxComputeWorkgroupStorageSize|allows ${lim.maxComputeWorkgroupStorageSize}`),
    );
    assert.equal(r.gflops, undefined);
  },
);

Deno.test(
  "missing feature: that kernel is skipped with the reason, the rest runs",
  gpuTest,
  async () => {
    const g = await gpu();
    const needsAstc: KernelSpec = {
      ...naive,
      id: "test_astc",
      name: "astc",
      requiredFeatures: ["texture-compression-astc"],
    };
    assert.ok(!g.has("texture-compression-astc"), "test assumes the adapter lacks ASTC");
    await assert.rejects(() => prepareKernel(g, needsAstc), FeatureError);
    const args = {
      ...parseBenchArgs(["--sizes", "8,12", "--no-peers", "--no-ceilings", "--no-cpu"]),
      kernels: [needsAstc, naive],
      out: await tmpOut(),
    };
    const { record, exitCode } = await runBench(args, { gpu: g, log: quiet });
    assert.equal(exitCode, EXIT.ok, "a skip is not a failure");
    const skipped = record.results.filter((r) => r.kernel === "test_astc");
    assert.equal(skipped.length, 1, "skipped once, not once per size");
    assert.equal(skipped[0].errorKind, "feature");
    assert.ok(
      record.notes.some((n) =>
        n.includes("test_astc skipped") && n.includes("texture-compression-astc")
      ),
    );
    assert.equal(record.results.filter((r) => r.kernel === naive.id && r.validated).length, 2);
    assert.match(formatTable(record), /test_astc\s+8\s+skipped \(feature\)/);
  },
);

Deno.test("WGSL compile error: WgslCompileError with the file and line", gpuTest, async () => {
  const g = await gpu();
  const code = [
    "@group(0) @binding(0) var<storage, read_write> out: array<f32>;",
    "@compute @workgroup_size(1)",
    "fn main() {",
    "  out[0] = undefined_name;",
    "}",
  ].join("\n");
  await assert.rejects(
    () => compileWgsl(g, code, "broken.wgsl"),
    (e) => e instanceof WgslCompileError && e.line === 4 && e.message.startsWith("broken.wgsl:4:"),
  );
});

Deno.test(
  "device lost mid-run: stops, records what finished, exits non-zero (no hang)",
  gpuTest,
  async () => {
    const g = await acquireGpu(); // its own device: this test destroys it
    const args = {
      ...parseBenchArgs([
        "--kernels",
        "naive",
        "--sizes",
        "8,12,16,20",
        "--no-ceilings",
        "--no-cpu",
      ]),
      out: await tmpOut(),
    };
    let seen = 0;
    const outcome = await runBench(args, {
      gpu: g,
      log: quiet,
      // The loss is reported asynchronously, on the device's own schedule: wait for it, so the
      // bench meets a lost device at its next step every time.
      afterResult: async () => {
        if (++seen === 1) {
          g.device.destroy();
          await g.lost;
        }
      },
    });
    assert.equal(outcome.exitCode, EXIT.deviceLost);
    assert.equal(outcome.record.complete, false);
    assert.ok(outcome.record.results[0].validated, "the result before the loss is kept");
    assert.ok(outcome.record.results.length < 4, "stopped early");
    assert.ok(outcome.record.notes.some((n) => /stopped early: .*device.*lost/i.test(n)));
    const saved = JSON.parse(await Deno.readTextFile(outcome.path));
    assert.equal(saved.complete, false);
    assert.ok(saved.results[0].validated);
    assert.throws(() => g.check(), DeviceLostError);
  },
);

Deno.test("bad flags: UsageError with the usage text; the CLI exits 2", async () => {
  const bad = [
    ["--kernels", "nosuchkernel"],
    ["--kernels", ""],
    ["--sizes", "0"],
    ["--sizes", "-5"],
    ["--sizes", "1.5"],
    ["--sizes", "NaN"],
    ["--sizes", "1e3"],
    ["--sizes", "1024,"],
    ["--sizes", "abc"],
    ["--sizes"],
    ["--shape", "10x10"],
    ["--shape", "10x0x10"],
    ["--reps", "0"],
    ["--no-peers=yes"],
    ["--frobnicate"],
    ["1024"],
  ];
  for (const argv of bad) {
    assert.throws(
      () => parseBenchArgs(argv),
      (e) => e instanceof UsageError && e.message.includes("Usage: deno task bench"),
      argv.join(" "),
    );
  }
  assert.throws(() => parseBenchArgs(["--kernels", "nosuchkernel"]), /known: 02_naive \(naive\)/);
  assert.throws(
    () => parseBenchArgs(["--sizes", String(2 ** 21)]),
    /larger than this package supports/,
  );
  const errors: string[] = [];
  const original = console.error;
  console.error = (...a: unknown[]) => errors.push(a.join(" "));
  try {
    assert.equal(await main(["--sizes", "0"]), EXIT.usage);
  } finally {
    console.error = original;
  }
  assert.match(errors.join("\n"), /--sizes: "0" is not a positive integer/);
});

Deno.test(
  "a deliberately wrong kernel is caught by the runner and never shown as a speed",
  gpuTest,
  async () => {
    const g = await gpu();
    // The naive kernel launched over half the rows: the rest of C keeps its NaN poison.
    const halfGrid: KernelSpec = {
      ...naive,
      id: "test_half_grid",
      dispatch: (s, p) => [Math.ceil(s.m / 2 / p.WG), Math.ceil(s.n / p.WG), 1],
    };
    const r = await runKernel(g, halfGrid, { m: 64, k: 8, n: 16 });
    assert.equal(r.validated, false);
    assert.equal(r.errorKind, "wrong-result");
    assert.ok(Number.isNaN(r.relErr));
    assert.equal(r.medianMs, undefined);
    assert.equal(r.gflops, undefined);

    const args = {
      ...parseBenchArgs(["--sizes", "32", "--no-peers", "--no-ceilings", "--no-cpu"]),
      kernels: [halfGrid, naive],
      out: await tmpOut(),
    };
    const { record, exitCode } = await runBench(args, { gpu: g, log: quiet });
    assert.equal(exitCode, EXIT.failed);
    const row = formatTable(record).split("\n").find((l) => l.startsWith("test_half_grid"))!;
    assert.match(row, /FAILED \(wrong-result\)/);
    assert.doesNotMatch(row, /GFLOP|%/);
    assert.ok(record.results.find((x) => x.kernel === naive.id)?.validated);
  },
);
