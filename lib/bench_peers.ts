/**
 * The bench's peers: cuBLAS and the JavaScript libraries on the GPU, measured in the same
 * process as our kernels, and the CPU suite with its peers.
 */
import type { BenchArgs } from "./bench_args.ts";
import { runCpuSuite } from "./cpu_bench.ts";
import { DeviceLostError } from "./errors.ts";
import type { Gpu } from "./gpu.ts";
import { type Shape, shapeLabel } from "./matrix.ts";
import { openCublas } from "./peers/cublas.ts";
import { openTfjs } from "./peers/tfjs.ts";
import { openJaxjsGpu } from "./peers/jaxjs.ts";
import type { PeerResult, RunRecord } from "./record.ts";
import type { Part, Resumed } from "./bench_resume.ts";

/** The device went away (whatever the error said on the way). */
export function isDeviceLost(e: unknown, gpu: Gpu): boolean {
  return e instanceof DeviceLostError || gpu.lostReason !== undefined;
}

/**
 * The CPU ladder and, unless --no-peers, OpenBLAS with one and all threads and jax-js's CPU
 * backend: small sizes next to a software adapter, up to 2048 next to a real GPU (--cpu-sizes).
 */
export async function cpuSuite(
  gpu: Gpu,
  args: BenchArgs,
  record: RunRecord,
  log: (line: string) => void,
) {
  const sizes = args.cpuSizes ?? (gpu.summary.software ? [128, 256] : [256, 512, 1024, 2048]);
  log(`cpu: the CPU ladder${args.peers ? ", OpenBLAS, jax-js" : ""} at ${sizes.join(", ")}`);
  const suite = await runCpuSuite({
    sizes,
    openblas: args.peers,
    jax: args.peers,
    onRow: (row) => {
      const name = "peer" in row
        ? `peer:${row.peer}`
        : "impl" in row
        ? `cpu ${row.impl}`
        : `cpu blocked ${row.block}`;
      const speed = row.validated && row.gflops !== undefined
        ? `${row.gflops.toFixed(2)} GFLOP/s`
        : `FAILED: ${row.error ?? "not validated"}`;
      log(`  ${name} ${row.n}: ${speed}`);
    },
  });
  record.cpu = suite.cpu;
  record.peers.push(...suite.peers);
  record.notes.push(...suite.cpu.notes.map((n) => `cpu: ${n}`));
}

/**
 * cuBLAS (FFI), TF.js (on our GPUDevice) and jax-js (its own device on the same adapter) on
 * every shape, into the record's `part` (its held-out section or the rest); a missing peer
 * becomes a note. A row of a resumed call is kept rather than measured again.
 */
export async function runPeers(
  gpu: Gpu,
  shapes: Shape[],
  args: BenchArgs,
  record: RunRecord,
  log: (line: string) => void,
  recorded: (r: PeerResult) => Promise<void>,
  resumed?: Resumed,
  part: Part = "main",
) {
  const into = part === "main" ? record.peers : record.heldout!.peers;
  const notes = record.notes;
  // Each shape's row: the resumed call's, or a fresh measurement.
  const each = async (peer: string, run: (shape: Shape) => Promise<PeerResult>) => {
    for (const shape of shapes) {
      log(`peer ${peer} ${shapeLabel(shape)}`);
      const r = resumed?.peer(part, peer, shape) ?? await run(shape);
      into.push(r);
      await recorded(r);
    }
  };
  const cublas = openCublas();
  if (typeof cublas === "string") {
    notes.push(cublas);
    log(`peers: ${cublas}`);
  } else {
    notes.push(`cuBLAS: ${cublas.details.mathMode}; cuBLAS ${cublas.details.cublasVersion}`);
    try {
      await each("cublas", (shape) => cublas.run(shape, { reps: args.reps }));
    } finally {
      try {
        cublas.close();
      } catch (e) {
        notes.push(`cuBLAS: ${(e as Error).message}`);
      }
    }
  }

  let tfjs;
  try {
    tfjs = await openTfjs(gpu);
  } catch (e) {
    if (isDeviceLost(e, gpu)) throw e;
    notes.push(`TF.js peer skipped: ${(e as Error).message}`);
    return;
  }
  try {
    await each("tfjs-webgpu", (shape) => tfjs.run(shape, { reps: args.reps }));
  } finally {
    tfjs.close();
  }

  // jax-js keeps its own device (on the same adapter) for the life of the process.
  let jax;
  try {
    jax = await openJaxjsGpu(gpu);
  } catch (e) {
    if (isDeviceLost(e, gpu)) throw e;
    notes.push(`jax-js WebGPU peer skipped: ${(e as Error).message}`);
    return;
  }
  await each("jaxjs-webgpu", (shape) => jax.run(shape, { reps: args.reps }));
}
