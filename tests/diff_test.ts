/**
 * The notebooks' kernel diffs: the line diff is minimal and its hunks rebuild both texts, every
 * step of the ladder has the pair of kernels its notebook compares (the first has none), and a
 * notebook shows each change in at most SHOWN_LINES lines, the rest folded away.
 */
import assert from "node:assert/strict";
import { KERNELS } from "../lib/registry.ts";
import {
  changeSources,
  diffBlock,
  diffExcerpt,
  type DiffHunk,
  kernelDiff,
  showChange,
  SHOWN_LINES,
  unifiedDiff,
} from "../lib/notebook/diff.ts";
import { htmlLines } from "../tools/lesson_check.ts";
import { displayed } from "./jupyter_standin.ts";

const lines = (n: number, tag = "l") => Array.from({ length: n }, (_, i) => `${tag}${i + 1}`);
const text = (ls: string[]) => ls.join("\n");

/** Both texts rebuilt from a diff with unlimited context (so one hunk holds everything). */
function rebuild(hunks: DiffHunk[]): { from: string[]; to: string[] } {
  const all = hunks.flatMap((h) => h.lines);
  return {
    from: all.filter((l) => l.kind !== "add").map((l) => l.text),
    to: all.filter((l) => l.kind !== "remove").map((l) => l.text),
  };
}

const changes = (hunks: DiffHunk[]) =>
  hunks.flatMap((h) => h.lines).filter((l) => l.kind !== "same").length;

Deno.test("identical texts have no hunks; empty against empty neither", () => {
  assert.deepEqual(kernelDiff("", ""), []);
  assert.deepEqual(kernelDiff("a\nb\n", "a\nb"), []);
  assert.deepEqual(kernelDiff(text(lines(50)), text(lines(50))), []);
});

Deno.test("from an empty text every line is added, to one every line is removed", () => {
  const added = kernelDiff("", "x\ny\nz");
  assert.deepEqual(added, [{
    oldStart: 0,
    oldLines: 0,
    newStart: 1,
    newLines: 3,
    lines: [
      { kind: "add", text: "x", newLine: 1 },
      { kind: "add", text: "y", newLine: 2 },
      { kind: "add", text: "z", newLine: 3 },
    ],
  }]);
  const removed = kernelDiff("x\ny", "");
  assert.equal(removed.length, 1);
  assert.deepEqual([removed[0].oldStart, removed[0].oldLines, removed[0].newStart], [1, 2, 0]);
  assert.ok(removed[0].lines.every((l) => l.kind === "remove"));
});

Deno.test("all lines changed: every old line removed and every new one added", () => {
  const hunks = kernelDiff("a\nb\nc", "x\ny");
  assert.equal(hunks.length, 1);
  assert.equal(changes(hunks), 5);
  assert.deepEqual(rebuild(hunks), { from: ["a", "b", "c"], to: ["x", "y"] });
});

Deno.test("one changed line far inside a text: one hunk with three lines of context", () => {
  const from = lines(40);
  const to = [...from];
  to[19] = "changed";
  const [hunk, ...rest] = kernelDiff(text(from), text(to));
  assert.equal(rest.length, 0);
  assert.deepEqual([hunk.oldStart, hunk.oldLines, hunk.newStart, hunk.newLines], [17, 7, 17, 7]);
  assert.deepEqual(hunk.lines.map((l) => l.kind), [
    "same",
    "same",
    "same",
    "remove",
    "add",
    "same",
    "same",
    "same",
  ]);
  assert.deepEqual(hunk.lines[3], { kind: "remove", text: "l20", oldLine: 20 });
  assert.deepEqual(hunk.lines[4], { kind: "add", text: "changed", newLine: 20 });
  assert.equal(
    unifiedDiff([hunk], "a", "b"),
    "--- a\n+++ b\n@@ -17,7 +17,7 @@\n l17\n l18\n l19\n-l20\n+changed\n l21\n l22\n l23",
  );
});

Deno.test("changes far apart make separate hunks; close ones merge", () => {
  const from = lines(60);
  const far = [...from];
  far[5] = "x";
  far[50] = "y";
  assert.equal(kernelDiff(text(from), text(far)).length, 2);
  const near = [...from];
  near[5] = "x";
  near[11] = "y";
  assert.equal(kernelDiff(text(from), text(near)).length, 1);
});

