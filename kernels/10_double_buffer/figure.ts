/**
 * Step 10: the order of work per tile, 09's load-store-barrier-compute-barrier against 10's
 * register prefetch into the other buffer with one barrier per tile (kernels/10_double_buffer).
 * A schematic: the lengths of the blocks are not measured.
 */
import { loadsPerInvocation } from "../../lib/steps/tiling.ts";
import { ceilDiv } from "../../lib/steps/launch.ts";
import { type FigureContext, paramList, stepHeading } from "../../lib/figures/context.ts";
import {
  COLOR,
  type ConceptFigure,
  Drawing,
  finish,
  heading,
  legend,
  MARGIN,
  textWidth,
  tint,
  WIDTH,
} from "../../lib/figures/svg.ts";

type Kind = "load" | "store" | "fma" | "barrier";

/** One block of a timeline: what, on which lane, from when, for how long (schematic units). */
interface Block {
  kind: Kind;
  lane: 0 | 1 | 2;
  start: number;
  length: number;
  label: string;
}

/** Schematic lengths: a global load's latency, a store to workgroup memory, a tile's FMAs. */
const LOAD = 3, STORE = 1, FMA = 4, BARRIER = 0.35;

const FILL: Record<Kind, string> = {
  load: COLOR.sky,
  store: COLOR.b,
  fma: COLOR.c,
  barrier: COLOR.mark,
};

/** 09: each tile is loaded, stored, and multiplied in turn, with a barrier on either side. */
function singleBuffer(tiles: number): Block[] {
  const out: Block[] = [];
  let t0 = 0;
  for (let t = 0; t < tiles; t++) {
    out.push({ kind: "load", lane: 0, start: t0, length: LOAD, label: `load ${t}` });
    out.push({ kind: "store", lane: 1, start: t0 + LOAD, length: STORE, label: `st ${t}` });
    t0 += LOAD + STORE;
    out.push({ kind: "barrier", lane: 0, start: t0, length: BARRIER, label: "" });
    t0 += BARRIER;
    out.push({ kind: "fma", lane: 2, start: t0, length: FMA, label: `FMAs tile ${t}` });
    t0 += FMA;
    out.push({ kind: "barrier", lane: 0, start: t0, length: BARRIER, label: "" });
    t0 += BARRIER;
  }
  return out;
}

/**
 * 10: tile 0 is staged before the loop; then, per tile t, the loads of tile t + 1 are issued
 * into registers, the FMAs of tile t read buffer t % 2, tile t + 1 is stored into the other
 * buffer, and one barrier closes the trip.
 */
function doubleBuffer(tiles: number): Block[] {
  const out: Block[] = [
    { kind: "load", lane: 0, start: 0, length: LOAD, label: "load 0" },
    { kind: "store", lane: 1, start: LOAD, length: STORE, label: "→b0" },
    { kind: "barrier", lane: 0, start: LOAD + STORE, length: BARRIER, label: "" },
  ];
  let t0 = LOAD + STORE + BARRIER;
  for (let t = 0; t < tiles; t++) {
    const next = t + 1 < tiles;
    if (next) out.push({ kind: "load", lane: 0, start: t0, length: LOAD, label: `load ${t + 1}` });
    out.push({ kind: "fma", lane: 2, start: t0, length: FMA, label: `FMAs tile ${t} (b${t % 2})` });
    t0 += FMA;
    if (next) {
      out.push({ kind: "store", lane: 1, start: t0, length: STORE, label: `→b${(t + 1) % 2}` });
      t0 += STORE;
    }
    out.push({ kind: "barrier", lane: 0, start: t0, length: BARRIER, label: "" });
    t0 += BARRIER;
  }
  return out;
}

const LANES = ["global loads", "workgroup stores", "multiply-adds"];

/** One timeline; returns the y below it. */
function timeline(d: Drawing, y: number, title: string, blocks: Block[], unit: number): number {
  d.text(MARGIN, y, title, { size: 13, bold: true });
  y += 10;
  const x0 = MARGIN + 120, lh = 26;
  LANES.forEach((name, i) => {
    d.text(x0 - 8, y + i * lh + 17, name, { size: 11, anchor: "end", fill: COLOR.muted });
    d.line(x0, y + (i + 1) * lh, WIDTH - MARGIN, y + (i + 1) * lh, {
      stroke: COLOR.faint,
    });
  });
  for (const b of blocks) {
    const x = x0 + b.start * unit, w = b.length * unit;
    if (b.kind === "barrier") {
      d.rect(x, y, w, 3 * lh, { fill: COLOR.mark });
      continue;
    }
    d.rect(x, y + b.lane * lh + 3, w, lh - 6, {
      fill: b.kind === "load" ? tint(FILL.load, 0.3) : FILL[b.kind],
      stroke: "white",
      rx: 3,
    });
    if (textWidth(b.label, 10) < w - 4) {
      d.text(x + w / 2, y + b.lane * lh + 17, b.label, { size: 10, anchor: "middle" });
    }
  }
  return y + 3 * lh + 16;
}

export function doubleBufferFigure(ctx: FigureContext): ConceptFigure {
  const p = ctx.params;
  const [la, lb] = loadsPerInvocation(p);
  const shown = 3;
  const before = singleBuffer(shown), after = doubleBuffer(shown);
  const end = (bs: Block[]) => Math.max(...bs.map((b) => b.start + b.length));
  const unit = (WIDTH - 2 * MARGIN - 130) / end(before);
  const d = new Drawing(WIDTH, 0);
  let y = heading(
    d,
    `${stepHeading(ctx.spec)}: the next tile's loads fly while this tile is multiplied`,
    `${paramList(p, ["BM", "BN", "BK", "PAD"])}: per tile each invocation loads ${la} vec4 of ` +
      `A and ${lb} of B into registers; two buffers of each tile, ` +
      `${ctx.spec.workgroupStorageBytes(p)} bytes. The first ${shown} of ` +
      `${ceilDiv(ctx.shape.k, p.BK)} tiles (K = ${ctx.shape.k}); a schematic: block lengths ` +
      "are illustrative, not measured.",
  );
  y += 14;
  y = timeline(
    d,
    y,
    "Before (09): load → store → barrier → multiply-adds → barrier, tile after tile",
    before,
    unit,
  );
  y = timeline(
    d,
    y + 6,
    "After (10): loads of tile t + 1 in flight during the multiply-adds of tile t; one barrier",
    after,
    unit,
  );
  y = d.paragraph(
    MARGIN,
    y,
    "b0 / b1: the buffer a tile is stored into and read from. The store into the other buffer " +
      "is safe without a second barrier: that buffer was last read for tile t - 1, before the " +
      "previous barrier.",
    WIDTH - 2 * MARGIN,
    { size: 11, fill: COLOR.muted },
  );
  y = legend(d, y + 4, [
    { color: tint(FILL.load, 0.3), label: "global loads in flight (into registers)" },
    { color: FILL.store, label: "store into workgroup memory" },
    { color: FILL.fma, label: "multiply-adds of one tile" },
    { color: FILL.barrier, label: "workgroupBarrier()" },
  ]);
  return finish(
    d,
    y,
    `${stepHeading(ctx.spec)}: 09 waits for each tile's global loads before its multiply-adds ` +
      "and meets two barriers per tile; 10 issues tile t + 1's loads into registers, multiplies " +
      "tile t from one buffer, stores tile t + 1 into the other, and meets one barrier " +
      "(schematic, not to scale).",
  );
}
