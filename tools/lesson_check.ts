/**
 * Checks that each notebook reads as a lesson and shows in every viewer (STYLE.md's shape, the
 * limits of the lessons issue):
 *
 *   deno run --allow-read tools/lesson_check.ts [notebooks/NN_name.ipynb ...] [--json]
 *
 * With no paths it checks every notebooks/*.ipynb. Per notebook it prints one line of figures and
 * one line per failed check (and a `note:` line per report-only finding); it exits 1 if any check
 * fails. `--json` prints the same as one JSON object instead.
 *
 * What each check counts:
 * - Lesson text is every markdown cell except the closing Sources cell (the last non-blank cell,
 *   markdown, whose first line is `## Sources`). Its words are counted as a reader sees them: HTML
 *   tags and comments, link and image URLs and code-fence markers are dropped; code spans and code
 *   blocks count; a word is any run between spaces or table pipes holding a letter or a digit.
 * - The word cap comes from the notebook's number: the setup (00), the first rung (01, the CPU)
 *   and the last notebook of the ladder (the highest number present, the summary) introduce or
 *   close the whole ladder and get 1,500 words; every step between gets 1,200.
 * - An output's lines are the lines a viewer shows of the representation it picks (JupyterLab's
 *   order: HTML, then charts and images, which count 0 lines, then Markdown, then plain text). In
 *   HTML each table row is a line, each paragraph, list item, heading, caption and `<br>` ends a
 *   line, and `<pre>` keeps its own lines; a closed `<details>` shows only its summary.
 *   Consecutive stream outputs of one name are one output, as the viewers merge them.
 * - An SVG output needs a PNG in its own bundle, or a PNG-only output beside it in the same cell
 *   (one PNG per SVG): an untrusted notebook and GitHub do not show the SVG.
 * - Record names, hashes and history words (`LAB_PATTERNS`, each with its reason) are looked for
 *   in the lesson text as shown: a link's target is not shown, so `[the record](data/...)` passes.
 * - The stamp is `metadata.gemm_ladder.commit`; the notebooks checked together must share one.
 * - Cells are named by their index in the file (from 0) and their section's heading.
 */

/** A notebook as stored: only the fields the checks read. */
export interface NotebookJson {
  cells: CellJson[];
  metadata?: { gemm_ladder?: { commit?: string } } & Record<string, unknown>;
}

export interface CellJson {
  cell_type: string;
  source: string | string[];
  outputs?: OutputJson[];
}

export interface OutputJson {
  output_type: string;
  name?: string;
  text?: string | string[];
  data?: Record<string, unknown>;
  traceback?: string[];
}

export interface Failure {
  check: string;
  message: string;
}

export interface NotebookReport {
  path: string;
  /** The step number from the file name (`NN_name.ipynb`), or null without one. */
  number: number | null;
  words: number;
  wordCap: number;
  bytes: number;
  /** The longest output, in shown lines, and the cell it is in (0-based), or null without outputs. */
  longestOutput: { lines: number; cell: number } | null;
  commit: string | null;
  failures: Failure[];
  /** Report-only findings: they do not fail the run. */
  notes: string[];
}

export const WORD_CAP = 1200;
export const WORD_CAP_WIDE = 1500;
export const MAX_OUTPUT_LINES = 60;
/** 1.5 MB, in the decimal megabytes that file sizes are quoted in. */
export const MAX_NOTEBOOK_BYTES = 1_500_000;

