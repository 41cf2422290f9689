/**
 * What a committed, executed notebook must be so that it reads well without running and stays
 * unchanged when opened: checks of a notebook file stamped by `tools/execute_notebook.ts --stamp`.
 *   deno run --allow-read tools/notebook_store.ts notebooks/*.ipynb   # prints problems; exit 1
 */
import {
  type Cell,
  type JsonObject,
  parseNotebook,
  serializeNotebook,
  sourceSha256,
} from "./notebook_json.ts";

/** Plain text longer than this is a dump nobody reads, not an explanation. */
export const MAX_TEXT_LINES = 40;
/** An object printed by the console (`{ ... }`, `Foo { ... }`, `[ ... ]`) longer than this. */
export const MAX_OBJECT_LINES = 5;

const OBJECT_DUMP = /^\s*([A-Za-z_$][\w$]*\s*(\[[^\]]*\]\s*)?)?[{[]/;

const textOf = (value: unknown): string | undefined =>
  typeof value === "string" ? value : Array.isArray(value) ? value.join("") : undefined;

const lineCount = (text: string) => text.replace(/\n$/, "").split("\n").length;

/** Problems of one output's readable text: too long, or an object dump. */
function dumpProblems(where: string, text: string): string[] {
  const lines = lineCount(text);
  if (lines > MAX_TEXT_LINES) return [`${where}: ${lines} lines of plain text (a dump)`];
  if (lines > MAX_OBJECT_LINES && OBJECT_DUMP.test(text)) {
    return [`${where}: an object dump of ${lines} lines (${text.split("\n")[0].trim()} ...)`];
  }
  return [];
}

/** Problems of one code cell's outputs. */
function outputProblems(cell: Cell, index: number): string[] {
  const problems: string[] = [];
  for (const [n, output] of ((cell.outputs ?? []) as JsonObject[]).entries()) {
    const where = `cell ${index} output ${n}`;
    if (output.output_type === "stream") {
      problems.push(...dumpProblems(where, textOf(output.text) ?? ""));
      continue;
    }
    const data = (output.data ?? {}) as JsonObject;
    const mimes = Object.keys(data);
    if (mimes.length === 1 && mimes[0] === "text/plain") {
      problems.push(...dumpProblems(where, textOf(data["text/plain"]) ?? ""));
    }
    const vegaLite = mimes.some((m) => m.startsWith("application/vnd.vegalite."));
    // JupyterLab's vega renderer adds a PNG to vega-lite outputs that lack one.
    if (vegaLite && !("image/png" in data)) problems.push(`${where}: vega-lite without a PNG`);
    const plotly = mimes.some((m) => m.startsWith("application/vnd.plotly."));
    if (plotly && !("image/png" in data || "image/svg+xml" in data)) {
      problems.push(`${where}: plotly without a static PNG or SVG`);
    }
  }
  return problems;
}

/**
 * Problems of a notebook file's text, or undefined when it carries no stamp for committing (never
 * executed, or executed without --stamp: its metadata names only the adapter and date). Stamped:
 * the device and commit are named, every code cell ran from the source it holds now, no output
 * is an unreadable dump, every chart has a static image, and the text is exactly what the
 * Jupyter server would write for it.
 */
export async function storeProblems(text: string): Promise<string[] | undefined> {
  const nb = parseNotebook(text);
  const stamp = nb.metadata.gemm_ladder as
    | { executed_on?: string; commit?: string; date?: string }
    | undefined;
  if (stamp?.commit === undefined) return undefined;
  const problems: string[] = [];
  if (!stamp.executed_on) problems.push("metadata names no device (gemm_ladder.executed_on)");
  if (!/^[0-9a-f]{7,40}(\+dirty)?$/.test(stamp.commit)) {
    problems.push(`metadata names no commit (gemm_ladder.commit: ${stamp.commit})`);
  }
  if (!(nb.metadata.language_info as JsonObject | undefined)?.name) {
    problems.push("metadata has no language_info from the kernel");
  }
  for (const [index, cell] of nb.cells.entries()) {
    if (cell.cell_type !== "code") continue;
    const recorded = (cell.metadata.gemm_ladder as { source_sha256?: string } | undefined)
      ?.source_sha256;
    if (recorded !== await sourceSha256(cell.source)) {
      problems.push(`cell ${index}: its source changed since it ran (or it never ran)`);
    }
    problems.push(...outputProblems(cell, index));
  }
  if (serializeNotebook(nb) !== text) {
    problems.push(
      "not stored as the Jupyter server writes it (run tools/execute_notebook.ts --stamp)",
    );
  }
  return problems;
}

if (import.meta.main) {
  let failed = 0;
  for (const path of Deno.args) {
    const problems = await storeProblems(await Deno.readTextFile(path));
    console.log(
      `${path}: ${problems === undefined ? "not stamped" : problems.length ? "FAILED" : "ok"}`,
    );
    for (const problem of problems ?? []) console.log(`  ${problem}`);
    if (problems?.length) failed++;
  }
  Deno.exit(failed ? 1 : 0);
}
