/**
 * A small SVG writer for the concept figures: rectangles, lines, arrows and text in one font
 * (DejaVu Sans, which lib/render.ts embeds when it rasterises), one palette, a title and a
 * legend. No ids and no external references, so several figures can sit in one notebook page.
 */
import { FONT } from "../font.ts";
import type { ConceptFigure } from "../steps/spec.ts";

export type { ConceptFigure };

/** The palette: one colour per role, the same in every figure (Okabe-Ito, colour-blind safe). */
export const COLOR = {
  a: "#0072B2",
  b: "#E69F00",
  c: "#009E73",
  mark: "#D55E00",
  other: "#CC79A7",
  sky: "#56B4E9",
  ink: "#222222",
  muted: "#666666",
  grid: "#BBBBBB",
  faint: "#EEEEEE",
} as const;

/** `color` mixed with white: 0 is the colour, 1 is white. */
export function tint(color: string, amount: number): string {
  const rgb = [1, 3, 5].map((i) => parseInt(color.slice(i, i + 2), 16));
  return "#" + rgb.map((v) => Math.round(v + (255 - v) * amount).toString(16).padStart(2, "0"))
    .join("");
}

export interface Style {
  fill?: string;
  stroke?: string;
  width?: number;
  dash?: string;
  opacity?: number;
  rx?: number;
}

export interface TextStyle {
  size?: number;
  anchor?: "start" | "middle" | "end";
  bold?: boolean;
  fill?: string;
  /** Degrees, about the text's anchor point. */
  rotate?: number;
}

const num = (x: number) => Number(x.toFixed(2)).toString();

const escape = (s: string) =>
  s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll(
    '"',
    "&quot;",
  );

function styleAttrs(s: Style): string {
  const parts = [
    `fill="${s.fill ?? "none"}"`,
    s.stroke ? `stroke="${s.stroke}" stroke-width="${num(s.width ?? 1)}"` : "",
    s.dash ? `stroke-dasharray="${s.dash}"` : "",
    s.opacity !== undefined ? `opacity="${num(s.opacity)}"` : "",
  ];
  return parts.filter(Boolean).join(" ");
}

/** Space-separated widths as numbers. */
const advances = (widths: string) => widths.split(" ").map(Number);
/**
 * Advance widths of DejaVu Sans in 1/2048 em (its `hmtx` table), regular and bold, for printable
 * ASCII from the space (32) to `~` (126).
 */
const REGULAR_ASCII = advances(
  "651 821 942 1716 1303 1946 1597 563 799 799 1024 1716 651 739 651 690 1303 1303 1303 " +
    "1303 1303 1303 1303 1303 1303 1303 690 690 1716 1716 1716 1087 2048 1401 1405 1430 1577 " +
    "1294 1178 1587 1540 604 604 1343 1141 1767 1532 1612 1235 1612 1423 1300 1251 1499 1401 " +
    "2025 1403 1251 1403 799 690 799 1716 1024 1024 1255 1300 1126 1300 1260 721 1300 1298 " +
    "569 569 1186 569 1995 1298 1253 1300 1300 842 1067 803 1298 1212 1675 1212 1212 1075 " +
    "1303 690 1303 1716",
);
const BOLD_ASCII = advances(
  "713 934 1067 1716 1425 2052 1786 627 936 936 1071 1716 778 850 778 748 1425 1425 1425 " +
    "1425 1425 1425 1425 1425 1425 1425 819 819 1716 1716 1716 1188 2048 1585 1561 1503 1700 " +
    "1399 1399 1681 1714 762 762 1587 1305 2038 1714 1741 1501 1741 1577 1475 1397 1663 1585 " +
    "2259 1579 1483 1485 936 748 936 1716 1024 1024 1382 1466 1214 1466 1389 891 1466 1458 " +
    "702 702 1362 702 2134 1458 1407 1466 1466 1010 1219 979 1458 1335 1892 1321 1335 1192 " +
    "1458 748 1458 1716",
);
/** The other characters the figures write, [regular, bold], in 1/2048 em. */
const OTHER_ADVANCES: Record<string, [number, number]> = {
  "·": [651, 778],
  "×": [1716, 1716],
  "–": [1024, 1024],
  "…": [2048, 2048],
  "←": [1716, 1716],
  "→": [1716, 1716],
  "⌊": [799, 936],
  "⌋": [799, 936],
};

