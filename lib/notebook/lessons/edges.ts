/**
 * Shapes that are not tile multiples: what the runner's padding prevents, and the edge strips
 * that keep one row past a tile from costing a whole row of tiles.
 */
import { GemmError } from "../../errors.ts";
import { type Shape, shapeLabel } from "../../matrix.ts";
import { type EdgePlan, edgePlan, hasEdgeStrips, STRIP_WIDTH } from "../../steps/launch.ts";
import { type KernelSpec, stepName } from "../../registry.ts";
import type { KernelResult } from "../../record.ts";
import { kernelParams, runKernel } from "../../runner.ts";
import { type Cell, fmt, showNote, showTable } from "../format.ts";
import { kernel } from "../steps.ts";
import { recordedGpuRun } from "../recorded.ts";
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

// ---------------------------------------------------------------------------------------------
// Thin edges: one more row of tiles for one row of C, or the edge-strip kernel.

/** One big-tile kernel one row and column past a tile multiple, with edge strips and without. */
export interface EdgeStripCheck {
  kernel: string;
  tile: { bm: number; bn: number };
  aligned: Shape;
  odd: Shape;
  plan: EdgePlan;
  /** Workgroups of tiles: every edge tile without strips, whole tiles only with them. */
  tilesWithout: number;
  tilesWith: number;
  atAligned: KernelResult;
  withStrips: KernelResult;
  withoutStrips: KernelResult;
}

/**
 * Run a kernel that allows edge strips (06-11) at a multiple of its tile, then one past it with
 * the strips and with bounds-checked edge tiles instead. Sizes near `n`, at least one tile.
 */
export async function checkEdgeStrips(s: Session, key: string, n: number): Promise<EdgeStripCheck> {
  const spec = kernel(key);
  if (!spec.edgeStrips) throw new GemmError("params", `${spec.id} has no edge strips`);
  const p = kernelParams(s.gpu, spec);
  const t = Math.max(p.BM, p.BN);
  const base = Math.max(1, Math.floor(n / t)) * t;
  const aligned = { m: base, k: base, n: base };
  const odd = { m: base + 1, k: base + 1, n: base + 1 };
  const run = (shape: Shape, edgeStrips: boolean) =>
    runKernel(s.gpu, spec, shape, { edgeStrips, budgetMs: s.software ? 300 : 400 });
  return {
    kernel: spec.id,
    tile: { bm: p.BM, bn: p.BN },
    aligned,
    odd,
    plan: edgePlan(odd, p.BM, p.BN),
    tilesWithout: Math.ceil(odd.m / p.BM) * Math.ceil(odd.n / p.BN),
    tilesWith: Math.floor(odd.m / p.BM) * Math.floor(odd.n / p.BN),
    atAligned: await run(aligned, true),
    withStrips: await run(odd, true),
    withoutStrips: await run(odd, false),
  };
}

/** Show checkEdgeStrips, and the GPU host's recorded 4096 and 4097 for the same kernel. */
export async function showEdgeStrips(c: EdgeStripCheck): Promise<void> {
  const ratio = (r: KernelResult) =>
    r.gflops && c.atAligned.gflops ? r.gflops / c.atAligned.gflops : undefined;
  const row = (what: string, r: KernelResult, tiles: number | string): Cell[] => [
    what,
    shapeLabel({ m: r.m, k: r.k, n: r.n }),
    tiles,
    r.validated,
    r.relErr,
    r.gflops,
    ratio(r),
  ];
  const tiles = (shape: Shape) => Math.ceil(shape.m / c.tile.bm) * Math.ceil(shape.n / c.tile.bn);
  await showTable(
    ["launch", "shape", "workgroups of tiles", "validated", "rel. error", "GFLOP/s", "x aligned"],
    [
      row("aligned", c.atAligned, tiles(c.aligned)),
      row("edge tiles (bounds-checked)", c.withoutStrips, c.tilesWithout),
      row("whole tiles + edge strips", c.withStrips, `${c.tilesWith} + strips`),
    ],
    `${c.kernel} (${c.tile.bm} x ${c.tile.bn} tiles) one past a tile multiple, on this adapter`,
  );
  const found = await recordedGpuRun([c.kernel]);
  const at = (m: number) =>
    found?.record.results.find((r) =>
      stepName(r.kernel) === stepName(c.kernel) && r.m === m && r.k === m && r.n === m &&
      r.validated
    );
  const [r4096, r4097] = [at(4096), at(4097)];
  if (!found || !r4096?.gflops || !r4097?.gflops) {
    await showNote("No GPU record with this kernel at 4096 and 4097 is committed yet.");
    return;
  }
  const how = r4097.edgeStrips ? "whole tiles plus edge strips" : "bounds-checked edge tiles";
  await showNote(
    `Recorded on ${found.record.device.description} (${found.record.date.slice(0, 10)}, commit ` +
      `${found.record.commit}): **${fmt(r4096.gflops)}** GFLOP/s at 4096 and ` +
      `**${fmt(r4097.gflops)}** at 4097 (${how}), **${fmt(r4097.gflops / r4096.gflops)}x**.`,
  );
}
