/**
 * Steps 09 and 11: the tiling hierarchy, workgroup tile -> subgroup (warp) tile -> each
 * invocation's 4 x 4 fragments (09), and the tile parameters as a labelled diagram (11). The
 * lane layout is the WGSL's: lane = ly·8 + lx owns rows 4·ly and 16 + 4·ly (+0..3) and columns
 * 4·lx + 32·j (+0..3), j < TN / 4, of its warp's 32 x 8·TN block.
 */
import { SUBGROUP } from "./access.ts";
import { fragmentReads, subgroupBanks } from "./banks.ts";
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
} from "./svg.ts";
import { tileTriple } from "./tiles.ts";

/** Rows of a warp tile (8 lanes of 4 rows, twice) and lanes across and down it. */
const WARP_ROWS = 32;
const LANES_X = 8, LANES_Y = 4;

/** The lane owning 4 x 4 fragment (fragment row fr, fragment column fc) of a warp tile. */
export function laneOfFragment(fr: number, fc: number): number {
  return (fr % LANES_Y) * LANES_X + (fc % LANES_X);
}

/** Lanes a figure singles out, with their colours. */
const LANE_PICKS: [number, string][] = [[0, COLOR.mark], [1, COLOR.other], [8, COLOR.sky]];

/**
 * A warp tile of 32 x 8·TN at `s` px per element from (x, y): fragments labelled by lane, the
 * picked lanes coloured. Returns its width and height.
 */
function warpTile(d: Drawing, x: number, y: number, tn: number, s: number) {
  const cols = (8 * tn) / 4, rows = WARP_ROWS / 4, f = 4 * s;
  for (let fr = 0; fr < rows; fr++) {
    for (let fc = 0; fc < cols; fc++) {
      const lane = laneOfFragment(fr, fc);
      const pick = LANE_PICKS.find(([l]) => l === lane);
      d.rect(x + fc * f, y + fr * f, f, f, {
        fill: pick ? pick[1] : tint(COLOR.c, 0.82),
        stroke: "white",
        width: 1,
      });
      if (f >= 16) {
        d.text(x + (fc + 0.5) * f, y + (fr + 0.5) * f + 3, String(lane), {
          size: 8,
          anchor: "middle",
          fill: pick ? "white" : COLOR.ink,
        });
      }
    }
  }
  d.rect(x, y, cols * f, rows * f, { stroke: COLOR.c, width: 2 });
  return { w: cols * f, h: rows * f };
}

/** Distinct values in a list. */
const distinct = (xs: number[]) => new Set(xs).size;

