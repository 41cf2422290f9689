/**
 * TF.js's WebGPU backend as a peer, on our own GPUDevice (so it is the same adapter, limits and
 * features as our kernels). The best-known WebGPU matmul most readers could reach for instead.
 *
 * Two traps, both handled here:
 * - TF.js records dispatches into a compute pass it keeps open and submits later. Whoever reads
 *   its buffers directly must first end that pass and submit (`endComputePassEncoder()` before
 *   `submitQueue()`; a command buffer finished with a pass still open is invalid and dropped
 *   without a word): until then the output holds its old contents (zeros, or a previous
 *   product when a pooled buffer is reused). So the check uses fresh inputs and a NaN-poisoned
 *   output buffer, and flushes before reading (tests/bench_test.ts shows both).
 * - Inputs under WEBGPU_CPU_HANDOFF_SIZE_THRESHOLD elements run on the CPU unless
 *   WEBGPU_CPU_FORWARD is off; it is turned off so every size is a GPU number.
 *
 * Timing: tf.time() with timestamp-query on the device. TF.js then puts every program it runs
 * in its own compute pass with timestampWrites, and `kernelMs` is the sum of those passes' GPU
 * durations: GPU time of the whole op (all its programs), not the wall clock. The products are
 * queued as our own passes are (lib/timing.ts timeQueued): one tf.time() per product, in batches
 * of about 40 ms of GPU time, the next batch queued before the last is read back. Awaiting each
 * tf.time() before the next would leave the GPU idle for Deno's ~11 ms readback between products,
 * and a GPU idle that much of the time lowers its clocks: short products would be timed slow.
 */
import * as tf from "@tensorflow/tfjs-core";
import { WebGPUBackend } from "@tensorflow/tfjs-backend-webgpu";
import { type Gpu, orLost } from "../gpu.ts";
import type { Shape } from "../matrix.ts";
import { peerRow, validateThenTime } from "../measure.ts";
import type { PeerResult } from "../record.ts";
import { F32_NUMERICS } from "../accuracy.ts";
import { timeQueued } from "../timing.ts";
import { GemmError } from "../errors.ts";

/** Most products per timing batch: TF.js maps a readback buffer per product it times. */
const MAX_BATCH = 256;

/** The TF.js packages this peer was built against (pinned in deno.json). */
export const TFJS_VERSION = "4.22.0";

/** TF.js's backend internals this file relies on (not in its public types). */
export interface BackendInternals {
  ensureCommandEncoderReady(): void;
  endComputePassEncoder(): void;
  submitQueue(): void;
  supportTimestampQuery: boolean;
}

/** TF.js set up on one of our devices. */
export interface TfjsPeer {
  details: Record<string, string | number | boolean>;
  /** Validate then time C = A * B for one shape. */
  run(shape: Shape, opts?: { reps?: number; budgetMs?: number }): Promise<PeerResult>;
  close(): void;
}

/**
 * Make TF.js's "webgpu" backend one built on `gpu.device`. TF.js registers its kernels under the
 * backend name "webgpu", so ours replaces the stock factory (which would open its own device).
 */
export async function openTfjs(gpu: Gpu): Promise<TfjsPeer> {
  const backend = new WebGPUBackend(gpu.device, gpu.adapter.info);
  try {
    tf.removeBackend("webgpu");
  } catch {
    // Not registered (the import registers it; a second open already replaced it).
  }
  tf.registerBackend("webgpu", () => backend);
  tf.env().set("WEBGPU_CPU_FORWARD", false);
  if (!(await tf.setBackend("webgpu"))) {
    throw new GemmError("peer", "TF.js could not start its WebGPU backend");
  }
  await tf.ready();
  const internals = backend as unknown as BackendInternals;
  const details = {
    version: tf.version_core,
    backend: "webgpu (our GPUDevice)",
    timestampQuery: internals.supportTimestampQuery,
  };
  return {
    details,
    run: (shape, opts) => runTfjs(gpu, internals, details, shape, opts),
    close() {
      tf.removeBackend("webgpu");
    },
  };
}

async function runTfjs(
  gpu: Gpu,
  internals: BackendInternals,
  details: Record<string, string | number | boolean>,
  shape: Shape,
  opts: { reps?: number; budgetMs?: number } = {},
): Promise<PeerResult> {
  const { m, k, n } = shape;
  const result = peerRow({
    peer: "tfjs-webgpu",
    kernel: "tfjs_matmul",
    title: `TF.js WebGPU ${tf.version_core} matMul`,
    timer: "tf.time() kernelMs (timestamp-query around each TF.js program's pass)",
  }, shape);
  const operands: tf.Tensor2D[] = [];
  try {
    return await validateThenTime(result, {
      numerics: F32_NUMERICS,
      compute: async (a, b) => {
        if (!internals.supportTimestampQuery) {
          throw new GemmError(
            "feature",
            "the device has no timestamp-query, so tf.time() cannot time TF.js",
          );
        }
        operands.push(tf.tensor2d(a, [m, k]), tf.tensor2d(b, [k, n]));
        // Poison: a NaN tensor of C's size, run (flushed) and then disposed, puts its buffer
        // back in TF.js's pool, where the product's output (same size and usage) is taken from.
        // Without the flush the buffer stays pending and the product gets a fresh, zeroed one
        // instead. A product whose commands are dropped then reads back NaN and fails, instead
        // of zeros.
        const poison = tf.fill([m, n], NaN);
        flush(internals);
        poison.dispose();
        const tc = tf.matMul(operands[0], operands[1]);
        flush(internals);
        const c = await orLost(gpu, tc.data() as Promise<Float32Array>);
        tc.dispose();
        gpu.check();
        return c;
      },
      time: async () => {
        const [ta, tb] = operands;
        let programs = "";
        const timing = await timeQueued((count) => {
          // tf.time() runs its function at once, so the whole batch is queued before any wait.
          const queued = Array.from({ length: count }, () =>
            tf.time(() => {
              tf.matMul(ta, tb).dispose();
            }));
          return orLost(gpu, Promise.all(queued)).then((times) =>
            times.map((t) => {
              if (!(typeof t.kernelMs === "number" && t.kernelMs > 0)) {
                throw new GemmError(
                  "timing",
                  `tf.time() gave no GPU time (${JSON.stringify(t.kernelMs)})`,
                );
              }
              programs ||= (t as { getExtraProfileInfo?: () => string }).getExtraProfileInfo?.() ??
                "";
              return t.kernelMs;
            })
          );
        }, { ...opts, software: gpu.summary.software, maxBatch: MAX_BATCH });
        gpu.check();
        result.details = { ...details, programs: programs.replace(/: [\d.e-]+/g, "") };
        return timing;
      },
    });
  } finally {
    for (const t of operands) t.dispose();
  }
}

/** End TF.js's open compute pass and submit, so what it recorded actually runs. */
export function flush(internals: BackendInternals) {
  internals.ensureCommandEncoderReady();
  internals.endComputePassEncoder();
  internals.submitQueue();
}
