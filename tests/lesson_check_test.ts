/**
 * The lesson checks on small notebooks built here, each check both ways: what passes, what fails,
 * and what the patterns must not mistake for a record (colours, plain numbers, instruction issue).
 */
import assert from "node:assert/strict";
import {
  type CellJson,
  checkNotebook,
  checkNotebooks,
  countWords,
  formatSummary,
  htmlLines,
  LAB_PATTERNS,
  labHits,
  MAX_NOTEBOOK_BYTES,
  type NotebookJson,
  type OutputJson,
  outputLines,
  sourcesCellIndex,
  svgWithoutPng,
  visibleText,
  wordCap,
} from "../tools/lesson_check.ts";

const LAST = 15;
const SOURCES =
  "## Sources\n\n- Record: `data/runs/nvidia-h200-2026-11-23T2332.json`, commit e374f99.";

const markdown = (source: string): CellJson => ({ cell_type: "markdown", source });
const code = (outputs: OutputJson[] = [], source = "await show();"): CellJson => ({
  cell_type: "code",
  source,
  outputs,
});
const display = (data: Record<string, unknown>): OutputJson => ({
  output_type: "display_data",
  data,
});
const stream = (text: string, name = "stdout"): OutputJson => ({
  output_type: "stream",
  name,
  text,
});
const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}\n`).join("");
const words = (n: number) => Array.from({ length: n }, () => "word").join(" ");

/** A notebook that passes every check: a lesson, a prediction, one output, Sources, a stamp. */
function notebook(cells: CellJson[] = [], commit: string | null = "abc1234"): NotebookJson {
  return {
    cells: [
      markdown("# 05 · A step\n\n**What the previous step wastes.** Loads."),
      markdown("## Prediction\n\nTraffic falls by 4, so the bound rises from 1.1 to 4.4 TFLOP/s."),
      code([display({ "text/plain": lines(3) })]),
      ...cells,
      markdown(SOURCES),
    ],
    metadata: commit === null ? {} : { gemm_ladder: { commit } },
  };
}

const check = (nb: NotebookJson, path = "notebooks/05_step.ipynb", bytes = 1000) =>
  checkNotebook(path, nb, bytes, LAST);
const failed = (nb: NotebookJson, path?: string, bytes?: number) =>
  check(nb, path, bytes).failures.map((f) => f.check);
const hitNames = (prose: string) =>
  labHits({ cells: [markdown(prose)] }).map((h) => `${h.name}: ${h.match}`);

Deno.test("a notebook in the lesson's shape passes every check", () => {
  const report = check(notebook());
  assert.deepEqual(report.failures, []);
  assert.deepEqual(report.notes, []);
  assert.equal(report.commit, "abc1234");
  assert.deepEqual(report.longestOutput, { lines: 3, cell: 2 });
});

Deno.test("words: the setup, the first rung and the last notebook get 1,500, the steps 1,200", () => {
  assert.deepEqual([0, 1, 2, 14, 15].map((n) => wordCap(n, LAST)), [1500, 1500, 1200, 1200, 1500]);
  assert.equal(wordCap(null, LAST), 1200);
  const long = notebook([markdown(words(1190))]);
  assert.ok(failed(long).includes("words"), "1,190 more words in step 05 exceed 1,200");
  assert.ok(!failed(long, "notebooks/15_summary.ipynb").includes("words"));
  assert.ok(!failed(long, "notebooks/00_setup.ipynb").includes("words"));
  assert.ok(!failed(notebook([markdown(words(1100))])).includes("words"));
});

Deno.test("words: counted as shown, without tags, URLs, fences or the Sources cell", () => {
  assert.equal(countWords("Two words"), 2);
  assert.equal(countWords("A [link text](https://example.com/a/b) here"), 4);
  assert.equal(countWords('<p style="x">one <b>two</b></p> <!-- not shown -->'), 2);
  assert.equal(countWords("Code `let x = 1` counts"), 5, "an operator alone is no word");
  assert.equal(countWords("```wgsl\nlet a = b;\n```"), 3, "the fence lines are not words");
  assert.equal(countWords("| a | b |\n| --- | --- |\n| 1 | 2 |"), 4);
  assert.equal(countWords("## Heading — with a dash"), 4, "a dash alone is no word");
  const withSources = notebook();
  const report = check(withSources);
  const lesson = countWords(withSources.cells[0].source as string) +
    countWords(withSources.cells[1].source as string);
  assert.equal(report.words, lesson, "the Sources cell is not lesson text");
});

Deno.test("visible text keeps code as written and drops tags, comments and link targets", () => {
  assert.equal(visibleText("`array<f32>` and <b>bold</b>").trim(), "array<f32> and  bold".trim());
  assert.equal(visibleText("[the record](../data/runs/x.json)"), "the record");
  assert.equal(visibleText("a &amp; b"), "a & b");
});

Deno.test("sources: the last non-blank cell, markdown, headed `## Sources`", () => {
  assert.ok(!failed(notebook()).includes("sources"));
  const trailing = notebook();
  trailing.cells.push(code([], ""), markdown("  \n"));
  assert.ok(!failed(trailing).includes("sources"), "blank cells after it do not count");
  const missing = notebook();
  missing.cells.pop();
  assert.ok(failed(missing).includes("sources"));
  const notLast = notebook();
  notLast.cells.push(code());
  assert.ok(failed(notLast).includes("sources"));
  assert.equal(sourcesCellIndex({ cells: [markdown("# Sources\n\nx")] }), -1, "## only");
  assert.equal(sourcesCellIndex({ cells: [markdown("Text\n\n## Sources")] }), -1, "headed");
});

