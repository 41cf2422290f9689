/**
 * The held-out shapes (lib/heldout.ts): the draw is the same on every run and machine, follows
 * its documented distribution and never yields a suite shape; the bars' figures; and the
 * README's held-out tables from a record written under /tmp. Every draw here uses seed 1, the
 * tests' seed, which the module says is therefore not held out.
 */
import assert from "node:assert/strict";
import {
  BARS,
  barsMet,
  EXCLUDED_SHAPES,
  flopBand,
  heldoutDistribution,
  type HeldoutSection,
  type HeldoutShape,
  heldoutShapes,
  heldoutSummary,
  MAX_BYTES,
  MAX_DIM,
  MAX_FLOP,
  MODEL_SHAPES,
  type ShapeSpeeds,
} from "../lib/heldout.ts";
import { flops, sameShape, type Shape } from "../lib/matrix.ts";
import { type PeerResult, RECORD_SCHEMA, type RunRecord } from "../lib/record.ts";
import { type CublasRetimed, retimedSummaries } from "../lib/cublas_retimed.ts";
import { SHAPE_SUITE, suiteCompanion } from "../lib/suite.ts";
import {
  heldoutRecords,
  heldoutTables,
  laterRuns,
  resultsSection,
} from "../tools/results_table.ts";

const SEED = 1;
const bytes = ({ m, k, n }: Shape) => 4 * (m * k + k * n + m * n);
const modelNames = new Set(MODEL_SHAPES.map((s) => s.name));

Deno.test("held-out draw: the same shapes for a seed, the first five of seed 1 pinned", () => {
  assert.deepEqual(heldoutShapes(5, SEED), [
    { m: 1576, k: 768, n: 3072, from: "ViT-B/16 MLP up, batch 8" },
    { m: 10153, k: 1181, n: 12, from: "log-uniform" },
    { m: 5, k: 808, n: 2, from: "log-uniform" },
    { m: 1, k: 478, n: 8, from: "log-uniform" },
    { m: 718, k: 14, n: 15756, from: "log-uniform" },
  ]);
  assert.deepEqual(heldoutShapes(60, SEED), heldoutShapes(60, SEED));
  assert.notDeepEqual(heldoutShapes(60, SEED), heldoutShapes(60, SEED + 1));
  // A larger N keeps a smaller N's model shapes and random shapes, each part in order.
  const part = (shapes: HeldoutShape[], model: boolean) =>
    shapes.filter((s) => modelNames.has(s.from) === model);
  const [small, large] = [heldoutShapes(40, SEED), heldoutShapes(80, SEED)];
  for (const model of [true, false]) {
    assert.deepEqual(part(large, model).slice(0, part(small, model).length), part(small, model));
  }
});

Deno.test("held-out draw: caps, the dimension range, no repeats, no suite shape", () => {
  for (let seed = SEED; seed < SEED + 5; seed++) {
    const shapes = heldoutShapes(200, seed);
    assert.equal(shapes.length, 200);
    for (const s of shapes) {
      assert.ok(bytes(s) <= MAX_BYTES, `${JSON.stringify(s)} over the memory cap`);
      assert.ok(flops(s) <= MAX_FLOP, `${JSON.stringify(s)} over the FLOP cap`);
      assert.ok(!EXCLUDED_SHAPES.some((t) => sameShape(s, t)), `${JSON.stringify(s)} excluded`);
      if (s.from === "log-uniform") {
        for (const d of [s.m, s.k, s.n]) assert.ok(Number.isInteger(d) && d >= 1 && d <= MAX_DIM);
        assert.ok(!MODEL_SHAPES.some((t) => sameShape(s, t)), "a model shape drawn at random");
      }
    }
    assert.equal(new Set(shapes.map((s) => `${s.m}x${s.k}x${s.n}`)).size, 200, "no repeats");
  }
  for (const s of SHAPE_SUITE) {
    assert.ok(EXCLUDED_SHAPES.some((t) => sameShape(s, t)), "every suite shape is excluded");
  }
  const tight = { maxBytes: 2 ** 16, maxFlop: 2 ** 20 };
  for (const s of heldoutShapes(50, SEED, tight)) {
    assert.ok(bytes(s) <= tight.maxBytes && flops(s) <= tight.maxFlop);
  }
});

