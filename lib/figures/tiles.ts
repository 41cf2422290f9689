/**
 * Steps 04-07: the workgroup tiles of A and B sliding along K (04), each invocation's column
 * (05) and 8 x 8 block (06) of outputs, and the vec4 loads with A transposed in workgroup
 * memory (07). Sizes are the parameters' and the mappings the kernels' WGSL.
 */
import { ceilDiv } from "../steps/launch.ts";
import type { Params } from "../steps/spec.ts";
import { type FigureContext, paramList, stepHeading } from "./context.ts";
import {
  COLOR,
  type ConceptFigure,
  Drawing,
  finish,
  heading,
  legend,
  MARGIN,
  tint,
  WIDTH,
  wrap,
} from "./svg.ts";

/** Rows of C per invocation in 05 (the WGSL's `const TM`) and per block in 06/07. */
export const TM = 8;

/** A box with a heavy outline and a name above it. */
function namedBox(
  d: Drawing,
  x: number,
  y: number,
  w: number,
  h: number,
  name: string,
  color: string,
) {
  d.rect(x, y, w, h, { fill: tint(color, 0.85), stroke: color, width: 1.5 });
  d.text(x, y - 5, name, { size: 11, bold: true, fill: color });
}

/** Notes in a column from (x, y); returns the y below them. */
function notes(d: Drawing, x: number, y: number, lines: string[], size = 12): number {
  for (const line of lines) y = d.paragraph(x, y, line, WIDTH - MARGIN - x, { size }) + 5;
  return y;
}

