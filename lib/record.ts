/**
 * The run record: what `deno task bench` writes to data/runs/ and what every chart and notebook
 * reads. Each number in it was validated in the same run and names its device, date and commit.
 */
import type { DeviceSummary } from "./gpu.ts";
import type { KernelResult } from "./runner.ts";

export const RECORD_SCHEMA = 1;

/** A reference implementation measured in the same process (cuBLAS, TF.js, OpenBLAS). */
export interface PeerResult extends Omit<KernelResult, "params" | "modelBytes" | "intensity" | "seed"> {
  /** "cublas", "tfjs-webgpu", "openblas-1t", "openblas-all". */
  peer: string;
  /** Where the number comes from, e.g. "CUDA events" or "tf.time() kernelMs". */
  timer: string;
  seed?: number;
}

/** Measured machine ceilings the roofline is drawn from. */
export interface Ceilings {
  /** Streaming bandwidth, bytes read + written per second, in GB/s. */
  bandwidthGBs: number;
  /** FP32 FMA throughput in GFLOP/s (2 FLOP per FMA). */
  fp32Gflops: number;
  [extra: string]: unknown;
}

export interface RunRecord {
  schema: number;
  /** ISO 8601 time the run started. */
  date: string;
  /** Git commit of the code that ran ("unknown" if not a checkout); "+dirty" if modified. */
  commit: string;
  deno: string;
  device: DeviceSummary;
  ceilings?: Ceilings;
  results: KernelResult[];
  peers: PeerResult[];
  /** CPU-side measurements (our CPU matmuls, block-size sweep), when run. */
  cpu?: unknown;
  /** Autotuner trials and winner, when run. */
  tuning?: unknown;
  /** Free-form notes on what was run (flags, skipped peers and why). */
  notes: string[];
}
