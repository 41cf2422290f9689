/**
 * The knob of every step: its points are valid parameter sets that fit an ordinary adapter and
 * include the step's defaults; a sweep runs and validates on this adapter; the bench's --knobs
 * writes the sweeps into the run record, and they read back as they were.
 */
import assert from "node:assert/strict";
import { runBench } from "../lib/bench.ts";
import { parseBenchArgs } from "../lib/bench_args.ts";
import { sweepSize } from "../lib/sizes.ts";
import { acquireGpu } from "../lib/gpu.ts";
import { defaultPoint, knobPoints, knobShape, sweepKnob } from "../lib/search.ts";
import {
  type KnobSweep,
  loadRecord,
  recordFromJson,
  recordToJson,
  type RunRecord,
  writeRecord,
} from "../lib/record.ts";
import { findKernel, KERNELS } from "../lib/registry.ts";
import { recordedKnob, showKnob } from "../lib/notebook/knobs.ts";
import { setRecordsDir } from "../lib/notebook/recorded.ts";
import { session } from "../lib/notebook/session.ts";

const gpuTest = { sanitizeResources: false, sanitizeOps: false };
const LADDER = KERNELS.filter((k) => !k.demo);

/** What WebGPU adapters commonly allow (lavapipe's limits too): every point must fit. */
const COMMON_WORKGROUP_BYTES = 32768;
const COMMON_INVOCATIONS = 1024;

