/**
 * The hardware records the notebooks read beside their timings: the driver's register counts
 * (data/driver/) and the CUDA ports' counters (data/counters/). Each record reads through its
 * module, holds only validated measurements, and names what the notebooks ask of it; the counters'
 * writer (lab/cuda/record_counters.ts) reads Nsight Compute's CSV as the records were written.
 */
import assert from "node:assert/strict";
import { loadDriverRecord, localMemoryBytes } from "../lib/driver_registers.ts";
import { loadCounterRecord } from "../lib/memory_counters.ts";
import { KERNELS } from "../lib/registry.ts";

const root = new URL("../", import.meta.url);

Deno.test("the driver capture: every ladder kernel at 4096, registers the hardware allows", async () => {
  const record = await loadDriverRecord("nvidia-h200");
  assert.ok(record, "data/driver/nvidia-h200.json is committed");
  assert.match(record.commit, /^[0-9a-f]{7,40}$/);
  assert.deepEqual(record.shape, { m: 4096, n: 4096, k: 4096 });
  for (const spec of KERNELS.filter((k) => k.name !== "shapes")) {
    assert.ok(record.rows.some((r) => r.label === spec.name), `${spec.name} captured`);
  }
  for (const row of record.rows) {
    assert.equal(row.error, undefined, `${row.label}: ${row.error}`);
    const registers = row.driver?.registers;
    assert.ok(registers && registers >= 1 && registers <= 255, `${row.label}: ${registers}`);
    assert.ok((row.driver?.residentPerSm ?? 0) >= 1, `${row.label}: workgroups per SM`);
    const local = localMemoryBytes(row);
    assert.ok(local !== undefined && local % 4 === 0 && local < 65536, `${row.label}: ${local}`);
  }
  // Local memory as the reading takes it: the three private arrays of the local-array control
  // (8 + 8 + 64 floats), none for the kernel that names its 64 sums as vec4 variables.
  const byLabel = (label: string) => record.rows.find((r) => r.label === label)!;
  assert.equal(localMemoryBytes(byLabel("blocktile_2d_local_array")), 80 * 4);
  assert.equal(localMemoryBytes(byLabel("blocktile_2d")), 0);
});

Deno.test("the CUDA counters: every configuration validated, counters in range", async () => {
  const slugs = [];
  for await (const e of Deno.readDir(new URL("data/counters/", root))) {
    if (e.name.endsWith(".json")) slugs.push(e.name.replace(/\.json$/, ""));
  }
  assert.ok(slugs.includes("nvidia-h200"), "data/counters/nvidia-h200.json is committed");
  for (const slug of slugs) {
    const record = await loadCounterRecord(slug);
    assert.ok(record && record.configs.length > 0, slug);
    for (const c of record.configs) {
      assert.ok(c.validated && c.relErr < 1e-5, `${c.config}: validated (${c.relErr})`);
      assert.ok(c.gflops > 0 && Number.isFinite(c.medianMs), `${c.config}: timed`);
      assert.ok(c.lda >= c.k, `${c.config}: A's stride`);
      assert.ok(Number.isInteger(c.registers), `${c.config}: registers`);
      const k = c.counters;
      assert.ok(k, `${c.config}: profiled`);
      for (const pct of [k.l1HitPct, k.l2HitPct, k.l1BusyPct]) {
        assert.ok(pct >= 0 && pct <= 100, `${c.config}: ${pct}%`);
      }
      // At least 4 bytes of A and of B per row and column of C must come from DRAM.
      assert.ok(k.dramBytesRead >= 4 * (c.m * c.k + c.k * c.n) * 0.99, `${c.config}: DRAM bytes`);
      assert.ok(k.sectorsPerRequest >= 1 && k.sectorsPerRequest <= 32, `${c.config}: sectors`);
    }
  }
});

Deno.test("record_counters.ts reads Nsight Compute's raw CSV, ptxas and the times", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const out = `${dir}/counters.json`;
    const fixture = new URL("tests/fixtures/counters", root).pathname;
    const run = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-read",
        "--allow-write",
        new URL("lab/cuda/record_counters.ts", root).pathname,
        "--out",
        out,
        "--driver",
        "580.159.04",
        "--date",
        "2026-11-27T19:03Z",
        `${fixture}@fda545b`,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(run.code, 0, new TextDecoder().decode(run.stderr));
    const record = JSON.parse(await Deno.readTextFile(out));
    assert.equal(record.device, "NVIDIA H200");
    assert.equal(record.commit, "fda545b");
    const [c] = record.configs;
    assert.equal(c.config, "coalesce_3072_rolled");
    assert.equal(c.kernel, "coalesce");
    assert.equal(c.rolled, true);
    assert.equal(c.registers, 18);
    assert.equal(c.countersCommit, "fda545b");
    // The values Nsight Compute printed for this launch.
    assert.equal(c.counters.l2HitPct, 75.93);
    assert.equal(c.counters.l1HitPct, 90.22);
    assert.equal(c.counters.sectorsPerRequest, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