export function subgroupTilingFigure(ctx: FigureContext): ConceptFigure {
  const p = ctx.params;
  const { BM, BN } = p;
  const warpsX = BN / 64, warps = (BM / WARP_ROWS) * warpsX;
  const d = new Drawing(WIDTH, 0);
  const top = heading(
    d,
    `${stepHeading(ctx.spec)}: workgroup tile → subgroup tiles → fragments`,
    `${paramList(p, ["BM", "BN", "BK"])}: ${warps} subgroups of ${SUBGROUP} invocations, each ` +
      `owning a ${WARP_ROWS} x 64 block (warp = tid / 32, wx = warp % ${warpsX}, wy = warp / ` +
      `${warpsX}). Inside it, lane = tid % 32 = ly·8 + lx owns four 4 x 4 fragments.`,
  );
  // The workgroup tile with its warp tiles.
  const u = Math.min(2.2, 300 / Math.max(BM, BN));
  const x0 = MARGIN + 10, y0 = top + 30;
  d.rect(x0, y0, BN * u, BM * u, { fill: tint(COLOR.c, 0.9), stroke: COLOR.c, width: 1.5 });
  d.gridLines(x0, y0, BN * u, BM * u, warpsX, BM / WARP_ROWS, { stroke: COLOR.c, width: 1 });
  for (let w = 0; w < warps; w++) {
    const wx = w % warpsX, wy = Math.floor(w / warpsX);
    const cx = x0 + (wx + 0.5) * 64 * u, cy = y0 + (wy + 0.5) * WARP_ROWS * u;
    if (w === 0) d.rect(x0, y0, 64 * u, WARP_ROWS * u, { fill: tint(COLOR.c, 0.55) });
    d.text(cx, cy + 4, `warp ${w}`, { size: 11, anchor: "middle" });
  }
  d.text(x0, y0 + BM * u + 16, `C tile ${BM} x ${BN}`, { size: 11, bold: true, fill: COLOR.c });

  // Warp 0 zoomed: its lanes' fragments.
  const zx = x0 + BN * u + 40, s = Math.min(6, (WIDTH - MARGIN - zx) / 64);
  d.text(zx, y0 - 8, "warp 0's 32 x 64 block: each cell a 4 x 4 fragment, numbered by lane", {
    size: 12,
    bold: true,
  });
  const { h } = warpTile(d, zx, y0, 8, s);
  d.line(x0 + 64 * u, y0, zx, y0, { stroke: COLOR.grid, dash: "3 3" });
  d.line(x0 + 64 * u, y0 + WARP_ROWS * u, zx, y0 + h, { stroke: COLOR.grid, dash: "3 3" });

  // What one subgroup reads per k step, 08's mapping against this one.
  const reads = (mapping: "split_halves" | "warp_tiles") => {
    const frags = Array.from({ length: SUBGROUP }, (_, t) => fragmentReads(mapping, t, p));
    return {
      a: distinct(frags.map((f) => f.a0)),
      b: distinct(frags.map((f) => f.b0)),
      passes: subgroupBanks(mapping, "b0", p).wavefronts,
    };
  };
  const before = reads("split_halves"), after = reads("warp_tiles");
  let y = Math.max(y0 + BM * u + 36, y0 + h + 30);
  for (
    const line of [
      `Lane 0 owns rows 0–3 and 16–19, columns 0–3 and 32–35 of the block (four fragments, ` +
      "its 8 x 8 outputs); lane 1 is one fragment to the right, lane 8 one fragment down.",
      `At one fragment read (a0, then b0), subgroup 0 reads ${after.a} distinct A vec4s and ` +
      `${after.b} distinct B vec4s (08's mapping, ${before.a} and ${before.b}); its b0 read takes ${after.passes} bank pass${
        after.passes > 1 ? "es" : ""
      } ` +
      `(08: ${before.passes}).`,
    ]
  ) y = d.paragraph(MARGIN, y, line, WIDTH - 2 * MARGIN, { size: 12 }) + 4;
  y = legend(d, y, [
    ...LANE_PICKS.map(([lane, color]) => ({ color, label: `lane ${lane}` })),
    { color: tint(COLOR.c, 0.82), label: "other lanes' fragments" },
    { color: tint(COLOR.c, 0.55), label: "warp 0" },
  ]);
  return finish(
    d,
    y,
    `${stepHeading(ctx.spec)}: the ${BM} x ${BN} workgroup tile is split into ${warps} ` +
      `subgroup tiles of 32 x 64; each of a subgroup's 32 lanes owns four 4 x 4 fragments ` +
      `(rows 4·ly and 16 + 4·ly, columns 4·lx and 32 + 4·lx), so one fragment read of a ` +
      `subgroup touches ${after.a} A or ${after.b} B vec4s instead of ${before.a} or ${before.b}.`,
  );
}

