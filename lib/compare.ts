/**
 * How a speed is compared, one rule everywhere (the bench's table, the charts, the shape suite,
 * the README's tables and the notebooks): the reference at a shape is cuBLAS where it validated
 * there (the library a CUDA programmer would call), else the fastest validated GPU peer at that
 * shape (TF.js, jax-js), named wherever the percentage is shown. A CPU peer (OpenBLAS) is never
 * a GPU kernel's reference.
 */
import { sameShape, type Shape } from "./matrix.ts";
import type { PeerResult } from "./record.ts";

/** Peers that run on the CPU (OpenBLAS, jax-js's wasm backend): compared with the CPU ladder. */
const onCpu = (p: Pick<PeerResult, "peer">) =>
  p.peer.startsWith("openblas") || p.peer.endsWith("-wasm");

/** The reference peer at `shape` among `peers` (the rule above), or undefined when none ran. */
export function referencePeer<P extends PeerResult>(
  peers: readonly P[],
  shape: Shape,
): P | undefined {
  const here = peers.filter((p) =>
    p.validated && p.gflops !== undefined && p.gflops > 0 && !onCpu(p) && sameShape(p, shape)
  );
  return here.find((p) => p.peer === "cublas") ??
    here.reduce<P | undefined>((a, p) => (a && a.gflops! >= p.gflops! ? a : p), undefined);
}

/** `gflops` as a percentage of the reference's, or undefined when either is missing. */
export function percentOf(gflops: number | undefined, reference?: PeerResult): number | undefined {
  return gflops !== undefined && reference?.gflops ? (100 * gflops) / reference.gflops : undefined;
}

/** `x / of`, or undefined when either is missing. */
export const ratio = (x?: number, of?: number): number | undefined =>
  x !== undefined && of ? x / of : undefined;

/** The geometric mean of the defined values (undefined when there are none). */
export function geomean(values: (number | undefined)[]): number | undefined {
  const xs = values.filter((v): v is number => v !== undefined && v > 0);
  return xs.length ? Math.exp(xs.reduce((s, x) => s + Math.log(x), 0) / xs.length) : undefined;
}
