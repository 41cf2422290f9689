/**
 * What the Vulkan driver compiled each kernel into, as it reports through
 * VK_KHR_pipeline_executable_properties (WebGPU shows no machine code): registers per invocation,
 * and the workgroups per SM that count allows, beside the step model's estimate of both. Captured
 * on a GPU host by lab/driver/capture.ts (pipelines created as lib/runner.ts creates them, at
 * 4096 x 4096 x 4096) into data/driver/<device>.json.
 */
import { readJsonIfPresent } from "./files.ts";
import type { DeviceSummary } from "./gpu.ts";
import type { Shape } from "./matrix.ts";
import type { Params } from "./steps/spec.ts";

/** One shader stage of a pipeline as the driver describes it, with its statistics. */
export interface DriverExecutable {
  name: string;
  description: string;
  subgroupSize: number;
  /** As the driver names them ("Register Count", "Binary Size", "Local Memory Size", ...). */
  statistics: { name: string; description: string; value: number | boolean }[];
  representations: { name: string; bytes: number; file: string }[];
}

/** One pipeline: a kernel at the parameters the runner picks for the shape, or at overrides. */
export interface DriverRow {
  /** The kernel's name, with the overrides when there are any ("tiled_steps STEPS=4"). */
  label: string;
  params: Params;
  invocations: number;
  workgroupBytes: number;
  model?: { registersEstimate?: number; residentPerSm: number; limitedBy: string };
  driver?: {
    executables: DriverExecutable[];
    /** The statistic whose name says registers, per invocation. */
    registers?: number;
    residentPerSm?: number;
    limitedBy?: string;
  };
  error?: string;
}

/**
 * Bytes of local memory (off-chip, private to each invocation: spilled registers and arrays the
 * compiler could not keep in registers) the driver gives each invocation. NVIDIA's "Local Memory
 * Size" statistic reads 2^36 plus that size in every pipeline captured (0 for every kernel that
 * keeps its data in registers, 320 for `blocktile_2d_local_array`, whose three private arrays hold
 * 80 floats), so the low 32 bits are the bytes.
 */
export function localMemoryBytes(row: DriverRow): number | undefined {
  const value = driverStatistic(row, /local memory/i);
  return value === undefined ? undefined : value % 2 ** 32;
}

/** The first numeric statistic among a pipeline's stages whose name matches `name`. */
export function statisticOf(
  executables: readonly DriverExecutable[],
  name: RegExp,
): number | undefined {
  for (const e of executables) {
    const s = e.statistics.find((s) => name.test(s.name) && typeof s.value === "number");
    if (s) return s.value as number;
  }
  return undefined;
}

/** statisticOf a captured pipeline ("Binary Size"), undefined where the capture failed. */
export const driverStatistic = (row: DriverRow, name: RegExp): number | undefined =>
  statisticOf(row.driver?.executables ?? [], name);

export interface DriverRecord {
  device: DeviceSummary;
  /** When the capture started (ISO). */
  started: string;
  commit: string;
  shape: Shape;
  source: string;
  rows: DriverRow[];
}

/** The committed capture for a device slug, or undefined when there is none. */
export function loadDriverRecord(slug: string): Promise<DriverRecord | undefined> {
  return readJsonIfPresent<DriverRecord>(new URL(`../data/driver/${slug}.json`, import.meta.url));
}
