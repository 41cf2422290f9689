/**
 * The reader's session: one adapter per notebook kernel, its ceilings measured once, sizes that
 * fit the adapter, and the opening lines that say where the code runs.
 */
import { measureCeilings } from "../ceilings.ts";
import { acquireGpu, type DeviceSummary, type Gpu } from "../gpu.ts";
import { ladderSizes } from "../sizes.ts";
import type { Ceilings } from "../record.ts";
import { type Cell, fmt, showNote, showTable } from "./format.ts";

/** What every notebook cell works with. */
export interface Session {
  gpu: Gpu;
  summary: DeviceSummary;
  /** True on a software (CPU) adapter: sizes shrink so a notebook takes a minute or two. */
  software: boolean;
  /** Square sizes for ladder runs on this adapter. */
  sizes: number[];
}

let current: Promise<Session> | undefined;

/**
 * The reader's adapter, acquired once per notebook kernel (later calls return the same one).
 * Set GEMM_SIZES=256,512 to choose the ladder sizes yourself.
 */
export function session(): Promise<Session> {
  current ??= acquireGpu().then((gpu) => ({
    gpu,
    summary: gpu.summary,
    software: gpu.summary.software,
    sizes: sizesFromEnv() ?? ladderSizes(gpu.summary),
  }));
  current.catch(() => current = undefined);
  return current;
}

function sizesFromEnv(): number[] | undefined {
  let raw: string | undefined;
  try {
    raw = Deno.env.get("GEMM_SIZES");
  } catch {
    return undefined;
  }
  const sizes = raw?.split(",").map(Number).filter((n) => Number.isInteger(n) && n > 0);
  return sizes?.length ? sizes : undefined;
}

/** The largest ladder size of this session: the one single-size lessons use. */
export function mainSize(s: Session): number {
  return Math.max(...s.sizes);
}

let ceilingsCache: { gpu: Gpu; ceilings: Promise<Ceilings> } | undefined;

/** This adapter's measured bandwidth and FP32 ceilings (measured once per session). */
export function adapterCeilings(gpu: Gpu): Promise<Ceilings> {
  if (ceilingsCache?.gpu !== gpu) ceilingsCache = { gpu, ceilings: measureCeilings(gpu) };
  return ceilingsCache.ceilings;
}

/**
 * Start a notebook: the session, this adapter's measured ceilings, and one line saying where
 * the code runs and at which sizes.
 */
export async function openNotebook(): Promise<{ s: Session; ceilings: Ceilings }> {
  const s = await session();
  const ceilings = await adapterCeilings(s.gpu);
  await showNote(
    `Running on **${s.summary.description}**${s.software ? " (a software adapter)" : ""}; ` +
      `sizes ${s.sizes.join(", ")}; measured ceilings ${fmt(ceilings.bandwidthGBs)} GB/s and ` +
      `${fmt(ceilings.fp32Gflops)} GFLOP/s.`,
  );
  return { s, ceilings };
}

/** Show the adapter: name, vendor, software or not, subgroup size, features, raised limits. */
export async function showAdapter(summary: DeviceSummary): Promise<void> {
  const rows: Cell[][] = [
    ["adapter", summary.description],
    ["vendor / architecture", `${summary.vendor || "-"} / ${summary.architecture || "-"}`],
    ["software (runs on the CPU)", summary.software],
    ["subgroup size", subgroupLabel(summary)],
    ["features", summary.features.join(", ") || "(none)"],
    ...Object.entries(summary.limits).map(([k, v]): Cell[] => [k, v.toLocaleString("en-US")]),
  ];
  await showTable(["property", "value"], rows, "Your WebGPU adapter");
}

function subgroupLabel(s: DeviceSummary): string {
  if (s.subgroupMinSize === undefined) return "not reported";
  return s.subgroupMinSize === s.subgroupMaxSize
    ? String(s.subgroupMinSize)
    : `${s.subgroupMinSize}..${s.subgroupMaxSize}`;
}

/** Show measured ceilings and the ridge point they imply. */
export async function showCeilings(c: Ceilings, source: string): Promise<void> {
  const f16: Cell[][] = c.f16Gflops === undefined ? [] : [
    ["packed f16 FMA throughput (GFLOP/s)", c.f16Gflops],
    ["f16 / FP32", c.f16Gflops / c.fp32Gflops],
  ];
  await showTable(
    ["ceiling", "value"],
    [
      ["memory bandwidth (GB/s)", c.bandwidthGBs],
      ["FP32 FMA throughput (GFLOP/s)", c.fp32Gflops],
      ["ridge point (FLOP/byte)", c.fp32Gflops / c.bandwidthGBs],
      ...f16,
    ],
    `Measured ceilings: ${source}${
      c.f16Gflops === undefined
        ? " (no f16 ceiling: the adapter lacks shader-f16 or the run predates it)"
        : ""
    }`,
  );
}
