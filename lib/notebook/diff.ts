/**
 * What a step changes in the kernel before it: a line diff (Myers' O(ND) algorithm) of the
 * previous step's WGSL against this step's, read from the files (or generated) when the cell
 * runs, shown as a coloured unified diff with the whole new kernel one click away.
 */
import { loadKernelSource } from "../gpu.ts";
import { type KernelSpec, type Params, previousStep } from "../registry.ts";
import { escapeHtml, paramsLabel } from "./format.ts";
import { showBundle } from "./jupyter.ts";
import { kernel } from "./steps.ts";

/** One line of a diff: kept, added or removed, with its 1-based numbers in the two texts. */
export interface DiffLine {
  kind: "same" | "add" | "remove";
  text: string;
  /** Its number in the old text (absent for an added line). */
  oldLine?: number;
  /** Its number in the new text (absent for a removed line). */
  newLine?: number;
}

/** A run of changes with its context, as a unified diff's `@@ -oldStart,oldLines +... @@`. */
export interface DiffHunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: DiffLine[];
}

/** A text's lines; a final newline does not make an extra empty line. */
function linesOf(text: string): string[] {
  const body = text.replace(/\r?\n$/, "");
  return body === "" ? [] : body.split(/\r?\n/);
}

/**
 * The shortest edit script from `a` to `b` (Myers, "An O(ND) Difference Algorithm"): every
 * line of both in order, each kept, removed or added. The common head and tail are matched
 * first, so the search only covers the lines in between.
 */
function editScript(a: string[], b: string[]): DiffLine[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (
    tail < a.length - head && tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  ) tail++;
  const x0 = a.slice(head, a.length - tail);
  const y0 = b.slice(head, b.length - tail);
  const middle = middleScript(x0, y0);
  const same = (i: number, j: number): DiffLine => ({
    kind: "same",
    text: a[i],
    oldLine: i + 1,
    newLine: j + 1,
  });
  const out: DiffLine[] = [];
  for (let i = 0; i < head; i++) out.push(same(i, i));
  for (const l of middle) {
    out.push({
      ...l,
      ...(l.oldLine !== undefined ? { oldLine: l.oldLine + head } : {}),
      ...(l.newLine !== undefined ? { newLine: l.newLine + head } : {}),
    });
  }
  for (let t = tail; t > 0; t--) out.push(same(a.length - t, b.length - t));
  return out;
}

/** Myers' greedy search over diagonals k = x - y, then the path traced back from the end. */
function middleScript(a: string[], b: string[]): DiffLine[] {
  const n = a.length, m = b.length, max = n + m;
  // v[k + max + 1]: the furthest x reached on diagonal k; trace[d] is v before round d, kept
  // only for the diagonals round d reads (-d - 1 .. d + 1).
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  const at = (k: number) => k + max + 1;
  let rounds = 0;
  search: for (let d = 0; d <= max; d++) {
    trace.push(v.slice(at(-d - 1), at(d + 1) + 1));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[at(k - 1)] < v[at(k + 1)])
        ? v[at(k + 1)]
        : v[at(k - 1)] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) x++, y++;
      v[at(k)] = x;
      if (x >= n && y >= m) {
        rounds = d;
        break search;
      }
    }
  }
  const out: DiffLine[] = [];
  let x = n, y = m;
  for (let d = rounds; d >= 0; d--) {
    const before = trace[d];
    const vd = (k: number) => before[k + d + 1];
    const k = x - y;
    const down = k === -d || (k !== d && vd(k - 1) < vd(k + 1));
    const prevK = down ? k + 1 : k - 1;
    const prevX = d === 0 ? 0 : vd(prevK);
    const prevY = d === 0 ? 0 : prevX - prevK;
    while (x > prevX && y > prevY) {
      x--, y--;
      out.push({ kind: "same", text: a[x], oldLine: x + 1, newLine: y + 1 });
    }
    if (d === 0) break;
    if (down) {
      y--;
      out.push({ kind: "add", text: b[y], newLine: y + 1 });
    } else {
      x--;
      out.push({ kind: "remove", text: a[x], oldLine: x + 1 });
    }
  }
  return out.reverse();
}

/**
 * The line diff from `from` to `to` as unified-diff hunks, each change with up to `context`
 * unchanged lines around it (hunks closer than twice that merge). Identical texts give none.
 */