Deno.test("lab words: each pattern finds what it is for", () => {
  assert.deepEqual(hitNames("See `data/runs/nvidia-h200-2026-11-23T2332.json`."), [
    "record path: data/runs/nvidia-h200-2026-11-23T2332.json",
  ]);
  assert.deepEqual(hitNames("from data/tuning/ and lab/clock/probe.ts"), [
    "record path: data/tuning/",
    "record path: lab/clock/probe.ts",
  ]);
  assert.deepEqual(hitNames("the search in shapes.json"), ["JSON file: shapes.json"]);
  assert.deepEqual(hitNames("at commit 2b87db1, and `0b0fcb7`"), [
    "commit hash: 2b87db1",
    "commit hash: 0b0fcb7",
  ]);
  assert.deepEqual(hitNames("measured on 2026-11-23"), ["date: 2026-11-23"]);
  assert.deepEqual(hitNames("the record T0725 says"), ["record stamp: T0725"]);
  assert.deepEqual(hitNames("The saved search is stale."), ["history: stale"]);
  assert.deepEqual(hitNames("an older version of it, renumbered"), [
    "history: an older version",
    "history: renumbered",
  ]);
  assert.deepEqual(hitNames("TN = 16 was tried and withdrawn"), [
    "history: was tried",
    "history: withdrawn",
  ]);
  assert.deepEqual(hitNames("as issue 12 found; see issue #7."), [
    "issue number: issue 12",
    "issue number: issue #7",
  ]);
  for (const { name, reason } of LAB_PATTERNS) assert.ok(reason.length > 20, `${name}: a reason`);
});

Deno.test("lab words: normal prose, numbers, colours and links pass", () => {
  const prose = [
    "A 4096 x 4096 matrix at 25 758 GFLOP/s, 1234567 elements; 12345678 bytes.",
    "The colour #1f77b4 and the literal 0xdeadbeef1 and the words decade, defaced, effaced.",
    "Each separate limit (issue 63 351, workgroup memory 79 299) is near; SMs issue 4 warp",
    "instructions per clock, issue 2 loads per cycle; the issue rate is the limit.",
    "Exponent 12345e67 is a number. The data are in the table; the lab of the reader.",
    "Set it in deno.json. Read [the record](../data/runs/x.json) at the end.",
    "A 128 x 256 tile, TN = 16, no older kernel. Predict 1.48x.",
  ].join("\n");
  assert.deepEqual(hitNames(prose), []);
});

