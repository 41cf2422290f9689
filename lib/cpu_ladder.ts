/**
 * The CPU ladder: each rung one change to the one before, all validated against the float64
 * reference and timed the same way (lib/cpu_bench.ts). The rungs are described here once; the
 * suite, the chart and notebook 01 read this list.
 */
import { blockedMatmul, type CpuMatmul, ikjMatmul, naiveMatmul } from "./cpu.ts";
import { MR, NR, simdMatmul } from "./cpu_simd.ts";
import type { CpuThreads } from "./cpu_threads.ts";

/** One rung of the CPU ladder. */
export interface CpuStep {
  /** Record id ("simd-blocked"). */
  id: string;
  /** Table and chart label. */
  title: string;
  /** What this rung changes from the one before, in a sentence. */
  change: string;
  /** The matmul; the threaded rung runs on the pool it is given (none: it cannot run). */
  matmul(pool?: CpuThreads): CpuMatmul | undefined;
}

export const CPU_LADDER: readonly CpuStep[] = [
  {
    id: "naive-ijk",
    title: "naive ijk",
    change: "One dot product per element of C: the inner loop walks B down a column.",
    matmul: () => naiveMatmul,
  },
  {
    id: "ikj",
    title: "ikj",
    change: "Loops reordered so the inner loop walks rows of B and C: unit stride.",
    matmul: () => ikjMatmul,
  },
  {
    id: "packed",
    title: "packed, 2x4 registers",
    change: "A and B copied into contiguous panels, and a 2 x 4 tile of C kept in local " +
      "variables across the k loop: each load of A or B feeds several multiply-adds.",
    matmul: () => (a, b, shape) => blockedMatmul(a, b, shape, 0),
  },
  {
    id: "simd",
    title: "WebAssembly SIMD",
    change: `The micro-kernel in WebAssembly SIMD: a ${MR} x ${NR} tile of C in vector ` +
      "registers, four lanes per instruction, a fused multiply-add where the runtime has relaxed " +
      "SIMD; the panels still span the whole matrix.",
    matmul: () => (a, b, shape) => simdMatmul(a, b, shape, { kc: shape.k, mc: shape.m + MR }),
  },
  {
    id: "simd-blocked",
    title: "SIMD, cache blocks",
    change: "K and the rows of A cut into blocks sized from the caches the machine reports: " +
      "a panel pair fits L1, a block of A fits L2.",
    matmul: () => (a, b, shape) => simdMatmul(a, b, shape),
  },
  {
    id: "threads",
    title: "SIMD, all cores",
    change: "The rows of C split over one Worker per core, sharing one WebAssembly memory.",
    matmul: (pool) => pool && ((a, b, shape) => pool.multiply(a, b, shape)),
  },
];
