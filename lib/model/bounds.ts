/**
 * The step model: for any step, parameter set and shape, the quantities that move as the ladder
 * climbs, each turned into a bound on GFLOP/s, and the one that binds.
 *
 * - Global traffic: the step's cost model (lib/steps/launch.ts) over DRAM bandwidth. Kernels with
 *   no workgroup memory (02, 03) count every request as if no cache served it; the caches do
 *   serve the repeats, so for them that figure is no bound, and the L1's sectors are counted
 *   instead.
 * - Workgroup memory: bytes each invocation reads per multiply-add, and the banks' wavefronts
 *   (lib/model/loops.ts has each kernel's index expressions). The rule used: a warp's access
 *   of W bytes per invocation is served in phases of 128 / W invocations (all 32 for 4 bytes or
 *   fewer, 16 for 8, 8 for 16); each phase takes as many wavefronts as the most distinct 4-byte
 *   words any one of the 32 banks holds among that phase's words (identical words are read once
 *   and broadcast). The bank layout (32 banks, successive words in successive banks, one word
 *   per bank per clock) and the broadcast are the CUDA C++ Programming Guide's; the phases of 8-
 *   and 16-byte accesses are the commonly measured behaviour, not a documented rule. An SM's
 *   workgroup memory serves one wavefront (128 bytes) per clock.
 * - Instructions: the multiply-adds, workgroup-memory reads and stores, global loads and
 *   barriers of a tile, counted from the WGSL. Address arithmetic, naga's index clamps and loop
 *   counters are not counted, so this is the fewest instructions the kernel can issue, and the
 *   bound (an SM issues one instruction per clock per 32 FP32 lanes, four on Hopper) an upper one.
 * - Occupancy: workgroups resident per SM from workgroup memory, invocations, workgroup slots
 *   and registers (estimated: lib/model/loops.ts); it sets the slots the waves fill.
 * - Waves: the launch's workgroups over SMs x resident, and the share of all the waves' slots
 *   that hold work (the plan picker's arithmetic). For the bound the model takes the busiest SM instead: W workgroups of
 *   equal work over S SMs leave some SM with ceil(W / S) of them, however many it holds at once,
 *   so the launch takes at least that SM's time and reaches at most (W / S) / ceil(W / S) of
 *   the GPU's rate. The kernel's bound is the least throughput bound times that balance. (The
 *   share of slots is the same figure when the SMs hold their workgroups in whole waves, and
 *   lower when few workgroups leave SMs with fewer than they could hold; those can still use the
 *   whole SM, so it is no bound.)
 */
import { flops as productFlops, type Shape } from "../matrix.ts";
import { launchPlan } from "../steps/launch.ts";
import {
  type GpuModel,
  type Occupancy,
  occupancy,
  smPeakGflops,
  type Waves,
  waves,
} from "./device.ts";
import type { Access, TileLoop } from "../steps/spec.ts";
import type { KernelSpec, Params } from "../steps/spec.ts";

/** The limits the model bounds a step by. */
export type Limit = "arithmetic" | "issue" | "workgroup memory" | "DRAM" | "L1";

/** One bound: what limits, the GFLOP/s it allows at full waves, and how it was reached. */
export interface Bound {
  limit: Limit;
  gflops: number;
  /** How the number follows from the quantities, in a line. */
  why: string;
  /**
   * Set when the figure is no bound on this kernel (the reason): the global traffic of a kernel
   * whose repeated requests the caches serve.
   */
  notABound?: string;
}

/** Workgroup-memory traffic of one k step (reads) and one tile (stores). */
export interface WorkgroupTraffic {
  /** Reads per invocation per multiply-add, and their bytes. */
  readsPerFma: number;
  bytesPerFma: number;
  /** Mean wavefronts per warp-wide read, and the fewest its width allows (1 for 4 bytes). */
  wavefrontsPerRead: number;
  idealWavefrontsPerRead: number;
  /** wavefrontsPerRead / idealWavefrontsPerRead: 1 when the reads are conflict-free. */
  conflictDegree: number;
  /** Mean wavefronts per warp-wide store, and the fewest its width allows. */
  wavefrontsPerStore: number;
  idealWavefrontsPerStore: number;
  /** Bytes the banks move per multiply-add: wavefronts (reads and stores) x 128 / FMAs. */
  bankBytesPerFma: number;
}

export interface StepModel {
  kernel: string;
  shape: Shape;
  params: Params;
  device: GpuModel;
  flops: number;
  /** Global traffic as the step's cost model counts it. */
  global: { bytes: number; intensity: number };
  /** The L1's 32-byte sectors per multiply-add (kernels without workgroup memory). */
  l1SectorBytesPerFma?: number;
  /** Absent for a kernel whose loop lib/model/loops.ts does not describe. */
  workgroup?: WorkgroupTraffic;
  /** Instructions per multiply-add (the fewest: see the module's note). */
  instructionsPerFma?: number;
  /** Registers per invocation, estimated (lib/model/loops.ts). */
  registersEstimate?: number;
  invocationsPerWorkgroup: number;
  workgroupBytes: number;
  occupancy: Occupancy;
  waves: Waves;
  /** Share of the GPU the busiest SM lets the launch use: (W / S) / ceil(W / S). */
  smBalance: number;
  /** Every bound at full waves. */
  bounds: Bound[];
  /** The least of the bounds that hold. */
  binding: Bound;
  /** The model's bound on the kernel: binding x smBalance. */
  boundGflops: number;
}

