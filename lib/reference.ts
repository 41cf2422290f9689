/**
 * The float64 reference every result is checked against. Accumulates in double precision in
 * i-p-j order (contiguous inner loop), so it is exact enough to judge float32 kernels.
 */
import { checkOperands, type Shape } from "./matrix.ts";

/**
 * Rows `rows` of C = A * B computed in float64. Returns a rows.length x n matrix (row r of the
 * result is row rows[r] of C). Pass no rows for the whole product.
 */
export function referenceRows(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  shape: Shape,
  rows?: readonly number[],
): Float64Array {
  checkOperands(shape, a, b);
  const { m, k, n } = shape;
  const rowList = rows ?? Array.from({ length: m }, (_, i) => i);
  const out = new Float64Array(rowList.length * n);
  for (let r = 0; r < rowList.length; r++) {
    const i = rowList[r];
    const base = r * n;
    for (let p = 0; p < k; p++) {
      const aip = a[i * k + p];
      const bRow = p * n;
      for (let j = 0; j < n; j++) out[base + j] += aip * b[bRow + j];
    }
  }
  return out;
}

/** The full product C = A * B in float64. */
export function referenceMatmul(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  shape: Shape,
): Float64Array {
  return referenceRows(a, b, shape);
}