Deno.test("held-out draw: log-uniform by octave, and the model shapes' share", () => {
  const octaves = new Array(15).fill(0);
  let dims = 0;
  for (let seed = SEED; seed < SEED + 10; seed++) {
    const shapes = heldoutShapes(120, seed);
    const models = shapes.filter((s) => s.from !== "log-uniform");
    assert.equal(models.length, 30, "a quarter from the model shapes");
    for (const s of models) {
      const model = MODEL_SHAPES.find((t) => t.name === s.from)!;
      assert.ok(sameShape(s, model), `${s.from} has its own dimensions`);
    }
    for (const s of shapes.filter((s) => s.from === "log-uniform")) {
      for (const d of [s.m, s.k, s.n]) {
        octaves[d === 1 ? 0 : Math.ceil(Math.log2(d))]++;
        dims++;
      }
    }
  }
  // Each octave (2^(j-1), 2^j] holds about a fifteenth of the dimensions.
  for (const [j, count] of octaves.entries()) {
    const share = count / dims * 15;
    assert.ok(share > 0.8 && share < 1.2, `octave ${j}: ${share.toFixed(2)} of its share`);
  }
  assert.equal(heldoutShapes(40, SEED).filter((s) => s.from !== "log-uniform").length, 10);
  assert.equal(heldoutShapes(2, SEED).filter((s) => s.from !== "log-uniform").length, 1);
  // More than the pool holds: every model shape once, the rest random.
  const all = heldoutShapes(4 * MODEL_SHAPES.length + 8, SEED);
  assert.equal(all.filter((s) => s.from !== "log-uniform").length, MODEL_SHAPES.length);
});

Deno.test("held-out model shapes: documented, distinct, within the caps, none excluded", () => {
  assert.ok(MODEL_SHAPES.length >= 30);
  assert.equal(modelNames.size, MODEL_SHAPES.length, "names are distinct");
  for (const s of MODEL_SHAPES) {
    assert.ok(s.source.length > 10, `${s.name} says where it comes from`);
    assert.ok(bytes(s) <= MAX_BYTES && flops(s) <= MAX_FLOP, `${s.name} within the caps`);
    assert.ok(!EXCLUDED_SHAPES.some((t) => sameShape(s, t)), `${s.name} is not excluded`);
    assert.equal(MODEL_SHAPES.filter((t) => sameShape(s, t)).length, 1, `${s.name} once`);
  }
  assert.ok(MODEL_SHAPES.some((s) => s.m === 1), "decode shapes");
  const distribution = heldoutDistribution();
  assert.deepEqual(JSON.parse(JSON.stringify(distribution)), distribution, "plain data");
  assert.equal(distribution.models.length, MODEL_SHAPES.length);
  assert.match(distribution.text, new RegExp(`${MAX_BYTES} bytes.*${MAX_FLOP}`));
  const small = heldoutDistribution({ maxFlop: 2 ** 24 });
  assert.ok(small.models.every((s) => flops(s) <= 2 ** 24) && small.models.length > 0);
  assert.ok(small.models.length < MODEL_SHAPES.length);
});

Deno.test("held-out draw: refuses a bad count, a bad seed and caps that leave no shape", () => {
  for (const count of [0, -1, 1.5, NaN]) {
    assert.throws(() => heldoutShapes(count, SEED), RangeError);
  }
  for (const seed of [-1, 0.5, 2 ** 32]) assert.throws(() => heldoutShapes(4, seed), RangeError);
  assert.throws(() => heldoutShapes(1, SEED, { maxFlop: 1 }), /leave no shape/);
  // Only 1 x 1 x 1 fits: the second shape can only repeat it.
  assert.deepEqual(heldoutShapes(1, SEED, { maxFlop: 2, maxBytes: 12 }), [
    { m: 1, k: 1, n: 1, from: "log-uniform" },
  ]);
  assert.throws(() => heldoutShapes(2, SEED, { maxFlop: 2, maxBytes: 12 }), /in a row/);
});