Deno.test("insertions and deletions: line numbers follow each text", () => {
  const [hunk] = kernelDiff("a\nb\nc\nd", "a\nc\nd\ne");
  const byKind = (k: string) => hunk.lines.filter((l) => l.kind === k);
  assert.deepEqual(byKind("remove"), [{ kind: "remove", text: "b", oldLine: 2 }]);
  assert.deepEqual(byKind("add"), [{ kind: "add", text: "e", newLine: 4 }]);
  assert.deepEqual(rebuild(hunk ? [hunk] : []), {
    from: ["a", "b", "c", "d"],
    to: ["a", "c", "d", "e"],
  });
});

Deno.test("the diff is minimal and rebuilds both texts (random edits, LCS length checked)", () => {
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const lcs = (a: string[], b: string[]) => {
    const row = new Array(b.length + 1).fill(0);
    for (const x of a) {
      let diag = 0;
      for (let j = 1; j <= b.length; j++) {
        const up = row[j];
        row[j] = x === b[j - 1] ? diag + 1 : Math.max(row[j], row[j - 1]);
        diag = up;
      }
    }
    return row[b.length];
  };
  for (let trial = 0; trial < 200; trial++) {
    const pick = () =>
      Array.from({ length: Math.floor(next() * 12) }, () => "abcd"[Math.floor(next() * 4)]);
    const a = pick(), b = pick();
    const hunks = kernelDiff(text(a), text(b), 1e9);
    const all = hunks.flatMap((h) => h.lines);
    if (text(a) === text(b)) continue;
    assert.deepEqual(rebuild(hunks), { from: a, to: b }, `${a} -> ${b}`);
    assert.equal(all.filter((l) => l.kind === "same").length, lcs(a, b), `${a} -> ${b}`);
    assert.equal(changes(hunks), a.length + b.length - 2 * lcs(a, b));
  }
});

const LADDER = KERNELS.filter((k) => !k.demo);

Deno.test("every step 03-14 has the previous kernel it changes, and differs from it", async () => {
  for (const spec of LADDER.slice(1)) {
    const { previous, from, to } = await changeSources(spec.name);
    assert.ok(previous && from, `${spec.id}: no previous kernel`);
    assert.ok(from.text.length > 0 && to.text.length > 0, `${spec.id}: empty source`);
    assert.ok(kernelDiff(from.text, to.text).length > 0, `${spec.id}: no change from its previous`);
  }
  const pairs = Object.fromEntries(
    await Promise.all(
      LADDER.slice(1).map(async (s) => [s.name, (await changeSources(s.name)).previous!.name]),
    ),
  );
  assert.equal(pairs.coalesce, "naive");
  assert.equal(pairs.generated, "autotune");
  assert.equal(pairs.shapes, "generated");
  assert.equal(pairs.f16, "generated");
  // A generated step is compared with its generated predecessor at the same parameters.
  const { from, to } = await changeSources("shapes");
  assert.match(from!.source, /12_generated\/generate\.ts \(.*BK=16.*\)/);
  assert.match(to.source, /13_shapes\/plans\.ts \(.*SLICES=2.*\)/);
  // 14 is 12's generator in f16 at the same parameters: only the precision changes.
  const half = await changeSources("f16");
  const changed = kernelDiff(half.from!.text, half.to.text).flatMap((h) => h.lines)
    .filter((l) => l.kind !== "same").map((l) => l.text).join("\n");
  assert.match(changed, /enable f16;/);
  assert.match(changed, /h00 \+= a0_0\.x \* b0_0;/);
  assert.doesNotMatch(changed, /BK=|BM=/, "the parameters do not change");
});

Deno.test("the first step has no previous kernel; showChange shows it whole", async () => {
  const first = await changeSources("naive");
  assert.equal(first.previous, undefined);
  assert.equal(first.from, undefined);
  const printed: string[] = [];
  const log = console.log;
  console.log = (s: string) => printed.push(s);
  try {
    await showChange("naive");
    await showChange("coalesce");
  } finally {
    console.log = log;
  }
  assert.match(printed[0], /no previous kernel/);
  assert.ok(printed[0].includes(first.to.text.trim()));
  assert.match(printed[1], /^What 03_coalesce/);
  assert.match(printed[1], /\n--- kernels\/02_naive\/kernel\.wgsl\n\+\+\+ kernels\/03_coalesce/);
});

