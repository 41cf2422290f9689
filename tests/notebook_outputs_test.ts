/**
 * The notebook helpers' outputs stay short, as the lesson checker counts what a viewer shows
 * (tools/lesson_check.ts): the step model's table, a kernel's source, the per-shape search; what
 * they leave out is folded into a closed <details>, not dropped.
 */
import assert from "node:assert/strict";
import { htmlLines } from "../tools/lesson_check.ts";
import { displayed } from "./jupyter_standin.ts";
import { KERNELS } from "../lib/registry.ts";
import { showModel } from "../lib/notebook/models.ts";
import { showKernelSource } from "../lib/notebook/steps.ts";
import { showShapeSearch } from "../lib/notebook/lessons/shapes.ts";
import { recordedTuning } from "../lib/tuning.ts";
import { SPREAD_COLUMN, spreadCell } from "../lib/notebook/format.ts";

/**
 * STYLE.md: tables of at most ~12 rows; the step model keeps a few more than that at most, and
 * the line under it that defines its two hardware words.
 */
const MAX_TABLE_LINES = 17;

/** The HTML `show` displays in a notebook, from a stand-in for the kernel's display. */
async function shownHtml(show: () => Promise<void>): Promise<string[]> {
  return (await displayed(show)).map((bundle) => bundle["text/html"]);
}

const LADDER = KERNELS.filter((k) => !k.demo);

Deno.test("the step model of each step and its previous: one size, the rows that change", async () => {
  for (const [i, spec] of LADDER.entries()) {
    if (i === 0) continue;
    const [html] = await shownHtml(() => showModel(LADDER[i - 1].name, spec.name));
    assert.ok(htmlLines(html) <= MAX_TABLE_LINES, `${spec.id}: ${htmlLines(html)} lines`);
    assert.match(html, /at 4096 on the H200/);
    assert.match(html, /<details><summary>All \d+ quantities of the model, \d+ of them changed/);
    assert.match(html, /binding bound/);
  }
});

Deno.test("a kernel's source: the lines the cell names, the whole file folded", async () => {
  const [html] = await shownHtml(() =>
    showKernelSource("blocktile_2d_local_array", [
      { from: "var acc", to: "var regB" },
      { from: "for (var p", to: "acc[i][j] +=" },
    ])
  );
  assert.ok(htmlLines(html) <= 20, `${htmlLines(html)} lines`);
  assert.match(html, /lines 35-37, 52-61/);
  assert.match(html, /<details><summary>The whole kernel \(\d+ lines\)<\/summary>/);
  // Without lines a long file is folded whole; text that is not in the file is an error.
  const [folded] = await shownHtml(() => showKernelSource("blocktile_2d_local_array"));
  assert.equal(htmlLines(folded), 2);
  await assert.rejects(
    () => showKernelSource("blocktile_2d_local_array", { from: "no such line" }),
    /no line with "no such line"/,
  );
});

Deno.test("the per-shape search: one row per shape, its winner and the model's pick", async () => {
  const saved = await recordedTuning("shapes");
  const [html] = await shownHtml(() => showShapeSearch("shapes"));
  if (!saved?.record.perShape) {
    assert.match(html, /No per-shape search/);
    return;
  }
  assert.equal(htmlLines(html), saved.record.perShape.length + 2, "caption, header, one per shape");
  assert.match(html, /model&#39;s pick|model's pick/);
});

Deno.test("timed rows report their spread: the range of the timed runs over their median, and the count", () => {
  assert.equal(spreadCell({ medianMs: 2, minMs: 1.99, maxMs: 2.01, reps: 50 }), "1%, 50");
  assert.equal(spreadCell({ medianMs: 4, minMs: 4, maxMs: 4, reps: 5 }), "0%, 5");
  assert.equal(spreadCell({ medianMs: undefined, minMs: 1, maxMs: 2 }), undefined, "not timed");
  assert.equal(spreadCell(undefined), undefined);
  assert.match(SPREAD_COLUMN, /spread/);
});
