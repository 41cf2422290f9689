/**
 * Hardware counters for 02's `naive` and 03's `coalesce`, read where WebGPU cannot: both kernels
 * ported line for line to CUDA (lab/cuda/memory_counters.cu), each configuration validated, timed
 * with CUDA events, then profiled by Nsight Compute (lab/cuda/run_counters.sh), on a GPU host.
 * lab/cuda/record_counters.ts writes the measurement to data/counters/<device>.json.
 */
import { readJsonIfPresent } from "./files.ts";

/** What Nsight Compute measured over one launch. */
export interface MemoryCounters {
  /** Shares of sector lookups that hit, in L1 and in L2 (percent). */
  l1HitPct: number;
  l2HitPct: number;
  /** Bytes read from DRAM. */
  dramBytesRead: number;
  /** 32-byte sectors per global load request (a warp's load touching 4 consecutive floats: 4). */
  sectorsPerRequest: number;
  /** How busy the L1 was, as a share of its peak throughput while the SMs were active (percent). */
  l1BusyPct: number;
  /** Cycles a warp waited on a global load's result, per instruction issued (long scoreboard). */
  waitOnLoadPerIssue: number;
  /** Cycles a warp waited for room in the load queue, per instruction issued (LG throttle). */
  waitOnQueuePerIssue: number;
  /**
   * Where the run read them, per global load request: the L1 data stage's passes (wavefronts:
   * one per group of bank-compatible accesses), its bank conflicts, and the tag stage's set
   * conflicts.
   */
  l1PassesPerRequest?: number;
  l1BankConflictsPerRequest?: number;
  l1SetConflictsPerRequest?: number;
}

export interface CounterConfig {
  config: string;
  kernel: "naive" | "coalesce";
  /** The K loop kept rolled (`#pragma unroll 1`), as the driver compiles the WGSL loop. */
  rolled: boolean;
  m: number;
  k: number;
  n: number;
  /** A's row stride in floats (K unless padded). */
  lda: number;
  /** Registers per invocation (ptxas). */
  registers: number;
  validated: boolean;
  relErr: number;
  medianMs: number;
  /** (slowest - fastest) / median of the timed launches. */
  spread: number;
  gflops: number;
  /** The commit of the profiled program (undefined: not profiled). */
  countersCommit?: string;
  counters?: MemoryCounters;
}

export interface CounterRecord {
  schema: 1;
  device: string;
  driver: string;
  date: string;
  /** The commit of the program that timed every configuration. */
  commit: string;
  source: string;
  configs: CounterConfig[];
}

/** The committed measurement for a device slug, or undefined when there is none. */
export function loadCounterRecord(slug: string): Promise<CounterRecord | undefined> {
  return readJsonIfPresent<CounterRecord>(
    new URL(`../data/counters/${slug}.json`, import.meta.url),
  );
}