export function tiledFigure(ctx: FigureContext): ConceptFigure {
  const { TILE } = ctx.params;
  const tiles = ceilDiv(ctx.shape.k, TILE);
  const d = new Drawing(WIDTH, 0);
  const top = heading(
    d,
    `${stepHeading(ctx.spec)}: ${TILE} x ${TILE} tiles of A and B in workgroup memory`,
    `A workgroup of ${TILE} x ${TILE} invocations computes one ${TILE} x ${TILE} tile of C, ` +
      `walking K one tile at a time (${tiles} tiles at K = ${ctx.shape.k}).`,
  );
  // Schematic matrices, to scale in tiles: 5 tiles along K, 4 along M and N.
  const t = 30, along = 5, across = 4;
  const ax = MARGIN + 20, cy = top + 40 + along * t + 14;
  const cx = ax + along * t + 14, by = top + 40;
  const wgRow = 1, wgCol = 2, step = 2;
  // A: the workgroup's band of rows; B: its band of columns.
  d.rect(ax, cy, along * t, across * t, { stroke: COLOR.a, width: 1.5 });
  d.rect(ax, cy + wgRow * t, along * t, t, { fill: tint(COLOR.a, 0.8) });
  d.rect(ax + step * t, cy + wgRow * t, t, t, { fill: COLOR.a });
  d.gridLines(ax, cy + wgRow * t, along * t, t, along, 1, { stroke: COLOR.a, width: 0.8 });
  d.text(ax, cy + across * t + 16, `A (M x K)`, { size: 12, bold: true, fill: COLOR.a });
  d.rect(cx, by, across * t, along * t, { stroke: COLOR.b, width: 1.5 });
  d.rect(cx + wgCol * t, by, t, along * t, { fill: tint(COLOR.b, 0.8) });
  d.rect(cx + wgCol * t, by + step * t, t, t, { fill: COLOR.b });
  d.gridLines(cx + wgCol * t, by, t, along * t, 1, along, { stroke: COLOR.b, width: 0.8 });
  d.text(cx - 8, by + 12, `B (K x N)`, { size: 12, bold: true, fill: COLOR.b, anchor: "end" });
  d.rect(cx, cy, across * t, across * t, { stroke: COLOR.c, width: 1.5 });
  d.rect(cx + wgCol * t, cy + wgRow * t, t, t, { fill: COLOR.c });
  d.text(cx, cy + across * t + 16, `C (M x N)`, { size: 12, bold: true, fill: COLOR.c });
  // The slide along K.
  d.arrow(ax + 4, cy + wgRow * t - 8, ax + along * t - 4, cy + wgRow * t - 8, COLOR.a);
  d.text(ax + 4, cy + wgRow * t - 14, "tile t = 0, 1, …", { size: 11, fill: COLOR.a });
  d.arrow(cx + wgCol * t + t + 8, by + 4, cx + wgCol * t + t + 8, by + along * t - 4, COLOR.b);
  d.dimension(
    cx + wgCol * t,
    cy + across * t + 30,
    cx + wgCol * t + t,
    cy + across * t + 30,
    `${TILE}`,
    1,
  );

  // The loop body, with its two barriers.
  const lx = cx + across * t + 50, lw = WIDTH - MARGIN - lx;
  let y = top + 30;
  d.text(lx, y, `For each tile t (${tiles} at K = ${ctx.shape.k}):`, { size: 13, bold: true });
  y += 12;
  const box = (text: string, fill: string, stroke: string) => {
    const h = 12 + 16.2 * wrap(text, lw - 16, 12).length;
    d.rect(lx, y, lw, h, { fill, stroke, rx: 4 });
    d.paragraph(lx + 8, y + 17, text, lw - 16, { size: 12 });
    y += h + 8;
  };
  box(
    `Load: invocation (x, y) copies A[row][t·${TILE} + x] into As[y][x] and ` +
      `B[t·${TILE} + y][col] into Bs[y][x]: one element of each, ${
        2 * TILE * TILE
      } loads per tile.`,
    tint(COLOR.a, 0.88),
    COLOR.a,
  );
  box(
    "workgroupBarrier() (read after write): no invocation reads As or Bs before all have written.",
    tint(COLOR.mark, 0.85),
    COLOR.mark,
  );
  box(
    `Compute: ${TILE} multiply-adds, sum += As[y][p] · Bs[p][x] for p = 0..${TILE - 1}, ` +
      `every operand from workgroup memory.`,
    tint(COLOR.c, 0.85),
    COLOR.c,
  );
  box(
    "workgroupBarrier() (write after read): nobody overwrites the tiles with tile t + 1 " +
      "until all have finished reading tile t.",
    tint(COLOR.mark, 0.85),
    COLOR.mark,
  );
  y = notes(d, lx, y + 14, [
    `Each element of A and B is loaded from global memory once per tile, ${TILE} times less ` +
    `often than in 03. Workgroup memory: ${ctx.spec.workgroupStorageBytes(ctx.params)} bytes.`,
  ]);
  const bottom = Math.max(y, cy + across * t + 50);
  const end = legend(d, bottom, [
    { color: COLOR.a, label: "A tile t (As)" },
    { color: COLOR.b, label: "B tile t (Bs)" },
    { color: COLOR.c, label: "the workgroup's C tile" },
    { color: tint(COLOR.mark, 0.85), label: "barrier" },
  ]);
  return finish(
    d,
    end,
    `${stepHeading(ctx.spec)}: a ${TILE} x ${TILE} workgroup stages a ${TILE} x ${TILE} tile ` +
      `of A and one of B in workgroup memory, ${tiles} times along K = ${ctx.shape.k}; a ` +
      "barrier after the loads (read after write) and one after the multiply-adds (write after " +
      "read) guard the shared tiles.",
  );
}

/**
 * The A tile (BM x BK, left of C), the B tile (BK x BN, above C) and the C tile (BM x BN), to
 * scale at `u` px per element, from (x, y). Returns the C tile's corner and size.
 */
