/**
 * GPU timing from `timestamp-query`: each timed repetition is one compute pass with
 * timestampWrites at its start and end, read back a batch at a time. Warm-up passes share a submit;
 * each timed pass has a submit of its own, as a library that submits every product alone (TF.js,
 * jax-js) is timed: a pass that follows another in the same command buffer waits, inside its
 * timestamps, for the barrier between the two writes of C (on an H200 about 0.7 us more per pass,
 * a seventh of the smallest products' time; 3% at 256 and 1% at 1024; nothing for an empty pass).
 * Deno's queue sync (onSubmittedWorkDone / mapAsync) costs ~11 ms, so a wall clock around one
 * dispatch would time Deno; the timestamps time the kernel. The next batch is queued before the
 * previous one is read back, so the GPU never waits on a readback: a GPU that idles a large share
 * of the time lowers its clocks, and short kernels would then be timed at a clock that depends on
 * how long they are rather than on the kernel. (Within a batch of one-pass submits a kernel
 * shorter than a submit leaves the GPU short gaps; the warm-up has raised the clocks by then, and
 * a batch lasts milliseconds.)
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
  /** Passes in the first warm-up submit (default 3). */
  warmup?: number;
  /** Least GPU time spent warming up on a hardware adapter (default 300 ms). */
  warmMs?: number;
  /** Target total GPU time of the timed repetitions. */
  budgetMs?: number;
}

/**
 * GPU time each batch of passes aims at once the pass time is known: several times Deno's ~11 ms
 * readback, so that the batch queued behind it keeps the GPU busy meanwhile.
 */
const SUBMIT_MS = 40;
/** Most passes per batch (two timestamps each; a query set holds at most 4096). */
const MAX_PASSES = 1024;
/** Warm-up submits before the timer settles for what it has. */
const MAX_WARM_SUBMITS = 24;

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

/** Repetitions that fill `budgetMs` at `passMs` each (5 to 200), or the exact count asked for. */
function repsFor(opts: TimingOptions, passMs: number): number {
  return opts.reps ??
    Math.max(5, Math.min(200, Math.round((opts.budgetMs ?? 400) / Math.max(passMs, 1e-3))));
}

/** Passes per batch for about `SUBMIT_MS` of GPU work at `passMs` each, at most `most`. */
function passesFor(passMs: number, most = MAX_PASSES): number {
  return Math.max(1, Math.min(most, Math.round(SUBMIT_MS / Math.max(passMs, 1e-3))));
}

/**
 * Time `encode` (which records dispatches into a compute pass) on the GPU: warm-up passes
 * first, then timed passes, each measured by its own pair of timestamps.
 */
export function timePasses(
  gpu: Gpu,
  encode: (pass: GPUComputePassEncoder) => void,
  opts: TimingOptions = {},
): Promise<Timing> {
  return gpu.has("timestamp-query")
    ? timeQueued(
      (count, apart) => submitTimestamped(gpu, encode, count, apart),
      { ...opts, software: gpu.summary.software },
    )
    : timeWithWallClock(gpu, encode, opts);
}

/**
 * Queue `count` passes on the GPU now, without waiting for them: all in one submit, or each in a
 * submit of its own (`apart`: the timed passes); the promise resolves to each pass's GPU time in
 * ms once it is read back.
 */
export type QueuePasses = (count: number, apart: boolean) => Promise<number[]>;

/** A batch of passes, submitted together (or, `apart`, one submit each), and their times. */
interface Submit {
  passes: number;
  apart: boolean;
  times: Promise<number[]>;
}

/**
 * Warm up until the GPU has run at least `warmMs` of work and two consecutive batches agree
 * within 3% (a GPU idle during validation drops its clocks and needs a few hundred ms of steady
 * work to boost again, so a fixed few passes of warm-up can leave it slow), then take
 * the timed samples. One batch is always queued behind the one being read back, so from the
 * first warm-up pass to the last timed one no readback leaves the GPU without work. `queue` is
 * our own timestamped passes, or a peer library's products timed by its own timestamps.
 */
