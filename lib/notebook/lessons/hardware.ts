/**
 * What the hardware says beside the timings: the driver's register counts (lib/driver_registers.ts)
 * and the CUDA ports' memory counters (lib/memory_counters.ts), each from a committed GPU-host
 * record named in the table's caption.
 */
import { measured } from "../../charts/common.ts";
import {
  type DriverRecord,
  type DriverRow,
  driverStatistic,
  loadDriverRecord,
  localMemoryBytes,
} from "../../driver_registers.ts";
import { readJsonIfPresent } from "../../files.ts";
import { loadCounterRecord } from "../../memory_counters.ts";
import { stepName } from "../../registry.ts";
import { type Cell, showNote, showTable } from "../format.ts";
import { dataPath, recordedGpuRun } from "../recorded.ts";

/**
 * The committed driver capture for a device and a lookup of its pipelines by label (as
 * lab/driver/capture.ts wrote them), which throws on a label it lacks; a note, and undefined,
 * when none is committed.
 */
async function driverCapture(
  device: string,
): Promise<{ record: DriverRecord; pipeline: (label: string) => DriverRow } | undefined> {
  const record = await loadDriverRecord(device);
  if (!record) {
    await showNote(`No driver capture is committed for ${device} (\`data/driver/\`).`);
    return undefined;
  }
  const pipeline = (label: string) => {
    const row = record.rows.find((r) => r.label === label);
    if (!row) throw new Error(`the driver capture has no pipeline labelled ${label}`);
    return row;
  };
  return { record, pipeline };
}

/**
 * The driver's registers and local memory per invocation for these pipelines (labels as
 * lab/driver/capture.ts wrote them: a kernel's name, or a name and its overrides), the workgroups
 * per SM that count allows, and the step model's estimate of both.
 */
export async function showDriverRegisters(labels: string[], device = "nvidia-h200"): Promise<void> {
  const capture = await driverCapture(device);
  if (!capture) return;
  const { record, pipeline } = capture;
  const rows: Cell[][] = labels.map((label) => {
    const row = pipeline(label);
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
  // The L1 pass counts, where this record read them.
  const passes = chosen.some((c) => c.counters?.l1PassesPerRequest !== undefined);
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
      ...(passes
        ? ["L1 data passes / request", "bank conflicts / request", "set conflicts / request"]
        : []),
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
      ...(passes
        ? [
          c.counters?.l1PassesPerRequest,
          c.counters?.l1BankConflictsPerRequest,
          c.counters?.l1SetConflictsPerRequest,
        ]
        : []),
    ]),
    `${record.device} (driver ${record.driver}), ${record.date.slice(0, 10)}, commit ` +
      `${record.commit}: the WGSL kernels ported line for line to CUDA, timed with CUDA events, ` +
      `counters from Nsight Compute (data/counters/${device}.json)` +
      (found ? `; WGSL speeds from ${dataPath(found.path)}` : ""),
  );
}

/** The bytes of one machine instruction on NVIDIA GPUs since Volta (128-bit encodings). */
const INSTRUCTION_BYTES = 16;

/**
 * Machine code per k step, from the driver's binary sizes: each pair of pipelines differs only in
 * BK (labels as lab/driver/capture.ts wrote them), so where the k loop is written out the extra
 * bytes are (BK difference) k steps of code. Where the driver keeps a loop, the code hardly grows
 * with BK, and the column says so instead of a count.
 */
export async function showCodePerKStep(
  pairs: { name: string; small: string; large: string }[],
  device = "nvidia-h200",
): Promise<void> {
  const capture = await driverCapture(device);
  if (!capture) return;
  const { record, pipeline } = capture;
  const rows: Cell[][] = pairs.map(({ name, small, large }) => {
    const [a, b] = [pipeline(small), pipeline(large)];
    const [sizeA, sizeB] = [a, b].map((r) => driverStatistic(r, /binary size/i));
    const steps = Number(b.params.BK) - Number(a.params.BK);
    const extra = sizeA !== undefined && sizeB !== undefined
      ? (sizeB - sizeA) / INSTRUCTION_BYTES
      : undefined;
    // Written out, each extra k step adds its 8 x TN multiply-adds; a kept loop grows by its
    // tile loads only, far less.
    const kept = extra !== undefined && extra < steps * 8 * Number(b.params.TN);
    return [
      name,
      sizeA,
      sizeB,
      extra,
      kept || extra === undefined ? undefined : extra / steps,
      extra === undefined ? undefined : kept ? "kept" : "written out",
    ];
  });
  await showTable(
    [
      "kernel",
      "machine code bytes, BK 8",
      "machine code bytes, BK 16",
      "extra instructions",
      "instructions per k step",
      "k loop",
    ],
    rows,
    `${record.device.description}, ${record.started.slice(0, 10)}, commit ${record.commit}: ` +
      `machine code size as the Vulkan driver reports it (data/driver/${device}.json), ` +
      `${INSTRUCTION_BYTES} bytes per instruction`,
  );
}

/** What every CUDA probe record of data/probes/ names: where and when it ran. */
interface CudaRecord {
  device: string;
  driver: string;
  date: string;
  commit: string;
}