/** Bytes one wavefront moves: one word from each bank. */
const wavefrontBytes = (d: GpuModel) => d.sm.banks * d.sm.bankBytes;

/**
 * Wavefronts one warp-wide access takes under the rule in the module's note: `offsets` holds
 * each of the 32 invocations' byte offsets (undefined: inactive), `width` bytes each. `perPhase`,
 * the invocations served together, defaults to the rule's; 32 counts the whole warp at once (the
 * count the bank probe, lib/banks.ts, sets against the rule).
 */
export function wavefronts(
  offsets: (number | undefined)[],
  width: number,
  banks = 32,
  bankBytes = 4,
  perPhase = Math.min(32, (banks * bankBytes) / width),
): number {
  let total = 0;
  for (let start = 0; start < offsets.length; start += perPhase) {
    const words = new Set<number>();
    for (const at of offsets.slice(start, start + perPhase)) {
      if (at === undefined) continue;
      const first = Math.floor(at / bankBytes), last = Math.floor((at + width - 1) / bankBytes);
      for (let w = first; w <= last; w++) words.add(w);
    }
    const perBank = new Map<number, number>();
    for (const w of words) perBank.set(w % banks, (perBank.get(w % banks) ?? 0) + 1);
    total += Math.max(0, ...perBank.values());
  }
  return total;
}

/** The fewest wavefronts an access of `width` bytes per invocation takes for a full warp. */
const idealWavefronts = (width: number, d: GpuModel) =>
  Math.max(1, (32 * width) / wavefrontBytes(d));

/** Mean wavefronts per warp of `access` over the workgroup's warps and `steps` k steps. */
function meanWavefronts(access: Access, loop: TileLoop, steps: number, d: GpuModel): number {
  const warps = Math.ceil(loop.invocations / 32);
  let sum = 0;
  for (let w = 0; w < warps; w++) {
    for (let k = 0; k < steps; k++) {
      const offsets = Array.from({ length: 32 }, (_, lane) => {
        const tid = 32 * w + lane;
        return tid < loop.invocations ? access.at(tid, k) : undefined;
      });
      sum += wavefronts(offsets, access.width, d.sm.banks, d.sm.bankBytes);
    }
  }
  return sum / (warps * steps);
}

/** 32-byte sectors of one warp-wide global access (distinct sectors its invocations touch). */
function sectors(access: Access, k: number): number {
  const touched = new Set<number>();
  for (let tid = 0; tid < 32; tid++) {
    const at = access.at(tid, k);
    if (at !== undefined) touched.add(Math.floor(at / 32));
  }
  return touched.size;
}

const mean = (xs: number[]) => xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;

function workgroupTraffic(loop: TileLoop, d: GpuModel): WorkgroupTraffic {
  const fmasPerTile = loop.fmas * loop.steps;
  const readWaves = loop.reads.map((r) => meanWavefronts(r, loop, loop.steps, d));
  const storeWaves = loop.stores.map((s) => meanWavefronts(s, loop, 1, d));
  const perWarpTile = loop.steps * readWaves.reduce((a, b) => a + b, 0) +
    storeWaves.reduce((a, b) => a + b, 0);
  const ideal = (xs: Access[]) => mean(xs.map((a) => idealWavefronts(a.width, d)));
  const readBytes = loop.reads.reduce((sum, r) => sum + r.width, 0);
  return {
    readsPerFma: loop.reads.length / loop.fmas,
    bytesPerFma: readBytes / loop.fmas,
    wavefrontsPerRead: mean(readWaves),
    idealWavefrontsPerRead: ideal(loop.reads),
    conflictDegree: mean(readWaves) / ideal(loop.reads),
    wavefrontsPerStore: mean(storeWaves),
    idealWavefrontsPerStore: ideal(loop.stores),
    bankBytesPerFma: (perWarpTile * wavefrontBytes(d)) / (32 * fmasPerTile),
  };
}

/** Instructions per tile per invocation, the fewest the WGSL allows (the module's note). */
function instructions(loop: TileLoop): number {
  return (loop.fmas * loop.steps) / loop.fmasPerInstruction +
    loop.reads.length * loop.steps + loop.stores.length + loop.globalLoads + loop.barriers +
    loop.other;
}

/** GFLOP/s of the whole GPU at `fmasPerClock` multiply-adds per clock per SM. */
const gflopsAt = (fmasPerClock: number, d: GpuModel) => 2 * fmasPerClock * d.sm.clockGHz * d.sms;