Deno.test("flop band: large from 1e8 FLOP up", () => {
  assert.equal(flopBand({ m: 500, k: 100, n: 1000 }), "large");
  assert.equal(flopBand({ m: 500, k: 100, n: 999 }), "small");
});

Deno.test("held-out summary: the bars' figures on a hand-made set", () => {
  const rows: ShapeSpeeds[] = [
    { shape: { m: 1000, k: 1000, n: 1000 }, ours: 800, cublas: 1000 }, // large, 0.8
    { shape: { m: 2000, k: 1000, n: 1000 }, ours: 500, cublas: 1000 }, // large, 0.5
    { shape: { m: 10, k: 10, n: 10 }, ours: 1, cublas: 2 }, // 2 us against 1 us
    { shape: { m: 100, k: 100, n: 100 }, ours: 100, cublas: 200 }, // 20 us against 10 us
    { shape: { m: 1, k: 1000, n: 1 }, ours: 2, cublas: 1 }, // 1 us against 2 us
  ];
  const s = heldoutSummary(rows);
  assert.equal(s.count, 5);
  assert.equal(s.compared, 5);
  assert.ok(Math.abs(s.geomean! - 0.2 ** 0.2) < 1e-12);
  assert.deepEqual(s.large, {
    count: 2,
    geomean: Math.sqrt(0.8 * 0.5),
    worst: { shape: rows[1].shape, ratio: 0.5 },
  });
  assert.equal(s.small.count, 3);
  assert.ok(Math.abs(s.small.medianGapUs! - 1) < 1e-9, `${s.small.medianGapUs}`);
  assert.deepEqual(s.bars, { shapes: false, geomean: false, worstLarge: false, smallGap: true });
  assert.equal(s.met, false);

  // Forty shapes at cuBLAS's speed meet every bar; an even count of small gaps takes the mean of
  // the middle two.
  const even = (i: number): ShapeSpeeds => ({
    shape: i % 2 ? { m: 1000, k: 1000, n: 1000 + i } : { m: 10, k: 10, n: 10 + i },
    ours: 100,
    cublas: 100,
  });
  const met = heldoutSummary(Array.from({ length: BARS.minShapes }, (_, i) => even(i)));
  assert.deepEqual(met.bars, { shapes: true, geomean: true, worstLarge: true, smallGap: true });
  assert.equal(met.met, true);
  assert.equal(met.small.medianGapUs, 0);
  const gaps = heldoutSummary([
    { shape: { m: 10, k: 10, n: 10 }, ours: 1, cublas: 2 },
    { shape: { m: 10, k: 10, n: 20 }, ours: 1, cublas: 4 },
  ]);
  assert.ok(Math.abs(gaps.small.medianGapUs! - 2) < 1e-9, "(1 + 3) / 2");

  // A shape none of ours validated fails; one without cuBLAS leaves the bars unjudged.
  const all = Array.from({ length: BARS.minShapes }, (_, i) => even(i));
  const failed = heldoutSummary([...all, { shape: { m: 7, k: 7, n: 7 }, cublas: 1 }]);
  assert.deepEqual(failed.oursMissing, [{ m: 7, k: 7, n: 7 }]);
  assert.equal(failed.met, false);
  const unjudged = heldoutSummary([...all, { shape: { m: 7, k: 7, n: 7 }, ours: 1 }]);
  assert.equal(unjudged.met, undefined);
  assert.equal(unjudged.compared, BARS.minShapes);
  const none = heldoutSummary([]);
  assert.equal(none.met, undefined);
  assert.equal(none.geomean, undefined);
  assert.equal(none.bars.worstLarge, undefined);
});