/** Record names, hashes and history that belong in Sources or nowhere, each with why it is here. */
export const LAB_PATTERNS: readonly { name: string; pattern: RegExp; reason: string }[] = [
  {
    name: "record path",
    pattern: /(?<![\w./-])(?:data|lab)\/(?:[\w./-]*[\w/])?/g,
    reason: "record, tuning and lab files are named in Sources; the lesson says what they show",
  },
  {
    name: "JSON file",
    // The project's own configuration files (deno.json) are tools a lesson may name.
    pattern: /(?<![\w./-])(?!(?:deno|package|tsconfig)\.json\b)[\w.-]+\.json\b/g,
    reason: "a .json name in prose is a record or search file, which belongs in Sources",
  },
  {
    name: "commit hash",
    // 7 to 40 lowercase hex digits with at least one letter and one digit, so plain numbers
    // (4096) and words (decade) pass; not after `#` (a colour) or `0x` (a literal).
    pattern: /(?<![#\w])(?!0x)(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\w])/g,
    reason: "commits identify records, which belong in Sources",
  },
  {
    name: "date",
    pattern: /\b\d{4}-\d{2}-\d{2}(?:T[\d:]+Z?)?\b/g,
    reason: "a date in the lesson is a record's date; the reader meets the kernel as it is",
  },
  {
    name: "record stamp",
    pattern: /\bT\d{4}\b/g,
    reason: "a record's time stamp (T0725) names a record",
  },
  {
    name: "history",
    pattern:
      /\b(?:stale|renumber(?:ed|ing)?|withdrawn|supersed(?:ed|es)|(?:an? )?(?:older|earlier|previous|old) version|(?:was|were) tried)\b/gi,
    reason: "no history: not what an older version did, not what was tried and dropped",
  },
  {
    name: "issue number",
    // "issue 12" or "issue #12", not a GPU's instruction issue: "issue 63 351" (a limit in
    // GFLOP/s) or "issue 4 warp instructions" (a rate).
    pattern:
      /\bissues? (?:#\d+|\d+(?![\d\w]|[ \u00a0\u202f]\d|\s+(?:warp|instruction|load|store|FMA|op|per\b|each\b|every\b)))/giu,
    reason: "issue numbers are the project's log or a citation; citations go in Sources",
  },
];

// ---------------------------------------------------------------------------------------------
// Reading cells

const text = (value: unknown): string =>
  Array.isArray(value) ? value.join("") : typeof value === "string" ? value : "";

export const cellSource = (cell: CellJson): string => text(cell.source);

/** The step number of `NN_name.ipynb`, or null. */
export function notebookNumber(path: string): number | null {
  const match = /(?:^|\/)(\d+)_[^/]*\.ipynb$/.exec(path);
  return match ? Number(match[1]) : null;
}

/** The index of the closing Sources cell, or -1 when the notebook does not end with one. */
export function sourcesCellIndex(notebook: NotebookJson): number {
  const cells = notebook.cells;
  let last = cells.length - 1;
  while (last >= 0 && cellSource(cells[last]).trim() === "") last--;
  if (last < 0 || cells[last].cell_type !== "markdown") return -1;
  const firstLine = cellSource(cells[last]).trimStart().split("\n")[0];
  return /^##\s+Sources\s*$/.test(firstLine) ? last : -1;
}

/**
 * A cell as a writer finds it: its index in the file (from 0) and the heading of its section, the
 * nearest markdown heading at or above it.
 */
export function cellLabel(notebook: NotebookJson, index: number): string {
  for (let i = index; i >= 0; i--) {
    const cell = notebook.cells[i];
    if (cell.cell_type !== "markdown") continue;
    const headings = [...cellSource(cell).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)];
    const heading = i === index ? headings[0] : headings.at(-1);
    if (heading) return `cell ${index} (${visibleText(heading[1]).trim()})`;
  }
  return `cell ${index}`;
}

/** The lesson's markdown cells, with their indices: every markdown cell but the Sources cell. */
export function lessonCells(notebook: NotebookJson): { index: number; source: string }[] {
  const sources = sourcesCellIndex(notebook);
  return notebook.cells.flatMap((cell, index) =>
    cell.cell_type === "markdown" && index !== sources ? [{ index, source: cellSource(cell) }] : []
  );
}

const ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
  thinsp: " ",
};

function decodeEntities(html: string): string {
  return html.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (whole, name: string) => {
    if (name[0] === "#") {
      const code = name[1] === "x" || name[1] === "X"
        ? parseInt(name.slice(2), 16)
        : Number(name.slice(1));
      return String.fromCodePoint(code);
    }
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}

/** Fenced code blocks (fence lines dropped) and code spans: shown as written, tags and all. */
const CODE =
  /^ {0,3}(`{3,}|~{3,})[^\n]*\n([\s\S]*?)(?:^ {0,3}\1[`~]*[ \t]*$|(?![\s\S]))|(`+)([\s\S]*?[^`])\3(?!`)/gm;

/** Markdown as a reader sees it: no tags, comments, URLs or code-fence markers; code as written. */
export function visibleText(markdown: string): string {
  const code: string[] = [];
  const hold = (shown: string) => `\u0000${code.push(shown) - 1}\u0000`;
  const prose = markdown
    .replace(/<!--[\s\S]*?-->/g, " ")
    .replace(CODE, (_, _fence, block, _ticks, span) => hold(block ?? span))
    .replace(/^ {0,3}\[[^\]]+\]:\s*\S+.*$/gm, " ")
    .replace(/!?\[([^\]]*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+"[^"]*")?\)/g, "$1")
    .replace(/!?\[([^\]]*)\]\[[^\]]*\]/g, "$1")
    .replace(/<\/?[A-Za-z][^>]*>/g, " ");
  // deno-lint-ignore no-control-regex
  return decodeEntities(prose).replace(/\u0000(\d+)\u0000/g, (_, i) => code[Number(i)]);
}

/** Words as a reader counts them: runs between spaces or table pipes holding a letter or digit. */
export function countWords(markdown: string): number {
  return visibleText(markdown).split(/[\s|]+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).length;
}

// ---------------------------------------------------------------------------------------------
// Output lines

const IMAGE_OR_CHART = /^(?:image\/|application\/vnd\.(?:vegalite|vega|plotly)\b)/;

const nonBlankLines = (s: string) => s.split("\n").filter((l) => l.trim() !== "").length;
const allLines = (s: string) => (s === "" ? 0 : s.replace(/\n$/, "").split("\n").length);

/** Lines an HTML output shows (see the file's header for the rules). */
export function htmlLines(html: string): number {
  let shown = html.replace(/<!--[\s\S]*?-->/g, "");
  // Closed <details>, innermost first: only the summary shows.
  const closed = /<details\b(?![^>]*\bopen\b)[^>]*>((?:(?!<details\b)[\s\S])*?)<\/details>/i;
  for (let m = closed.exec(shown); m; m = closed.exec(shown)) {
    const summary = /<summary\b[^>]*>([\s\S]*?)<\/summary>/i.exec(m[1]);
    shown = shown.slice(0, m.index) + `<p>${summary ? summary[1] : "details"}</p>` +
      shown.slice(m.index + m[0].length);
  }
  let lines = 0;
  const pre = /<pre\b[^>]*>([\s\S]*?)<\/pre>/gi;
  let at = 0;
  const flow = (part: string) =>
    nonBlankLines(
      part.replace(/\s+/g, " ")
        .replace(/<br\s*\/?>|<\/(?:tr|p|li|h[1-6]|div|caption|summary|dt|dd|blockquote)>/gi, "\n")
        .replace(/<\/?[A-Za-z][^>]*>/g, ""),
    );
  for (const m of shown.matchAll(pre)) {
    lines += flow(shown.slice(at, m.index));
    lines += allLines(m[1].replace(/<\/?[A-Za-z][^>]*>/g, ""));
    at = m.index + m[0].length;
  }
  return lines + flow(shown.slice(at));
}

/** Lines a display bundle shows, from the representation a viewer picks. */
export function bundleLines(data: Record<string, unknown>): number {
  if ("text/html" in data) return htmlLines(text(data["text/html"]));
  if (Object.keys(data).some((mime) => IMAGE_OR_CHART.test(mime))) return 0;
  if ("text/markdown" in data) return nonBlankLines(text(data["text/markdown"]));
  return allLines(text(data["text/plain"]));
}

/** Each output's shown lines, consecutive streams of one name merged as the viewers show them. */
export function outputLines(outputs: OutputJson[]): number[] {
  const counts: number[] = [];
  let stream: { name: string; text: string } | null = null;
  const flush = () => {
    if (stream) counts.push(allLines(stream.text));
    stream = null;
  };
  for (const output of outputs) {
    if (output.output_type === "stream") {
      const name = output.name ?? "stdout";
      if (stream && stream.name === name) stream.text += text(output.text);
      else {
        flush();
        stream = { name, text: text(output.text) };
      }
      continue;
    }
    flush();
    if (output.output_type === "error") counts.push((output.traceback ?? []).length);
    else counts.push(bundleLines(output.data ?? {}));
  }
  flush();
  return counts;
}

// ---------------------------------------------------------------------------------------------
// Checks

/** 1,500 words for the setup, the first rung and the last notebook; 1,200 for the steps between. */
export function wordCap(number: number | null, lastNumber: number): number {
  if (number === null) return WORD_CAP;
  return number <= 1 || number >= lastNumber ? WORD_CAP_WIDE : WORD_CAP;
}

export interface LabHit {
  cell: number;
  name: string;
  match: string;
}

/** Every record name, hash or history word in the lesson text. */
export function labHits(notebook: NotebookJson): LabHit[] {
  return lessonCells(notebook).flatMap(({ index, source }) => {
    const shown = visibleText(source);
    const found = LAB_PATTERNS.flatMap(({ name, pattern }) =>
      [...shown.matchAll(pattern)]
        .filter((m) => name !== "commit hash" || !/^\d+e\d+$/.test(m[0]))
        .map((m) => ({ name, match: m[0], start: m.index, end: m.index + m[0].length }))
    ).sort((a, b) => a.start - b.start || b.end - a.end);
    // One hit per place: a date inside a record's path is the path's.
    let covered = -1;
    return found.flatMap((hit) => {
      if (hit.end <= covered) return [];
      covered = Math.max(covered, hit.end);
      return [{ cell: index, name: hit.name, match: hit.match }];
    });
  });
}

/** Outputs longer than the cap: cell index and shown lines. */
export function longOutputs(
  notebook: NotebookJson,
  cap = MAX_OUTPUT_LINES,
): { cell: number; lines: number }[] {
  return notebook.cells.flatMap((cell, index) =>
    outputLines(cell.outputs ?? []).filter((n) => n > cap).map((lines) => ({ cell: index, lines }))
  );
}

function longestOutput(notebook: NotebookJson): { lines: number; cell: number } | null {
  let longest: { lines: number; cell: number } | null = null;
  notebook.cells.forEach((cell, index) => {
    for (const lines of outputLines(cell.outputs ?? [])) {
      if (!longest || lines > longest.lines) longest = { lines, cell: index };
    }
  });
  return longest;
}

/** Cells (by index) holding more SVG-only outputs than PNG-only outputs to pair them with. */
export function svgWithoutPng(notebook: NotebookJson): number[] {
  return notebook.cells.flatMap((cell, index) => {
    let svgOnly = 0;
    let pngOnly = 0;
    for (const output of cell.outputs ?? []) {
      const data = output.data ?? {};
      const svg = "image/svg+xml" in data;
      const png = "image/png" in data;
      if (svg && !png) svgOnly++;
      if (png && !svg) pngOnly++;
    }
    return svgOnly > pngOnly ? [index] : [];
  });
}

/**
 * A markdown cell of the lesson whose heading or first three words say "predict" and that holds a
 * number (the ladder steps, 02 to the one before the last, each need one; report only).
 */
export function hasNumericPrediction(notebook: NotebookJson): boolean {
  return lessonCells(notebook).some(({ source }) => {
    const [first, ...rest] = source.trimStart().split("\n");
    const heading = /^#{1,6}\s/.test(first) ? first : "";
    const firstWords = visibleText(heading ? rest.join("\n") : source).replace(/[*_#]/g, "")
      .trim().split(/\s+/).slice(0, 3).join(" ");
    return /\bpredict/i.test(`${heading} ${firstWords}`) && /\d/.test(visibleText(source));
  });
}

export const commitOf = (notebook: NotebookJson): string | null => {
  const commit = notebook.metadata?.gemm_ladder?.commit;
  return typeof commit === "string" && commit !== "" ? commit : null;
};

/** Every check of one notebook but the shared stamp, which needs all of them. */
export function checkNotebook(
  path: string,
  notebook: NotebookJson,
  bytes: number,
  lastNumber: number,
): NotebookReport {
  const number = notebookNumber(path);
  const cap = wordCap(number, lastNumber);
  const words = lessonCells(notebook).reduce((sum, c) => sum + countWords(c.source), 0);
  const failures: Failure[] = [];
  const notes: string[] = [];
  const fail = (check: string, message: string) => failures.push({ check, message });

  if (number === null) notes.push("no step number in the file name: the 1,200-word cap applies");
  if (words > cap) fail("words", `lesson text is ${words} words, over the cap of ${cap}`);
  if (sourcesCellIndex(notebook) < 0) {
    fail("sources", "the last cell is not a markdown cell headed `## Sources`");
  }
  const hits = labHits(notebook);
  if (hits.length > 0) {
    fail(
      "lab-words",
      `${hits.length} record names, hashes or lab words in lesson text: ` +
        Map.groupBy(hits, (h) => h.cell).entries().map(([cell, found]) =>
          `${cellLabel(notebook, cell)}: ` + found.map((h) => `${h.name} "${h.match}"`).join(", ")
        ).toArray().join("; "),
    );
  }
  const long = longOutputs(notebook);
  if (long.length > 0) {
    fail(
      "output-lines",
      `${long.length} output${long.length === 1 ? "" : "s"} over ${MAX_OUTPUT_LINES} lines: ` +
        long.map((o) => `${cellLabel(notebook, o.cell)} ${o.lines} lines`).join("; "),
    );
  }
  const svg = svgWithoutPng(notebook);
  if (svg.length > 0) {
    fail(
      "svg-png",
      `SVG without a PNG beside it: ${svg.map((c) => cellLabel(notebook, c)).join("; ")}`,
    );
  }
  if (bytes > MAX_NOTEBOOK_BYTES) {
    fail("size", `${megabytes(bytes)} MB, over ${megabytes(MAX_NOTEBOOK_BYTES)} MB`);
  }
  const commit = commitOf(notebook);
  if (commit === null) fail("stamp", "no `gemm_ladder.commit` in the notebook's metadata");
  if (number !== null && number >= 2 && number < lastNumber && !hasNumericPrediction(notebook)) {
    notes.push('no markdown cell that starts with "Predict" and holds a number');
  }
  return {
    path,
    number,
    words,
    wordCap: cap,
    bytes,
    longestOutput: longestOutput(notebook),
    commit,
    failures,
    notes,
  };
}

