/**
 * Where the time goes: the GPU host's ablation of the autotuned kernel, stage by stage.
 */
import { loadAblation } from "../ablation.ts";
import { fmt, showNote, showTable } from "./format.ts";

/**
 * Show one configuration of a device's ablation (data/ablation/<device>.json): the time with
 * each stage of the
 * tile loop taken out on top of the ones above, what each stage costs, and how the loop with
 * only its multiply-adds left compares with cuBLAS measured in the same run.
 */
export async function showAblation(device: string, config: string): Promise<void> {
  const a = await loadAblation(device, config);
  const whole = a.stages[0].ms;
  await showTable(
    [
      "left out (with the rows above)",
      "µs",
      "GFLOP/s-equivalent",
      "the stage costs µs",
      "% of the whole",
    ],
    a.stages.map((s) => [
      s.leftOut,
      s.ms * 1e3,
      s.gflopsEquivalent,
      s.costMs === undefined ? undefined : s.costMs * 1e3,
      s.costMs === undefined ? undefined : (100 * s.costMs) / whole,
    ]),
    `autotune ${config} at ${a.shape}, ${a.device}, ${a.started.slice(0, 16)}Z` +
      `${a.commit ? `, commit ${a.commit.slice(0, 7)}` : ""} (data/ablation/${device}.json); ` +
      "median GPU time of each variant",
  );
  const last = a.stages.at(-1)!;
  const ofCublas = (g: number) => a.cublasGflops ? ` (${fmt(g / a.cublasGflops)} of cuBLAS)` : "";
  await showNote(
    `In the same run the whole kernel was validated (relative error ${fmt(a.validated.relErr)}) ` +
      `at ${fmt(a.validated.gflops)} GFLOP/s${ofCublas(a.validated.gflops)}` +
      (a.cublasGflops ? `, and cuBLAS ran at ${fmt(a.cublasGflops)}` : "") +
      `. With only its multiply-adds left the loop runs at ${fmt(last.gflopsEquivalent)}` +
      `${ofCublas(last.gflopsEquivalent)}.`,
  );
}