/** A committed probe record of data/probes/, or a note saying none is committed (`what`). */
async function probeRecord<T>(file: string, what: string): Promise<T | undefined> {
  const record = await readJsonIfPresent<T>(
    new URL(`../../../data/probes/${file}`, import.meta.url),
  );
  if (!record) await showNote(`No ${what} is committed (\`data/probes/${file}\`).`);
  return record;
}

/** One kernel of lab/cuda/fma_ceiling.cu as the probe record holds it. */
interface FmaCeiling {
  kernel: string;
  validated: boolean;
  tflops: number;
  medianMs: number;
  minMs: number;
  maxMs: number;
  /** The arithmetic opcodes in its machine code (cuobjdump -sass), by count. */
  opcodes: Record<string, number>;
}

/** The CUDA arithmetic ceilings (lab/cuda/fma_ceiling.cu) measured on a GPU host. */
export async function showCudaFmaCeilings(
  file = "nvidia-h200-2026-11-27-cuda-fma.json",
): Promise<void> {
  const record = await probeRecord<CudaRecord & { rows: FmaCeiling[] }>(
    file,
    "CUDA ceiling measurement",
  );
  if (!record) return;
  const ffma = record.rows.find((r) => r.kernel === "ffma_f32");
  await showTable(
    ["kernel", "opcodes in its machine code", "validated", "TFLOP/s", "x FFMA", "spread"],
    record.rows.map((r) => [
      r.kernel,
      Object.entries(r.opcodes).map(([op, n]) => `${op} ${n}`).join(", "),
      r.validated,
      r.tflops,
      ffma ? r.tflops / ffma.tflops : undefined,
      (r.maxMs - r.minMs) / r.medianMs,
    ]),
    `${record.device} (driver ${record.driver}), ${record.date.slice(0, 10)}, commit ` +
      `${record.commit}: lab/cuda/fma_ceiling.cu, independent chains of one instruction, ` +
      `validated, then timed with CUDA events (median of 21); opcodes from cuobjdump -sass ` +
      `(HFMA2.MMA with zero operands only sets registers to constants) ` +
      `(data/probes/${file})`,
  );
}

/** One variant of a CUDA port as lab/cuda/record_port_counters.ts records it. */
interface PortVariant {
  variant: string;
  durationMs: number;
  instructionsPerFma: number;
  registers?: number;
  achievedOccupancyPct?: number;
  /** Cycles a warp waited per instruction issued, by Nsight Compute's stall reason. */
  stallsPerIssue: Record<string, number>;
}

/** What each stall reason means, in the words the tables use. */
const STALL_COLUMNS: [string, string][] = [
  ["barrier", "barrier"],
  ["long_scoreboard", "global loads (long scoreboard)"],
  ["short_scoreboard", "workgroup memory (short scoreboard)"],
  ["mio_throttle", "memory queue full (MIO throttle)"],
  ["not_selected", "ready, not picked"],
];

/**
 * A CUDA port's variants under Nsight Compute (lab/cuda/run_port_counters.sh): the port's own
 * validated time, instructions per FMA, registers and occupancy, and the cycles its warps waited
 * per instruction issued, by reason, against the first variant.
 */
export async function showPortStalls(
  file: string,
  labels: Record<string, string>,
): Promise<void> {
  const record = await probeRecord<
    CudaRecord & {
      variants: PortVariant[];
      timed?: { label: string; medianMs: number; gflops: number; relErr: number }[];
    }
  >(file, "port counters");
  if (!record) return;
  const variants = Object.keys(labels).map((v) => {
    const found = record.variants.find((r) => r.variant === v);
    if (!found) throw new Error(`${file} has no variant ${v}`);
    return found;
  });
  const timedAs = (label: string) => record.timed?.find((t) => t.label.endsWith(label));
  const base = timedAs(labels[variants[0].variant]);
  const total = (v: PortVariant) =>
    Object.entries(v.stallsPerIssue)
      .filter(([reason]) => reason !== "selected").reduce((sum, [, x]) => sum + x, 0);
  await showTable(
    [
      "variant",
      "GFLOP/s",
      `x ${labels[variants[0].variant]}`,
      "rel. error",
      "registers",
      "occupancy %",
      "instructions per FMA",
      "stall cycles per instruction",
      ...STALL_COLUMNS.map(([, title]) => title),
    ],
    variants.map((v) => {
      const t = timedAs(labels[v.variant]);
      return [
        labels[v.variant],
        t?.gflops,
        t && base ? t.gflops / base.gflops : undefined,
        t?.relErr,
        v.registers,
        v.achievedOccupancyPct,
        v.instructionsPerFma,
        total(v),
        ...STALL_COLUMNS.map(([reason]) => v.stallsPerIssue[reason]),
      ];
    }),
    `${record.device} (driver ${record.driver}), ${record.date.slice(0, 10)}, commit ` +
      `${record.commit}: the CUDA port at 4096, each variant validated (sampled float64), timed ` +
      `(median of 50 launches), then one launch profiled by Nsight Compute; stall cycles per ` +
      `instruction issued, by reason, excluding the issue cycle itself (data/probes/${file})`,
  );
}
