/**
 * The hardware records the notebooks read beside their timings: the driver's register counts
 * (data/driver/) and the CUDA ports' counters (data/counters/). Each record reads through its
 * module, holds only validated measurements, and names what the notebooks ask of it; the counters'
 * writers (lab/cuda/record_counters.ts, record_port_counters.ts) read Nsight Compute's CSV as the
 * records were written.
 */
import assert from "node:assert/strict";
import {
  type DriverRow,
  driverStatistic,
  loadDriverRecord,
  localMemoryBytes,
} from "../lib/driver_registers.ts";
import { loadCounterRecord } from "../lib/memory_counters.ts";
import { KERNELS } from "../lib/registry.ts";
import { showPortStalls } from "../lib/notebook/lessons/hardware.ts";

const root = new URL("../", import.meta.url);

Deno.test("the driver capture: every ladder kernel at 4096, registers the hardware allows", async () => {
  const record = await loadDriverRecord("nvidia-h200");
  assert.ok(record, "data/driver/nvidia-h200.json is committed");
  assert.match(record.commit, /^[0-9a-f]{7,40}$/);
  assert.deepEqual(record.shape, { m: 4096, n: 4096, k: 4096 });
  for (
    const spec of KERNELS.filter((k) => k.name !== "shapes")
  ) {
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

Deno.test("the H100's driver capture: every kernel, compiled as on the H200 wherever both have it", async () => {
  const h100 = await loadDriverRecord("nvidia-h100-80gb-hbm3");
  const h200 = await loadDriverRecord("nvidia-h200");
  assert.ok(h100 && h200, "both captures are committed");
  assert.deepEqual(h100.shape, h200.shape);
  for (const spec of KERNELS.filter((k) => k.name !== "shapes")) {
    assert.ok(h100.rows.some((r) => r.label === spec.name), `${spec.name} captured on the H100`);
  }
  // The same driver and the same SMs: the notebooks quote H100 side records of kernels whose
  // machine code is the H200's, so every kernel both captured must agree in registers, workgroups
  // per SM and machine-code size.
  const binary = (r: DriverRow) => driverStatistic(r, /^Binary Size$/);
  let shared = 0;
  for (const row of h100.rows) {
    // The same pipeline: the label and its parameters (a label's tuned parameters follow each
    // device's own saved search, so one label can name different pipelines on the two).
    const other: DriverRow | undefined = h200.rows.find((r) =>
      r.label === row.label && JSON.stringify(r.params) === JSON.stringify(row.params)
    );
    if (!other) continue;
    shared++;
    assert.equal(row.driver?.registers, other.driver?.registers, `${row.label}: registers`);
    assert.equal(row.driver?.residentPerSm, other.driver?.residentPerSm, `${row.label}: per SM`);
    assert.equal(binary(row), binary(other), `${row.label}: machine-code size`);
  }
  assert.ok(shared >= 60, `${shared} kernels captured on both`);
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

Deno.test("record_port_counters.ts reads Nsight Compute's stall reasons and the port's own times", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const out = `${dir}/port.json`;
    const run = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-read",
        "--allow-write",
        new URL("lab/cuda/record_port_counters.ts", root).pathname,
        ...["--out", out, "--device", "NVIDIA H200", "--driver", "580.159.04"],
        ...["--date", "2026-11-27T23:47:41Z", "--commit", "4798713"],
        new URL("tests/fixtures/port_counters", root).pathname,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(run.code, 0, new TextDecoder().decode(run.stderr));
    const record = JSON.parse(await Deno.readTextFile(out));
    const [v] = record.variants;
    assert.equal(v.variant, "d_double_buffered");
    assert.equal(v.registers, 128);
    // The values Nsight Compute printed for this launch.
    assert.equal(v.stallsPerIssue.long_scoreboard, 0.07);
    assert.equal(v.stallsPerIssue.barrier, 0.5);
    assert.ok(v.instructionsPerFma > 1 && v.instructionsPerFma < 1.3, String(v.instructionsPerFma));
    // cuBLAS and the four variants, each validated by the port (sampled float64 error).
    assert.equal(record.timed.length, 5);
    assert.equal(record.timed[4].label, "port of 10 at 128x128x8: double buffered (10)");
    assert.equal(record.timed[4].gflops, 43948);
    assert.ok(record.timed.every((t: { relErr: number }) => t.relErr < 1e-4));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the port's stall counts: every variant validated, stalls that add up, a table against the first", async () => {
  const file = "nvidia-h200-2026-11-27-port10-stalls.json";
  const record = JSON.parse(await Deno.readTextFile(new URL(`data/probes/${file}`, root)));
  assert.equal(record.variants.length, 4);
  for (const v of record.variants) {
    assert.ok(v.registers <= 128, `${v.variant}: two workgroups per SM need at most 128 registers`);
    assert.ok(Object.values(v.stallsPerIssue).every((x) => (x as number) >= 0));
  }
  assert.ok(record.timed.every((t: { relErr: number }) => t.relErr < 1e-4));
  const printed: string[] = [];
  const log = console.log;
  console.log = (text: string) => printed.push(text);
  try {
    await showPortStalls(file, {
      a_09_order: "09's order",
      d_double_buffered: "double buffered (10)",
    });
  } finally {
    console.log = log;
  }
  const table = printed.join("\n");
  assert.match(table, /stall cycles per instruction/);
  // The first variant is the baseline; the total leaves out the issuing warp ("selected").
  assert.match(table, /^09's order\s+37,556\s+1\s/m);
  assert.match(table, /^double buffered \(10\)\s+43,948\s+1\.17\s.*\s3\.83\s/m);
});