Deno.test("the HTML diff is one <pre>: left-aligned, monospace and spaced in every viewer", async () => {
  const { from, to } = await changeSources("vectorize");
  const hunks = kernelDiff(from!.text, to.text);
  const html = diffBlock(hunks, to.text.split("\n").length);
  // No table cell for a viewer's right-aligned `td` rule to reach, trusted or not.
  assert.doesNotMatch(html, /<t[dr]\b/);
  assert.match(html, /^<pre[^>]*>[\s\S]*<\/pre>$/);
  // One line per diff line (old and new numbers, sign, code), stripped of its colour.
  const body = /^<pre[^>]*>([\s\S]*)<\/pre>$/.exec(html)![1].replace(/<[^>]+>/g, "");
  const first = hunks[0].lines[0];
  assert.ok(body.split("\n").some((l) => l.endsWith(`${SIGN_OF[first.kind]} ${first.text}`)));
  assert.equal(
    body.split("\n").filter((l) => /^\s*\d*\s+\d*\s[+-] /.test(l)).length,
    changes(hunks),
  );
});

const SIGN_OF = { same: " ", add: "+", remove: "-" } as const;

Deno.test("an excerpt: the most changed code first, whole hunks that fit, the best one cut", () => {
  const hunk = (code: number, comments: number): DiffHunk => ({
    oldStart: 1,
    oldLines: 0,
    newStart: 1,
    newLines: code + comments,
    lines: [
      ...lines(code, "x = ").map((t) => ({ kind: "add" as const, text: t })),
      ...lines(comments, "// ").map((t) => ({ kind: "add" as const, text: t })),
    ],
  });
  // Comment-only hunks rank last; each hunk costs its lines and one gap row, plus one row after.
  const small = [hunk(0, 6), hunk(3, 0), hunk(5, 0)];
  assert.deepEqual(diffExcerpt(small, 20), [6, 3, 5]);
  assert.deepEqual(diffExcerpt(small, 12), [0, 3, 5]);
  assert.deepEqual(diffExcerpt(small, 8), [0, 0, 5]);
  // The most telling hunk alone is too long: its first lines, a gap row and a "cut" row.
  assert.deepEqual(diffExcerpt([hunk(2, 0), hunk(50, 0)], 20), [0, 17]);
});

/** What showChange shows in a notebook: its HTML, from a stand-in for the kernel's display. */
async function shownHtml(step: string): Promise<string> {
  const bundles = await displayed(() => showChange(step));
  return bundles.at(-1)?.["text/html"] ?? "";
}

Deno.test("every step's change shows in at most SHOWN_LINES lines, the rest folded", async () => {
  for (const spec of LADDER) {
    const html = await shownHtml(spec.name);
    const shown = htmlLines(html);
    assert.ok(shown <= SHOWN_LINES, `${spec.id}: ${shown} lines shown`);
    if (spec === LADDER[0]) continue;
    assert.match(html, /<details><summary>The whole kernel \(\d+ lines\)<\/summary>/, spec.id);
    // Every changed line is in the notebook: in the shown hunks or in the folded whole diff.
    const { from, to } = await changeSources(spec.name);
    const cut = /<details><summary>The whole diff: [^<]*<\/summary>(<pre[\s\S]*?<\/pre>)/
      .exec(html)?.[1];
    const table = cut ?? html;
    const rows = table.match(/<span style="background:#(e6ffec|ffebe9)">/g)?.length ?? 0;
    assert.equal(rows, changes(kernelDiff(from!.text.trimEnd(), to.text.trimEnd())), spec.id);
  }
  // Steps 12 and 14 change hundreds of lines: a few dozen show, and one line says what is folded.
  const generated = await shownHtml("generated");
  assert.match(generated, /<summary>The whole diff: \d+ hunks?, \d+ lines added, \d+ removed \(/);
  assert.match(generated, /more lines? of this hunk not shown here|hunks? not shown here/);
});