export function kernelDiff(from: string, to: string, context = 3): DiffHunk[] {
  const script = editScript(linesOf(from), linesOf(to));
  const changed = script.flatMap((l, i) => l.kind === "same" ? [] : [i]);
  const hunks: DiffHunk[] = [];
  let i = 0;
  while (i < changed.length) {
    let j = i;
    while (j + 1 < changed.length && changed[j + 1] - changed[j] <= 2 * context + 1) j++;
    const lines = script.slice(
      Math.max(0, changed[i] - context),
      Math.min(script.length, changed[j] + context + 1),
    );
    hunks.push(hunkOf(lines, script, changed[i] - context));
    i = j + 1;
  }
  return hunks;
}

/** A hunk's header numbers: where its lines sit in each text (GNU's convention when empty). */
function hunkOf(lines: DiffLine[], script: DiffLine[], first: number): DiffHunk {
  const before = script.slice(0, Math.max(0, first));
  const oldBefore = before.filter((l) => l.kind !== "add").length;
  const newBefore = before.filter((l) => l.kind !== "remove").length;
  const oldLines = lines.filter((l) => l.kind !== "add").length;
  const newLines = lines.filter((l) => l.kind !== "remove").length;
  return {
    oldStart: oldBefore + (oldLines > 0 ? 1 : 0),
    oldLines,
    newStart: newBefore + (newLines > 0 ? 1 : 0),
    newLines,
    lines,
  };
}

/** The hunks as a plain unified diff, with `---` / `+++` lines naming the two texts. */
export function unifiedDiff(hunks: DiffHunk[], fromName: string, toName: string): string {
  const sign = { same: " ", add: "+", remove: "-" } as const;
  return [
    `--- ${fromName}`,
    `+++ ${toName}`,
    ...hunks.flatMap((h) => [
      `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`,
      ...h.lines.map((l) => sign[l.kind] + l.text),
    ]),
  ].join("\n");
}

/** One side of a change: the kernel's text and where it comes from. */
export interface KernelText {
  /** "kernels/03_coalesce/kernel.wgsl", or the generator and the parameters it was given. */
  source: string;
  text: string;
}

/** What showChange compares for a step: the previous kernel (none for the first) and this one. */
export interface ChangeSources {
  step: KernelSpec;
  previous?: KernelSpec;
  from?: KernelText;
  to: KernelText;
  /** What the reader should know about the pair, when it is not simply "the step before". */
  note?: string;
}

/** A kernel's text: its file as it is, or its generator's output for these parameters. */
async function kernelText(spec: KernelSpec, params: Params): Promise<KernelText> {
  if (!spec.generate) {
    return { source: `kernels/${spec.file}`, text: await loadKernelSource(spec.file) };
  }
  const p = { ...spec.params, ...params };
  return { source: `kernels/${spec.file} (${paramsLabel(p)})`, text: spec.generate(p) };
}

/**
 * The two kernels showChange compares for a step. A generated step is generated at its
 * defaults; when the previous step is generated too, it is generated at the same parameters,
 * so the diff shows what the step changes and not what its parameters change.
 */
export async function changeSources(key: string): Promise<ChangeSources> {
  const step = kernel(key);
  const change = step.change;
  const params = { ...step.params, ...change?.params };
  const to = await kernelText(step, params);
  const previous = previousStep(step);
  if (!previous) return { step, to };
  const sameParams = Object.fromEntries(
    Object.entries(previous.params).map(([k, v]) => [k, params[k] ?? v]),
  );
  const from = await kernelText(
    previous,
    previous.generate && step.generate ? sameParams : previous.params,
  );
  return { step, previous, from, to, note: change?.note };
}

const trimEnd = (s: string) => s.replace(/\s+$/, "");

/**
 * Lines a change may take in the notebook, its heading and folded parts included: STYLE.md's
 * "only the lines that change, up to ~40". A longer diff shows its most telling hunks and folds
 * the rest away.
 */
export const SHOWN_LINES = 40;

/** Unchanged lines around each change: a few, so that a hunk reads in place. */
const CONTEXT = 2;

/** A WGSL line that carries no code: blank, or only a comment. */
const isProse = (text: string) => /^\s*(\/\/.*)?$/.test(text);

/** How telling a hunk is: how many lines of code (not comments or blank lines) it changes. */
const codeChanges = (h: DiffHunk) =>
  h.lines.filter((l) => l.kind !== "same" && !isProse(l.text)).length;

