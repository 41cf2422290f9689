/**
 * jax-js (npm @jax-js/jax) as a peer, on two of its backends: the JavaScript matmuls our readers
 * could reach for instead of ours.
 *
 * **WebAssembly (CPU)**, `runJaxCpu`: jax-js generates WebAssembly SIMD kernels and runs them on
 * one Worker per core when SharedArrayBuffer is there, as in Deno. Timing: the wall clock around
 * `matmul` and `blockUntilReady()` of its result, on operands already in the backend's memory, as
 * for our CPU matmuls.
 *
 * **WebGPU**, `openJaxjsGpu`: jax-js opens its own GPUDevice (it accepts none) on the adapter
 * `navigator.gpu.requestAdapter({ powerPreference: "high-performance" })` gives, the one ours
 * comes from; opening refuses if the two adapters differ. Its matmul is one generated WGSL kernel
 * (a reduction over K, one invocation per element or per few elements of C), one dispatch in its
 * own submit.
 *
 * Timing (GPU): timestamp-query, through jax-js's profiler. While `profiler.startTrace()` is on
 * and the device has timestamp-query, jax-js gives every dispatch `timestampWrites` at the start
 * of its first compute pass and the end of its last, resolves them, and reports the dispatch as
 * a `performance.measure` whose duration is the difference of those two GPU timestamps. So a
 * sample is the GPU time of the product's pass, as for our kernels (lib/timing.ts) and TF.js's
 * tf.time(). Not in it: jax-js's CPU work per dispatch (its own submit, a bind group), and, for
 * an output too large for its pool, the fresh buffer it creates (and WebGPU zero-fills) for every
 * product, which a chain of products pays but a kernel does not. Every dispatch reported while
 * timing must be the product kernel (C's M x N outputs, an Add reduction over K), or timing
 * fails: a product that took two kernels could not hide its second. Products are issued in
 * batches of about 40 ms of GPU time without waiting for them, the next batch issued before the
 * previous one's times are read, so the GPU has work queued while Deno reads back; warm-up until
 * two batches agree (one batch on a software adapter), as lib/timing.ts does for ours.
 *
 * Validation (GPU): fresh inputs from the row's seed. jax-js takes C's buffer from its pool of
 * freed buffers, newest first, so a NaN array of C's size is freed into it just before the
 * product: a product that did not write C reads back NaN, never passing (the row's
 * `details.poisonedOutput` says whether C got that buffer; jax-js does not pool large buffers, and
 * a fresh one reads back zeros, which fail as well). C is realized on the GPU (`gpuBuffer()`)
 * before it is read, so the checked numbers come from the kernel that is timed. A one-element
 * operand (M x K or K x N of size 1) is folded into the kernel as a constant by jax-js itself:
 * `details.kernelInputs` is then below 2.
 */
import { defaultDevice, getWebGPUDevice, init, numpy as np, profiler } from "@jax-js/jax";
import { timeCpu } from "../cpu.ts";
import { FeatureError, GemmError, GpuValidationError } from "../errors.ts";
import type { Gpu } from "../gpu.ts";
import type { Shape } from "../matrix.ts";
import { peerRow, timerNumbers, validateThenTime } from "../measure.ts";
import type { PeerResult } from "../record.ts";
import { F32_NUMERICS } from "../accuracy.ts";
import { median, summarize, type Timing } from "../timing.ts";

/** The version this peer was built against (pinned in deno.json). */
export const JAXJS_VERSION = "0.1.25";

type JaxArray = ReturnType<typeof np.array>;

let ready: Promise<void> | undefined;

/** Start jax-js's WebAssembly backend once and make it the default. */
function start(): Promise<void> {
  ready ??= init("wasm").then((devices) => {
    if (!devices.includes("wasm")) {
      throw new GemmError("feature", `jax-js found no wasm device (it has ${devices.join(", ")})`);
    }
    defaultDevice("wasm");
  });
  return ready;
}

