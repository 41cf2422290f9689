/**
 * What the models know of a GPU that WebGPU does not say: SM count, peak rates, and, for the
 * Hopper parts, each SM's budgets (registers, invocations, workgroups, workgroup memory) and its
 * shared-memory banks. Matched on the adapter's description; step 13's plan picker ranks plans
 * with the same table, and lib/model/bounds.ts bounds every step with it.
 *
 * Sources, named per number below:
 * - [sheet] the vendors' spec sheets (SM counts, memory bandwidths, FP32 rates);
 * - [H200.md] /work/.library/device/H200.md of this workplace: the H200 is the H100's Hopper
 *   chip (compute capability 9.0) with 141 GB of HBM3e at 4.8 TB/s, plain FP32 about 67 TFLOP/s;
 * - [KINDS.md] the same folder's record of the lent machines: PyTorch reported 132 SMs and 60 MB
 *   of L2 on an H200 and 132 SMs and 50 MB on an H100; nvidia-smi read an SM clock of 1980 MHz
 *   just after matrix products on the H200;
 * - [HOPPER.md] the same folder: shared memory has 32 banks of 4 bytes;
 * - [CUDA] NVIDIA's CUDA C++ Programming Guide, the technical specifications of compute
 *   capability 9.0 (65 536 32-bit registers, 2 048 resident threads and 32 resident blocks per
 *   SM; 228 KB of shared memory per SM, at most 227 KB per block, 1 KB of it reserved per block
 *   by the system) and its shared-memory section (successive 32-bit words in successive banks,
 *   each bank 32 bits wide per clock cycle);
 * - [Hopper] NVIDIA's H100 whitepaper and Hopper tuning guide: 128 FP32 lanes per SM.
 */
import { type DeviceSummary, namedDevice } from "../gpu.ts";

/** What the plan picker knows of a GPU. */
export interface DeviceModel {
  /** Streaming multiprocessors (NVIDIA) or compute units. */
  sms: number;
  /** FP32 FMA peak, GFLOP/s per SM. */
  smGflops: number;
  /** DRAM bandwidth, GB/s. */
  bandwidthGBs: number;
  /** Where these numbers come from. */
  source: string;
}

/** One SM of a Hopper GPU (H100, H200): its budgets and its shared-memory banks. */
export interface SmModel {
  /** SM clock under load, GHz [KINDS.md: 1980 MHz read on the H200]. */
  clockGHz: number;
  /** FP32 lanes: FMAs per clock [Hopper]. */
  fp32Lanes: number;
  /** Shared-memory banks, each `bankBytes` wide, one word per clock each [HOPPER.md, CUDA]. */
  banks: number;
  bankBytes: number;
  /** Workgroup (shared) memory per SM, and the most one workgroup may have [CUDA]. */
  smemBytes: number;
  smemPerWorkgroup: number;
  /** Workgroup memory the system reserves per resident workgroup [CUDA]. */
  smemReserved: number;
  /** Resident invocations, workgroups and 32-bit registers per SM [CUDA]. */
  invocations: number;
  workgroups: number;
  registers: number;
  /** Registers are granted per invocation in multiples of this (256 per warp of 32) [CUDA]. */
  registerUnit: number;
}

/** The full model of a GPU: the picker's numbers, the SM, the L2, and what is not known. */
export interface GpuModel extends DeviceModel {
  /** The GPU these numbers are for ("H200 SXM"). */
  name: string;
  sm: SmModel;
  /** L2 cache bytes [KINDS.md]. */
  l2Bytes: number;
  /**
   * For another adapter than `name`: the quantities of its own that the model does not know
   * (every number is then the H200's, and `source` says "modeled for the H200").
   */
  unknown?: string[];
}

/** Hopper's SM (H100 SXM and H200 share the chip [H200.md]). */
export const HOPPER_SM: SmModel = {
  clockGHz: 1.98,
  fp32Lanes: 128,
  banks: 32,
  bankBytes: 4,
  smemBytes: 228 * 1024,
  smemPerWorkgroup: 227 * 1024,
  smemReserved: 1024,
  invocations: 2048,
  workgroups: 32,
  registers: 65536,
  registerUnit: 8,
};

/** FP32 FMA peak of one SM, GFLOP/s: lanes x 2 FLOP x clock (506.88 on Hopper at 1.98 GHz). */
export const smPeakGflops = (sm: SmModel): number => sm.fp32Lanes * 2 * sm.clockGHz;

/**
 * The H200 SXM: 132 SMs [KINDS.md, sheet], 4 800 GB/s of HBM3e [H200.md], 60 MB of L2
 * [KINDS.md]. Its FP32 peak, 132 x 506.88 = 66 908 GFLOP/s, is the "about 67" of [H200.md].
 */
export const H200: GpuModel = {
  name: "H200 SXM",
  sms: 132,
  smGflops: smPeakGflops(HOPPER_SM),
  bandwidthGBs: 4800,
  sm: HOPPER_SM,
  l2Bytes: 60e6,
  source: "H200 spec sheet and /work/.library/device notes (lib/model/device.ts)",
};

/** The H100 SXM: the same chip [H200.md] with 3 350 GB/s of HBM3 [sheet] and 50 MB of L2. */
const H100: GpuModel = {
  ...H200,
  name: "H100 SXM",
  bandwidthGBs: 3350,
  l2Bytes: 50e6,
  source: "H100 spec sheet and /work/.library/device notes (lib/model/device.ts)",
};