/** A GPU record whose held-out section has `count` shapes of seed 1, at ratios 0.5 up. */
function heldoutRecord(count: number, date: string, description: string): RunRecord {
  const shapes = heldoutShapes(count, SEED);
  const at = (s: Shape, gflops: number) => ({
    ...s,
    relErr: 1e-6,
    validated: true,
    medianMs: flops(s) / gflops / 1e6,
    gflops,
  });
  const ours = (s: Shape, gflops: number) => ({
    ...at(s, gflops),
    kernel: "13_shapes",
    title: "Every shape",
    params: {},
    modelBytes: 1,
    intensity: 1,
    seed: 1,
  });
  const peer = (s: Shape, gflops: number, name: string) => ({
    ...at(s, gflops),
    peer: name,
    kernel: name,
    title: name,
    timer: "test",
  });
  const suiteShape = SHAPE_SUITE[0];
  const heldout: HeldoutSection = {
    distribution: heldoutDistribution(),
    seed: SEED,
    count,
    shapes,
    // The first shape has no validated kernel of ours; the rest run at 0.5, 0.52, ... of cuBLAS.
    results: shapes.slice(1).map((s, i) => ours(s, 1000 * (0.5 + i / 50))),
    peers: shapes.flatMap((s) => [peer(s, 1000, "cublas"), peer(s, 200, "tfjs-webgpu")]),
  };
  return {
    schema: RECORD_SCHEMA,
    date,
    commit: "0123456789abcdef",
    deno: "2.9.6",
    device: {
      description,
      vendor: "nvidia",
      architecture: "hopper",
      device: "",
      isFallbackAdapter: false,
      software: false,
      features: [],
      limits: {},
    },
    results: [ours(suiteShape, 900)],
    peers: [peer(suiteShape, 1000, "cublas")],
    notes: [],
    heldout,
  } as RunRecord;
}

