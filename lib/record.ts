/**
 * The run record: what `deno task bench` writes to data/runs/ and what every chart and notebook
 * reads. Each number in it was validated in the same run and names its device, date and commit.
 */
import type { DeviceSummary } from "./gpu.ts";
import type { KernelResult } from "./runner.ts";

export const RECORD_SCHEMA = 1;

/** A reference implementation measured in the same process (cuBLAS, TF.js, OpenBLAS). */
export interface PeerResult
  extends Omit<KernelResult, "params" | "modelBytes" | "intensity" | "seed"> {
  /** "cublas", "tfjs-webgpu", "openblas-1t", "openblas-all". */
  peer: string;
  /** Where the number comes from, e.g. "CUDA events" or "tf.time() kernelMs". */
  timer: string;
  seed?: number;
  /** Peer-specific facts: library version and path, math mode, the programs TF.js ran. */
  details?: Record<string, string | number | boolean>;
}

/** Measured machine ceilings the roofline is drawn from (lib/ceilings.ts measures them). */
export interface Ceilings {
  /** Streaming bandwidth, bytes read + written per second, in GB/s. */
  bandwidthGBs: number;
  /** FP32 FMA throughput in GFLOP/s (2 FLOP per FMA). */
  fp32Gflops: number;
  /** Which streaming kernel gave the best bandwidth ("copy" or "read") and its buffer size. */
  bandwidthKernel?: string;
  bandwidthBufferBytes?: number;
  /** Independent scalar FMA chains per invocation and invocations of the best FP32 trial. */
  fp32Chains?: number;
  fp32Invocations?: number;
  timing?: string;
  /** Every configuration tried; the ceilings are the best of each sweep. */
  bandwidthTrials?: BandwidthTrial[];
  fp32Trials?: Fp32Trial[];
  [extra: string]: unknown;
}

/** One streaming-kernel configuration of the bandwidth sweep. */
export interface BandwidthTrial {
  kernel: "copy" | "read";
  workgroupSize: number;
  /** vec4 elements each invocation streams. */
  perInvocation: number;
  bufferBytes: number;
  /** Bytes read + written per pass. */
  bytesMoved: number;
  medianMs: number;
  gbs: number;
}

/** One configuration of the FP32 FMA sweep. */
export interface Fp32Trial {
  /** Independent scalar FMA chains per invocation (4 per vec4 accumulator). */
  chains: number;
  invocations: number;
  workgroupSize: number;
  iters: number;
  flops: number;
  medianMs: number;
  gflops: number;
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
  /** The bench's command-line flags. */
  argv?: string[];
  /** False when the run stopped early (device lost); the record holds what finished. */
  complete?: boolean;
  /** Kernels checked (not timed) on random shapes by `--validate N`. */
  validation?: ValidationSweep[];
}

/** One kernel checked on many random shapes against the float64 reference. */
export interface ValidationSweep {
  kernel: string;
  shapes: number;
  passed: number;
  /** The worst relative error seen, and failures (shape and message), if any. */
  maxRelErr: number;
  failures: { m: number; k: number; n: number; error: string }[];
}
