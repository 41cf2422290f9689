/**
 * lib/search.ts and tuning that travels (lib/tuning.ts): a point the device cannot run is never
 * compiled; a quick search measures few points, all runnable here; a device with no search of
 * its own borrows the nearest saved device's, by the documented rule, and says which; a search's
 * progress is kept beside its record until the record is saved.
 */
import assert from "node:assert/strict";
import { acquireGpu, type DeviceSummary } from "../lib/gpu.ts";
import { findKernel } from "../lib/registry.ts";
import { measurePoint, QUICK_POINTS, quickPoints, whyNotHere } from "../lib/search.ts";
import {
  loadTuning,
  nearestTuning,
  recordedTuning,
  saveSearchProgress,
  saveTuning,
  tunedParams,
  tuningFor,
  type TuningRecord,
} from "../lib/tuning.ts";

const spec = findKernel("autotune")!;

/** A made-up hardware device of one family (vendor, subgroup size) with these limits. */
function device(family: string, name: string, storage = 49152, subgroup = 32): DeviceSummary {
  return {
    description: `test ${family} ${name}`,
    vendor: `test-${family}`,
    architecture: "",
    device: name,
    isFallbackAdapter: false,
    software: false,
    subgroupMinSize: subgroup,
    subgroupMaxSize: subgroup,
    features: [],
    limits: { maxComputeWorkgroupStorageSize: storage, maxComputeInvocationsPerWorkgroup: 1024 },
  } as DeviceSummary;
}

function search(on: DeviceSummary, BM: number, date: string): TuningRecord {
  const best = { params: { ...spec.params, BM }, validated: true, gflops: 100, score: 100 };
  return {
    schema: 1,
    device: on,
    date,
    commit: "test",
    shape: { m: 64, k: 64, n: 64 },
    kernel: spec.id,
    space: {},
    trials: [best],
    best,
  };
}

Deno.test("tuning travels: the nearest saved device of the same family, same limits first", async () => {
  const family = crypto.randomUUID().slice(0, 8);
  const sameLimits = device(family, "a");
  const otherLimits = device(family, "b", 65536);
  const saved = [
    await saveTuning(search(sameLimits, 64, "2026-01-01T00:00:00Z")),
    await saveTuning(search(otherLimits, 128, "2026-06-01T00:00:00Z")),
  ];
  try {
    const fresh = device(family, "fresh");
    const found = nearestTuning(fresh, spec.name);
    assert.equal(found?.borrowedFrom, sameLimits.description, "same limits beat a newer search");
    assert.equal(tunedParams(fresh, spec.name)?.BM, 64);
    assert.equal(tuningFor(fresh, spec.name)?.borrowedFrom, sameLimits.description);
    // Its own search, once saved, wins and is not "borrowed".
    assert.equal(tuningFor(sameLimits, spec.name)?.borrowedFrom, undefined);
    // Another subgroup size or vendor: nothing to borrow.
    assert.equal(nearestTuning(device(family, "wide", 49152, 64), spec.name), undefined);
    assert.equal(nearestTuning(device(`${family}x`, "c"), spec.name), undefined);
  } finally {
    for (const url of saved) await Deno.remove(new URL(".", url), { recursive: true });
  }
});

Deno.test("a saved search by device: that GPU's own, else the newest of any GPU", async () => {
  const h200 = await recordedTuning("autotune", "nvidia-h200");
  assert.equal(h200?.record.device.description, "NVIDIA H200");
  assert.equal(await recordedTuning("autotune", "no-such-gpu"), undefined);
  const newest = await recordedTuning("autotune");
  assert.ok(newest && newest.record.date >= h200!.record.date);
});

Deno.test("a search's progress is kept apart from its record, and goes once the record is saved", async () => {
  const on = device(crypto.randomUUID().slice(0, 8), "progress");
  const record = search(on, 64, "2026-01-01T00:00:00Z");
  const shapes = [{ m: 64, k: 64, n: 64 }, { m: 32, k: 32, n: 32 }];
  const url = await saveSearchProgress({
    device: on,
    kernel: spec.id,
    date: record.date,
    commit: "test",
    shapes,
    measured: 1,
    confirmed: 0,
    trials: record.trials,
  });
  try {
    assert.match(url.pathname, /\.partial\.json$/);
    const kept = JSON.parse(await Deno.readTextFile(url));
    assert.deepEqual([kept.measured, kept.trials.length, kept.shapes.length], [1, 1, 2]);
    // No run reads progress as a search.
    assert.equal(loadTuning(on, spec.name), undefined);
    const saved = await saveTuning(record);
    assert.equal(loadTuning(on, spec.name)?.best.params.BM, 64);
    await assert.rejects(Deno.stat(url), Deno.errors.NotFound);
    assert.equal(new URL(".", saved).href, new URL(".", url).href);
  } finally {
    await Deno.remove(new URL(".", url), { recursive: true });
  }
});

Deno.test("search: a point the device's limits rule out is refused without compiling", async () => {
  const gpu = await acquireGpu();
  const huge = {
    ...spec,
    generate: () => {
      throw new Error("compiled");
    },
    workgroupStorageBytes: () => gpu.device.limits.maxComputeWorkgroupStorageSize + 4,
  };
  const r = await measurePoint(gpu, huge, { m: 64, k: 64, n: 64 }, {});
  assert.equal(r.validated, false);
  assert.equal(r.errorKind, "limit");
  assert.match(r.error!, /workgroup memory/);
});

Deno.test("quick search: at most QUICK_POINTS points, the defaults first, all runnable here", async () => {
  const gpu = await acquireGpu();
  const { points, seededBy } = quickPoints(gpu, spec);
  assert.ok(points.length > 1 && points.length <= QUICK_POINTS, `${points.length} points`);
  assert.deepEqual(points[0], spec.params);
  for (const p of points) assert.equal(whyNotHere(gpu, spec, p), undefined, JSON.stringify(p));
  assert.equal(new Set(points.map((p) => JSON.stringify(p))).size, points.length, "no repeats");
  assert.match(seededBy, /point/);
});