export function tileTriple(
  d: Drawing,
  x: number,
  y: number,
  p: Params,
  u: number,
) {
  const gap = 14;
  const cx = x + p.BK * u + gap, cy = y + p.BK * u + gap;
  namedBox(d, x, cy, p.BK * u, p.BM * u, "", COLOR.a);
  namedBox(d, cx, y, p.BN * u, p.BK * u, "", COLOR.b);
  d.rect(cx, cy, p.BN * u, p.BM * u, { stroke: COLOR.c, width: 1.5 });
  d.text(x + (p.BK * u) / 2, cy + p.BM * u + 16, `As ${p.BM} x ${p.BK}`, {
    size: 11,
    anchor: "middle",
    fill: COLOR.a,
    bold: true,
  });
  d.text(cx + p.BN * u + 6, y + (p.BK * u) / 2 + 4, `Bs ${p.BK} x ${p.BN}`, {
    size: 11,
    fill: COLOR.b,
    bold: true,
  });
  d.text(cx + (p.BN * u) / 2, cy + p.BM * u + 16, `C tile ${p.BM} x ${p.BN}`, {
    size: 11,
    anchor: "middle",
    fill: COLOR.c,
    bold: true,
  });
  return { cx, cy, w: p.BN * u, h: p.BM * u };
}

/** Highlight colours of the invocations a figure singles out, in order. */
const PICKS = [COLOR.mark, COLOR.other, COLOR.sky];

export function blocktile1dFigure(ctx: FigureContext): ConceptFigure {
  const { BM, BN, BK } = ctx.params;
  const threads = ctx.spec.workgroupSize(ctx.params)[0];
  const d = new Drawing(WIDTH, 0);
  const top = heading(
    d,
    `${stepHeading(ctx.spec)}: each invocation computes ${TM} outputs of one column`,
    `${paramList(ctx.params, ["BM", "BN", "BK"])}: ${threads} invocations per workgroup. ` +
      `Invocation tid owns column tid % ${BN} and rows ${TM}·⌊tid / ${BN}⌋ … +${TM - 1} of the ` +
      "C tile.",
  );
  const u = Math.min(4, 300 / Math.max(BM, BN));
  const { cx, cy, w, h } = tileTriple(d, MARGIN + 30, top + 26, ctx.params, u);
  // Bands of TM rows (one invocation tall), and the columns when they are wide enough to see.
  d.gridLines(cx, cy, w, h, u >= 3 ? BN : 1, BM / TM, { stroke: COLOR.grid, width: 0.4 });
  const picks = [0, 1, BN].filter((tid) => tid < threads);
  const p = 0;
  picks.forEach((tid, i) => {
    const col = tid % BN, r0 = Math.floor(tid / BN) * TM;
    d.rect(cx + col * u, cy + r0 * u, Math.max(u, 2), TM * u, { fill: PICKS[i] });
    if (i === 0) {
      // What tid 0 reads at k step p: column p of its rows of As, element (p, col) of Bs.
      d.rect(MARGIN + 30 + p * u, cy + r0 * u, u, TM * u, { fill: PICKS[i] });
      d.rect(cx + col * u, top + 26 + p * u, u, u, { fill: PICKS[i] });
    }
  });
  const nx = cx + w + 110;
  let y = notes(d, nx, top + 40, [
    `Highlighted: invocations ${picks.join(", ")} (tid ${BN} starts the next band of ${TM} ` +
    "rows).",
    `At k step p, invocation 0 reads one element of Bs (row p, its column) and ${TM} of As ` +
    `(its ${TM} rows, column p), both marked for p = 0, and does ${TM} multiply-adds into ` +
    "two vec4 accumulators.",
    `So ${TM + 1} workgroup-memory reads serve ${TM} multiply-adds (04: 2 reads for 1).`,
    `Per tile, the ${threads} invocations load the ${BM} x ${BK} A tile and the ${BK} x ${BN} ` +
    `B tile (${BM * BK + BK * BN} floats, ${ctx.spec.workgroupStorageBytes(ctx.params)} bytes).`,
  ]);
  y = Math.max(y, cy + h + 30);
  y = legend(d, y, [
    { color: PICKS[0], label: `invocation ${picks[0]}` },
    ...picks.slice(1).map((tid, i) => ({ color: PICKS[i + 1], label: `invocation ${tid}` })),
    { color: tint(COLOR.a, 0.85), label: "A tile" },
    { color: tint(COLOR.b, 0.85), label: "B tile" },
  ]);
  return finish(
    d,
    y,
    `${stepHeading(ctx.spec)}: a ${BM} x ${BN} C tile, ${BK} deep, computed by ${threads} ` +
      `invocations, each owning a column of ${TM} outputs; per k step one Bs value is ` +
      `reused for ${TM} multiply-adds.`,
  );
}

