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
  const { m, n } = shape;
  const rowList = rows ?? Array.from({ length: m }, (_, i) => i);
  const out = new Float64Array(rowList.length * n);
  rowList.forEach((i, r) => referenceRow(a, b, shape, i, out.subarray(r * n, (r + 1) * n)));
  return out;
}

/**
 * Row i of C = A * B in float64, added into `out` (n zeros). With `scale`, also each element's
 * sum_p (a_ip b_pj)^2, the size its rounding errors scale with (lib/accuracy.ts).
 */
export function referenceRow(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  { k, n }: Shape,
  i: number,
  out: Float64Array,
  scale?: Float64Array,
): void {
  for (let p = 0; p < k; p++) {
    const aip = a[i * k + p];
    const bRow = p * n;
    if (!scale) {
      for (let j = 0; j < n; j++) out[j] += aip * b[bRow + j];
      continue;
    }
    const aip2 = aip * aip;
    for (let j = 0; j < n; j++) {
      const bpj = b[bRow + j];
      out[j] += aip * bpj;
      scale[j] += aip2 * bpj * bpj;
    }
  }
}

/** The full product C = A * B in float64. */
export function referenceMatmul(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  shape: Shape,
): Float64Array {
  return referenceRows(a, b, shape);
}
