/**
 * Steps 02 and 03: which invocation computes which element of C, and which addresses of A, B
 * and C one subgroup of 32 consecutive invocations touches at one step of the k loop. The index
 * arithmetic is the kernels' (kernels/02_naive and 03_coalesce/kernel.wgsl).
 */
import type { Shape } from "../matrix.ts";
import { type FigureContext, stepHeading } from "./context.ts";
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
} from "./svg.ts";

/** Invocations per subgroup on NVIDIA (the ladder's target); the kernels work for any size. */
export const SUBGROUP = 32;

/** Bytes of one memory sector, the unit a load is served in. */
const SECTOR_BYTES = 32;

export type OneElementMapping = "x_picks_row" | "x_picks_column";

/**
 * The element of C that invocation (gx, gy) (its global_invocation_id) computes: the naive
 * kernel has `row = gid.x; col = gid.y`, the coalesced one `col = gid.x; row = gid.y`.
 */
export function outputOf(mapping: OneElementMapping, gx: number, gy: number) {
  return mapping === "x_picks_row" ? { row: gx, col: gy } : { row: gy, col: gx };
}

/** Local id of invocation `index` of a WG x WG workgroup (x varies fastest). */
export const localId = (index: number, wg: number) => ({
  x: index % wg,
  y: Math.floor(index / wg),
});

/** Float offsets of A, B and C that one subgroup touches at step `p` of the k loop. */
export interface SubgroupAccess {
  matrix: "A" | "B" | "C";
  /** One per invocation, in invocation order (repeats are broadcasts). */
  offsets: number[];
  /** Distinct 32-byte sectors, ascending. */
  sectors: number[];
}

/** What subgroup 0 of workgroup (0, 0) touches at step p for problem `shape`. */
export function subgroupAccess(
  mapping: OneElementMapping,
  wg: number,
  shape: Shape,
  p = 0,
): SubgroupAccess[] {
  const lanes = Array.from({ length: Math.min(SUBGROUP, wg * wg) }, (_, i) => {
    const id = localId(i, wg);
    return outputOf(mapping, id.x, id.y);
  });
  const of = (matrix: SubgroupAccess["matrix"], offsets: number[]): SubgroupAccess => ({
    matrix,
    offsets,
    sectors: [...new Set(offsets.map((o) => Math.floor((o * 4) / SECTOR_BYTES)))].sort((a, b) =>
      a - b
    ),
  });
  return [
    of("A", lanes.map(({ row }) => row * shape.k + p)),
    of("B", lanes.map(({ col }) => p * shape.n + col)),
    of("C", lanes.map(({ row, col }) => row * shape.n + col)),
  ];
}

/** The sector rows' labels: their size, and the space between the last sector and them. */
const LABEL_SIZE = 11;
const LABEL_GAP = 8;
/** The space between two sectors that are not adjacent in memory. */
const SECTOR_GAP = 3;

/** Runs of consecutive sectors: 1 means one contiguous piece of memory. */
const runs = (sectors: number[]) =>
  sectors.filter((s, i) => i === 0 || sectors[i - 1] !== s - 1).length;

