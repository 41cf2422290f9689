/**
 * What the hardware says beside the timings: the driver's register counts (lib/driver_registers.ts)
 * and the CUDA ports' memory counters (lib/memory_counters.ts), each from a committed GPU-host
 * record named in the table's caption.
 */
import { measured } from "../../charts/common.ts";
import { loadDriverRecord, localMemoryBytes } from "../../driver_registers.ts";
import { loadCounterRecord } from "../../memory_counters.ts";
import { stepName } from "../../registry.ts";
import { type Cell, showNote, showTable } from "../format.ts";
import { dataPath, recordedGpuRun } from "../recorded.ts";

/**
 * The driver's registers and local memory per invocation for these pipelines (labels as
 * lab/driver/capture.ts wrote them: a kernel's name, or a name and its overrides), the workgroups
 * per SM that count allows, and the step model's estimate of both.
 */
export async function showDriverRegisters(labels: string[], device = "nvidia-h200"): Promise<void> {
  const record = await loadDriverRecord(device);
  if (!record) {
    await showNote(`No driver capture is committed for ${device} (\`data/driver/\`).`);
    return;
  }
  const rows: Cell[][] = labels.map((label) => {
    const row = record.rows.find((r) => r.label === label);
    if (!row) throw new Error(`the driver capture has no pipeline labelled ${label}`);
    return [
      label,
      row.invocations,
      row.driver?.registers,
      localMemoryBytes(row),
      row.model?.registersEstimate,
      row.driver?.residentPerSm,
      row.driver?.limitedBy,
      row.model?.residentPerSm,
    ];
  });
  await showTable(
    [
      "pipeline",
      "invocations",
      "registers (driver)",
      "local memory bytes",
      "registers (model)",
      "workgroups per SM",
      "limited by",
      "per SM (model)",
    ],
    rows,
    `${record.device.description}, ${record.started.slice(0, 10)}, commit ${record.commit}: ` +
      `registers and local memory per invocation as the Vulkan driver reports them for each ` +
      `pipeline at ` +
      `${record.shape.m}^3 (data/driver/${device}.json)`,
  );
}

/**
 * The CUDA ports' counters for these configurations (lab/cuda/memory_counters.cu names), beside
 * the WGSL kernel's speed at the same shape in the notebook's GPU record where it has one.
 */
export async function showMemoryCounters(
  configs: string[],
  device = "nvidia-h200",
): Promise<void> {
  const record = await loadCounterRecord(device);
  if (!record) {
    await showNote(`No CUDA counter measurement is committed for ${device} (\`data/counters/\`).`);
    return;
  }
  const chosen = configs.map((name) => {
    const c = record.configs.find((c) => c.config === name);
    if (!c) throw new Error(`the counter record has no configuration ${name}`);
    return c;
  });
  const kernels = [...new Set(chosen.map((c) => c.kernel))];
  const found = await recordedGpuRun(kernels);
  const wgsl = (c: (typeof chosen)[number]): number | undefined => {
    if (!found || c.lda !== c.k) return undefined;
    const speeds = measured(found.record.results)
      .filter((r) => stepName(r.kernel) === c.kernel && r.m === c.m && r.k === c.k && r.n === c.n)
      .map((r) => r.gflops!);
    return speeds.length ? Math.max(...speeds) : undefined;
  };
  await showTable(
    [
      "configuration",
      "K loop",
      "A row stride",
      "validated (rel. error)",
      "GFLOP/s (CUDA port)",
      "GFLOP/s (WGSL, record)",
      "registers",
      "L1 hit %",
      "L2 hit %",
      "DRAM read GB",
      "L1 busy % of peak",
      "wait on load / issue",
    ],
    chosen.map((c) => [
      `${c.kernel} ${c.m}^3`,
      c.rolled ? "rolled" : "unrolled",
      c.lda,
      c.validated ? c.relErr : false,
      c.gflops,
      wgsl(c),
      c.registers,
      c.counters?.l1HitPct,
      c.counters?.l2HitPct,
      c.counters ? c.counters.dramBytesRead / 1e9 : undefined,
      c.counters?.l1BusyPct,
      c.counters?.waitOnLoadPerIssue,
    ]),
    `${record.device} (driver ${record.driver}), ${record.date.slice(0, 10)}, commit ` +
      `${record.commit}: the WGSL kernels ported line for line to CUDA, timed with CUDA events, ` +
      `counters from Nsight Compute (data/counters/${device}.json)` +
      (found ? `; WGSL speeds from ${dataPath(found.path)}` : ""),
  );
}
