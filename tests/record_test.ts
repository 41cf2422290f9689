/**
 * Every committed run record reads through lib/record.ts and has the sections its type promises:
 * the record's types are what the charts, the results table and the notebooks rely on, so an old
 * record that no longer fits them would break those readers, not this module.
 */
import assert from "node:assert/strict";
import {
  coversSteps,
  ladderRecord,
  listRecords,
  type Measured,
  type RunRecord,
  RUNS_DIR,
} from "../lib/record.ts";

const isNumber = (x: unknown) => typeof x === "number";
const isString = (x: unknown) => typeof x === "string";

function assertMeasured(row: Omit<Measured, "seed">, where: string) {
  for (const key of ["m", "n", "k"] as const) assert.ok(isNumber(row[key]), `${where}: ${key}`);
  assert.ok(isNumber(row.relErr), `${where}: relErr`);
  assert.equal(typeof row.validated, "boolean", `${where}: validated`);
  if (row.validated && row.gflops !== undefined) {
    for (const key of ["medianMs", "minMs", "maxMs", "reps"] as const) {
      assert.ok(isNumber(row[key]), `${where}: validated and timed, but no ${key}`);
    }
  }
  // A failed row never carries a speed.
  if (!row.validated) assert.equal(row.gflops, undefined, `${where}: failed row with a speed`);
}

Deno.test("every committed record reads and has the sections its type names", async () => {
  const files = [...Deno.readDirSync(RUNS_DIR)].filter((e) => e.name.endsWith(".json"));
  const records = await listRecords();
  assert.ok(records.length > 0, "no committed records in data/runs");
  assert.equal(records.length, files.length, "a file in data/runs did not read as a record");
  for (const { path, record } of records) {
    assert.ok(isNumber(record.schema), `${path}: schema`);
    assert.ok(!Number.isNaN(Date.parse(record.date)), `${path}: date`);
    assert.ok(isString(record.commit) && isString(record.deno), `${path}: commit, deno`);
    assert.ok(isString(record.device.description), `${path}: device.description`);
    assert.equal(typeof record.device.software, "boolean", `${path}: device.software`);
    assert.ok(Array.isArray(record.notes), `${path}: notes`);
    assert.ok(record.results.length > 0, `${path}: no results`);
    for (const r of record.results) {
      const where = `${path}: ${r.kernel} ${r.m}x${r.k}x${r.n}`;
      assertMeasured(r, where);
      assert.ok(isString(r.title) && typeof r.params === "object", `${where}: title, params`);
      assert.ok(isNumber(r.modelBytes) && isNumber(r.intensity), `${where}: model`);
      assert.ok(isNumber(r.seed), `${where}: seed`);
      if (r.edgeStrips) {
        assert.ok(isNumber(r.edgeStrips.rowsFrom) && isNumber(r.edgeStrips.colsFrom), where);
      }
    }
    for (const p of record.peers) {
      const where = `${path}: peer ${p.peer} ${p.m}x${p.k}x${p.n}`;
      assertMeasured(p, where);
      assert.ok(isString(p.kernel) && isString(p.title) && isString(p.timer), where);
    }
    if (record.ceilings) {
      const c = record.ceilings;
      assert.ok(isNumber(c.bandwidthGBs) && isNumber(c.fp32Gflops), `${path}: ceilings`);
    }
    if (record.cpu) {
      const { machine, impls, sweep, model, notes } = record.cpu;
      assert.ok(isString(machine.model) && isNumber(machine.logicalCores), `${path}: cpu.machine`);
      for (const r of impls) {
        assertMeasured(r, `${path}: cpu ${r.impl} ${r.n}`);
        assert.ok(isString(r.id) && isString(r.timer), `${path}: cpu ${r.impl}`);
      }
      for (const row of sweep) {
        assert.ok(isNumber(row.n) && isNumber(row.block), `${path}: cpu.sweep`);
        assert.equal(typeof row.validated, "boolean", `${path}: cpu.sweep`);
      }
      assert.ok(model.every((row) => isNumber(row.n) && isString(row.series)), `${path}: model`);
      assert.ok(Array.isArray(notes), `${path}: cpu.notes`);
    }
    for (const t of record.tuning ?? []) {
      const where = `${path}: tuning of ${t.kernel}`;
      assert.ok(isString(t.kernel) && isNumber(t.shape.m), where);
      assert.ok(t.trials.length > 0 && t.trials.every((x) => typeof x.params === "object"), where);
      assert.equal(typeof t.best.validated, "boolean", where);
      assert.ok(Object.values(t.space).every(Array.isArray), where);
    }
    for (const v of record.validation ?? []) {
      assert.ok(isString(v.kernel) && v.passed <= v.shapes, `${path}: validation ${v.kernel}`);
      assert.ok(Array.isArray(v.failures), `${path}: validation ${v.kernel}`);
    }
  }
});

Deno.test("the ladder's record: the newest of the GPU runs that validated the most steps", () => {
  const run = (date: string, kernels: string[], software = false) => ({
    record: {
      date,
      complete: true,
      device: { software },
      results: kernels.map((kernel) => ({ kernel, validated: true })),
    } as unknown as RunRecord,
  });
  const older = run("2026-01-01", ["02_naive", "11_autotune"]);
  const ladder = run("2026-01-02", ["02_naive", "11_autotune", "12_generated"]);
  const some = run("2026-01-03", ["12_generated"]);
  const software = run("2026-01-04", ["02_naive", "11_autotune", "12_generated"], true);
  // "shapes" has no GPU run yet: it does not hide the ladder.
  const steps = ["naive", "autotune", "generated", "shapes"];
  assert.equal(ladderRecord([older, ladder, some, software], steps), ladder);
  // A later run of every step at one size does not hide the ladder run at more sizes.
  const atMoreSizes = {
    record: {
      ...ladder.record,
      results: [
        ...ladder.record.results,
        ...ladder.record.results.map((r) => ({ ...r, m: 2048, k: 2048, n: 2048 })),
      ],
    } as RunRecord,
  };
  const oneSize = run("2026-01-05", ["02_naive", "11_autotune", "12_generated"]);
  assert.equal(ladderRecord([atMoreSizes, oneSize], steps), atMoreSizes);
  assert.equal(ladderRecord([older, some], steps), older, "generated alone is not the ladder");
  assert.equal(ladderRecord([software], steps), undefined);
  assert.ok(coversSteps(ladder.record, ["autotune", "12_generated"]));
  assert.ok(!coversSteps(some.record, ["autotune"]));
});
