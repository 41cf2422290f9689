/**
 * What a step changes in the kernel before it: a line diff (Myers' O(ND) algorithm) of the
 * previous step's WGSL against this step's, read from the files (or generated) when the cell
 * runs, shown as a coloured unified diff with the whole new kernel one click away.
 */
import { loadKernelSource } from "../gpu.ts";
import { KERNELS, type KernelSpec, type Params } from "../registry.ts";
import { escapeHtml, paramsLabel } from "./format.ts";
import { showBundle } from "./jupyter.ts";
import { kernel } from "./kernels.ts";

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

/** The step a step's kernel builds on: the ladder's step before it, unless its `change` says. */
export function previousStep(spec: KernelSpec): KernelSpec | undefined {
  const named = spec.change?.buildsOn;
  if (named) return kernel(named);
  const ladder = KERNELS.filter((k) => !k.demo);
  const at = ladder.findIndex((k) => k.name === spec.name);
  return at > 0 ? ladder[at - 1] : undefined;
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
 * Show what a step changes in the kernel it builds on: a unified diff with line numbers, added
 * and removed lines coloured, unchanged runs collapsed to three lines of context, and this
 * step's whole kernel one click away. The first step has no previous kernel: shown whole.
 */
export async function showChange(key: string): Promise<void> {
  const { step, previous, from, to, note } = await changeSources(key);
  const toText = trimEnd(to.text);
  const whole = wholeKernel(toText);
  if (!previous || !from) {
    const head = `${step.id} is the first kernel of the ladder: there is no previous kernel ` +
      `to compare it with, so here it is whole (${to.source}).`;
    await showBundle({
      "text/plain": `${head}\n\n${toText}`,
      "text/html": `<p>${escapeHtml(head)}</p>${codeBlock(toText)}`,
    });
    return;
  }
  const hunks = kernelDiff(trimEnd(from.text), toText);
  const lines = hunks.flatMap((h) => h.lines);
  const added = lines.filter((l) => l.kind === "add").length;
  const removed = lines.filter((l) => l.kind === "remove").length;
  const head = `What ${step.id} (${step.title}) changes in ${previous.id}'s kernel: ` +
    `${added} line${added === 1 ? "" : "s"} added, ${removed} removed` +
    ` (${from.source} -> ${to.source}).`;
  const plain = [head, ...(note ? [note] : []), "", unifiedDiff(hunks, from.source, to.source)];
  await showBundle({
    "text/plain": plain.join("\n"),
    "text/html": `<p>${escapeHtml(head)}</p>` + (note ? `<p>${escapeHtml(note)}</p>` : "") +
      diffTable(hunks, linesOf(toText).length) + whole,
  });
}

const ROW_STYLE = {
  same: "",
  add: ' style="background:#e6ffec"',
  remove: ' style="background:#ffebe9"',
};
const SIGN = { same: " ", add: "+", remove: "-" } as const;
const NUMBER = '<td style="color:#888;text-align:right;padding:0 6px">';
/**
 * Code cells say their own alignment: viewers style a bare `td` (JupyterLab and the classic
 * Notebook right-align it), and a table's own text-align does not reach its cells past that rule.
 */
const CODE = '<td style="text-align:left">';

/** The diff as an HTML table: old and new line numbers, sign, code; gaps as one grey row. */
export function diffTable(hunks: DiffHunk[], newLength: number): string {
  const gap = (n: number) =>
    n > 0
      ? `<tr style="color:#888;background:#f6f8fa"><td colspan="4" style="text-align:left">` +
        `  ... ${n} unchanged line${n === 1 ? "" : "s"}</td></tr>`
      : "";
  const rows: string[] = [];
  let newNext = 1;
  for (const h of hunks) {
    const start = h.newLines > 0 ? h.newStart : h.newStart + 1;
    rows.push(gap(start - newNext));
    for (const l of h.lines) {
      rows.push(
        `<tr${ROW_STYLE[l.kind]}>${NUMBER}${l.oldLine ?? ""}</td>${NUMBER}${l.newLine ?? ""}</td>` +
          `${CODE}${SIGN[l.kind]} ${escapeHtml(l.text)}</td></tr>`,
      );
    }
    newNext = start + h.newLines;
  }
  rows.push(gap(newLength + 1 - newNext));
  return `<table style="border-collapse:collapse;font-family:monospace;font-size:12px;` +
    `white-space:pre;text-align:left">${rows.join("")}</table>`;
}

const codeBlock = (code: string) =>
  `<pre><code class="language-wgsl">${escapeHtml(code)}</code></pre>`;

/** The whole kernel behind a click. */
function wholeKernel(code: string): string {
  return `<details><summary>whole kernel (${linesOf(code).length} lines)</summary>` +
    `${codeBlock(code)}</details>`;
}