Deno.test("results table: suite and held-out side by side, the shapes lowest ratio first", async () => {
  const dir = await Deno.makeTempDir({ prefix: "heldout_test_" });
  try {
    const record = heldoutRecord(25, "2026-12-01T00:00:00.000Z", "NVIDIA H100 80GB HBM3");
    const path = `${dir}/nvidia-h100.json`;
    await Deno.writeTextFile(path, JSON.stringify(record));
    const plain = resultsSection(record, "data/runs/x.json");
    assert.doesNotMatch(plain, /Held-out/, "nothing extra unless asked");
    const section = resultsSection(record, "data/runs/x.json", [], [{ path, record }]);
    assert.equal(section.slice(0, plain.length), plain, "the run's own tables come first");
    const held = section.slice(plain.length);
    assert.match(held, /^\n\n### Held-out shapes\n\n/);
    // The suite: one of its 12 shapes, at 0.9 of cuBLAS, large: shown, not judged.
    assert.match(
      held,
      new RegExp(
        `\\| NVIDIA H100 80GB HBM3 \\(\`${path}\`\\) \\| suite, 1 of its 12 shapes \\| 1 \\(1 large, 0 small\\) \\| ` +
          "0\\.90 \\| 0\\.90 at 1024 \\| - \\| not judged \\(part of the suite\\) \\|",
      ),
    );
    // Held-out: 24 of ours at 0.50 .. 0.96, one shape without a validated kernel of ours.
    const heldoutRow = held.split("\n").find((l) => l.includes("| held-out, seed 1 |"))!;
    assert.match(
      heldoutRow,
      /^\| {2}\| held-out, seed 1 \| 25 \(\d+ large, \d+ small, 1 where none/,
    );
    const gm = Math.exp(
      Array.from({ length: 24 }, (_, i) => Math.log(0.5 + i / 50)).reduce((a, b) => a + b) / 24,
    );
    assert.ok(heldoutRow.includes(`| ${gm.toFixed(2)} |`), heldoutRow);
    assert.match(heldoutRow, /missed: fewer than 40 shapes; a shape none of ours validated; mean/);
    // The per-shape table: the shape that failed first, then the lowest ratio; 20 of 25 shown.
    assert.match(held, /the 10 lowest and 10 highest of 25/);
    assert.match(held, /\| \.\.\. 5 more \| \| \| \| \| \| \| \|/);
    const body = held.split("\n").filter((l) => /^\| \d/.test(l));
    const first = heldoutShapes(25, SEED);
    assert.ok(body[0].startsWith(`| 1576x768x3072 | ${first[0].from} | `), body[0]);
    assert.match(body[0], /\| - \| 1000 \| 200 \| - \| - \| - \|$/);
    assert.match(body[1], new RegExp(`^\\| ${first[1].m}x${first[1].k}x${first[1].n} \\|`));
    assert.match(body[1], /\| 500 \(13_shapes\) \| 1000 \| 200 \| - \| 0\.50 \| \+[\d.]+ \|$/);
    assert.match(body.at(-1)!, /\| 0\.96 \|/);

    // The README task: held-out tables from the newest complete GPU run of each device.
    const h200 = heldoutRecord(3, "2026-12-02T00:00:00.000Z", "NVIDIA H200");
    const older = heldoutRecord(3, "2026-11-30T00:00:00.000Z", "NVIDIA H100 80GB HBM3");
    const soft = { ...h200, device: { ...h200.device, description: "llvmpipe", software: true } };
    const partial = { ...h200, date: "2026-12-03T00:00:00.000Z", complete: false };
    const none = { ...h200, date: "2026-12-04T00:00:00.000Z", heldout: undefined };
    const picked = heldoutRecords(
      [older, record, h200, soft, partial, none].map((r, i) => ({ path: `${i}`, record: r })),
    );
    assert.deepEqual(picked.map((x) => x.path), ["1", "2"]);

    // Later runs beside the ladder's record: the newest of each device and set of steps, held-out
    // runs (shown with the held-out shapes) and partial runs left out.
    const ladder = { ...h200, heldout: undefined, date: "2026-11-01T00:00:00.000Z" };
    const steps = (date: string, device = h200.device, more: Partial<RunRecord> = {}) => ({
      ...h200,
      heldout: undefined,
      date,
      device,
      ...more,
    });
    const shown = laterRuns(
      [
        steps("2026-11-02T00:00:00.000Z"),
        steps("2026-11-03T00:00:00.000Z"),
        steps("2026-11-04T00:00:00.000Z", older.device),
        steps("2026-11-05T00:00:00.000Z", h200.device, { complete: false }),
        h200,
      ].map((r, i) => ({ path: `l${i}`, record: r })),
      ladder,
    );
    assert.deepEqual(shown.map((x) => x.path), ["l1", "l2"]);
    // The same steps at other shapes are another experiment: both stay.
    const other = steps("2026-11-06T00:00:00.000Z", h200.device, {
      results: h200.results.map((row) => ({ ...row, m: row.m + 1 })),
    });
    const both = laterRuns(
      [steps("2026-11-02T00:00:00.000Z"), other].map((r, i) => ({ path: `s${i}`, record: r })),
      ladder,
    );
    assert.deepEqual(both.map((x) => x.path), ["s0", "s1"]);

    // A held-out run that left the suite to another call takes the suite from the run of its
    // device and commit with the most suite shapes, and names it.
    const suiteRun = {
      ...h200,
      heldout: undefined,
      results: SHAPE_SUITE.slice(0, 3).map((s) => ({ ...h200.results[0], ...s })),
      peers: SHAPE_SUITE.slice(0, 3).map((s) => ({ ...h200.peers[0], ...s })),
    };
    const otherCommit = { ...suiteRun, commit: "fedcba9876543210" };
    const runs = [h200, suiteRun, otherCommit].map((r, i) => ({ path: `r${i}.json`, record: r }));
    assert.equal(suiteCompanion(runs[0], runs)?.path, "r1.json");
    assert.equal(suiteCompanion(runs[1], runs), undefined, "none has more of the suite");
    assert.equal(suiteCompanion({ ...runs[0], record: { ...h200, commit: "x" } }, runs), undefined);
    const side = heldoutTables([{ ...runs[0], suite: runs[1] }]);
    assert.match(side, /the suite from `r1\.json`\) \| suite, 3 of its 12 shapes \| 3 \(/);
    assert.match(side, /\| not judged \(part of the suite\) \|/);

    const readme = `${dir}/README.md`;
    await Deno.writeTextFile(
      readme,
      "# x\n\n<!-- results-table:begin (generated by `deno task results`; edits are " +
        "overwritten) -->\n\n<!-- results-table:end -->\n",
    );
    const run = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-read",
        `--allow-write=${readme}`,
        new URL("../tools/results_table.ts", import.meta.url).pathname,
        "--record",
        path,
        "--readme",
        readme,
      ],
      stderr: "piped",
    }).output();
    assert.ok(run.success, new TextDecoder().decode(run.stderr));
    const written = await Deno.readTextFile(readme);
    assert.ok(written.includes(held.trim()), "the task writes the same held-out tables");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cuBLAS re-timed: the bars read against each timing, our speeds unchanged", () => {
  const record = heldoutRecord(40, "2026-11-01T00:00:00.000Z", "NVIDIA H200");
  const section = record.heldout!;
  // The re-timing finds cuBLAS twice as fast at every held-out shape and the same on the suite.
  const peer = (shape: Shape, gflops: number) =>
    ({
      ...shape,
      peer: "cublas",
      kernel: "cublas",
      title: "cuBLAS",
      timer: "queued",
      relErr: 1e-6,
      validated: true,
      gflops,
      medianMs: flops(shape) / gflops / 1e6,
    }) as PeerResult;
  const probe: CublasRetimed = {
    schema: 1,
    device: "NVIDIA H200",
    date: "2026-11-02T00:00:00.000Z",
    commit: "abc",
    record: "r.json",
    suiteRecord: "r.json",
    rows: [
      {
        set: "suite",
        shape: SHAPE_SUITE[0],
        recorded: { gflops: 1000, validated: true },
        queued: peer(SHAPE_SUITE[0], 1000),
      },
      ...section.shapes.map(({ m, k, n }) => ({
        set: "heldout" as const,
        shape: { m, k, n },
        recorded: { gflops: 1000, validated: true },
        queued: peer({ m, k, n }, 2000),
      })),
    ],
  };
  const [suite, heldout] = retimedSummaries(probe, record, record);
  assert.equal(suite.set, "suite");
  assert.ok(Math.abs(suite.retimed.geomean! - suite.recorded.geomean!) < 1e-12);
  assert.equal(heldout.set, "heldout");
  assert.equal(heldout.retimed.compared, heldout.recorded.compared);
  assert.ok(Math.abs(heldout.retimed.geomean! - heldout.recorded.geomean! / 2) < 1e-12);
  // A record without held-out shapes cannot be re-read: refused, not silently empty.
  assert.throws(() => retimedSummaries(probe, { ...record, heldout: undefined }, record));
});

Deno.test("barsMet: the suite is judged on every bar but the held-out count of shapes", () => {
  // Twelve shapes at 0.9 of cuBLAS: every figure passes, but 12 is under the held-out count.
  const twelve = heldoutShapes(12, SEED).map((shape) => ({ shape, ours: 900, cublas: 1000 }));
  const s = heldoutSummary(twelve);
  assert.equal(s.bars.shapes, false);
  assert.equal(barsMet(s, true), false);
  assert.equal(barsMet(s, false), true);
  // A shape where none of ours validated fails either way; without cuBLAS nothing is judged.
  const missing = heldoutSummary([...twelve, { shape: { m: 3, k: 5, n: 7 }, cublas: 10 }]);
  assert.equal(barsMet(missing, false), false);
  assert.equal(
    barsMet(heldoutSummary([{ shape: { m: 3, k: 5, n: 7 }, ours: 1 }]), false),
    undefined,
  );
});