export interface Summary {
  notebooks: NotebookReport[];
  /** Each stamp commit and the notebooks carrying it. */
  commits: Record<string, string[]>;
  /** One failure line for the set: more than one stamp commit among the notebooks. */
  failures: Failure[];
  ok: boolean;
}

/** Checks notebooks together: each alone, then that they share one stamp commit. */
export function checkNotebooks(
  notebooks: { path: string; notebook: NotebookJson; bytes: number }[],
  lastNumber: number,
): Summary {
  const reports = notebooks.map((n) => checkNotebook(n.path, n.notebook, n.bytes, lastNumber));
  const commits: Record<string, string[]> = {};
  for (const report of reports) {
    if (report.commit !== null) (commits[report.commit] ??= []).push(report.path);
  }
  const failures: Failure[] = [];
  const stamped = Object.keys(commits);
  if (stamped.length > 1) {
    failures.push({
      check: "one-commit",
      message: `stamped from ${stamped.length} commits: ` +
        stamped.map((c) => `${c} (${commits[c].length})`).join(", "),
    });
  }
  const ok = failures.length === 0 && reports.every((r) => r.failures.length === 0);
  return { notebooks: reports, commits, failures, ok };
}

// ---------------------------------------------------------------------------------------------
// Command line

const megabytes = (bytes: number) => (bytes / 1e6).toFixed(2);