Deno.test("lab words: one hit per place, and none from the Sources cell", () => {
  assert.equal(hitNames("data/runs/nvidia-h200-2026-11-25T1715.json").length, 1);
  assert.ok(!failed(notebook()).includes("lab-words"), "Sources names records freely");
  const report = check(notebook([markdown("Recorded at commit e374f99.")]));
  assert.deepEqual(report.failures.map((f) => f.check), ["lab-words"]);
  assert.match(report.failures[0].message, /cell 3 \(Prediction\): commit hash "e374f99"/);
  const headed = check(notebook([markdown("## Why it held\n\nAs issue 12 showed, stale.")]));
  assert.match(
    headed.failures[0].message,
    /: cell 3 \(Why it held\): issue number "issue 12", history "stale"$/,
  );
});

Deno.test("output lines: text and streams count their lines, 60 pass and 61 fail", () => {
  assert.deepEqual(outputLines([display({ "text/plain": lines(60) })]), [60]);
  assert.ok(
    !failed(notebook([code([display({ "text/plain": lines(60) })])])).includes(
      "output-lines",
    ),
  );
  assert.ok(
    failed(notebook([code([display({ "text/plain": lines(61) })])])).includes(
      "output-lines",
    ),
  );
  assert.deepEqual(
    outputLines([stream(lines(40)), stream(lines(30)), stream(lines(5), "stderr")]),
    [70, 5],
    "consecutive streams of one name show as one",
  );
  assert.deepEqual(
    outputLines([{ output_type: "error", traceback: ["Error", "  at a", "  at b"] }]),
    [3],
  );
});

Deno.test("output lines: the shown representation, HTML rows as lines, folded details as one", () => {
  const row = "<tr><td>a</td><td>b</td></tr>";
  const table = (n: number) => `<table><caption>c</caption>${row.repeat(n)}</table>`;
  assert.equal(htmlLines(table(59)), 60, "the caption and 59 rows");
  assert.equal(htmlLines("<p>one</p><p>two</p><ul><li>a</li><li>b</li></ul>"), 4);
  assert.equal(htmlLines("<pre><code>a\nb\nc</code></pre>"), 3);
  assert.equal(
    htmlLines(
      `<p>diff</p>${table(3)}<details><summary>whole kernel</summary>` +
        `<pre>${lines(300)}</pre></details>`,
    ),
    6,
    "a closed details shows its summary only",
  );
  assert.equal(
    htmlLines(`<details open><summary>s</summary><pre>${lines(10)}</pre></details>`),
    11,
  );
  const bundle = { "text/html": table(70), "text/plain": "short" };
  assert.deepEqual(outputLines([display(bundle)]), [71], "HTML is what the viewers show");
  assert.ok(failed(notebook([code([display(bundle)])])).includes("output-lines"));
  assert.deepEqual(
    outputLines([display({ "image/png": "x", "text/plain": lines(80) })]),
    [0],
    "an image counts no lines",
  );
  assert.deepEqual(
    outputLines([display({ "text/markdown": "a\n\nb\n", "text/plain": lines(9) })]),
    [
      2,
    ],
  );
});

Deno.test("svg: needs a PNG in its bundle or a PNG-only output beside it", () => {
  const svg = display({ "image/svg+xml": "<svg/>", "text/plain": "fig" });
  const png = display({ "image/png": "iVBOR", "text/plain": "fig" });
  const both = display({ "image/svg+xml": "<svg/>", "image/png": "iVBOR" });
  assert.ok(failed(notebook([code([svg])])).includes("svg-png"));
  assert.deepEqual(svgWithoutPng(notebook([code([svg])])), [3]);
  assert.ok(!failed(notebook([code([both])])).includes("svg-png"));
  assert.ok(!failed(notebook([code([svg, png])])).includes("svg-png"));
  assert.ok(failed(notebook([code([svg, svg, png])])).includes("svg-png"), "one PNG per SVG");
});

Deno.test("size: at most 1.5 MB", () => {
  assert.ok(!failed(notebook(), undefined, MAX_NOTEBOOK_BYTES).includes("size"));
  assert.ok(failed(notebook(), undefined, MAX_NOTEBOOK_BYTES + 1).includes("size"));
});

