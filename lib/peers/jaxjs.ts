/**
 * jax-js's WebAssembly (CPU) backend as a peer: the fastest JavaScript CPU matmul our readers
 * could reach for instead (npm @jax-js/jax; it generates WebAssembly SIMD kernels and runs them
 * on one Worker per core when SharedArrayBuffer is there, as in Deno).
 *
 * Timing: the wall clock around `matmul` and `blockUntilReady()` of its result, on operands
 * already on the device (the CPU backend's memory), as for our CPU matmuls. The result's data is
 * read back only for the check.
 */
import { defaultDevice, init, numpy as np } from "@jax-js/jax";
import { timeCpu } from "../cpu.ts";
import { GemmError } from "../errors.ts";
import type { Shape } from "../matrix.ts";
import { peerRow, timerNumbers, validateThenTime } from "../measure.ts";
import type { PeerResult } from "../record.ts";
import { F32_NUMERICS } from "../accuracy.ts";

/** The version this peer was built against (pinned in deno.json). */
export const JAXJS_VERSION = "0.1.25";

type JaxArray = ReturnType<typeof np.array>;

let ready: Promise<void> | undefined;

/** Start jax-js's backends once and make its WebAssembly backend the default. */
function start(): Promise<void> {
  ready ??= init().then((devices) => {
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
