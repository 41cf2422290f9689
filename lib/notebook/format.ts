/**
 * Notes and tables for notebook cells: each shown as Markdown, HTML and aligned plain text, so
 * it reads the same in Jupyter, in exported HTML and on the console.
 */
import { type DisplayBundle, showBundle } from "./jupyter.ts";

export const escapeHtml = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** Inline markdown used in generated notes (`code`, **bold**) as HTML. */
export function inlineHtml(s: string): string {
  return escapeHtml(s).replace(/`([^`]+)`/g, "<code>$1</code>").replace(
    /\*\*([^*]+)\*\*/g,
    "<b>$1</b>",
  );
}

/** Show a short markdown note (paragraphs, inline code and bold; also rendered to HTML). */
export async function showNote(markdown: string): Promise<void> {
  const html = markdown.trim().split(/\n\s*\n/).map((p) => `<p>${inlineHtml(p)}</p>`).join("\n");
  await showBundle({ "text/plain": markdown.trim(), "text/markdown": markdown, "text/html": html });
}

/** Show a bulleted list of markdown lines (inline code and bold; also rendered to HTML). */
export async function showBullets(items: string[]): Promise<void> {
  const md = items.map((item) => `- ${item}`).join("\n");
  await showBundle({
    "text/plain": md,
    "text/markdown": md,
    "text/html": `<ul>${items.map((item) => `<li>${inlineHtml(item)}</li>`).join("")}</ul>`,
  });
}

/** A table cell: numbers are formatted to 3 significant digits, undefined shows as "-". */
export type Cell = string | number | boolean | undefined;

/** Format a number for tables: 3 significant digits, thousands separators, "-" for missing. */
export function fmt(x: Cell, digits = 3): string {
  if (x === undefined) return "-";
  if (typeof x !== "number") return String(x);
  if (Number.isNaN(x)) return "NaN";
  if (!Number.isFinite(x)) return String(x);
  if (Number.isInteger(x) && Math.abs(x) < 1e15) return x.toLocaleString("en-US");
  if (x !== 0 && Math.abs(x) < 1e-3) return x.toExponential(digits - 1);
  return Number(x.toPrecision(digits)).toLocaleString("en-US", { maximumFractionDigits: 6 });
}

/**
 * The MIME type under which a table lists its rows that failed validation (a row whose
 * "validated" column is false). Viewers ignore it; the notebook executors fail a notebook whose
 * outputs carry it unless the cell declares it in its `expect` metadata (a deliberate
 * demonstration of a wrong kernel).
 */
export const UNVALIDATED_MIME = "application/vnd.gemm-ladder.unvalidated+json";

/** The rows whose "validated..." column is false, each named by its first cells. */
function unvalidatedRows(columns: string[], rows: Cell[][]): string[] {
  const checks = columns.flatMap((c, i) => (c.startsWith("validated") ? [i] : []));
  return rows.filter((r) => checks.some((i) => r[i] === false))
    .map((r) => r.slice(0, Math.min(2, checks[0])).map((c) => fmt(c)).join(" "));
}

/**
 * A table as markdown, HTML and aligned plain text; rows that failed validation are also listed
 * under UNVALIDATED_MIME.
 */
export function tableBundle(columns: string[], rows: Cell[][], caption?: string): DisplayBundle {
  // Short rows are padded with "-" so a missing trailing value can never break the table.
  const text = rows.map((r) => columns.map((_, i) => fmt(r[i])));
  const widths = columns.map((c, i) => Math.max(c.length, ...text.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join("  ");
  const plain = [
    ...(caption ? [caption] : []),
    line(columns),
    line(widths.map((w) => "-".repeat(w))),
    ...text.map(line),
  ].join("\n");
  const md = [
    ...(caption ? [`**${caption}**`, ""] : []),
    `| ${columns.join(" | ")} |`,
    `|${columns.map(() => " --- ").join("|")}|`,
    ...text.map((r) => `| ${r.map((c) => c.replace(/\|/g, "\\|")).join(" | ")} |`),
  ].join("\n");
  const numeric = (i: number) => rows.length > 0 && rows.every((r) => typeof r[i] !== "string");
  const td = (tag: string, c: string, i: number) =>
    `<${tag} style="text-align:${numeric(i) ? "right" : "left"}">${escapeHtml(c)}</${tag}>`;
  const html = `<table>${caption ? `<caption>${escapeHtml(caption)}</caption>` : ""}` +
    `<thead><tr>${columns.map((c, i) => td("th", c, i)).join("")}</tr></thead><tbody>` +
    text.map((r) => `<tr>${r.map((c, i) => td("td", c, i)).join("")}</tr>`).join("") +
    `</tbody></table>`;
  const unvalidated = unvalidatedRows(columns, rows);
  return {
    "text/plain": plain,
    "text/markdown": md,
    "text/html": html,
    ...(unvalidated.length ? { [UNVALIDATED_MIME]: unvalidated } : {}),
  };
}

/** Show a table (see tableBundle). */
export async function showTable(columns: string[], rows: Cell[][], caption?: string) {
  await showBundle(tableBundle(columns, rows, caption));
}

/**
 * A timed result's run-to-run spread for a table cell: the range of its timed runs as a share of
 * their median, and how many runs ("0.41%, 50"); undefined for a result that was not timed.
 */
export function spreadCell(
  r: { medianMs?: number; minMs?: number; maxMs?: number; reps?: number } | undefined,
): string | undefined {
  if (!r?.medianMs || r.minMs === undefined || r.maxMs === undefined) return undefined;
  return `${fmt((100 * (r.maxMs - r.minMs)) / r.medianMs, 2)}%, ${r.reps ?? "?"}`;
}

/** The column header spreadCell's cells go under. */
export const SPREAD_COLUMN = "spread, runs";

/** Tile parameters as one line ("BM=64 BN=64"). */
export function paramsLabel(params: Record<string, number>): string {
  return Object.entries(params).map(([k, v]) => `${k}=${v}`).join(" ");
}

/** The first line of an error, cut to fit a table cell. */
export function shortError(e: string | undefined): string | undefined {
  if (!e) return undefined;
  const first = e.split("\n")[0];
  return first.length > 160 ? first.slice(0, 157) + "..." : first;
}