Deno.test("stamp: each notebook has one, and the set shares one commit", () => {
  assert.ok(failed(notebook([], null)).includes("stamp"));
  const at = (path: string, commit: string | null) => ({
    path,
    notebook: notebook([], commit),
    bytes: 1000,
  });
  const same = checkNotebooks([at("a/02_x.ipynb", "abc1234"), at("a/03_y.ipynb", "abc1234")], LAST);
  assert.equal(same.ok, true);
  assert.deepEqual(same.commits, { abc1234: ["a/02_x.ipynb", "a/03_y.ipynb"] });
  const mixed = checkNotebooks(
    [at("a/02_x.ipynb", "abc1234"), at("a/03_y.ipynb", "def5678"), at("a/04_z.ipynb", null)],
    LAST,
  );
  assert.equal(mixed.ok, false);
  assert.deepEqual(mixed.failures.map((f) => f.check), ["one-commit"]);
  assert.match(mixed.failures[0].message, /2 commits: abc1234 \(1\), def5678 \(1\)/);
  assert.deepEqual(mixed.notebooks[2].failures.map((f) => f.check), ["stamp"]);
});

Deno.test("prediction: reported for ladder steps without one, never failed", () => {
  const without = notebook();
  without.cells.splice(1, 1);
  const report = check(without);
  assert.deepEqual(report.failures, []);
  assert.equal(report.notes.length, 1);
  assert.deepEqual(check(without, "notebooks/15_summary.ipynb").notes, [], "not the summary");
  assert.deepEqual(check(without, "notebooks/01_cpu.ipynb").notes, [], "not the CPU rung");
  const words = notebook();
  words.cells[1] = markdown("## Prediction\n\nThe bound rises a lot.");
  assert.equal(check(words).notes.length, 1, "a prediction needs a number");
  const bold = notebook();
  bold.cells[1] = markdown("**Predict.** Traffic falls 16x.");
  assert.deepEqual(check(bold).notes, []);
  const heading = notebook();
  heading.cells[1] = markdown("## The prediction\n\nAt 1/4 FLOP per byte.");
  assert.deepEqual(check(heading).notes, []);
});

Deno.test("the printed summary: a figures line per notebook, a line per failure, a verdict", () => {
  const summary = checkNotebooks([
    { path: "n/05_a.ipynb", notebook: notebook(), bytes: 2_000_000 },
    { path: "n/06_b.ipynb", notebook: notebook([], "fff0001"), bytes: 1000 },
  ], LAST);
  assert.deepEqual(formatSummary(summary), [
    "n/05_a.ipynb: 23/1200 words, 2.00 MB, longest output 3 lines (cell 2), commit abc1234",
    "  FAIL size: 2.00 MB, over 1.50 MB",
    "n/06_b.ipynb: 23/1200 words, 0.00 MB, longest output 3 lines (cell 2), commit fff0001, ok",
    "FAIL one-commit: stamped from 2 commits: abc1234 (1), fff0001 (1)",
    "1 of 2 notebooks fail a check; 1 check of the set fails",
  ]);
});

Deno.test("the command: exit 1 on a failure, 0 when all pass, --json parses", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const write = (name: string, nb: NotebookJson) =>
      Deno.writeTextFile(`${dir}/${name}`, JSON.stringify(nb));
    await write("02_a.ipynb", notebook());
    await write("03_b.ipynb", notebook([code([display({ "text/plain": lines(61) })])]));
    const run = async (...args: string[]) => {
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "--allow-read", new URL("../tools/lesson_check.ts", import.meta.url).pathname]
          .concat(args),
        stdout: "piped",
      }).output();
      return { code: out.code, text: new TextDecoder().decode(out.stdout) };
    };
    const pass = await run(`${dir}/02_a.ipynb`);
    assert.equal(pass.code, 0);
    assert.match(pass.text, /all 1 notebooks pass/);
    const fail = await run(`${dir}/02_a.ipynb`, `${dir}/03_b.ipynb`, "--json");
    assert.equal(fail.code, 1);
    const summary = JSON.parse(fail.text);
    assert.equal(summary.ok, false);
    assert.deepEqual(summary.notebooks[1].failures.map((f: { check: string }) => f.check), [
      "output-lines",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
