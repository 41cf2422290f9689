/**
 * Shapes that are not tile multiples: what the runner's padding prevents, checked with it and
 * without.
 */
import { type Shape, shapeLabel } from "../../matrix.ts";
import { hasEdgeStrips, STRIP_WIDTH } from "../../steps/launch.ts";
import type { KernelSpec } from "../../registry.ts";
import { kernelParams, runKernel } from "../../runner.ts";
import { type Cell, showTable } from "../format.ts";
import { kernel } from "../steps.ts";
import type { Session } from "../session.ts";

// ---------------------------------------------------------------------------------------------
// Shapes that are not tile multiples: what the runner's zero padding prevents.

/** How one kernel deals with a shape, and what happens when the safety net is removed. */
export interface ShapeCheck {
  kernel: string;
  shape: Shape;
  /** "any size (bounds checks)" or the tile multiples the runner pads to. */
  handling: string;
  validated: boolean;
  relErr: number;
  /** With padding switched off: still correct, or the error the validation reported. */
  withoutPadding?: { validated: boolean; relErr: number; error?: string };
}

/**
 * Validate each kernel at `shape` as registered, and, for kernels that rely on the runner's
 * zero padding, once more with padding switched off, to show what the padding prevents.
 */
export async function checkShapes(
  s: Session,
  keys: string[],
  shape: Shape,
): Promise<ShapeCheck[]> {
  const out: ShapeCheck[] = [];
  for (const key of keys) {
    const spec = kernel(key);
    const params = kernelParams(s.gpu, spec, undefined, shape);
    const al = spec.align(params);
    const pads = al.m > 1 || al.n > 1 || al.k > 1;
    const r = await runKernel(s.gpu, spec, shape, { params, skipTiming: true });
    const check: ShapeCheck = {
      kernel: spec.id,
      shape,
      handling: (pads
        ? `runner pads M, N, K up to multiples of ${al.m}, ${al.n}, ${al.k}`
        : "any size (bounds checks in the kernel)") +
        (hasEdgeStrips(spec, params)
          ? `; 1-${STRIP_WIDTH} rows or columns past a tile: edge strips`
          : ""),
      validated: r.validated,
      relErr: r.relErr,
    };
    if (pads) {
      const unpadded: KernelSpec = { ...spec, align: () => ({ m: 1, n: 1, k: 1 }) };
      const u = await runKernel(s.gpu, unpadded, shape, { skipTiming: true });
      check.withoutPadding = { validated: u.validated, relErr: u.relErr, error: u.error };
    }
    out.push(check);
  }
  return out;
}

/** Show checkShapes results. */
export async function showShapeChecks(checks: ShapeCheck[]): Promise<void> {
  const rows: Cell[][] = checks.map((c) => [
    c.kernel,
    shapeLabel(c.shape),
    c.handling,
    c.validated,
    c.relErr,
    c.withoutPadding ? c.withoutPadding.validated : "n/a",
    c.withoutPadding?.relErr,
  ]);
  await showTable(
    [
      "kernel",
      "shape",
      "how it handles edges",
      "validated",
      "rel. error",
      "validated without padding",
      "rel. error without padding",
    ],
    rows,
    "Shapes that are not tile multiples",
  );
}