/** Rows of the 8 x 8 register block: a0.x..a0.w then a1.x..a1.w (the WGSL's names). */
const LANE_NAMES = ["x", "y", "z", "w"];

export function blocktile2dFigure(ctx: FigureContext): ConceptFigure {
  const { BM, BN } = ctx.params;
  const threads = ctx.spec.workgroupSize(ctx.params)[0];
  const perRow = BN / TM;
  const d = new Drawing(WIDTH, 0);
  const top = heading(
    d,
    `${stepHeading(ctx.spec)}: an ${TM} x ${TM} block of C per invocation`,
    `${paramList(ctx.params, ["BM", "BN", "BK"])}: ${threads} invocations, ` +
      `${BM / TM} x ${perRow} blocks. Invocation tid = ty·${perRow} + tx owns rows ` +
      `ty·8 … +7 and columns tx·8 … +7 of the C tile.`,
  );
  const u = Math.min(2.5, 320 / Math.max(BM, BN));
  const { cx, cy, w, h } = tileTriple(d, MARGIN + 30, top + 26, ctx.params, u);
  d.gridLines(cx, cy, w, h, perRow, BM / TM, { stroke: COLOR.grid, width: 0.5 });
  const picks = [0, 1, perRow].filter((tid) => tid < threads);
  // What invocation 0 reads at k step 0: rows 0..7 of As at column 0, columns 0..7 of Bs row 0.
  d.rect(MARGIN + 30, cy, u, TM * u, { fill: PICKS[0] });
  d.rect(cx, top + 26, TM * u, u, { fill: PICKS[0] });
  picks.forEach((tid, i) => {
    const tx = tid % perRow, ty = Math.floor(tid / perRow);
    const bx = cx + tx * TM * u, by = cy + ty * TM * u;
    d.rect(bx, by, TM * u, TM * u, { fill: PICKS[i] });
    if (TM * u >= 16) {
      d.text(bx + (TM * u) / 2, by + (TM * u) / 2 + 3, String(tid), {
        size: 8,
        anchor: "middle",
        fill: "white",
        bold: true,
      });
    }
  });

  // The outer product of invocation 0 at one k step.
  const s = 26;
  const zx = cx + w + 70, zy = top + 100;
  const ox = zx + s + 10, oy = zy + s + 10;
  d.text(zx, zy - 30, "Invocation 0 at k step p (marked p = 0):", { size: 12, bold: true });
  d.text(ox, zy - 8, "a row of Bs (its 8 columns at k = p)", { size: 11, fill: COLOR.b });
  for (let r = 0; r < TM; r++) {
    d.rect(zx, oy + r * s, s, s, { fill: tint(COLOR.a, 0.7), stroke: COLOR.a });
    d.text(zx + s / 2, oy + r * s + s / 2 + 3, `a${r >> 2}.${LANE_NAMES[r & 3]}`, {
      size: 9,
      anchor: "middle",
    });
  }
  for (let c = 0; c < TM; c++) {
    d.rect(ox + c * s, zy, s, s, { fill: tint(COLOR.b, 0.6), stroke: COLOR.b });
    d.text(ox + c * s + s / 2, zy + s / 2 + 3, `b${c >> 2}.${LANE_NAMES[c & 3]}`, {
      size: 9,
      anchor: "middle",
    });
  }
  d.rect(ox, oy, TM * s, TM * s, { fill: tint(COLOR.c, 0.8) });
  d.gridLines(ox, oy, TM * s, TM * s, TM, TM, { stroke: tint(COLOR.c, 0.4), width: 0.6 });
  for (let r = 0; r < TM; r++) {
    for (let half = 0; half < 2; half++) {
      d.rect(ox + half * 4 * s, oy + r * s, 4 * s, s, { stroke: COLOR.c, width: 1.2 });
      d.text(ox + half * 4 * s + 2 * s, oy + r * s + s / 2 + 4, `c${r}${half}`, {
        size: 11,
        anchor: "middle",
      });
    }
  }
  d.text(zx - 4, oy + TM * s + 18, "a column of As (8 rows at k = p)", { size: 11, fill: COLOR.a });
  let y = notes(d, zx - 4, oy + TM * s + 40, [
    `8 reads of As + 8 of Bs, then 64 multiply-adds: cRH += a·b (row R, column half H), ` +
    "16 named vec4 registers.",
  ], 12);
  y = Math.max(y, cy + h + 30);
  y = legend(d, y, [
    ...picks.map((tid, i) => ({ color: PICKS[i], label: `block of invocation ${tid}` })),
    { color: tint(COLOR.a, 0.7), label: "A values" },
    { color: tint(COLOR.b, 0.6), label: "B values" },
    { color: tint(COLOR.c, 0.8), label: "8 x 8 accumulators" },
  ]);
  return finish(
    d,
    y,
    `${stepHeading(ctx.spec)}: the ${BM} x ${BN} C tile is covered by ${threads} blocks of ` +
      `8 x 8, one per invocation; at each k step an invocation multiplies a column of 8 A ` +
      `values by a row of 8 B values (outer product) into its 64 register accumulators: ` +
      `16 workgroup reads for 64 multiply-adds.`,
  );
}