export function oneElementFigure(ctx: FigureContext, mapping: OneElementMapping): ConceptFigure {
  const wg = ctx.params.WG;
  const { shape } = ctx;
  const naive = mapping === "x_picks_row";
  const d = new Drawing(WIDTH, 0);
  let y = heading(
    d,
    `${stepHeading(ctx.spec)}: one invocation per element of C (WG ${wg}, workgroup ${wg} x ${wg})`,
    naive
      ? "row = global_invocation_id.x, col = global_invocation_id.y: neighbouring invocations " +
        "(consecutive x) compute neighbouring ROWS of C."
      : "col = global_invocation_id.x, row = global_invocation_id.y: neighbouring invocations " +
        "(consecutive x) compute neighbouring COLUMNS of C.",
  );

  // The C tile of workgroup (0, 0): rows and columns of C, each cell one invocation.
  const cell = Math.min(18, 288 / wg);
  const gx0 = MARGIN + 150, gy0 = y + 40;
  const side = cell * wg;
  const colour = (index: number) =>
    index < SUBGROUP ? tint(COLOR.mark, 0.35) : index < 2 * SUBGROUP ? tint(COLOR.sky, 0.5) : null;
  for (let row = 0; row < wg; row++) {
    for (let col = 0; col < wg; col++) {
      // The invocation computing (row, col): invert the mapping.
      const id = naive ? { x: row, y: col } : { x: col, y: row };
      const index = id.y * wg + id.x;
      const fill = colour(index);
      if (fill) d.rect(gx0 + col * cell, gy0 + row * cell, cell, cell, { fill });
      if (index < SUBGROUP && cell >= 14) {
        d.text(gx0 + (col + 0.5) * cell, gy0 + (row + 0.5) * cell + 3, String(index), {
          size: 8,
          anchor: "middle",
        });
      }
    }
  }
  d.gridLines(gx0, gy0, side, side, wg, wg);
  d.rect(gx0, gy0, side, side, { stroke: COLOR.c, width: 2 });
  d.text(gx0 + side / 2, gy0 - 24, `C columns 0..${wg - 1}`, { anchor: "middle", size: 12 });
  d.text(
    gx0 + side / 2,
    gy0 - 8,
    naive ? "← local_invocation_id.y →" : "← local_invocation_id.x →",
    {
      anchor: "middle",
      size: 11,
      fill: COLOR.muted,
    },
  );
  d.text(gx0 - 12, gy0 + side / 2, `C rows 0..${wg - 1}`, {
    anchor: "middle",
    size: 12,
    rotate: -90,
  });
  d.text(
    gx0 - 28,
    gy0 + side / 2,
    naive ? "← local_invocation_id.x →" : "← local_invocation_id.y →",
    {
      anchor: "middle",
      size: 11,
      fill: COLOR.muted,
      rotate: -90,
    },
  );
  // The direction invocations 0, 1, 2, ... walk in.
  const ax = gx0 + side + 24;
  if (naive) d.arrow(ax, gy0, ax, gy0 + Math.min(side, 8 * cell), COLOR.mark, 2);
  else {d.arrow(
      gx0,
      gy0 + side + 14,
      gx0 + Math.min(side, 8 * cell),
      gy0 + side + 14,
      COLOR.mark,
      2,
    );}
  const noteX = gx0 + side + 48;
  let ny = gy0 + 10;
  const note = (t: string, style = {}) => {
    ny = d.paragraph(noteX, ny, t, WIDTH - MARGIN - noteX, { size: 12, ...style }) + 4;
  };
  note(`Workgroup (0, 0): ${wg * wg} invocations, ${wg * wg / SUBGROUP} subgroups of ${SUBGROUP}.`);
  note(
    `Numbers: local_invocation_index of subgroup 0 (= x + ${wg}·y; consecutive indices run ` +
      `together). Global id = workgroup_id · ${wg} + local id.`,
  );
  note(
    naive
      ? `Subgroup 0 covers ${Math.min(wg, SUBGROUP)} rows x ${Math.max(1, SUBGROUP / wg)} ` +
        `columns of C: the arrow is x increasing, down a column.`
      : `Subgroup 0 covers ${Math.max(1, SUBGROUP / wg)} row(s) x ${Math.min(wg, SUBGROUP)} ` +
        `columns of C: the arrow is x increasing, along a row.`,
  );

  // Memory touched by subgroup 0 at k = 0: each 32-byte sector a box of 8 floats.
  y = Math.max(gy0 + side + 40, ny + 10);
  y = d.paragraph(
    MARGIN,
    y,
    `Subgroup 0 at one step of the k loop (p = 0), K = ${shape.k}, N = ${shape.n}: each box is ` +
      "one 32-byte sector (8 floats), filled where a float is used",
    WIDTH - 2 * MARGIN,
    { size: 12, bold: true },
  );
  y -= 6;
  const accesses = subgroupAccess(mapping, wg, shape);
  const matrixColour = { A: COLOR.a, B: COLOR.b, C: COLOR.c };
  const labelW = 24;
  for (const a of accesses) {
    const count = a.sectors.length;
    const used = new Set(a.offsets);
    const distinct = [...used].sort((p, q) => p - q);
    const list = distinct.length <= 5
      ? distinct.join(", ")
      : `${distinct.slice(0, 4).join(", ")}, …, ${distinct.at(-1)}`;
    const r = runs(a.sectors);
    const labels = [
      `${distinct.length} float${distinct.length > 1 ? "s" : ""} (offsets ${list})`,
      `${count} sector${count > 1 ? "s" : ""}, ${r} contiguous run${r > 1 ? "s" : ""}; ` +
      `${distinct.length * 4} of ${count * SECTOR_BYTES} bytes used`,
    ];
    // The sectors take what the labels after them leave. Adjacent sectors touch; a gap, one
    // between each two runs, means a jump in memory.
    const labelRoom = LABEL_GAP + Math.max(...labels.map((t) => textWidth(t, LABEL_SIZE)));
    const gaps = r - 1;
    const slot = Math.min(
      5.6,
      (WIDTH - 2 * MARGIN - labelW - labelRoom - SECTOR_GAP * gaps) / (8 * count),
    );
    const x0 = MARGIN + labelW;
    let bx = x0;
    d.text(MARGIN, y + 17, a.matrix, { size: 14, bold: true, fill: matrixColour[a.matrix] });
    a.sectors.forEach((s, i) => {
      if (i > 0 && a.sectors[i - 1] !== s - 1) bx += SECTOR_GAP;
      d.rect(bx, y + 4, slot * 8, 16, { fill: COLOR.faint });
      // Runs of used floats in the sector, one rectangle each.
      for (let f = 0; f < 8;) {
        if (!used.has(s * 8 + f)) {
          f++;
          continue;
        }
        let end = f;
        while (end < 8 && used.has(s * 8 + end)) end++;
        d.rect(bx + f * slot, y + 4, (end - f) * slot, 16, { fill: matrixColour[a.matrix] });
        f = end;
      }
      d.rect(bx, y + 4, slot * 8, 16, { stroke: COLOR.ink, width: 0.6 });
      bx += slot * 8;
    });
    d.text(bx + LABEL_GAP, y + 11, labels[0], { size: LABEL_SIZE });
    d.text(bx + LABEL_GAP, y + 25, labels[1], { size: LABEL_SIZE, fill: COLOR.muted });
    y += 36;
  }
  y = legend(d, y, [
    { color: tint(COLOR.mark, 0.35), label: "outputs of subgroup 0" },
    { color: tint(COLOR.sky, 0.5), label: "subgroup 1" },
    { color: COLOR.a, label: "A float used" },
    { color: COLOR.b, label: "B float used" },
    { color: COLOR.c, label: "C float written" },
    { color: COLOR.faint, label: "moved, unused" },
  ]);
  const [a, b, c] = accesses;
  const caption = `${stepHeading(ctx.spec)}: invocation (x, y) of a ${wg} x ${wg} workgroup ` +
    `computes C[${naive ? "x" : "y"}][${naive ? "y" : "x"}] (global ids). At one k step, ` +
    `subgroup 0 (${SUBGROUP} consecutive invocations) touches ${a.sectors.length} sector(s) of A, ` +
    `${b.sectors.length} of B and ${c.sectors.length} of C (32-byte sectors, K = ${shape.k}, ` +
    `N = ${shape.n}).`;
  return finish(d, y, caption);
}