/** Validate then time jax-js's CPU matmul on one shape: a record `peers` row. */
export async function runJaxCpu(
  shape: Shape,
  opts: { reps?: number; budgetMs?: number } = {},
): Promise<PeerResult> {
  const { m, k, n } = shape;
  const result = peerRow({
    peer: "jaxjs-wasm",
    kernel: "jaxjs_matmul",
    title: `jax-js ${JAXJS_VERSION} numpy.matmul (wasm backend)`,
    timer: "performance.now (CPU), matmul + blockUntilReady",
  }, shape);
  let operands: [JaxArray, JaxArray] | undefined;
  let inputs: { a: Float32Array; b: Float32Array } | undefined;
  try {
    return await validateThenTime(result, {
      numerics: F32_NUMERICS,
      compute: async (a, b) => {
        await start();
        inputs = { a, b };
        operands = [
          np.array(a as Float32Array<ArrayBuffer>).reshape([m, k]),
          np.array(b as Float32Array<ArrayBuffer>).reshape([k, n]),
        ];
        const c = np.matmul(operands[0].ref, operands[1].ref);
        return Float32Array.from(await c.data() as Float32Array);
      },
      time: async () => {
        const [a, b] = operands!;
        const once = async () => {
          await np.matmul(a.ref, b.ref).blockUntilReady().then((c) => c.dispose());
          return new Float32Array(0);
        };
        return timerNumbers(
          await timeCpu(once, shape, opts.reps ?? 5, {
            ...inputs,
            budgetMs: opts.budgetMs ?? 3000,
          }),
        );
      },
      errorKind: (e) => e instanceof GemmError ? undefined : "jaxjs",
    });
  } finally {
    for (const x of operands ?? []) x.dispose();
  }
}

/** How the GPU rows' time is taken (the row's `timer`). */
export const JAXJS_GPU_TIMER =
  "jax-js profiler: timestamp-query at the start and end of each product's dispatch";

/** jax-js's WebGPU backend, set up on the adapter our kernels use. */
export interface JaxjsGpuPeer {
  details: Record<string, string | number | boolean>;
  /** Validate then time C = A * B for one shape. */
  run(shape: Shape, opts?: { reps?: number; budgetMs?: number }): Promise<PeerResult>;
}

/** jax-js's GPUDevice, with its errors and loss surfaced as ours are (lib/gpu.ts). */
interface JaxDevice {
  device: GPUDevice;
  /** Throws the first uncaptured error since the last call, or the loss of the device. */
  check(): void;
  /** Wait for `p`, but fail at once if the device is lost meanwhile. */
  orLost<T>(p: Promise<T>): Promise<T>;
}

let gpuReady: Promise<JaxDevice> | undefined;

/**
 * Start jax-js's WebGPU backend (once per process: jax-js keeps its device for good) and check
 * that it runs on the adapter of `gpu` and can time with timestamp-query.
 */
export async function openJaxjsGpu(gpu: Gpu): Promise<JaxjsGpuPeer> {
  gpuReady ??= init("webgpu").then((devices) => {
    if (!devices.includes("webgpu")) {
      throw new FeatureError(
        "webgpu",
        "jax-js could not start its WebGPU backend (no adapter, or its device request failed)",
      );
    }
    return watch(getWebGPUDevice());
  });
  const jax = await gpuReady.catch((e) => {
    gpuReady = undefined;
    throw e;
  });
  const theirs = adapterName(jax.device.adapterInfo);
  const ours = adapterName(gpu.adapter.info);
  if (theirs !== ours) {
    throw new GemmError("peer", `jax-js's device is on ${theirs}, ours on ${ours}`);
  }
  if (!jax.device.features.has("timestamp-query")) {
    throw new FeatureError(
      "timestamp-query",
      "jax-js's device has no timestamp-query, so its profiler cannot time the product",
    );
  }
  const details = {
    version: JAXJS_VERSION,
    backend: "webgpu (jax-js's own GPUDevice, our adapter)",
    timestampQuery: true,
  };
  return {
    details,
    run: (shape, opts) => runJaxGpu(jax, details, gpu.summary.software, shape, opts),
  };
}

function adapterName(info: GPUAdapterInfo): string {
  return [info.vendor, info.architecture, info.device, info.description].join(" / ");
}

