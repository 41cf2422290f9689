/**
 * Step 12: the same fragment reads indexed two ways. 11's flat workgroup array takes an index
 * that changes every k step, so naga's bounds clamp is recomputed in the loop; the generated
 * kernel's nested array takes a literal k row (never clamped), a loop-invariant column (its clamp
 * can be computed once, before the loop) and the buffer `cur = t % 2`, clamped with a value that
 * changes only from tile to tile; a literal buffer too with LITERAL_BUFFER (data/naga/clamps.json
 * has the SPIR-V).
 */
import { type GeneratedParams, generatedParams, tileBody } from "./generate.ts";
import { type FigureContext, paramList, stepHeading } from "../../lib/figures/context.ts";
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
} from "../../lib/figures/svg.ts";

/** 11's read of its first A fragment, as kernels/11_autotune/kernel.wgsl has it. */
export const AUTOTUNE_READ = "let a0 = As[aBuf + p * AS + a0At];";

/**
 * The buffer a tile reads, as the kernel writes it: `cur` (`t % 2`), or with LITERAL_BUFFER the
 * literal 0 of the first of its two tiles per trip.
 */
const readBuffer = (p: GeneratedParams) => p.LITERAL_BUFFER ? 0 : "cur";

/** The generated kernel's first read of k step 0 (its written-out loop), as the kernel has it. */
export const generatedRead = (p: GeneratedParams) =>
  tileBody(p, readBuffer(p), "").split("\n").find((l) => l.includes("As[")) ?? "";

/** The invocation whose reads are drawn: tid 8 is lane 8 of warp 0, so a0At = ly = 1. */
const A0_AT = 1;

export function clampFigure(ctx: FigureContext): ConceptFigure {
  const g = generatedParams(ctx.params);
  const as = g.BM / 4 + g.PAD, length = 2 * g.BK * as;
  const d = new Drawing(WIDTH, 0);
  let y = heading(
    d,
    `${stepHeading(ctx.spec)}: what the k loop's workgroup-array index leaves to clamp`,
    `${paramList(ctx.params, ["BM", "BN", "BK", "TN", "PAD"])}. The A tile: 2 buffers x ` +
      `${g.BK} k rows x ${as} vec4s. WebGPU clamps every dynamic index into an array, ` +
      "min(i, length - 1); both kernels read the same cells, marked for one invocation " +
      `(a0At = ${A0_AT}) over the ${g.BK} k steps of a tile in buffer 0` +
      `${g.LITERAL_BUFFER ? "" : " (cur = 0)"}.`,
  );
  y += 18;
  const panelW = (WIDTH - 3 * MARGIN) / 2;
  const cell = Math.min(10, (panelW - 50) / as), rowH = Math.min(12, 200 / (2 * g.BK));
  const panel = (x: number, title: string, code: string, nested: boolean) => {
    d.text(x, y, title, { size: 13, bold: true });
    d.text(x, y + 18, code, { size: 11, fill: COLOR.a });
    const gx = x + 44, gy = y + 34;
    for (let buf = 0; buf < 2; buf++) {
      const by = gy + buf * (g.BK * rowH + 6);
      d.rect(gx, by, as * cell, g.BK * rowH, { fill: tint(COLOR.a, 0.9), stroke: COLOR.a });
      d.gridLines(gx, by, as * cell, g.BK * rowH, as, g.BK, {
        stroke: tint(COLOR.a, 0.6),
        width: 0.4,
      });
      d.text(gx - 6, by + (g.BK * rowH) / 2 + 4, nested ? `[${buf}]` : `buf ${buf}`, {
        size: 10,
        anchor: "end",
      });
    }
    for (let k = 0; k < g.BK; k++) {
      d.rect(gx + A0_AT * cell, gy + k * rowH, cell, rowH, { fill: COLOR.mark });
    }
    return gy + 2 * g.BK * rowH + 6;
  };
  const left = MARGIN, right = 2 * MARGIN + panelW;
  const bottom = Math.max(
    panel(left, "11: one flat array, index computed in the loop", AUTOTUNE_READ, false),
    panel(
      right,
      "12: As[buffer][k row][column], k loop written out",
      generatedRead(g).trim(),
      true,
    ),
  );
  y = bottom + 18;
  const say = (x: number, lines: string[]) => {
    let ly = y;
    for (const line of lines) ly = d.paragraph(x, ly, line, panelW, { size: 12 }) + 4;
    return ly;
  };
  y = Math.max(
    say(left, [
      `Index aBuf + p·${as} + a0At: ${[0, 1, 2].map((k) => k * as + A0_AT).join(", ")}, … ` +
      "(p changes every k step, the buffer every tile).",
      `Clamp min(index, ${length - 1}) on a new value at each of the ${g.BK} k steps, inside ` +
      "the loop, plus the loop's own counter.",
    ]),
    say(right, [
      `The k row is a literal (0 … ${g.BK - 1}): in range, never clamped.`,
      `Column a0At is clamped, min(a0At, ${as - 1}), on the same operands at every step: ` +
      "computed once, before the loop.",
      g.LITERAL_BUFFER
        ? "The buffer is a literal too (two tiles per trip): never clamped."
        : "The buffer, cur = t % 2, is clamped, min(cur, 1), on a value that changes from tile to " +
          "tile, not from k step to k step.",
    ]),
  );
  const twelveWrites = g.LITERAL_BUFFER
    ? "As[0][k][a0At] with literal buffer and row"
    : "As[cur][k][a0At] with a literal row and cur = t % 2";
  y = legend(d, y + 4, [
    { color: COLOR.mark, label: `cells read by a0 at k steps 0–${g.BK - 1} of a tile` },
    { color: tint(COLOR.a, 0.9), label: "the A tile in workgroup memory" },
  ]);
  return finish(
    d,
    y,
    `${stepHeading(ctx.spec)}: both kernels read the same cells of the A tile; 11 indexes a ` +
      `flat array with aBuf + p·AS + a0At, so naga's clamp min(i, ${length - 1}) changes every ` +
      `k step, while 12 writes ${twelveWrites}, leaving a loop-invariant clamp ` +
      `min(a0At, ${as - 1})${
        g.LITERAL_BUFFER ? "" : " and one on cur that changes only per tile"
      }.`,
  );
}
