/**
 * The CPU ladder: each rung one change to the one before, all validated against the float64
 * reference and timed the same way (lib/cpu_bench.ts). The rungs are described here once; the
 * suite, the chart and notebook 01 read this list.
 */
import { blockedMatmul, type CpuMatmul, ikjMatmul, naiveMatmul } from "./cpu.ts";
import { type CacheSizes, cacheSizes, MR, NR, simdMatmul } from "./cpu_simd.ts";
import type { CpuThreads } from "./cpu_threads.ts";

/** One rung of the CPU ladder. */
export interface CpuStep {
  /** Record id ("simd"). */
  id: string;
  /** Table and chart label. */
  title: string;
  /** What this rung changes from the one before, in a sentence. */
  change: string;
  /** The matmul; the threaded rung runs on the pool it is given (none: it cannot run). */
  matmul(pool?: CpuThreads): CpuMatmul | undefined;
}

/**
 * The packed TypeScript kernel's square block (lib/cpu.ts): a block of A and one of B take half
 * of L2, in whole 8-element steps (multiples of its 2 x 4 register tile).
 */
export function packedBlockFor(caches: CacheSizes): number {
  return Math.max(8, Math.floor(Math.sqrt(caches.l2 / 2 / (2 * 4)) / 8) * 8);
}

let machineBlock: number | undefined;
const packedBlock = () => machineBlock ??= packedBlockFor(cacheSizes());

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
    id: "blocked",
    title: "packed, cache blocks",
    change: "The same kernel on blocks of A, B and C sized so a block of A and one of B fit " +
      "half of the L2 cache the machine reports: each block is reused while it is in cache.",
    matmul: () => (a, b, shape) => blockedMatmul(a, b, shape, packedBlock()),
  },
  {
    id: "simd",
    title: "WebAssembly SIMD",
    change: `The micro-kernel in WebAssembly SIMD: a ${MR} x ${NR} tile of C in vector ` +
      "registers, four lanes per instruction, a fused multiply-add where the runtime has relaxed " +
      "SIMD; its blocks sized from L1 (a panel pair) and L2 (a block of A).",
    matmul: () => (a, b, shape) => simdMatmul(a, b, shape),
  },
  {
    id: "threads",
    title: "SIMD, all cores",
    change: "The rows of C split over one Worker per core, sharing one WebAssembly memory.",
    matmul: (pool) => pool && ((a, b, shape) => pool.multiply(a, b, shape)),
  },
];