/**
 * Width of `text` in DejaVu Sans at `size` px, from the font's advance widths (kerning aside), so
 * that a layout reserves the room its labels take. A character outside the table counts 1 em,
 * more than any it has.
 */
export function textWidth(text: string, size = 12, bold = false): number {
  let units = 0;
  for (const c of text) {
    const code = c.codePointAt(0)!;
    units += code >= 32 && code < 127
      ? (bold ? BOLD_ASCII : REGULAR_ASCII)[code - 32]
      : OTHER_ADVANCES[c]?.[bold ? 1 : 0] ?? 2048;
  }
  return (units * size) / 2048;
}

/** One figure being drawn. Coordinates are SVG user units (pixels at 1x). */
export class Drawing {
  readonly #parts: string[] = [];

  constructor(readonly width: number, public height: number) {}

  /** Elements drawn so far (the tests keep figures modest). */
  get count(): number {
    return this.#parts.length;
  }

  rect(x: number, y: number, w: number, h: number, style: Style = {}): this {
    const rx = style.rx ? ` rx="${num(style.rx)}"` : "";
    this.#parts.push(
      `<rect x="${num(x)}" y="${num(y)}" width="${num(w)}" height="${num(h)}"${rx} ${
        styleAttrs(style)
      }/>`,
    );
    return this;
  }

  line(x1: number, y1: number, x2: number, y2: number, style: Style = {}): this {
    this.#parts.push(
      `<line x1="${num(x1)}" y1="${num(y1)}" x2="${num(x2)}" y2="${num(y2)}" ${
        styleAttrs({ stroke: COLOR.ink, ...style, fill: undefined })
      }/>`,
    );
    return this;
  }

  /** A path from SVG path data (several grid lines in one element). */
  path(d: string, style: Style = {}): this {
    this.#parts.push(`<path d="${d}" ${styleAttrs(style)}/>`);
    return this;
  }

  /** Horizontal and vertical lines splitting a box into `cols` x `rows` equal cells, one path. */
  gridLines(
    x: number,
    y: number,
    w: number,
    h: number,
    cols: number,
    rows: number,
    style: Style = { stroke: COLOR.grid, width: 0.5 },
  ): this {
    const d: string[] = [];
    for (let i = 1; i < cols; i++) {
      const at = x + (w * i) / cols;
      d.push(`M${num(at)} ${num(y)}V${num(y + h)}`);
    }
    for (let j = 1; j < rows; j++) {
      const at = y + (h * j) / rows;
      d.push(`M${num(x)} ${num(at)}H${num(x + w)}`);
    }
    return d.length ? this.path(d.join(""), style) : this;
  }

  /** A line with a filled arrowhead at its end. */
  arrow(x1: number, y1: number, x2: number, y2: number, color: string = COLOR.ink, width = 1.5) {
    const angle = Math.atan2(y2 - y1, x2 - x1);
    const head = 4 + 2 * width;
    const back = (da: number) =>
      `${num(x2 - head * Math.cos(angle + da))},${num(y2 - head * Math.sin(angle + da))}`;
    this.line(x1, y1, x2 - (head / 2) * Math.cos(angle), y2 - (head / 2) * Math.sin(angle), {
      stroke: color,
      width,
    });
    this.#parts.push(
      `<polygon points="${num(x2)},${num(y2)} ${back(0.4)} ${back(-0.4)}" fill="${color}"/>`,
    );
    return this;
  }

  /** A dimension line with end ticks and a label: the size of a tile side. */
  dimension(x1: number, y1: number, x2: number, y2: number, label: string, side: 1 | -1 = -1) {
    const vertical = x1 === x2;
    const tick = 4;
    this.line(x1, y1, x2, y2, { stroke: COLOR.muted });
    if (vertical) {
      this.line(x1 - tick, y1, x1 + tick, y1, { stroke: COLOR.muted });
      this.line(x2 - tick, y2, x2 + tick, y2, { stroke: COLOR.muted });
      this.text(x1 + side * 6, (y1 + y2) / 2 + 4, label, {
        anchor: side < 0 ? "end" : "start",
        size: 11,
        fill: COLOR.muted,
      });
    } else {
      this.line(x1, y1 - tick, x1, y1 + tick, { stroke: COLOR.muted });
      this.line(x2, y2 - tick, x2, y2 + tick, { stroke: COLOR.muted });
      this.text((x1 + x2) / 2, y1 + (side < 0 ? -6 : 15), label, {
        anchor: "middle",
        size: 11,
        fill: COLOR.muted,
      });
    }
    return this;
  }

  text(x: number, y: number, text: string, style: TextStyle = {}): this {
    const attrs = [
      `x="${num(x)}" y="${num(y)}"`,
      `font-size="${num(style.size ?? 12)}"`,
      style.anchor && style.anchor !== "start" ? `text-anchor="${style.anchor}"` : "",
      style.bold ? `font-weight="bold"` : "",
      `fill="${style.fill ?? COLOR.ink}"`,
      style.rotate ? `transform="rotate(${style.rotate} ${num(x)} ${num(y)})"` : "",
    ];
    this.#parts.push(`<text ${attrs.filter(Boolean).join(" ")}>${escape(text)}</text>`);
    return this;
  }

  /**
   * Lines of text from (x, y) down, each wrapped at `maxWidth`; returns the y below the last.
   */
  paragraph(x: number, y: number, text: string, maxWidth: number, style: TextStyle = {}): number {
    const size = style.size ?? 12;
    for (const line of wrap(text, maxWidth, size, style.bold)) {
      this.text(x, y, line, style);
      y += size * 1.35;
    }
    return y;
  }

  /** The document: white background, the one font family, width and height in pixels. */
  toString(): string {
    const w = num(this.width), h = num(Math.ceil(this.height));
    return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" ` +
      `viewBox="0 0 ${w} ${h}" font-family="${FONT}, Verdana, sans-serif">\n` +
      `<rect x="0" y="0" width="${w}" height="${h}" fill="white"/>\n` +
      this.#parts.join("\n") + "\n</svg>\n";
  }
}

