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

/** One timing of the clock probe, with the SM clock `nvidia-smi` logged while it ran. */
export interface ClockProbeRow {
  kernel: string;
  /** "gapped": each submit read back before the next; "queued": the next submit queued first. */
  mode: string;
  /** "after idle" (3 s of nothing first), "again" (straight after) or "after heavy" (after load). */
  when: string;
  medianMs: number;
  smMhzMedian: number;
  smMhzMax: number;
}

const CLOCK_PROBE = "../../../data/probes/nvidia-h200-2026-11-23-clock/";

/**
 * The committed clock probe (a GPU host's `nvidia-smi` log of the SM clock, every 50 ms, beside
 * the probe's timings of one small kernel read back two ways). Each timing's window runs from the
 * probe's previous event (the end of an idle pause, or the previous timing) to the timing's end.
 */
export async function loadClockProbe(): Promise<{ device: string; rows: ClockProbeRow[] }> {
  const dir = new URL(CLOCK_PROBE, import.meta.url);
  const probe = JSON.parse(await Deno.readTextFile(new URL("clock-probe.json", dir)));
  const log = await Deno.readTextFile(new URL("clock-probe.log", dir));
  const csv = await Deno.readTextFile(new URL("clocks.csv", dir));
  // nvidia-smi's local timestamps ("2026/11/23 23:24:21.296") are the host's UTC clock.
  const samples = csv.trim().split("\n").slice(1).map((line) => {
    const [time, sm] = line.split(", ");
    return { t: Date.parse(time.replace(/\//g, "-").replace(" ", "T") + "Z"), mhz: parseInt(sm) };
  });
  // The probe's log: each line an event's end time, an idle pause's start.
  const events = log.trim().split("\n").map((line) => {
    const t = Date.parse(line.slice(0, 24));
    const idle = line.match(/ idle (\d+) s$/);
    return { t, ready: idle ? t + Number(idle[1]) * 1000 : t, label: line.slice(25).trim() };
  });
  const rows: ClockProbeRow[] = [];
  for (const r of probe.rows as { at: string; label: string; medianMs: number }[]) {
    const end = Date.parse(r.at);
    // The log stamps a timing's own line up to a few ms before its record does, and an idle
    // pause logged at a timing's end follows it.
    const before = events.filter((e) => e.t < end - 5);
    const start = before.length ? before[before.length - 1].ready : end - 1000;
    const mhz = samples.filter((s) => s.t > start && s.t <= end).map((s) => s.mhz);
    const m = r.label.match(/^(\S+) \d+ (gapped|queued) \(([^)]+)\)/);
    if (!m || !mhz.length) continue;
    rows.push({
      kernel: m[1],
      mode: m[2],
      when: m[3],
      medianMs: r.medianMs,
      smMhzMedian: median(mhz),
      smMhzMax: Math.max(...mhz),
    });
  }
  return { device: probe.device.description, rows };
}

/** The clock probe for one kernel, as a table. */
export async function showClockProbe(kernelId: string): Promise<void> {
  const { device, rows } = await loadClockProbe();
  await showTable(
    ["read back", "run", "median ms", "SM clock MHz (median)", "SM clock MHz (max)"],
    rows.filter((r) => r.kernel === kernelId).map((r) => [
      r.mode === "gapped" ? "each submit, then wait" : "next submit queued first",
      r.when,
      r.medianMs,
      r.smMhzMedian,
      r.smMhzMax,
    ]),
    `${device}: ${kernelId} at 1024, GPU-timestamp medians of 200 runs, with the SM clock ` +
      `nvidia-smi logged while each ran (data/probes/nvidia-h200-2026-11-23-clock/)`,
  );
}