/**
 * Spec sheets of parts the picker may meet [sheet]: SMs, FP32 GFLOP/s per SM, DRAM GB/s. The
 * Hopper rows carry the full model; the others only what the picker ranks plans with.
 */
const DEVICES: [RegExp, Omit<DeviceModel, "source">, string, GpuModel?][] = [
  [/h100.*pcie/i, { sms: 114, smGflops: 450, bandwidthGBs: 2000 }, "H100 PCIe"],
  [/h200/i, H200, "H200 SXM", H200],
  [/h100/i, H100, "H100 SXM", H100],
  [/a100/i, { sms: 108, smGflops: 181, bandwidthGBs: 2039 }, "A100 SXM"],
  [/rtx 4090/i, { sms: 128, smGflops: 645, bandwidthGBs: 1008 }, "RTX 4090"],
];

/** An unknown GPU: a mid-size discrete part. */
const DEFAULT_DEVICE = { sms: 64, smGflops: 300, bandwidthGBs: 1000 };

/** The tuning file's say on a GPU the table does not know (step 13's search saves its SMs). */
export interface SmCount {
  sms?: number;
}

/**
 * The picker's model of `device`: its table row, or for a GPU the table does not know the
 * default, whose SM count a tuning file may set (a table row is never overridden by the count a
 * search merely assumed).
 */
export function deviceModel(device: DeviceSummary, tuning?: SmCount): DeviceModel {
  const row = DEVICES.find(([re]) => re.test(device.description));
  const base = row
    ? {
      sms: row[1].sms,
      smGflops: row[1].smGflops,
      bandwidthGBs: row[1].bandwidthGBs,
      source: `spec sheet of the ${row[2]} (matched on "${device.description}")`,
    }
    : {
      ...DEFAULT_DEVICE,
      source: `not in the table: ${DEFAULT_DEVICE.sms} SMs assumed (WebGPU does not say)`,
    };
  return !row && tuning?.sms ? { ...base, sms: tuning.sms, source: "the tuning file" } : base;
}

/**
 * The full model of `device`: its own for an H100 or H200, else the H200's, labelled "modeled
 * for the H200", with the quantities of this adapter that are unknown listed.
 */
export function gpuModel(device: DeviceSummary): GpuModel {
  const full = DEVICES.find(([re]) => re.test(device.description))?.[3];
  if (full) return full;
  const row = deviceModel(device);
  const known = !row.source.startsWith("not in the table");
  return {
    ...H200,
    source: `modeled for the H200: "${device.description}" is not a Hopper GPU in the table`,
    unknown: [
      ...(known ? [] : ["SM count"]),
      "SM clock",
      "FP32 lanes per SM",
      "workgroup-memory banks and bandwidth",
      "registers, invocations, workgroups and workgroup memory per SM",
      "L2 size",
      ...(known ? [] : ["DRAM bandwidth"]),
    ],
  };
}

/** The wave arithmetic of one launch: W workgroups over S SMs holding R each. */
export interface Waves {
  workgroups: number;
  /** Workgroups in flight at once: SMs x resident per SM. */
  perWave: number;
  waves: number;
  /** Share of the launch's workgroup slots that hold work: W / (waves x perWave). */
  fill: number;
}

export function waves(workgroups: number, sms: number, resident: number): Waves {
  const perWave = sms * resident;
  const count = Math.max(1, Math.ceil(workgroups / perWave));
  return { workgroups, perWave, waves: count, fill: workgroups / (count * perWave) };
}

/** What limits the workgroups an SM holds at once. */
export type OccupancyLimit = "workgroup memory" | "invocations" | "workgroups" | "registers";

/** Workgroups resident on one SM at once, and what limits them. */
export interface Occupancy {
  /** Workgroups resident per SM (at least 1: a workgroup that fits runs, however alone). */
  resident: number;
  /** Resident invocations per SM (resident x workgroup size). */
  invocations: number;
  /** The workgroups each budget alone would allow. */
  byLimit: Record<OccupancyLimit, number>;
  limitedBy: OccupancyLimit;
  /** Registers per invocation as granted (the estimate rounded up to the allocation unit). */
  registers: number;
}

/**
 * Workgroups of `threads` invocations, each holding `registers` registers, with `smemBytes` of
 * workgroup memory, that one SM holds at once: the least of what its workgroup memory (with the
 * per-workgroup reserve), its invocations, its workgroup slots and its registers allow [CUDA].
 */
export function occupancy(
  sm: SmModel,
  threads: number,
  registers: number,
  smemBytes: number,
): Occupancy {
  const granted = Math.ceil(registers / sm.registerUnit) * sm.registerUnit;
  const byLimit: Record<OccupancyLimit, number> = {
    "workgroup memory": smemBytes > 0
      ? Math.floor(sm.smemBytes / (smemBytes + sm.smemReserved))
      : Infinity,
    invocations: Math.floor(sm.invocations / threads),
    workgroups: sm.workgroups,
    registers: Math.floor(sm.registers / (threads * granted)),
  };
  const limitedBy = (Object.keys(byLimit) as OccupancyLimit[]).reduce((a, b) =>
    byLimit[b] < byLimit[a] ? b : a
  );
  const resident = Math.max(1, byLimit[limitedBy]);
  return { resident, invocations: resident * threads, byLimit, limitedBy, registers: granted };
}

/**
 * The adapter the models describe when no measured device is named (the notebooks' tables of an
 * H200, the waves figure): WebGPU's description of it, which keys the H200 row of the table.
 */
export const MODEL_DEVICE: DeviceSummary = namedDevice("NVIDIA H200");