/** `text` broken into lines no wider than `maxWidth` (at word boundaries). */
export function wrap(text: string, maxWidth: number, size = 12, bold = false): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const next = line ? `${line} ${word}` : word;
    if (line && textWidth(next, size, bold) > maxWidth) {
      lines.push(line);
      line = word;
    } else line = next;
  }
  if (line) lines.push(line);
  return lines;
}

/** Figure width: readable at 700-900 px. */
export const WIDTH = 860;
export const MARGIN = 20;

/** Title and subtitle at the top; returns the y where the figure's body starts. */
export function heading(d: Drawing, title: string, subtitle?: string): number {
  d.text(MARGIN, 28, title, { size: 16, bold: true });
  if (!subtitle) return 46;
  const y = d.paragraph(MARGIN, 48, subtitle, d.width - 2 * MARGIN, {
    size: 12,
    fill: COLOR.muted,
  });
  return y + 6;
}

/** One legend entry: a swatch (filled, or outlined when `outline`) and what it means. */
export interface LegendItem {
  color: string;
  label: string;
  outline?: boolean;
}

/**
 * A legend from (MARGIN, y), items flowing left to right and wrapping; returns the y below it.
 */
export function legend(d: Drawing, y: number, items: LegendItem[]): number {
  let x = MARGIN;
  const size = 12;
  y += 4;
  for (const item of items) {
    const w = 18 + textWidth(item.label, size) + 22;
    if (x > MARGIN && x + w > d.width - MARGIN) {
      x = MARGIN;
      y += 20;
    }
    d.rect(
      x,
      y,
      12,
      12,
      item.outline
        ? { stroke: item.color, width: 2, fill: "white" }
        : { fill: item.color, stroke: COLOR.ink, width: 0.5 },
    );
    d.text(x + 18, y + 11, item.label, { size });
    x += w;
  }
  return y + 26;
}

/** Finish a drawing: set its height to `bottom` plus a margin and pair it with its caption. */
export function finish(d: Drawing, bottom: number, caption: string): ConceptFigure {
  d.height = bottom + 10;
  return { svg: d.toString(), caption };
}
