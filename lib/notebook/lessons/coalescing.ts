/**
 * Coalescing: which addresses one subgroup touches under each index mapping (pure index
 * arithmetic, nothing is timed).
 */
import { showTable } from "../format.ts";

/** Addresses (in floats) the invocations of one subgroup touch at one step of the k loop. */
export interface AccessRow {
  mapping: string;
  matrix: "A" | "B" | "C";
  addresses: number[];
  /** Distinct 32-byte segments those addresses fall in. */
  segments: number;
}

/**
 * For `lanes` consecutive invocations (x = 0..lanes-1, y = 0) of an N x N problem at loop step
 * p, list what each mapping reads of A and B and writes of C. "x → row" is the naive kernel's
 * mapping, "x → column" the coalesced one. Pure index arithmetic: nothing is timed.
 */
export function subgroupAccesses(n: number, lanes: number, p = 0): AccessRow[] {
  const rows: AccessRow[] = [];
  const segment = (addrs: number[]) => new Set(addrs.map((a) => Math.floor((a * 4) / 32))).size;
  for (const mapping of ["x → row", "x → column"]) {
    const lane = Array.from({ length: lanes }, (_, x) => x);
    const rowOf = (x: number) => (mapping === "x → row" ? x : 0);
    const colOf = (x: number) => (mapping === "x → row" ? 0 : x);
    const a = lane.map((x) => rowOf(x) * n + p);
    const b = lane.map((x) => p * n + colOf(x));
    const c = lane.map((x) => rowOf(x) * n + colOf(x));
    for (const [matrix, addresses] of [["A", a], ["B", b], ["C", c]] as const) {
      rows.push({ mapping, matrix, addresses, segments: segment(addresses) });
    }
  }
  return rows;
}

/** Show subgroupAccesses as a table (addresses abbreviated when long). */
export async function showAccesses(rows: AccessRow[], n: number, lanes: number): Promise<void> {
  const list = (xs: number[]) =>
    xs.length <= 8 ? xs.join(", ") : `${xs.slice(0, 4).join(", ")}, ..., ${xs.at(-1)}`;
  const distinct = (xs: number[]) => new Set(xs).size;
  await showTable(
    ["mapping", "matrix", "float offsets touched", "distinct floats", "32-byte segments"],
    rows.map((r) => [r.mapping, r.matrix, list(r.addresses), distinct(r.addresses), r.segments]),
    `${lanes} neighbouring invocations, N = ${n}, one step of the k loop`,
  );
}