const fmt = (x: number) => Number(x.toPrecision(3)).toLocaleString("en-US");

/** The model of `spec` with `params` at `shape` on the GPU `device` models. */
export function stepModel(
  spec: KernelSpec,
  params: Params,
  shape: Shape,
  device: GpuModel,
): StepModel {
  const d = device;
  const { bytes } = spec.model(shape, params);
  const flops = productFlops(shape);
  const intensity = flops / bytes;
  const loop = spec.loop?.(params, shape);
  const [x, y, z] = spec.workgroupSize(params);
  const threads = x * y * z;
  const workgroupBytes = spec.workgroupStorageBytes(params);
  const peak = smPeakGflops(d.sm) * d.sms;
  const bounds: Bound[] = [{
    limit: "arithmetic",
    gflops: peak * (loop?.fmasPerInstruction ?? 1),
    why: `${d.sms} SMs x ${d.sm.fp32Lanes} FMA lanes x 2 FLOP x ${d.sm.clockGHz} GHz` +
      (loop?.fmasPerInstruction === 2 ? " x 2 (packed f16: two FMAs per lane, assumed)" : ""),
  }];
  const dram: Bound = {
    limit: "DRAM",
    gflops: intensity * d.bandwidthGBs,
    why: `${fmt(intensity)} FLOP/byte x ${fmt(d.bandwidthGBs)} GB/s`,
  };
  let workgroup: WorkgroupTraffic | undefined;
  let instructionsPerFma: number | undefined;
  let l1SectorBytesPerFma: number | undefined;
  if (loop) {
    const fmasPerTile = loop.fmas * loop.steps;
    instructionsPerFma = instructions(loop) / fmasPerTile;
    bounds.push({
      limit: "issue",
      gflops: gflopsAt(d.sm.fp32Lanes / instructionsPerFma, d),
      why: `${fmt(instructionsPerFma)} instructions per FMA at ${d.sm.fp32Lanes / 32} warp ` +
        "instructions per clock per SM",
    });
    if (loop.reads.length) {
      workgroup = workgroupTraffic(loop, d);
      bounds.push({
        limit: "workgroup memory",
        gflops: gflopsAt(wavefrontBytes(d) / workgroup.bankBytesPerFma, d),
        why: `${fmt(workgroup.bankBytesPerFma)} bank bytes per FMA (${
          fmt(workgroup.wavefrontsPerRead)
        } wavefront${workgroup.wavefrontsPerRead === 1 ? "" : "s"} per warp read) at ${
          wavefrontBytes(d)
        } bytes per clock per SM`,
      });
    }
    if (loop.globalReads) {
      const perStep = loop.globalReads.map((a) => sectors(a, 0));
      l1SectorBytesPerFma = (32 * perStep.reduce((a, b) => a + b, 0)) / (32 * loop.fmas);
      bounds.push({
        limit: "L1",
        gflops: gflopsAt(wavefrontBytes(d) / l1SectorBytesPerFma, d),
        why: `${fmt(l1SectorBytesPerFma)} bytes of 32-byte sectors per FMA at ` +
          `${wavefrontBytes(d)} bytes per clock per SM (L1 and workgroup memory are one SRAM ` +
          "on Hopper; the same width assumed)",
      });
      dram.notABound = "every request counted as a DRAM read, but the caches serve the repeats";
    }
  }
  bounds.push(dram);
  const registersEstimate = loop?.registers;
  // Without a described loop the registers are unknown, and only the other budgets count.
  const occ = occupancy(d.sm, threads, registersEstimate ?? 0, workgroupBytes);
  const plan = launchPlan(spec, params, shape);
  // Shapes thinner than one tile have no whole tiles: the edge-strip workgroups do the work.
  const strips = plan.edgeStrips ? plan.stripGroups.bottom + plan.stripGroups.right : 0;
  const launched = Math.max(1, plan.grid[0] * plan.grid[1] * plan.grid[2] + strips);
  const w = waves(launched, d.sms, occ.resident);
  const smBalance = w.workgroups / d.sms / Math.ceil(w.workgroups / d.sms);
  const binding = bounds.filter((b) => !b.notABound).reduce((a, b) => b.gflops < a.gflops ? b : a);
  return {
    kernel: spec.id,
    shape,
    params,
    device: d,
    flops,
    global: { bytes, intensity },
    ...(l1SectorBytesPerFma !== undefined ? { l1SectorBytesPerFma } : {}),
    ...(workgroup ? { workgroup } : {}),
    ...(instructionsPerFma !== undefined ? { instructionsPerFma } : {}),
    ...(registersEstimate !== undefined ? { registersEstimate } : {}),
    invocationsPerWorkgroup: threads,
    workgroupBytes,
    occupancy: occ,
    waves: w,
    smBalance,
    bounds,
    binding,
    boundGflops: binding.gflops * smBalance,
  };
}