export function vectorizeFigure(ctx: FigureContext): ConceptFigure {
  const { BM, BN, BK } = ctx.params;
  const d = new Drawing(WIDTH, 0);
  const top = heading(
    d,
    `${stepHeading(ctx.spec)}: 16-byte loads, A transposed in workgroup memory`,
    `${paramList(ctx.params, ["BM", "BN", "BK"])}. A and B are read as vec4<f32> (4 floats, ` +
      "16 bytes, per load). The A tile is stored transposed, As[k][m], so the 4 rows an " +
      "invocation needs at one k are one vec4.",
  );
  const rows = 8, s = 30;
  // A tile in global memory: rows 0..7 of BM, all BK columns (k contiguous).
  const gx = MARGIN + 40, gy = top + 44;
  const kShown = Math.min(BK, 8);
  d.text(gx, gy - 10, `A tile, rows 0–${rows - 1} of ${BM} (global, row-major)`, {
    size: 12,
    bold: true,
    fill: COLOR.a,
  });
  const loaded = (r: number, k: number) => r === 0 && k < 4;
  for (let r = 0; r < rows; r++) {
    for (let k = 0; k < kShown; k++) {
      const fill = loaded(r, k) ? COLOR.a : tint(COLOR.a, 0.92);
      d.rect(gx + k * s, gy + r * s, s, s, { fill, stroke: tint(COLOR.a, 0.4), width: 0.6 });
      d.text(gx + k * s + s / 2, gy + r * s + s / 2 + 3, `${r},${k}`, {
        size: 9,
        anchor: "middle",
        fill: loaded(r, k) ? "white" : COLOR.ink,
      });
    }
    for (let k = 0; k < kShown; k += 4) {
      d.rect(gx + k * s, gy + r * s, 4 * s, s, { stroke: COLOR.a, width: 1.6 });
    }
  }
  d.text(gx, gy + rows * s + 16, "cells: row m, column k; heavy boxes: one vec4 load", {
    size: 11,
    fill: COLOR.muted,
  });
  // The transposed tile: k rows, m columns grouped in vec4s of 4 rows.
  const tx = gx + kShown * s + 110, ty = gy;
  d.text(tx, ty - 10, `As (workgroup): k rows 0–${kShown - 1}, m 0–${rows - 1} of ${BM}`, {
    size: 12,
    bold: true,
    fill: COLOR.a,
  });
  for (let k = 0; k < kShown; k++) {
    for (let m = 0; m < rows; m++) {
      const fill = loaded(m, k) ? COLOR.a : k === 0 ? tint(COLOR.mark, 0.6) : tint(COLOR.a, 0.92);
      d.rect(tx + m * s, ty + k * s, s, s, { fill, stroke: tint(COLOR.a, 0.4), width: 0.6 });
      d.text(tx + m * s + s / 2, ty + k * s + s / 2 + 3, `${m},${k}`, {
        size: 9,
        anchor: "middle",
        fill: loaded(m, k) ? "white" : COLOR.ink,
      });
    }
    for (let m = 0; m < rows; m += 4) {
      d.rect(tx + m * s, ty + k * s, 4 * s, s, { stroke: COLOR.a, width: 1.6 });
    }
  }
  d.arrow(gx + kShown * s + 4, gy + s / 2, tx - 6, ty + s * 1.5, COLOR.a, 1.5);
  d.text(gx + kShown * s + 12, gy - 26 + s * 3, "one vec4 of", { size: 11 });
  d.text(gx + kShown * s + 12, gy - 12 + s * 3, "A: 4 k values", { size: 11 });
  d.text(gx + kShown * s + 12, gy + 2 + s * 3, "of one row", { size: 11 });
  d.text(gx + kShown * s + 12, gy + 16 + s * 3, "→ 4 k rows", { size: 11 });
  d.text(tx, ty + kShown * s + 16, "At k = p, invocation 0 reads a0 = As[p][m 0–3] and", {
    size: 11,
  });
  d.text(tx, ty + kShown * s + 30, "a1 = As[p][m 4–7]: two vec4 reads (marked: p = 0)", {
    size: 11,
  });
  let y = Math.max(gy + rows * s, ty + kShown * s) + 54;

  // One k row of Bs as vec4s, with invocation 0's and 1's fragments.
  const vecs = Math.min(BN / 4, 16), bs = Math.min(12, (WIDTH - 2 * MARGIN - 10) / (vecs * 4));
  d.text(
    MARGIN,
    y,
    `Bs row k = p, vec4s 0–${vecs - 1} of ${BN / 4} (Bs[k·${BN / 4} + n/4] ` +
      "holds B row k, columns n … n+3)",
    { size: 12, bold: true, fill: COLOR.b },
  );
  y += 10;
  for (let v = 0; v < vecs; v++) {
    const owner = v < 2 ? 0 : v < 4 ? 1 : -1;
    const fill = owner === 0 ? COLOR.b : owner === 1 ? COLOR.other : tint(COLOR.b, 0.85);
    d.rect(MARGIN + v * 4 * bs, y, 4 * bs, 20, { fill, stroke: COLOR.ink, width: 0.8 });
    d.text(MARGIN + v * 4 * bs + 2 * bs, y + 14, String(v), {
      size: 10,
      anchor: "middle",
      fill: owner >= 0 ? "white" : COLOR.ink,
    });
  }
  y += 40;
  y = notes(d, MARGIN, y, [
    "Invocation tx reads b0 = Bs[p·" + BN / 4 + " + tx·2] and b1 = the next vec4 (columns " +
    "tx·8 … tx·8+7): invocation 0 the first two, invocation 1 the next two.",
    `Per k step: 4 vec4 reads (a0, a1, b0, b1) for 64 multiply-adds; 06 needed 16 scalar reads.`,
  ]);
  y = legend(d, y, [
    { color: COLOR.a, label: "one loaded A vec4 (row 0, k 0–3)" },
    { color: tint(COLOR.mark, 0.6), label: "As row k = 0: a0, a1 of invocation 0" },
    { color: COLOR.b, label: "b0, b1 of invocation 0" },
    { color: COLOR.other, label: "of invocation 1" },
  ]);
  return finish(
    d,
    y,
    `${stepHeading(ctx.spec)}: A and B move as vec4 (16-byte) loads; a loaded A vec4 (four ` +
      "k values of one row) is scattered into four k rows of the transposed tile As[k][m], " +
      "so at each k an invocation reads its 8 A values as two vec4s, like its 8 B values.",
  );
}
