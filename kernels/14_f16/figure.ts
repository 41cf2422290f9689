/**
 * Step 14: two f16 values packed in one 32-bit register, and one packed multiply-add doing two
 * of the kernel's multiply-adds (12's generator with F16=2: `h00 += a0_0.x * b0_0` on vec4<f16>,
 * flushed into f32 accumulators after each BK-deep tile).
 */
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

/** An f16: 1 sign bit, 5 exponent bits, 10 mantissa bits. */
const FIELDS: [number, string][] = [[1, COLOR.mark], [5, COLOR.b], [10, COLOR.sky]];

/** A 32-bit register holding two f16 halves, with their names; returns its width. */
function register(d: Drawing, x: number, y: number, bit: number, hi: string, lo: string) {
  let at = x;
  for (const half of [hi, lo]) {
    const start = at;
    for (const [bits, color] of FIELDS) {
      d.rect(at, y, bits * bit, 22, { fill: tint(color, 0.35) });
      at += bits * bit;
    }
    d.gridLines(start, y, 16 * bit, 22, 16, 1, { stroke: "white", width: 0.5 });
    d.text(start + 8 * bit, y + 15, half, { size: 11, anchor: "middle", bold: true });
  }
  d.rect(x, y, 32 * bit, 22, { stroke: COLOR.ink, width: 1.2 });
  d.line(x + 16 * bit, y - 3, x + 16 * bit, y + 25, { stroke: COLOR.ink, width: 1.5 });
  return 32 * bit;
}

export function f16Figure(ctx: FigureContext): ConceptFigure {
  const p = ctx.params;
  const d = new Drawing(WIDTH, 0);
  let y = heading(
    d,
    `${stepHeading(ctx.spec)}: two f16 multiply-adds per packed instruction`,
    `${paramList(p, ["BM", "BN", "BK", "PAD"])}. A, B, C and the workgroup tiles hold f16; ` +
      `vec4<f16> is two 32-bit registers of two halves each.`,
  );
  y += 16;
  // One register, bit by bit.
  const bit = 12;
  d.text(MARGIN, y, "One 32-bit register: b0.y in bits 31–16, b0.x in bits 15–0", {
    size: 13,
    bold: true,
  });
  y += 12;
  register(d, MARGIN, y, bit, "b0.y", "b0.x");
  d.text(MARGIN, y + 38, "bit 31", { size: 10, fill: COLOR.muted });
  d.text(MARGIN + 32 * bit, y + 38, "bit 0", { size: 10, fill: COLOR.muted, anchor: "end" });
  const nx = MARGIN + 32 * bit + 24;
  d.paragraph(
    nx,
    y + 2,
    "Each half: 1 sign, 5 exponent and 10 mantissa bits (unit roundoff 2^-11). vec4<f16> b0 = " +
      "(x, y) in one register and (z, w) in the next.",
    WIDTH - MARGIN - nx,
    { size: 12 },
  );
  y += 70;

  // The packed multiply-add.
  d.text(MARGIN, y, "h00 += a0.x * b0: one packed instruction per register pair", {
    size: 13,
    bold: true,
  });
  y += 14;
  const rb = 7, rw = 32 * rb, gap = 52;
  const cols = [MARGIN + 20, MARGIN + 20 + rw + gap, MARGIN + 20 + 2 * (rw + gap)];
  register(d, cols[0], y, rb, "a0.x", "a0.x");
  d.text(cols[0] + rw + gap / 2, y + 16, "×", { size: 20, anchor: "middle" });
  register(d, cols[1], y, rb, "b0.y", "b0.x");
  d.text(cols[1] + rw + gap / 2, y + 16, "+", { size: 20, anchor: "middle" });
  register(d, cols[2], y, rb, "h00.y", "h00.x");
  d.text(cols[0] + rw / 2, y + 38, "the A value in both halves", {
    size: 10,
    anchor: "middle",
    fill: COLOR.muted,
  });
  d.text(cols[1] + rw / 2, y + 38, "two B values", {
    size: 10,
    anchor: "middle",
    fill: COLOR.muted,
  });
  d.text(cols[2] + rw / 2, y + 38, "two f16 partial sums", {
    size: 10,
    anchor: "middle",
    fill: COLOR.muted,
  });
  y += 52;
  d.arrow(cols[1] + rw / 2, y, cols[1] + rw / 2, y + 24, COLOR.c, 2);
  y += 30;
  register(d, cols[1], y, rb, "h00.y'", "h00.x'");
  d.paragraph(
    cols[2],
    y + 4,
    "one packed instruction (HFMA2 on NVIDIA), two multiply-adds; its f32 form needs two",
    WIDTH - MARGIN - cols[2],
    { size: 11 },
  );
  y += 54;
  for (
    const line of [
      "Per k step an invocation does 64 multiply-adds as 32 packed instructions where the " +
      "compiler pairs the halves (the f32 kernel: 64 instructions).",
      `After each BK = ${p.BK} deep tile the f16 partial sums are added into f32 accumulators ` +
      "(c00 += vec4<f32>(h00)), so the rounding error grows with BK, not with K.",
    ]
  ) y = d.paragraph(MARGIN, y, line, WIDTH - 2 * MARGIN, { size: 12 }) + 4;
  y = legend(d, y, [
    { color: tint(COLOR.mark, 0.35), label: "sign" },
    { color: tint(COLOR.b, 0.35), label: "exponent (5 bits)" },
    { color: tint(COLOR.sky, 0.35), label: "mantissa (10 bits)" },
  ]);
  return finish(
    d,
    y,
    `${stepHeading(ctx.spec)}: a 32-bit register holds two f16 values, so one packed ` +
      "multiply-add updates two partial sums; the f16 sums of each " +
      `BK = ${p.BK} tile are flushed into f32 accumulators.`,
  );
}
