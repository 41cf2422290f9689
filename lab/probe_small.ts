/**
 * Probe (lab: not part of the product) for two questions the eighth stop's held-out draw left
 * (lab/NOTES.md, "Narrow widths and the direct kernel, calibrated and drawn again"). Every kernel
 * is validated against the float64 reference (runKernel) before it is timed. No shape here is one
 * of a held-out draw.
 *
 * 1. Timing at the smallest products. lib/timing.ts encoded many timestamped passes in one
 *    submit, each writing C after the one before (until 2d044a5, which this probe's answer led to);
 *    jax-js submits each product alone. At products of a few thousand FLOP our direct kernel took
 *    5.2 to 6.9 us and jax-js 4.1 to 4.9. Each product here is timed by the bench's timer, all
 *    passes in one submit, and one submit per pass (timestamps into one query set, read back
 *    once); an empty pass too.
 * 2. The matrix-vector kernel at 15 rows per workgroup measured 2.1 to 2.9 times the model's time
 *    at 60x4096x4096, where 14 and 16 rows came within 17% of it. It is timed here at 15 rows and
 *    at 16 (the last row of each block masked), with vec4 and with scalar loads.
 *
 * 3. (ninth stop) Which row counts misbehave: the matrix-vector kernel at every ROWS of 1 to 16
 *    (one block of exactly ROWS rows, nothing masked), with vec4 and with scalar loads.
 * 4. (ninth stop) Whether one submit per pass changes anything past the smallest products: step
 *    12's plan at 256, 1024 and 4096, both ways.
 *
 *   deno run -A lab/probe_small.ts --out DIR [--quick] [--questions timing,gemv,rows,large]
 *
 * Writes DIR/small.json (every row) and prints a table. --quick: small sizes and few passes, for
 * a dry run on a software adapter. On the GPU host pass GEMM_COMMIT, as for the bench.
 */
import { acquireGpu } from "../lib/gpu.ts";
import { type Shape, shapeLabel } from "../lib/matrix.ts";
import { currentCommit } from "../lib/record.ts";
import { findKernel, type Params } from "../lib/registry.ts";
import { BoundProblem, prepareKernel, runKernel } from "../lib/runner.ts";
import { median, submitTimestamped, timePasses } from "../lib/timing.ts";
import { PLAN_DIRECT, PLAN_GEMV } from "../kernels/13_shapes/launch.ts";
import { fallbackPlan } from "../kernels/13_shapes/plans.ts";
import { probeRecord } from "./probe_record.ts";

const args = Deno.args;
const outDir = args.includes("--out") ? args[args.indexOf("--out") + 1] : "/tmp/probe-small";
const quick = args.includes("--quick");
const questions = new Set(
  (args.includes("--questions") ? args[args.indexOf("--questions") + 1] : "timing,gemv,rows,large")
    .split(","),
);
await Deno.mkdir(outDir, { recursive: true });

const gpu = await acquireGpu();
const spec = findKernel("shapes")!;
const commit = await currentCommit();
console.error(`device: ${gpu.summary.description}, commit ${commit}`);

interface Row {
  question: "timing" | "gemv rows" | "gemv rows sweep" | "timing large";
  shape: string;
  plan: string;
  validated: boolean;
  relErr: number;
  /**
   * The bench's timer at the commit that ran the probe: many passes per submit before 2d044a5,
   * one submit per timed pass since.
   */
  benchMs?: number;
  /** All passes in one submit (questions 1 and 4; recorded since 2d044a5). */
  sharedSubmitMs?: number;
  /** One submit per pass (questions 1 and 4). */
  eachSubmitMs?: number;
  error?: string;
}
const { rows, save } = probeRecord<Row>(`${outDir}/small.json`, {
  commit,
  device: gpu.summary,
  date: new Date().toISOString(),
});

/** Passes in each round of the one-submit-per-pass timing, and rounds (the first warms). */
const PASSES = quick ? 8 : 200;
const ROUNDS = quick ? 2 : 6;

/**
 * GPU time of `encode`'s pass, each pass in a submit of its own (`apart`) or all in one: the median
 * over the rounds after the first.
 */
async function submitMs(
  encode: (pass: GPUComputePassEncoder) => void,
  apart: boolean,
): Promise<number> {
  const samples: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const times = await submitTimestamped(gpu, encode, PASSES, apart);
    if (round > 0) samples.push(...times);
  }
  return median(samples);
}

