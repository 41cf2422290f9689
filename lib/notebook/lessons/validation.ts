/**
 * The pass rule with its numbers: for a few square sizes, the bound b on one element's scaled
 * error, how many elements are compared, and the margins that turn b into the two limits a
 * result must stay under (lib/accuracy.ts; the runner's checks, lib/measure.ts).
 */
import { errorBound, F32_NUMERICS, meanSquareTail, worstTail } from "../../accuracy.ts";
import { checkRowsFor } from "../../measure.ts";
import { showTable } from "../format.ts";

/** The limits an f32 product of N x N by N x N is held to. */
export interface PassRule {
  n: number;
  /** b: three times the rms scaled error f32 rounding is expected to leave at K = n. */
  bound: number;
  rowsCompared: number;
  elementsCompared: number;
  /** The rms of the compared elements' scaled errors may reach b times this margin. */
  rmsMargin: number;
  /** The largest may reach b times t. */
  worstT: number;
  /** The row check's margin and t, over its n projected rows. */
  rowMargin: number;
  rowT: number;
}

export function passRule(n: number): PassRule {
  const shape = { m: n, k: n, n };
  const rowsCompared = checkRowsFor(shape);
  const elementsCompared = rowsCompared * n;
  return {
    n,
    bound: errorBound(F32_NUMERICS, n),
    rowsCompared,
    elementsCompared,
    rmsMargin: meanSquareTail(elementsCompared),
    worstT: worstTail(elementsCompared),
    rowMargin: meanSquareTail(n),
    rowT: worstTail(n),
  };
}

/** The pass rule's numbers at each size, as a table. */
export async function showPassRule(sizes: number[]): Promise<void> {
  const rules = sizes.map(passRule);
  await showTable(
    [
      "N",
      "b",
      "rows compared",
      "elements compared",
      "rms margin",
      "t",
      "rms limit",
      "largest limit",
      "row check: margin",
      "row check: t",
    ],
    rules.map((r) => [
      r.n,
      r.bound,
      r.rowsCompared,
      r.elementsCompared,
      r.rmsMargin,
      r.worstT,
      r.bound * r.rmsMargin,
      r.bound * r.worstT,
      r.rowMargin,
      r.rowT,
    ]),
    "The pass rule for an N x N x N product in f32: each limit is in units of an element's scale",
  );
}