/** The lines the command prints for a summary. */
export function formatSummary(summary: Summary): string[] {
  const lines: string[] = [];
  for (const r of summary.notebooks) {
    const longest = r.longestOutput
      ? `${r.longestOutput.lines} lines (cell ${r.longestOutput.cell})`
      : "none";
    lines.push(
      `${r.path}: ${r.words}/${r.wordCap} words, ${megabytes(r.bytes)} MB, longest output ` +
        `${longest}, commit ${r.commit ?? "none"}` + (r.failures.length ? "" : ", ok"),
    );
    for (const f of r.failures) lines.push(`  FAIL ${f.check}: ${f.message}`);
    for (const n of r.notes) lines.push(`  note: ${n}`);
  }
  for (const f of summary.failures) lines.push(`FAIL ${f.check}: ${f.message}`);
  const failed = summary.notebooks.filter((r) => r.failures.length > 0).length;
  lines.push(
    summary.ok
      ? `all ${summary.notebooks.length} notebooks pass`
      : `${failed} of ${summary.notebooks.length} notebooks fail a check` +
        (summary.failures.length ? `; ${summary.failures.length} check of the set fails` : ""),
  );
  return lines;
}

async function main(args: string[]): Promise<number> {
  const json = args.includes("--json");
  let paths = args.filter((a) => a !== "--json");
  if (paths.length === 0) {
    paths = [];
    for await (const entry of Deno.readDir("notebooks")) {
      if (entry.isFile && entry.name.endsWith(".ipynb")) paths.push(`notebooks/${entry.name}`);
    }
    paths.sort();
  }
  // The last notebook of the ladder: the highest number among the notebooks beside each one.
  const dirs = new Set(paths.map((p) => p.includes("/") ? p.slice(0, p.lastIndexOf("/")) : "."));
  let lastNumber = 0;
  for (const dir of dirs) {
    for await (const entry of Deno.readDir(dir)) {
      lastNumber = Math.max(lastNumber, notebookNumber(entry.name) ?? 0);
    }
  }
  const notebooks = await Promise.all(paths.map(async (path) => {
    const bytes = await Deno.readFile(path);
    return {
      path,
      notebook: JSON.parse(new TextDecoder().decode(bytes)) as NotebookJson,
      bytes: bytes.length,
    };
  }));
  const summary = checkNotebooks(notebooks, lastNumber);
  console.log(json ? JSON.stringify(summary, null, 1) : formatSummary(summary).join("\n"));
  return summary.ok ? 0 : 1;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