/** Validate `params` at `shape`, then time its pass by the bench's timer and, if asked, per submit. */
async function probe(question: Row["question"], shape: Shape, params: Params, perSubmit: boolean) {
  const plan = JSON.stringify(params);
  const checked = await runKernel(gpu, spec, shape, { params, reps: quick ? 5 : undefined });
  const row: Row = {
    question,
    shape: shapeLabel(shape),
    plan,
    validated: checked.validated,
    relErr: checked.relErr,
    benchMs: checked.validated ? checked.medianMs : undefined,
    error: checked.error,
  };
  if (checked.validated && perSubmit) {
    const problem = await BoundProblem.random(gpu, await prepareKernel(gpu, spec, params), shape);
    try {
      row.sharedSubmitMs = await submitMs((p) => problem.encode(p), false);
      row.eachSubmitMs = await submitMs((p) => problem.encode(p), true);
    } finally {
      problem.destroy();
    }
  }
  rows.push(row);
  save();
  const us = (ms?: number) => ms === undefined ? "-" : (1e3 * ms).toFixed(2);
  console.log(
    `${question.padEnd(9)} ${row.shape.padEnd(14)} ${plan.padEnd(60)} ` +
      `${row.validated ? "ok" : "FAILED"} bench ${us(row.benchMs)} us, ` +
      `one submit ${us(row.sharedSubmitMs)} us, one submit a pass ${us(row.eachSubmitMs)} us`,
  );
}

// 1. The floor: an empty pass by both timers, then the direct kernel at products of 128 to
// 600 000 FLOP and a short-K plan beside it at the largest.
if (questions.has("timing")) {
  const empty = () => {};
  const bench = await timePasses(gpu, empty, { reps: quick ? 5 : 200 });
  const shared = await submitMs(empty, false);
  const each = await submitMs(empty, true);
  rows.push({
    question: "timing",
    shape: "empty pass",
    plan: "",
    validated: true,
    relErr: 0,
    benchMs: bench.medianMs,
    sharedSubmitMs: shared,
    eachSubmitMs: each,
  });
  console.log(
    `timing    empty pass: bench ${(1e3 * bench.medianMs).toFixed(2)} us, one submit ` +
      `${(1e3 * shared).toFixed(2)} us, one submit a pass ${(1e3 * each).toFixed(2)} us`,
  );
  const direct = (BN: number): Params => ({ PLAN: PLAN_DIRECT, SLICES: 1, BM: 64 / BN, BN });
  for (
    const [shape, params] of [
      [{ m: 4, k: 4, n: 4 }, direct(8)],
      [{ m: 700, k: 1, n: 9 }, direct(8)],
      [{ m: 40, k: 3, n: 1100 }, direct(8)],
      [{ m: 3000, k: 5, n: 1 }, direct(1)],
      [{ m: 1500, k: 8, n: 20 }, direct(8)],
    ] as [Shape, Params][]
  ) {
    await probe("timing", shape, params, true);
  }
}

// 2. The matrix-vector kernel at 15 rows per workgroup against 16 (the last row masked): one
// block of 15 rows, and four (M = 60), with vec4 loads (K and N multiples of 4) and scalar ones.
const gemv = (BM: number, SLICES: number, LOADS: 1 | 4): Params => ({
  PLAN: PLAN_GEMV,
  SLICES,
  BM,
  BN: 256,
  BK: 16,
  LOADS,
});
const big = quick ? 1 : 8;
if (questions.has("gemv")) {
  for (
    const [shape, slices, loads] of [
      [{ m: 15, k: 1024 * big, n: 512 * big }, 32, 4],
      [{ m: 15, k: 1024 * big + 3, n: 512 * big + 1 }, 32, 1],
      [{ m: 60, k: 512 * big, n: 512 * big }, 8, 4],
    ] as [Shape, number, 1 | 4][]
  ) {
    for (const rowsPerBlock of [15, 16]) {
      await probe("gemv rows", shape, gemv(rowsPerBlock, quick ? 2 : slices, loads), false);
    }
  }
}

// 3. Every row count, one block of exactly that many rows, 32 slices, both loads.
if (questions.has("rows")) {
  for (let rowsPerBlock = 1; rowsPerBlock <= 16; rowsPerBlock++) {
    for (const loads of [4, 1] as const) {
      const odd = loads === 1 ? 3 : 0;
      const shape = { m: rowsPerBlock, k: 1024 * big + odd, n: 512 * big + odd };
      await probe("gemv rows sweep", shape, gemv(rowsPerBlock, quick ? 2 : 32, loads), false);
    }
  }
}

// 4. Step 12's plan (the fallback 13 keeps) at three squares, by both timers.
if (questions.has("large")) {
  for (const n of quick ? [16, 32] : [256, 1024, 4096]) {
    const shape = { m: n, k: n, n };
    await probe("timing large", shape, fallbackPlan(shape, gpu.summary), true);
  }
}
save();
console.error(`wrote ${outDir}/small.json`);