Deno.test("every step 02-14 has a knob: valid points that fit, the default among them", () => {
  assert.deepEqual(LADDER.map((k) => k.number), [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
  for (const spec of LADDER) {
    const knob = spec.knob;
    assert.ok(knob, `${spec.id} has no knob`);
    assert.ok(knob.why.length > 40, `${spec.id}: the knob says too little about why`);
    const points = knobPoints(spec);
    assert.ok(points.length >= 2, `${spec.id}: a knob needs two points or more`);
    assert.equal(new Set(points.map((p) => p.label)).size, points.length, `${spec.id}: labels`);
    for (const point of knob.points) {
      for (const key of Object.keys(point)) {
        assert.ok(key in spec.params, `${spec.id}: ${key} is not one of the step's parameters`);
      }
    }
    for (const { label, params } of points) {
      const where = `${spec.id} ${label}`;
      assert.equal(spec.invalid?.(params), undefined, `${where}: ${spec.invalid?.(params)}`);
      assert.ok(spec.workgroupStorageBytes(params) <= COMMON_WORKGROUP_BYTES, `${where}: bytes`);
      const [x, y, z] = spec.workgroupSize(params);
      assert.ok(x * y * z <= COMMON_INVOCATIONS, `${where}: ${x * y * z} invocations`);
    }
    assert.ok(defaultPoint(spec), `${spec.id}: no point runs the step's defaults`);
  }
});

Deno.test("the knob's shape: square, or the step's own (13 sweeps its plans at 16 rows)", () => {
  assert.deepEqual(knobShape(findKernel("tiled")!, 256), { m: 256, k: 256, n: 256 });
  assert.deepEqual(knobShape(findKernel("shapes")!, 4096), { m: 16, k: 4096, n: 4096 });
  assert.equal(sweepSize([{ m: 64, k: 64, n: 64 }, { m: 256, k: 256, n: 256 }]), 256);
  assert.equal(sweepSize([{ m: 8192, k: 8192, n: 8192 }, { m: 4096, k: 4096, n: 4096 }]), 4096);
});

Deno.test(
  "a sweep of one step runs on this adapter and every point validates",
  gpuTest,
  async () => {
    const gpu = await acquireGpu();
    const spec = findKernel("tiled")!;
    const seen: string[] = [];
    const sweep = await sweepKnob(gpu, spec, 24, {
      reps: 3,
      onResult: (p) => void seen.push(p.label),
    });
    assert.equal(sweep.kernel, "04_tiled");
    assert.equal(sweep.knob, "TILE");
    assert.deepEqual(seen, ["TILE=8", "TILE=16", "TILE=32"]);
    for (const { label, result } of sweep.points) {
      assert.ok(result.validated && result.errRatios!.norm <= 1, `${label}: ${result.error}`);
      assert.ok(result.gflops! > 0 && result.reps === 3, label);
      assert.equal(result.params.TILE, Number(label.slice(5)));
    }
  },
);

/** What `run` printed with console.log (the text lines; a notebook's displays print so here). */
async function printedBy(
  run: () => Promise<unknown>,
): Promise<{ lines: string[]; returned: unknown }> {
  const lines: string[] = [];
  const log = console.log;
  console.log = (line: unknown) => typeof line === "string" && lines.push(line);
  try {
    return { lines, returned: await run() };
  } finally {
    console.log = log;
  }
}

Deno.test("showKnob: a table on the console, nothing returned", gpuTest, async () => {
  const s = await session();
  const { lines, returned } = await printedBy(() =>
    showKnob(s, "naive", { size: 16, budgetMs: 20 })
  );
  assert.equal(returned, undefined);
  const table = lines.find((p) => p.startsWith("02_naive's WG at 16"));
  assert.ok(table, lines.join("\n"));
  assert.match(table, /WG=16 \(default\)\s+true/);
  for (const wg of [4, 8, 32]) assert.match(table, new RegExp(`WG=${wg}\\s+true`));
});

Deno.test(
  "showKnob runs the points its cell passes; a parameter the step lacks throws",
  gpuTest,
  async () => {
    const s = await session();
    const { lines } = await printedBy(() =>
      showKnob(s, "tiled", { points: [{ TILE: 4 }, { TILE: 16 }], size: 16, budgetMs: 20 })
    );
    const table = lines.find((p) => p.startsWith("04_tiled's TILE at 16"));
    assert.ok(table, lines.join("\n"));
    assert.match(table, /TILE=4\s+true/);
    assert.match(table, /TILE=16 \(default\)\s+true/);
    assert.doesNotMatch(table, /TILE=8|TILE=32/, "only the points the cell passed");
    await assert.rejects(
      () => showKnob(s, "tiled", { points: [{ TILES: 8 }], size: 16 }),
      /04_tiled has no parameter TILES \(its parameters: TILE/,
    );
  },
);

Deno.test(
  "showKnob: a renamed knob heads its table with its name, and a point past the adapter's limits " +
    "reads 'not run', not a validation failure",
  gpuTest,
  async () => {
    const s = await session();
    const { lines } = await printedBy(() =>
      showKnob(s, "tiled", {
        name: "tile width",
        why: "The second point asks for more invocations per workgroup than any adapter allows.",
        points: [{ TILE: 16 }, { TILE: 64 }],
        size: 16,
        budgetMs: 20,
      })
    );
    const table = lines.find((p) => p.startsWith("04_tiled's tile width at 16"));
    assert.ok(table, lines.join("\n"));
    assert.match(table, /TILE=16 \(default\)\s+true/);
    assert.match(table, /TILE=64\s+not run\s+-\s.*at most 1024/);
    assert.ok(lines.some((p) => p.includes("**The knob: tile width.** The second point asks")));
    assert.ok(
      !lines.some((p) => p.includes("No recorded GPU sweep")),
      "a renamed knob has no recorded sweep to miss",
    );
  },
);

Deno.test("bench --knobs records each step's sweep; the record reads back", gpuTest, async () => {
  const gpu = await acquireGpu();
  const dir = await Deno.makeTempDir();
  const args = parseBenchArgs([
    "--kernels",
    "naive,tiled_no_raw_barrier,tiled_steps",
    "--sizes",
    "16",
    "--reps",
    "3",
    "--knobs",
    "--no-peers",
    "--no-ceilings",
    "--no-cpu",
    "--out",
    `${dir}/run.json`,
  ]);
  const lines: string[] = [];
  const { record, path } = await runBench(args, { gpu, log: (l) => lines.push(l) });
  // A demo variant is swept only where it has a knob of its own: one broken on purpose has none.
  assert.deepEqual(record.knobs?.map((k) => k.kernel), ["02_naive", "04_tiled_steps"]);
  const points = record.knobs![0].points;
  assert.deepEqual(points.map((p) => p.label), ["WG=4", "WG=8", "WG=16", "WG=32"]);
  assert.ok(points.every((p) => p.result.validated && p.result.gflops! > 0), lines.join("\n"));
  const saved = await loadRecord(path);
  assert.deepEqual(saved.knobs, record.knobs);
});

/** A record with one failed knob point (relErr NaN), to read and write. */
function sampleRecord(): RunRecord {
  return {
    schema: 1,
    date: "2026-01-01T00:00:00.000Z",
    commit: "abc",
    deno: "2",
    device: {} as RunRecord["device"],
    results: [],
    peers: [],
    notes: [],
    knobs: [{
      kernel: "04_tiled",
      knob: "TILE",
      points: [{
        label: "TILE=8",
        result: {
          kernel: "04_tiled",
          title: "t",
          params: { TILE: 8 },
          m: 8,
          n: 8,
          k: 8,
          relErr: NaN,
          validated: false,
          error: "wrong",
          modelBytes: 1,
          intensity: 1,
          seed: 1,
        },
      }],
    }],
  };
}

Deno.test("the knobs section round-trips through JSON (NaN kept); old records have none", () => {
  const record = sampleRecord();
  const back = recordFromJson(recordToJson(record));
  assert.deepEqual(back, record);
  assert.ok(Number.isNaN(back.knobs![0].points[0].result.relErr));
  const old = recordFromJson(recordToJson({ ...record, knobs: undefined }));
  assert.equal(old.knobs, undefined);
});

Deno.test("the recorded view: the newest GPU record with the step's sweep", async () => {
  const dir = await Deno.makeTempDir();
  const gpuRun = (date: string, knobs?: KnobSweep[]): RunRecord => ({
    ...sampleRecord(),
    date,
    device: { description: "GPU host", software: false } as RunRecord["device"],
    complete: true,
    knobs,
  });
  const timed = sampleRecord().knobs![0];
  timed.points[0].result = { ...timed.points[0].result, validated: true, relErr: 1e-7, gflops: 9 };
  await writeRecord(gpuRun("2026-01-01T00:00:00.000Z", [timed]), `${dir}/a.json`);
  await writeRecord(gpuRun("2026-02-01T00:00:00.000Z"), `${dir}/b.json`);
  setRecordsDir(dir);
  try {
    const found = await recordedKnob(findKernel("tiled")!);
    assert.equal(found?.source, "GPU host, 2026-01-01, commit abc");
    assert.deepEqual(found?.sweep, timed);
    assert.equal(await recordedKnob(findKernel("naive")!), undefined);
    // A sweep at another size is not the knob's record at this one.
    const { m, k, n } = timed.points[0].result;
    assert.deepEqual((await recordedKnob(findKernel("tiled")!, { m, k, n }))?.sweep, timed);
    // No sweep at the live shape and none at the bench's 4096: nothing to set beside it.
    assert.equal(await recordedKnob(findKernel("tiled")!, { m: m + 1, k, n }), undefined);
    // An older sweep at 4096 stands in for a live shape no record swept (a small live run); the
    // newer sweep at another size does not.
    const big = structuredClone(timed);
    for (const p of big.points) p.result = { ...p.result, m: 4096, k: 4096, n: 4096 };
    await writeRecord(gpuRun("2025-12-01T00:00:00.000Z", [big]), `${dir}/c.json`);
    const fallback = await recordedKnob(findKernel("tiled")!, { m: 256, k: 256, n: 256 });
    assert.equal(fallback?.source, "GPU host, 2025-12-01, commit abc");
    assert.deepEqual((await recordedKnob(findKernel("tiled")!, { m, k, n }))?.sweep, timed);
  } finally {
    setRecordsDir();
  }
});
