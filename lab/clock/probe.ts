/**
 * Why do small products time fast in one run and 3x slower in the next? This probe times the
 * same 1024^3 plans with two timers while `nvidia-smi` logs the SM clock (see lab/clock/run.sh):
 *
 * - "gapped": submits of 64 passes, each read back before the next is queued (the timer of the
 *   records up to T2014): for a 0.08 ms pass the GPU works ~5 ms, then idles ~11 ms while Deno
 *   reads the timestamps back;
 * - "queued": lib/timing.ts, which queues the next submit before reading one back.
 *
 * Each product is validated against the float64 reference first. Phase boundaries are printed
 * with wall-clock times, to line up with the clock log.
 */
import { acquireGpu } from "../../lib/gpu.ts";
import { freshSeed, randomMatrix, type Shape, shapeLabel } from "../../lib/matrix.ts";
import { validateProduct } from "../../lib/measure.ts";
import { openCublas } from "../../lib/peers/cublas.ts";
import { findKernel } from "../../lib/registry.ts";
import { numericsOf } from "../../lib/steps/spec.ts";
import { BoundProblem, kernelParams, prepareKernel } from "../../lib/runner.ts";
import { median, submitTimestamped, summarize, timePasses, type Timing } from "../../lib/timing.ts";

const gpu = await acquireGpu();
const out = Deno.args[0] ?? "/tmp/clock-probe.json";
const rows: Record<string, unknown>[] = [];
const stamp = () => new Date().toISOString();
const idle = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The records' earlier timer: 64 passes per submit, read back before the next submit. */
async function gapped(encode: (p: GPUComputePassEncoder) => void): Promise<Timing> {
  // One submit at a time: read back before the next is queued.
  const batch = (count: number) => submitTimestamped(gpu, encode, count);
  // Its warm-up: at least 300 ms of GPU work and two batches within 3%, at most 12 batches.
  let size = 3, spent = 0, previous = Infinity, estimate = 0;
  for (let round = 0; round < 12; round++) {
    const times = await batch(size);
    estimate = median(times);
    spent += times.reduce((a, b) => a + b, 0);
    if (spent >= 300 && Math.abs(estimate - previous) <= 0.03 * estimate) break;
    previous = estimate;
    size = Math.max(1, Math.min(64, Math.round(100 / estimate)));
  }
  const reps = Math.max(5, Math.min(200, Math.round(400 / estimate)));
  const samples: number[] = [];
  while (samples.length < reps) samples.push(...await batch(Math.min(64, reps - samples.length)));
  return summarize(samples, "timestamp-query");
}

async function problemFor(key: string, shape: Shape) {
  const spec = findKernel(key)!;
  const params = kernelParams(gpu, spec, undefined, shape);
  const seed = freshSeed();
  const a = randomMatrix(shape.m, shape.k, seed);
  const b = randomMatrix(shape.k, shape.n, seed ^ 0x9e3779b9);
  const problem = await BoundProblem.create(
    gpu,
    await prepareKernel(gpu, spec, params),
    shape,
    a,
    b,
  );
  const check = validateProduct(
    await problem.compute(),
    a,
    b,
    shape,
    numericsOf(spec, params),
    seed,
    64,
  );
  if (!check.passed) throw new Error(`${key} failed validation: ${check.failure}`);
  return { problem, params, relErr: check.relErr };
}

function report(label: string, t: Timing, flops: number, extra: Record<string, unknown> = {}) {
  const gflops = flops / (t.medianMs * 1e6);
  console.log(
    `${stamp()} ${label.padEnd(46)} median ${(t.medianMs * 1000).toFixed(1)} us  min ${
      (t.minMs * 1000).toFixed(1)
    }  max ${(t.maxMs * 1000).toFixed(1)}  ${t.reps} reps  ${gflops.toFixed(0)} GFLOP/s`,
  );
  rows.push({
    at: stamp(),
    label,
    medianMs: t.medianMs,
    minMs: t.minMs,
    maxMs: t.maxMs,
    reps: t.reps,
    gflops,
    ...extra,
  });
  Deno.writeTextFileSync(out, JSON.stringify({ device: gpu.summary, rows }, null, 1));
}

const shape: Shape = { m: 1024, k: 1024, n: 1024 };
const flops = 2 * shape.m * shape.k * shape.n;
const heavy = await problemFor("12_generated", { m: 4096, k: 4096, n: 4096 });
for (const key of ["13_shapes", "12_generated", "11_autotune"]) {
  const { problem, params, relErr } = await problemFor(key, shape);
  const enc = (p: GPUComputePassEncoder) => problem.encode(p);
  const tag = `${key} ${shapeLabel(shape)}`;
  const extra = { kernel: key, params, relErr };
  for (const round of [1, 2]) {
    console.log(`${stamp()} idle 3 s`);
    await idle(3000);
    report(`${tag} gapped (after idle) #${round}`, await gapped(enc), flops, extra);
    report(`${tag} gapped (again) #${round}`, await gapped(enc), flops, extra);
    console.log(`${stamp()} idle 3 s`);
    await idle(3000);
    report(`${tag} queued (after idle) #${round}`, await timePasses(gpu, enc), flops, extra);
    report(`${tag} queued (again) #${round}`, await timePasses(gpu, enc), flops, extra);
  }
  // After 1 s of a heavy kernel, with no pause between.
  await timePasses(gpu, (p) => heavy.problem.encode(p), { reps: 300 });
  report(`${tag} gapped (after heavy)`, await gapped(enc), flops, extra);
  await timePasses(gpu, (p) => heavy.problem.encode(p), { reps: 300 });
  report(`${tag} queued (after heavy)`, await timePasses(gpu, enc), flops, extra);
  problem.destroy();
}
heavy.problem.destroy();

// cuBLAS after idle, for comparison (it times back-to-back launches with CUDA events).
const cublas = openCublas();
if (typeof cublas === "string") console.log(`no cuBLAS: ${cublas}`);
else {
  for (const round of [1, 2]) {
    console.log(`${stamp()} idle 3 s`);
    await idle(3000);
    const r = await cublas.run(shape);
    console.log(
      `${stamp()} cuBLAS ${shapeLabel(shape)} #${round}: ${r.medianMs} ms, ${
        r.gflops?.toFixed(0)
      } GFLOP/s`,
    );
    rows.push({ at: stamp(), label: `cuBLAS #${round}`, medianMs: r.medianMs, gflops: r.gflops });
  }
  cublas.close();
}
Deno.writeTextFileSync(out, JSON.stringify({ device: gpu.summary, rows }, null, 1));
