/**
 * The CPU side as notebook tables (measured by lib/cpu_bench.ts): the CPU ladder, the
 * cache-blocking sweep, and the suite beside OpenBLAS and jax-js.
 */
import { peerLabel } from "../../charts/common.ts";
import type { CpuSuite } from "../../cpu_bench.ts";
import type { SweepRow } from "../../record.ts";
import { showBullets, showTable } from "../format.ts";
import { showBundle } from "../jupyter.ts";
import { CPU_LADDER } from "../../cpu_ladder.ts";
import { ikjMatmul, naiveMatmul } from "../../cpu.ts";

/** Show a block-size sweep as a table (block 0 = one block spanning the matrix). */
export async function showSweep(rows: SweepRow[]): Promise<void> {
  await showTable(
    ["N", "block", "validated", "rel. error", "median ms", "GFLOP/s"],
    rows.map((r) => [r.n, r.block, r.validated, r.relErr, r.medianMs, r.gflops]),
    "Cache blocking: block-size sweep, one core (block 0 = one block spanning the matrix)",
  );
}

/**
 * Show a CPU suite: our matmuls and OpenBLAS at each size, each as a multiple of naive ijk and
 * as a share of single-threaded OpenBLAS.
 */
export async function showCpuSuite(suite: CpuSuite): Promise<void> {
  const rows = [
    ...suite.cpu.impls.map((r) => ({ ...r, label: r.impl })),
    ...suite.peers.map((p) => ({
      ...p,
      label: peerLabel(p.peer),
    })),
  ];
  const at = (label: string, n: number) =>
    rows.find((r) => r.label === label && r.n === n && r.validated)?.gflops;
  await showTable(
    [
      "implementation",
      "N",
      "validated",
      "rel. error",
      "median ms",
      "GFLOP/s",
      "x naive ijk",
      "% of OpenBLAS 1t",
    ],
    rows.map((r) => {
      const naive = at("naive ijk", r.n);
      const blas = at(peerLabel("openblas-1t"), r.n);
      return [
        r.label,
        r.n,
        r.validated,
        r.relErr,
        r.medianMs,
        r.gflops,
        naive && r.gflops ? r.gflops / naive : undefined,
        blas && r.gflops ? (100 * r.gflops) / blas : undefined,
      ];
    }),
    `CPU matmuls on ${suite.cpu.machine.model} (${suite.cpu.machine.logicalCores} logical cores)`,
  );
  if (suite.cpu.notes.length) await showBullets(suite.cpu.notes);
}

/**
 * The CPU ladder as the reader climbs it: each rung and what it changes, then the first two loop
 * nests as they are written (lib/cpu.ts), the change between them the order of two loops.
 */
export async function showCpuLadder(): Promise<void> {
  await showTable(
    ["rung", "what it changes"],
    CPU_LADDER.map((s) => [s.title, s.change]),
    "The CPU ladder (lib/cpu_ladder.ts; the SIMD kernel is written by lib/cpu_simd.ts)",
  );
  for (const [title, fn] of [["naive ijk", naiveMatmul], ["ikj", ikjMatmul]] as const) {
    await showBundle({ "text/plain": `// ${title}\n${fn.toString()}` });
  }
}
