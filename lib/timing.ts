/**
 * GPU timing from `timestamp-query`: each timed repetition is one compute pass with
 * timestampWrites at its start and end, many passes per submit, one readback at the end.
 * Deno's queue sync (onSubmittedWorkDone / mapAsync) costs ~11 ms, so a wall clock around one
 * dispatch would time Deno; the timestamps time the kernel.
 */
import { type Gpu, orLost } from "./gpu.ts";

/** Summary of repeated GPU timings. */
export interface Timing {
  medianMs: number;
  minMs: number;
  maxMs: number;
  reps: number;
  /** "timestamp-query", or "wall-clock-batch" on adapters without timestamps (less precise). */
  method: "timestamp-query" | "wall-clock-batch";
  samplesMs: number[];
}

export interface TimingOptions {
  /** Exact repetition count; by default chosen to fill `budgetMs` (between 5 and 200). */
  reps?: number;
  warmup?: number;
  /** Least GPU time spent warming up on a hardware adapter (default 300 ms). */
  warmMs?: number;
  /** Target total GPU time of the timed repetitions. */
  budgetMs?: number;
}

/** Passes per submit: enough to hide Deno's sync cost, few enough to keep queries small. */
const BATCH = 64;

/** Median of a list (mean of the middle two for even lengths). */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Summarise samples into a Timing. */
export function summarize(samplesMs: number[], method: Timing["method"]): Timing {
  return {
    medianMs: median(samplesMs),
    minMs: Math.min(...samplesMs),
    maxMs: Math.max(...samplesMs),
    reps: samplesMs.length,
    method,
    samplesMs,
  };
}

/**
 * Time `encode` (which records dispatches into a compute pass) on the GPU: warm-up passes
 * first, then timed passes, each measured by its own pair of timestamps.
 */
export async function timePasses(
  gpu: Gpu,
  encode: (pass: GPUComputePassEncoder) => void,
  opts: TimingOptions = {},
): Promise<Timing> {
  const method = gpu.has("timestamp-query") ? "timestamp-query" : "wall-clock-batch";
  const run = method === "timestamp-query" ? timestampBatch : wallClockBatch;
  const estimate = await warmUp(gpu, encode, run, opts);
  const reps = opts.reps ??
    Math.max(5, Math.min(200, Math.round((opts.budgetMs ?? 400) / Math.max(estimate, 1e-3))));
  const samples: number[] = [];
  while (samples.length < reps) {
    samples.push(...await run(gpu, encode, Math.min(BATCH, reps - samples.length)));
  }
  return summarize(samples, method);
}

/**
 * Warm up until the GPU has run at least `warmMs` of work and two consecutive batches agree
 * within 3%: a GPU idle during validation drops its clocks and needs a few hundred ms of steady
 * work to boost again (seen on an H200: 4x slower medians after a 3-pass warm-up). Returns the
 * per-pass estimate of the last batch.
 */
async function warmUp(
  gpu: Gpu,
  encode: (pass: GPUComputePassEncoder) => void,
  run: typeof timestampBatch,
  opts: TimingOptions,
): Promise<number> {
  let batch = Math.max(1, opts.warmup ?? 3);
  let spent = 0;
  let previous = Infinity;
  for (let round = 0; round < 12; round++) {
    const times = await run(gpu, encode, batch);
    const estimate = median(times);
    spent += times.reduce((a, b) => a + b, 0);
    // Software adapters have no clocks to ramp (and too much noise to settle): one batch.
    if (gpu.summary.software) return estimate;
    const settled = Math.abs(estimate - previous) <= 0.03 * estimate;
    if (spent >= (opts.warmMs ?? 300) && settled) return estimate;
    previous = estimate;
    // Grow the batch so each round is about 100 ms of GPU work.
    batch = Math.max(1, Math.min(BATCH, Math.round(100 / Math.max(estimate, 1e-3))));
  }
  return previous;
}

async function timestampBatch(
  gpu: Gpu,
  encode: (pass: GPUComputePassEncoder) => void,
  count: number,
): Promise<number[]> {
  const { device } = gpu;
  const querySet = device.createQuerySet({ type: "timestamp", count: 2 * count });
  const resolve = device.createBuffer({
    size: 16 * count,
    usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC,
  });
  const readback = device.createBuffer({
    size: 16 * count,
    usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.MAP_READ,
  });
  const enc = device.createCommandEncoder();
  for (let i = 0; i < count; i++) {
    const pass = enc.beginComputePass({
      timestampWrites: {
        querySet,
        beginningOfPassWriteIndex: 2 * i,
        endOfPassWriteIndex: 2 * i + 1,
      },
    });
    encode(pass);
    pass.end();
  }
  enc.resolveQuerySet(querySet, 0, 2 * count, resolve, 0);
  enc.copyBufferToBuffer(resolve, 0, readback, 0, 16 * count);
  device.queue.submit([enc.finish()]);
  await orLost(gpu, readback.mapAsync(GPUMapMode.READ));
  const ticks = new BigUint64Array(readback.getMappedRange().slice(0));
  readback.unmap();
  [querySet, resolve, readback].forEach((r) => r.destroy());
  const out: number[] = [];
  for (let i = 0; i < count; i++) out.push(Number(ticks[2 * i + 1] - ticks[2 * i]) / 1e6);
  return out;
}

/** Fallback: one submit of `count` passes, wall clock minus nothing, divided by count. */
async function wallClockBatch(
  gpu: Gpu,
  encode: (pass: GPUComputePassEncoder) => void,
  count: number,
): Promise<number[]> {
  const enc = gpu.device.createCommandEncoder();
  for (let i = 0; i < count; i++) {
    const pass = enc.beginComputePass();
    encode(pass);
    pass.end();
  }
  const t0 = performance.now();
  gpu.device.queue.submit([enc.finish()]);
  await orLost(gpu, gpu.device.queue.onSubmittedWorkDone());
  return [(performance.now() - t0) / count];
}