function watch(device: GPUDevice): JaxDevice {
  let uncaptured: string | undefined;
  let lostReason: string | undefined;
  device.addEventListener("uncapturederror", (e) => {
    uncaptured ??= (e as GPUUncapturedErrorEvent).error.message;
  });
  const lost = device.lost.then((info) => {
    lostReason = `${info.reason}: ${info.message}`;
    throw new GemmError("jaxjs", `jax-js's GPU device was lost: ${lostReason}`);
  });
  lost.catch(() => {}); // surfaced by check() and orLost()
  const check = () => {
    if (lostReason !== undefined) {
      throw new GemmError("jaxjs", `jax-js's GPU device was lost: ${lostReason}`);
    }
    if (uncaptured !== undefined) {
      const message = uncaptured;
      uncaptured = undefined;
      throw new GpuValidationError(`jax-js's device: ${message}`);
    }
  };
  return {
    device,
    check,
    async orLost(p) {
      const result = await Promise.race([p, lost]);
      check();
      return result;
    },
  };
}

async function runJaxGpu(
  jax: JaxDevice,
  details: Record<string, string | number | boolean>,
  software: boolean,
  shape: Shape,
  opts: { reps?: number; budgetMs?: number } = {},
): Promise<PeerResult> {
  const { m, k, n } = shape;
  const result = peerRow({
    peer: "jaxjs-webgpu",
    kernel: "jaxjs_matmul",
    title: `jax-js ${JAXJS_VERSION} numpy.matmul (WebGPU backend)`,
    timer: JAXJS_GPU_TIMER,
  }, shape);
  let operands: [JaxArray, JaxArray] | undefined;
  let poisonedOutput = false;
  // Wall time of the checked product (first compile and one readback included): bounds how
  // long a timed product may go unreported before timing gives up.
  let checkedMs = 0;
  try {
    return await validateThenTime(result, {
      numerics: F32_NUMERICS,
      compute: async (a, b) => {
        const started = performance.now();
        operands = [
          np.array(a as Float32Array<ArrayBuffer>, { shape: [m, k], device: "webgpu" }),
          np.array(b as Float32Array<ArrayBuffer>, { shape: [k, n], device: "webgpu" }),
        ];
        const poison = np.array(new Float32Array(m * n).fill(NaN), {
          shape: [m, n],
          device: "webgpu",
        });
        // gpuBuffer() uploads the NaNs, then frees the array: its buffer goes back to the pool.
        const poisoned = await jax.orLost(poison.gpuBuffer());
        const c = np.matmul(operands[0].ref, operands[1].ref);
        poisonedOutput = await jax.orLost(c.ref.gpuBuffer()) === poisoned;
        const out = await jax.orLost(c.data());
        checkedMs = performance.now() - started;
        return Float32Array.from(out as Float32Array);
      },
      time: async () => {
        const [a, b] = operands!;
        const { timing, kernelInputs } = await timeProducts(
          jax,
          () => np.matmul(a.ref, b.ref).gpuBuffer(),
          shape,
          software,
          { ...opts, stallMs: 30_000 + 10 * checkedMs },
        );
        result.details = { ...details, poisonedOutput, kernelInputs };
        return timing;
      },
      errorKind: (e) => e instanceof GemmError ? undefined : "jaxjs",
    });
  } finally {
    for (const x of operands ?? []) x.dispose();
  }
}

/** One dispatch as jax-js's profiler reports it. */
interface Dispatch {
  /** GPU time from the start of its first pass to the end of its last. */
  ms: number;
  label: string;
  /** What jax-js says of it: "size" (outputs), "reduction" ("Add:K"), "nargs" (input buffers). */
  properties: Map<string, string>;
}

/** The `detail` jax-js gives each profiler measure. */
interface TraceDetail {
  devtools?: { trackGroup?: string; track?: string; properties?: [string, string][] };
}

/** Take (and clear) the WebGPU dispatches jax-js's profiler reported since the last call. */
function takeReported(): Dispatch[] {
  const mine = performance.getEntriesByType("measure").filter((e) => {
    const tools = ((e as PerformanceMeasure).detail as TraceDetail | null)?.devtools;
    return tools?.trackGroup === "JAX Profiler" && tools.track === "webgpu";
  }) as PerformanceMeasure[];
  for (const name of new Set(mine.map((e) => e.name))) performance.clearMeasures(name);
  return mine.map((e) => ({
    ms: e.duration,
    label: e.name,
    properties: new Map((e.detail as TraceDetail).devtools!.properties ?? []),
  }));
}

