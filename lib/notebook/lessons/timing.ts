/**
 * Why timing happens on the GPU: Deno's submit-and-wait floor against GPU timestamps, for the
 * same small dispatch.
 */
import type { Gpu } from "../../gpu.ts";
import { type Shape, shapeLabel } from "../../matrix.ts";
import { BoundProblem, prepareKernel } from "../../runner.ts";
import { median, timePasses } from "../../timing.ts";
import { fmt, showNote, showTable } from "../format.ts";
import { kernel } from "../steps.ts";

/** Wall-clock and GPU-timestamp measurements of the same small dispatch. */
export interface SyncFloor {
  shape: Shape;
  /** Wall clock of submit + onSubmittedWorkDone with an empty command buffer. */
  emptyWallMs: number[];
  /** Wall clock of submit + onSubmittedWorkDone around one dispatch. */
  oneWallMs: number[];
  /** Wall clock of one submit holding `batch` dispatches, divided by `batch`. */
  batchedWallMs: number;
  batch: number;
  /** The dispatch's own duration from timestamp queries (median). */
  timestampMs: number;
}

/**
 * Time one small matmul three ways: wall clock around a single submit (what a naive benchmark
 * does), wall clock over a batch, and GPU timestamps. The single-submit wall clock is mostly
 * Deno's queue synchronisation, which an empty submit shows on its own.
 */
export async function measureSyncFloor(
  gpu: Gpu,
  step: string,
  n = 64,
  reps = 12,
  batch = 64,
): Promise<SyncFloor> {
  const shape = { m: n, k: n, n };
  const spec = kernel(step);
  const problem = await BoundProblem.random(gpu, await prepareKernel(gpu, spec), shape);
  const { device } = gpu;
  const submit = async (dispatches: number) => {
    const enc = device.createCommandEncoder();
    if (dispatches > 0) {
      const pass = enc.beginComputePass();
      for (let i = 0; i < dispatches; i++) problem.encode(pass);
      pass.end();
    }
    const t0 = performance.now();
    device.queue.submit([enc.finish()]);
    await device.queue.onSubmittedWorkDone();
    return performance.now() - t0;
  };
  try {
    await submit(1); // warm-up: first use compiles and allocates
    const emptyWallMs: number[] = [];
    const oneWallMs: number[] = [];
    for (let i = 0; i < reps; i++) emptyWallMs.push(await submit(0));
    for (let i = 0; i < reps; i++) oneWallMs.push(await submit(1));
    const batchedWallMs = (await submit(batch)) / batch;
    const t = await timePasses(gpu, (pass) => problem.encode(pass), { reps: 32 });
    return { shape, emptyWallMs, oneWallMs, batchedWallMs, batch, timestampMs: t.medianMs };
  } finally {
    problem.destroy();
  }
}

/** Show the three timings of measureSyncFloor side by side. */
export async function showSyncFloor(f: SyncFloor): Promise<void> {
  await showTable(["what was timed", "how", "ms (median)"], [
    ["empty submit, then wait", "wall clock", median(f.emptyWallMs)],
    [`one ${shapeLabel(f.shape)} matmul, then wait`, "wall clock", median(f.oneWallMs)],
    [`${f.batch} matmuls in one submit, then wait`, `wall clock / ${f.batch}`, f.batchedWallMs],
    [`one ${shapeLabel(f.shape)} matmul`, "GPU timestamps", f.timestampMs],
  ], "Timing the same small kernel three ways");
  const floor = median(f.emptyWallMs);
  await showNote(
    `An empty submit-and-wait already costs **${fmt(floor)} ms** here, and a single ` +
      `${shapeLabel(f.shape)} matmul timed that way reads **${fmt(median(f.oneWallMs))} ms**, ` +
      `while the GPU timestamps put the kernel itself at **${fmt(f.timestampMs)} ms**. ` +
      `Timed one submit at a time, the kernel would look ` +
      `${fmt(median(f.oneWallMs) / f.timestampMs)}x slower than it is.`,
  );
}