export function autotuneFigure(ctx: FigureContext): ConceptFigure {
  const p = ctx.params;
  const { BM, BN, BK, TN } = p;
  const threads = ctx.spec.workgroupSize(p)[0];
  const warpCols = 8 * TN, warps = threads / SUBGROUP;
  const d = new Drawing(WIDTH, 0);
  const top = heading(
    d,
    `${stepHeading(ctx.spec)}: the tile parameters`,
    `${paramList(p, ["BM", "BN", "BK", "TN", "PAD", "GROUP_M"])}: ${threads} invocations ` +
      `(${warps} subgroups of ${SUBGROUP}), ${ctx.spec.workgroupStorageBytes(p)} bytes of ` +
      "workgroup memory (two buffers of each tile).",
  );
  const u = Math.min(1.6, 280 / Math.max(BM, BN));
  const x = MARGIN + 50, y = top + 44;
  const { cx, cy, w, h } = tileTriple(d, x, y, p, u);
  // The first subgroup's block inside the C tile.
  d.rect(cx, cy, warpCols * u, WARP_ROWS * u, { fill: tint(COLOR.c, 0.55), stroke: COLOR.c });
  d.gridLines(cx, cy, w, h, BN / warpCols, BM / WARP_ROWS, {
    stroke: tint(COLOR.c, 0.3),
    width: 0.6,
  });
  d.dimension(x - 10, cy, x - 10, cy + h, `BM ${BM}`);
  d.dimension(cx, y - 14, cx + w, y - 14, `BN ${BN}`);
  d.dimension(x, cy + h + 26, x + BK * u, cy + h + 26, `BK ${BK}`, 1);

  // Warp 0's block, zoomed, and lane 0's register tile.
  const zx = cx + w + 110;
  const s = Math.min(5, (WIDTH - MARGIN - zx) / warpCols);
  d.text(zx, y - 6, `one subgroup: ${WARP_ROWS} x ${warpCols} (8·TN)`, { size: 12, bold: true });
  const zone = warpTile(d, zx, y + 4, TN, s);
  d.line(cx + warpCols * u, cy, zx, y + 4, { stroke: COLOR.grid, dash: "3 3" });
  d.line(cx + warpCols * u, cy + WARP_ROWS * u, zx, y + 4 + zone.h, {
    stroke: COLOR.grid,
    dash: "3 3",
  });
  // The register tile: 8 rows x TN columns as TN / 4 vec4 per row.
  const ry = y + 4 + zone.h + 40, rc = 18;
  d.text(zx, ry - 8, `lane 0's register tile: 8 x TN = 8 x ${TN} outputs`, {
    size: 12,
    bold: true,
  });
  for (let r = 0; r < 8; r++) {
    for (let j = 0; j < TN / 4; j++) {
      const bx = zx + j * 4 * rc, by = ry + r * rc;
      d.rect(bx, by, 4 * rc, rc, { fill: COLOR.mark, stroke: "white", width: 1.5 });
      d.text(bx + 2 * rc, by + rc / 2 + 4, `c${r}${j}`, {
        size: 10,
        anchor: "middle",
        fill: "white",
      });
    }
  }
  const ny = d.paragraph(
    zx,
    ry + 8 * rc + 16,
    `${(8 * TN) / 4} vec4 accumulators, for rows 0–3 and 16–19 and columns ` +
      `${Array.from({ length: TN / 4 }, (_, j) => `${32 * j}–${32 * j + 3}`).join(", ")} ` +
      "of the subgroup's block.",
    WIDTH - MARGIN - zx,
    { size: 11 },
  );
  const bottom = Math.max(cy + h + 50, ny);
  const end = legend(d, bottom, [
    { color: tint(COLOR.a, 0.85), label: "A tile BM x BK" },
    { color: tint(COLOR.b, 0.85), label: "B tile BK x BN" },
    { color: tint(COLOR.c, 0.55), label: "subgroup 0's block" },
    { color: COLOR.mark, label: "lane 0's fragments / registers" },
  ]);
  return finish(
    d,
    end,
    `${stepHeading(ctx.spec)}: a workgroup computes a BM x BN = ${BM} x ${BN} tile of C, ` +
      `BK = ${BK} deep per step; each subgroup of 32 owns 32 x 8·TN = 32 x ${warpCols} of it ` +
      `and each invocation 8 x TN = 8 x ${TN} outputs in ${(8 * TN) / 4} vec4 registers.`,
  );
}