/** GPU time each batch of products aims at once a product's time is known. */
const BATCH_MS = 40;
/** Most products per batch: jax-js makes a query set and a readback per traced dispatch. */
const MAX_BATCH = 256;
/** Least GPU time spent warming up on a hardware adapter. */
const WARM_MS = 300;
/** Warm-up batches before the timer settles for what it has. */
const MAX_WARM_BATCHES = 24;

/**
 * Issue products (`issue` submits one and does not wait for it) under jax-js's profiler and
 * take each one's GPU time from its dispatch's timestamps: warm-up batches until the GPU has run
 * `WARM_MS` of them and two batches agree within 3% (one batch on a software adapter), then the
 * timed samples; one batch is always queued behind the one being read back.
 */
async function timeProducts(
  jax: JaxDevice,
  issue: () => Promise<unknown>,
  { m, k, n }: Shape,
  software: boolean,
  opts: { reps?: number; budgetMs?: number; stallMs: number },
): Promise<{ timing: Timing; kernelInputs: number }> {
  const pending: Dispatch[] = [];
  let kernelInputs = NaN;
  /** The next `count` products' GPU times, each checked to be the product kernel. */
  const take = async (count: number): Promise<number[]> => {
    let heard = performance.now();
    while (pending.length < count) {
      const fresh = takeReported();
      jax.check();
      if (fresh.length) {
        pending.push(...fresh);
        heard = performance.now();
      } else if (performance.now() - heard > opts.stallMs) {
        throw new GemmError(
          "timing",
          `jax-js's profiler reported ${pending.length} of ${count} products, then nothing ` +
            `for ${Math.round(opts.stallMs)} ms`,
        );
      } else {
        await new Promise((r) => setTimeout(r, 1));
      }
    }
    return pending.splice(0, count).map((d) => {
      const p = d.properties;
      if (p.get("size") !== String(m * n) || p.get("reduction") !== `Add:${k}`) {
        throw new GemmError(
          "timing",
          `jax-js ran a dispatch other than the product while timing it: ${d.label} ` +
            `(size ${p.get("size")}, reduction ${p.get("reduction")}; expected ${m * n}, Add:${k})`,
        );
      }
      if (!(Number.isFinite(d.ms) && d.ms > 0)) {
        throw new GemmError("timing", `jax-js's profiler gave no GPU time (${d.ms} ms)`);
      }
      kernelInputs = Number(p.get("nargs"));
      return d.ms;
    });
  };
  const issueBatch = async (count: number): Promise<number> => {
    for (let i = 0; i < count; i++) await jax.orLost(issue());
    return Math.max(0, count);
  };
  const batchFor = (productMs: number | undefined) =>
    productMs === undefined
      ? 1
      : Math.max(1, Math.min(MAX_BATCH, Math.round(BATCH_MS / Math.max(productMs, 1e-3))));

  takeReported(); // what an earlier run left unread
  profiler.startTrace();
  try {
    let inFlight = await issueBatch(3);
    let productMs: number | undefined;
    let spent = 0;
    let reps: number | undefined; // set once warm: every product issued after that is a sample
    const samples: number[] = [];
    for (let round = 1; inFlight > 0; round++) {
      // Issue the next batch before reading this one, sized by the last estimate.
      const wanted = reps === undefined ? Infinity : reps - samples.length - inFlight;
      const queued = await issueBatch(Math.min(wanted, batchFor(productMs)));
      const times = await take(inFlight);
      inFlight = queued;
      if (reps !== undefined) {
        samples.push(...times.slice(0, reps - samples.length));
        continue;
      }
      const estimate = median(times);
      const settled = productMs !== undefined && Math.abs(estimate - productMs) <= 0.03 * estimate;
      spent += times.reduce((x, y) => x + y, 0);
      productMs = estimate;
      if (software || (spent >= WARM_MS && settled) || round >= MAX_WARM_BATCHES) {
        reps = opts.reps ??
          Math.max(5, Math.min(200, Math.round((opts.budgetMs ?? 400) / Math.max(estimate, 1e-3))));
      }
    }
    return { timing: summarize(samples, "timestamp-query"), kernelInputs };
  } catch (e) {
    // Products still in flight: let their reports arrive and drop them, so that none is taken
    // for a later run's.
    profiler.stopTrace();
    await jax.device.queue.onSubmittedWorkDone().catch(() => {});
    await new Promise((r) => setTimeout(r, 10));
    takeReported();
    throw e;
  } finally {
    profiler.stopTrace();
  }
}