/** How many of each hunk's lines a notebook shows: all, the first few (a cut hunk), or none. */
export type DiffExcerpt = number[];

/**
 * The hunks that fit in `rows` table rows, the most telling first (the most changed lines of
 * code; comment-only hunks last), each costing its lines and the gap row before it, plus one row
 * for the gap after the last. When the most telling hunk alone does not fit, its first lines are
 * shown and a row says how many more it has.
 */
export function diffExcerpt(hunks: DiffHunk[], rows: number): DiffExcerpt {
  const shown: DiffExcerpt = hunks.map(() => 0);
  let left = rows - 1;
  const order = hunks.map((h, i) => ({ i, score: codeChanges(h) }))
    .sort((a, b) => b.score - a.score || a.i - b.i);
  for (const { i } of order) {
    const lines = hunks[i].lines.length;
    if (lines + 1 <= left) {
      shown[i] = lines;
      left -= lines + 1;
    } else if (!shown.some((n) => n > 0) && left > 2) {
      // The gap row before it and the row that says what is cut.
      shown[i] = left - 2;
      left = 0;
    }
  }
  return shown;
}

/** "+12 -3": the lines a set of hunks adds and removes. */
function changeCount(hunks: DiffHunk[]): { added: number; removed: number } {
  const lines = hunks.flatMap((h) => h.lines);
  return {
    added: lines.filter((l) => l.kind === "add").length,
    removed: lines.filter((l) => l.kind === "remove").length,
  };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/**
 * Show what a step changes in the kernel it builds on: a unified diff with line numbers, added
 * and removed lines coloured, unchanged runs collapsed to a few lines of context, in at most
 * SHOWN_LINES lines (a longer diff shows its most telling hunks, and the whole diff is one click
 * away), with this step's whole kernel folded away. The first step has no previous kernel: shown
 * whole.
 */
export async function showChange(key: string): Promise<void> {
  const { step, previous, from, to, note } = await changeSources(key);
  const toText = trimEnd(to.text);
  if (!previous || !from) {
    const head = `${step.id} is the first kernel of the ladder: there is no previous kernel ` +
      `to compare it with, so here it is whole (${to.source}).`;
    await showBundle({
      "text/plain": `${head}\n\n${toText}`,
      "text/html": `<p>${escapeHtml(head)}</p>${codeBlock(toText)}`,
    });
    return;
  }
  const newLength = linesOf(toText).length;
  const hunks = kernelDiff(trimEnd(from.text), toText, CONTEXT);
  const { added, removed } = changeCount(hunks);
  const head = `What ${step.id} (${step.title}) changes in ${previous.id}'s kernel: ` +
    `${plural(added, "line")} added, ${removed} removed (${from.source} -> ${to.source}).`;
  // The heading, the note, the whole kernel's line and, when the diff is cut, the whole diff's.
  const frame = 2 + (note ? 1 : 0);
  const fits = diffLineCount(hunks, hunks.map((h) => h.lines.length)) <= SHOWN_LINES - frame;
  const excerpt = fits
    ? hunks.map((h) => h.lines.length)
    : diffExcerpt(hunks, SHOWN_LINES - frame - 1);
  const left = hunks.filter((h, i) => excerpt[i] < h.lines.length);
  const leftOut = hunks.flatMap((h, i) => h.lines.slice(excerpt[i]))
    .filter((l) => l.kind !== "same").length;
  const hiddenHunks = hunks.filter((_, i) => excerpt[i] === 0).length;
  const rest = left.length
    ? (hiddenHunks ? `${plural(hiddenHunks, "hunk")} and ` : "") +
      `${plural(leftOut, "changed line")} more than above`
    : "";
  const shownHunks = hunks.flatMap((h, i) =>
    excerpt[i] > 0 ? [{ ...h, lines: h.lines.slice(0, excerpt[i]) }] : []
  );
  const plain = [
    head,
    ...(note ? [note] : []),
    "",
    unifiedDiff(shownHunks, from.source, to.source),
    ...(rest ? [`(${rest}: shown in the notebook's whole diff.)`] : []),
  ];
  const wholeDiff = rest
    ? folded(
      `The whole diff: ${plural(hunks.length, "hunk")}, ${plural(added, "line")} added, ` +
        `${removed} removed (${rest})`,
      diffBlock(hunks, newLength),
    )
    : "";
  await showBundle({
    "text/plain": plain.join("\n"),
    "text/html": `<p>${escapeHtml(head)}</p>` + (note ? `<p>${escapeHtml(note)}</p>` : "") +
      diffBlock(hunks, newLength, excerpt) + wholeDiff +
      folded(`The whole kernel (${newLength} lines)`, codeBlock(toText)),
  });
}

/** Each kind of line's colour: its background, or grey for the notes between hunks. */
const LINE_STYLE = {
  same: "",
  add: ' style="background:#e6ffec"',
  remove: ' style="background:#ffebe9"',
  note: ' style="color:#888"',
};
const SIGN = { same: " ", add: "+", remove: "-" } as const;

/** Where a hunk starts in the new text (after its line, for a hunk that only removes). */
const newStartOf = (h: DiffHunk) => h.newLines > 0 ? h.newStart : h.newStart + 1;

/** One grey line for what lies between shown lines: unchanged lines, or hunks not shown. */
function gapLine(hidden: DiffHunk[], unchanged: number): string | undefined {
  if (hidden.length) {
    const { added, removed } = changeCount(hidden);
    return `... ${
      plural(hidden.length, "hunk")
    } not shown here (${added} added, ${removed} removed)`;
  }
  return unchanged > 0 ? `... ${plural(unchanged, "unchanged line")}` : undefined;
}

/** Lines of the diff as diffBlock draws it, for `shown` lines of each hunk. */
function diffLineCount(hunks: DiffHunk[], shown: DiffExcerpt): number {
  let rows = 0, hidden = 0, newNext = 1;
  for (const [i, h] of hunks.entries()) {
    if (shown[i] === 0) {
      hidden++;
      continue;
    }
    if (hidden || newStartOf(h) > newNext) rows++;
    rows += shown[i] + (shown[i] < h.lines.length ? 1 : 0);
    hidden = 0;
    newNext = newStartOf(h) + h.newLines;
  }
  return rows + 1;
}

/**
 * The diff as one preformatted block: old and new line numbers, sign, code, a line each; between
 * hunks one grey line (unchanged lines, or hunks `shown` leaves out), and a grey line where a hunk
 * is cut short. `shown` is how many lines of each hunk to draw (default: all). A <pre>, not a
 * table: viewers style a bare `td` (JupyterLab and the classic Notebook right-align it and collapse
 * its spaces), and an untrusted notebook drops the style attributes that would undo that, where a
 * <pre> stays left-aligned, monospace and spaced in every viewer; the colours are the extra.
 */
export function diffBlock(
  hunks: DiffHunk[],
  newLength: number,
  shown: DiffExcerpt = hunks.map((h) => h.lines.length),
): string {
  const width = String(Math.max(newLength, ...hunks.map((h) => h.oldStart + h.oldLines))).length;
  const number = (n?: number) => String(n ?? "").padStart(width);
  const out: string[] = [];
  const note = (text?: string) => {
    if (text) out.push(`<span${LINE_STYLE.note}>${escapeHtml(text)}</span>`);
  };
  let newNext = 1;
  let hidden: DiffHunk[] = [];
  for (const [i, h] of hunks.entries()) {
    if (shown[i] === 0) {
      hidden.push(h);
      continue;
    }
    note(gapLine(hidden, newStartOf(h) - newNext));
    hidden = [];
    for (const l of h.lines.slice(0, shown[i])) {
      out.push(
        `<span${LINE_STYLE[l.kind]}>${number(l.oldLine)} ${number(l.newLine)} ${SIGN[l.kind]} ` +
          `${escapeHtml(l.text)}</span>`,
      );
    }
    const cut = h.lines.length - shown[i];
    if (cut > 0) note(`... ${plural(cut, "more line")} of this hunk not shown here`);
    newNext = newStartOf(h) + h.newLines;
  }
  note(gapLine(hidden, newLength + 1 - newNext));
  return `<pre style="font-size:12px;line-height:1.35">${out.join("\n")}</pre>`;
}

const codeBlock = (code: string) =>
  `<pre><code class="language-wgsl">${escapeHtml(code)}</code></pre>`;

/** Content behind a click: a closed <details> that shows only its summary line. */
const folded = (summary: string, content: string) =>
  `<details><summary>${escapeHtml(summary)}</summary>${content}</details>`;