export async function timeQueued(
  queue: QueuePasses,
  opts: TimingOptions & { software: boolean; maxBatch?: number },
): Promise<Timing> {
  const submit = (passes: number, apart = false): Submit => {
    const times = queue(passes, apart);
    // Read only after the submit before it: a failure here must wait for that, not go unhandled.
    times.catch(() => {});
    return { passes, apart, times };
  };
  const warmMs = opts.warmMs ?? 300;
  let inFlight: Submit | undefined = submit(Math.max(1, opts.warmup ?? 3));
  let queued: Submit | undefined;
  let passMs: number | undefined;
  let spent = 0;
  let reps: number | undefined; // set once warm: every pass queued apart after that is a sample
  const samples: number[] = [];
  try {
    for (let round = 1; inFlight; round++) {
      // Queue the next submit before reading this one back, sized by the last estimate.
      const wanted = reps === undefined
        ? Infinity
        : reps - samples.length - (inFlight.apart ? inFlight.passes : 0);
      const size = Math.min(wanted, passMs === undefined ? 1 : passesFor(passMs, opts.maxBatch));
      queued = size > 0 ? submit(size, reps !== undefined) : undefined;
      const finished = inFlight;
      const times = await finished.times;
      inFlight = queued;
      queued = undefined;
      if (reps !== undefined) {
        // The warm-up submit queued before the timer settled is still warm-up.
        if (finished.apart) samples.push(...times.slice(0, reps - samples.length));
        if (samples.length >= reps) break;
        continue;
      }
      const estimate = median(times);
      const settled = passMs !== undefined && Math.abs(estimate - passMs) <= 0.03 * estimate;
      spent += times.reduce((a, b) => a + b, 0);
      passMs = estimate;
      // Software adapters have no clocks to ramp (and too much noise to settle): one submit.
      if (opts.software || (spent >= warmMs && settled) || round >= MAX_WARM_SUBMITS) {
        reps = repsFor(opts, estimate);
      }
    }
  } finally {
    // A submit still queued (after an error, or past the last sample) must finish before its
    // buffers go.
    await Promise.allSettled([inFlight, queued].map((s) => s?.times));
  }
  return summarize(samples, "timestamp-query");
}

/**
 * Encode `count` timestamped passes and submit them now, all in one submit, or each in a submit of
 * its own (`apart`: the timed passes); the promise resolves to each pass's GPU time in ms once the
 * results are read back.
 */
export async function submitTimestamped(
  gpu: Gpu,
  encode: (pass: GPUComputePassEncoder) => void,
  count: number,
  apart = false,
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
  try {
    let enc = device.createCommandEncoder();
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
      if (apart) {
        device.queue.submit([enc.finish()]);
        enc = device.createCommandEncoder();
      }
    }
    enc.resolveQuerySet(querySet, 0, 2 * count, resolve, 0);
    enc.copyBufferToBuffer(resolve, 0, readback, 0, 16 * count);
    device.queue.submit([enc.finish()]);
    await orLost(gpu, readback.mapAsync(GPUMapMode.READ));
    const ticks = new BigUint64Array(readback.getMappedRange().slice(0));
    readback.unmap();
    const out: number[] = [];
    for (let i = 0; i < count; i++) out.push(Number(ticks[2 * i + 1] - ticks[2 * i]) / 1e6);
    return out;
  } finally {
    [querySet, resolve, readback].forEach((r) => r.destroy());
  }
}

/**
 * Without timestamps: submits of passes timed by the wall clock, which includes Deno's sync
 * (so only long submits time well); each sample is one submit's mean time per pass, and the
 * repetitions count submits. Warm-up as above, one submit at a time.
 */
async function timeWithWallClock(
  gpu: Gpu,
  encode: (pass: GPUComputePassEncoder) => void,
  opts: TimingOptions,
): Promise<Timing> {
  let passMs = await wallClockSubmit(gpu, encode, Math.max(1, opts.warmup ?? 3));
  let spent = passMs;
  for (let round = 1; round < MAX_WARM_SUBMITS && !gpu.summary.software; round++) {
    const passes = passesFor(passMs);
    const estimate = await wallClockSubmit(gpu, encode, passes);
    spent += estimate * passes;
    const settled = Math.abs(estimate - passMs) <= 0.03 * estimate;
    passMs = estimate;
    if (spent >= (opts.warmMs ?? 300) && settled) break;
  }
  const passes = passesFor(passMs);
  const samples: number[] = [];
  for (let i = repsFor(opts, passMs * passes); i > 0; i--) {
    samples.push(await wallClockSubmit(gpu, encode, passes));
  }
  return summarize(samples, "wall-clock-batch");
}

/** One submit of `count` passes, wall clock around it, divided by count. */
async function wallClockSubmit(
  gpu: Gpu,
  encode: (pass: GPUComputePassEncoder) => void,
  count: number,
): Promise<number> {
  const enc = gpu.device.createCommandEncoder();
  for (let i = 0; i < count; i++) {
    const pass = enc.beginComputePass();
    encode(pass);
    pass.end();
  }
  const t0 = performance.now();
  gpu.device.queue.submit([enc.finish()]);
  await orLost(gpu, gpu.device.queue.onSubmittedWorkDone());
  return (performance.now() - t0) / count;
}
