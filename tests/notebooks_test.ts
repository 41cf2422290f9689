/**
 * The notebooks as readers run them: every notebook executes headlessly through the Deno
 * kernel with every declared output present, their code cells type-check, the runner keeps
 * outputs Deno publishes after a cell's idle status, and the notebook helpers format honestly.
 */
import assert from "node:assert/strict";
import { extractNotebooks, listNotebooks, notebookModule } from "../tools/notebook_cells.ts";
import { fmt, tableBundle, UNVALIDATED_MIME } from "../lib/notebook/format.ts";
import { type DisplayBundle, liveDisplay } from "../lib/notebook/jupyter.ts";
import { kernel, predict } from "../lib/notebook/steps.ts";
import { setRecordsDir, showRecorded, showRecordedCeilings } from "../lib/notebook/recorded.ts";
import type { KernelResult, RunRecord } from "../lib/record.ts";
import { subgroupAccesses } from "../lib/notebook/lessons/coalescing.ts";

const root = new URL("../", import.meta.url);
const EXECUTOR = new URL("tools/execute_notebook.ts", root).pathname;

/** Run tools/execute_notebook.ts; returns its exit status and its JSON summary line. */
async function runNotebooks(args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", EXECUTOR, ...args],
    cwd: root.pathname,
    env: { XDG_RUNTIME_DIR: Deno.env.get("XDG_RUNTIME_DIR") ?? "/tmp" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  const stderr = new TextDecoder().decode(out.stderr);
  const summaryLine = stdout.trim().split("\n").at(-1) ?? "";
  let summary: { runs: number; failed: number; seconds: number } | undefined;
  try {
    summary = JSON.parse(summaryLine);
  } catch {
    // No summary: the runner itself failed; the report below shows why.
  }
  const report = `${stdout}\n${stderr.split("\n").filter((l) => !/unstable/.test(l)).join("\n")}`;
  return { code: out.code, summary, report };
}

Deno.test("notebook code cells type-check", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gemm-notebook-cells-" });
  try {
    const files = await extractNotebooks(await listNotebooks(), dir);
    assert.ok(files.length > 0, "no notebooks found");
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["check", "--config", new URL("deno.json", root).pathname, ...files],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("notebookModule: code cells in order, relative imports made absolute", () => {
  const nb = JSON.stringify({
    cells: [
      { cell_type: "markdown", source: "# title" },
      { cell_type: "code", source: ['import { a } from "../lib/mod.ts";\n', "a();"] },
      { cell_type: "code", source: 'const m = await import("./x.ts");' },
    ],
  });
  const module = notebookModule(nb, new URL("file:///p/notebooks/01_x.ipynb"));
  assert.match(module, /from "file:\/\/\/p\/lib\/mod\.ts"/);
  assert.match(module, /import\("file:\/\/\/p\/notebooks\/x\.ts"\)/);
  assert.ok(module.indexOf("// --- cell 1 ---") < module.indexOf("// --- cell 2 ---"));
  assert.doesNotMatch(module, /# title/);
  assert.match(module, /export \{\};\n$/);
});

Deno.test("the runner keeps late outputs: a quick notebook, 12 times, nothing lost", async () => {
  const fixture = new URL("tests/fixtures/late_outputs.ipynb", root).pathname;
  const out = await Deno.makeTempDir({ prefix: "gemm-late-" });
  try {
    const r = await runNotebooks([...Array(12).fill(fixture), "--out", out]);
    assert.equal(r.code, 0, r.report);
    assert.equal(r.summary?.runs, 12, r.report);
    assert.equal(r.summary?.failed, 0, r.report);
  } finally {
    await Deno.remove(out, { recursive: true });
  }
});

/** A one-cell notebook whose table shows a kernel that failed validation. */
function unvalidatedNotebook(expect: string[]): string {
  const bundle = tableBundle(["kernel", "validated"], [["07_vectorize", false]]);
  return JSON.stringify({
    nbformat: 4,
    nbformat_minor: 5,
    metadata: { kernelspec: { name: "deno", display_name: "Deno", language: "typescript" } },
    cells: [{
      id: "unvalidated-01",
      cell_type: "code",
      metadata: { expect },
      execution_count: null,
      source: `Deno.jupyter.display(${JSON.stringify(bundle)}, { raw: true });`,
      outputs: [],
    }],
  });
}

Deno.test("the runner fails a notebook that shows a kernel not validated, unless declared", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gemm-unvalidated-" });
  try {
    const shown = `${dir}/shown.ipynb`, declared = `${dir}/declared.ipynb`;
    await Deno.writeTextFile(shown, unvalidatedNotebook(["text/plain"]));
    await Deno.writeTextFile(declared, unvalidatedNotebook(["text/plain", UNVALIDATED_MIME]));
    const failed = await runNotebooks([shown, "--out", `${dir}/out`]);
    assert.equal(failed.code, 1, failed.report);
    assert.match(failed.report, /shows a kernel not validated \(07_vectorize\)/);
    const ok = await runNotebooks([declared, "--out", `${dir}/out`]);
    assert.equal(ok.code, 0, ok.report);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "every notebook executes headlessly with every expected output",
  ignore: Deno.env.get("GEMM_SKIP_NOTEBOOKS") === "1",
  async fn() {
    const out = await Deno.makeTempDir({ prefix: "gemm-notebooks-" });
    try {
      const r = await runNotebooks(["--out", out]);
      console.log(r.report.split("\n").filter((l) => /: (ok|FAILED) in /.test(l)).join("\n"));
      assert.equal(r.code, 0, r.report);
      assert.equal(r.summary?.failed, 0, r.report);
    } finally {
      await Deno.remove(out, { recursive: true });
    }
  },
});

Deno.test("fmt: integers exact, others to 3 significant digits, missing as -", () => {
  assert.equal(fmt(1024), "1,024");
  assert.equal(fmt(0.123456), "0.123");
  assert.equal(fmt(12345.6), "12,300");
  assert.equal(fmt(2.5e-7), "2.50e-7");
  assert.equal(fmt(NaN), "NaN");
  assert.equal(fmt(undefined), "-");
  assert.equal(fmt(true), "true");
});

Deno.test("tableBundle: plain text, markdown and HTML carry the same cells", () => {
  const b = tableBundle(["kernel", "GFLOP/s"], [["02_naive", 1.23456], ["a|b", undefined]], "cap");
  assert.match(b["text/plain"], /02_naive\s+1\.23/);
  assert.match(String(b["text/markdown"]), /\| a\\\|b \| - \|/);
  assert.match(String(b["text/html"]), /<caption>cap<\/caption>/);
  assert.match(String(b["text/html"]), /<td style="text-align:right">1\.23<\/td>/);
  assert.equal(b[UNVALIDATED_MIME], undefined);
  const failed = tableBundle(
    ["kernel", "shape", "validated", "validated without padding"],
    [["02_naive", "64", true, true], ["07_vectorize", "65", true, false], ["x", "1", false, "n/a"]],
  );
  assert.deepEqual(failed[UNVALIDATED_MIME], ["07_vectorize 65", "x 1"]);
});

Deno.test("predict: the naive model is 1/4 FLOP per byte and memory-bound under a low roof", () => {
  const p = predict("02_naive", { m: 512, k: 512, n: 512 }, {
    bandwidthGBs: 100,
    fp32Gflops: 1000,
  });
  assert.ok(Math.abs(p.intensity - 0.25) < 1e-3, `intensity ${p.intensity}`);
  assert.equal(p.boundBy, "memory");
  assert.ok(Math.abs(p.boundGflops! - 100 * p.intensity) < 1e-9);
  assert.throws(() => kernel("99_nonexistent"), /no kernel/);
});

Deno.test("predict: an f16 kernel is bounded by the measured f16 roof when there is one", () => {
  const shape = { m: 4096, k: 4096, n: 4096 };
  const roofs = { bandwidthGBs: 1e6, fp32Gflops: 1000 };
  assert.equal(predict("f16", shape, { ...roofs, f16Gflops: 600 }).boundGflops, 600);
  assert.equal(predict("f16", shape, roofs).boundGflops, 1000);
  assert.equal(predict("double_buffer", shape, { ...roofs, f16Gflops: 600 }).boundGflops, 1000);
});

Deno.test("subgroupAccesses: x → column touches one segment of B, x → row one per lane", () => {
  const rows = subgroupAccesses(1024, 8);
  const get = (mapping: string, matrix: string) =>
    rows.find((r) => r.mapping === mapping && r.matrix === matrix)!;
  assert.deepEqual(get("x → column", "B").addresses, [0, 1, 2, 3, 4, 5, 6, 7]);
  assert.equal(get("x → column", "B").segments, 1);
  assert.equal(get("x → row", "A").segments, 8);
  assert.equal(get("x → row", "C").segments, 8);
  assert.equal(new Set(get("x → column", "A").addresses).size, 1);
});

Deno.test("liveDisplay: one display id, updates land in the order made, awaited or not", async () => {
  const shown: { text: string; opts: Record<string, unknown> }[] = [];
  let started = 0;
  // A stand-in for the kernel's display whose first calls take the longest, so updates that
  // were not kept in order would land reversed. The setter is how the kernel installs it.
  const deno = Deno as unknown as { jupyter: unknown };
  deno.jupyter = {
    display: async (bundle: DisplayBundle, opts: Record<string, unknown>) => {
      await new Promise((r) => setTimeout(r, 30 - 10 * started++));
      shown.push({ text: bundle["text/plain"], opts });
    },
  };
  try {
    const live = liveDisplay("test-live");
    void live.update("progress 1");
    void live.update("progress 2");
    await live.update(tableBundle(["done"], [[1]]));
  } finally {
    deno.jupyter = undefined;
  }
  assert.deepEqual(shown.map((s) => s.text.split("\n")[0]), ["progress 1", "progress 2", "done"]);
  assert.deepEqual(shown.map((s) => s.opts.update ?? false), [false, true, true]);
  assert.ok(shown.every((s) => s.opts.display_id === "test-live" && s.opts.raw === true));
});

/** Console output of `body` (outside Jupyter, displays print their text/plain). */
async function captured(body: () => Promise<void>): Promise<string> {
  const lines: string[] = [];
  const original = console.log;
  console.log = (...args: unknown[]) => lines.push(args.join(" "));
  try {
    await body();
  } finally {
    console.log = original;
  }
  return lines.join("\n");
}

/** A result row with just the fields the notebook tables read. */
function row(kernelId: string, n: number, gflops: number): KernelResult {
  return {
    kernel: kernelId,
    title: kernelId,
    m: n,
    k: n,
    n,
    params: {},
    relErr: 1e-7,
    validated: true,
    gflops,
    modelBytes: 1,
    intensity: 1,
    seed: 1,
  };
}

Deno.test("recorded GPU numbers: absent says so, present shows beside the live ones", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gemm-runs-" });
  try {
    setRecordsDir(`${dir}/`);
    const live = [row("02_naive", 256, 0.5), row("03_coalesce", 256, 1)];
    assert.match(
      await captured(() => showRecorded(["02_naive", "03_coalesce"], live)),
      /No recorded GPU run yet/,
    );
    assert.match(await captured(() => showRecordedCeilings()), /No recorded GPU run yet/);

    // Synthetic numbers for the table's arithmetic only; no chart or prose ever sees them.
    const record = {
      schema: 1,
      date: "2026-01-01T00:00:00Z",
      commit: "abcdef1234567",
      deno: "2.9.6",
      device: { description: "Test GPU", software: false, features: [], limits: {} },
      ceilings: { bandwidthGBs: 100, fp32Gflops: 1000 },
      results: [
        row("02_naive", 4096, 10),
        { ...row("03_coalesce", 4096, 40), medianMs: 2, minMs: 1.99, maxMs: 2.01, reps: 50 },
      ],
      peers: [{ ...row("cublas", 4096, 80), peer: "cublas", timer: "CUDA events" }],
      notes: [],
    } as unknown as RunRecord;
    await Deno.writeTextFile(`${dir}/test-gpu-2026-01-01.json`, JSON.stringify(record));
    const table = await captured(() => showRecorded(["02_naive", "03_coalesce"], live));
    assert.match(table, /From the recorded GPU run on Test GPU, 2026-01-01, commit abcdef1/);
    // The recorded spread: the timed runs' range over their median, and their count.
    assert.match(table, /03_coalesce\s+40\s+1%, 50\s+4\s+50\s+1\s+2/);
    assert.match(table, /cuBLAS\s+80\s+-\s+-\s+100/);
    assert.match(await captured(() => showRecordedCeilings()), /recorded GPU run on Test GPU/);
  } finally {
    setRecordsDir();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("recorded GPU numbers: a run stopped after its GPU results stands in only where no complete one does", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gemm-runs-" });
  try {
    setRecordsDir(`${dir}/`);
    // Synthetic numbers for the table's arithmetic only; no chart or prose ever sees them.
    const base = {
      schema: 1,
      deno: "2.9.6",
      device: { description: "Test GPU", software: false, features: [], limits: {} },
      ceilings: { bandwidthGBs: 100, fp32Gflops: 1000 },
      peers: [],
      notes: [],
    };
    const complete = {
      ...base,
      date: "2026-01-01T00:00:00Z",
      commit: "aaaaaaa1234567",
      results: [
        row("02_naive", 4096, 10),
        { ...row("03_coalesce", 4096, 40), medianMs: 2, minMs: 1.99, maxMs: 2.01, reps: 50 },
      ],
    };
    const stopped = {
      ...base,
      date: "2026-01-02T00:00:00Z",
      commit: "bbbbbbb1234567",
      complete: false,
      results: [row("02_naive", 4096, 11), row("03_coalesce", 4096, 41), row("04_tiled", 4096, 80)],
    };
    await Deno.writeTextFile(`${dir}/a.json`, JSON.stringify(complete));
    await Deno.writeTextFile(`${dir}/b.partial.json`, JSON.stringify(stopped));
    const both = await captured(() => showRecorded(["02_naive", "03_coalesce"], []));
    assert.match(both, /commit aaaaaaa/);
    const three = await captured(() => showRecorded(["02_naive", "04_tiled"], []));
    assert.match(three, /commit bbbbbbb .*stopped/);
    assert.match(three, /04_tiled\s+80\s+-\s+7\.27/);
  } finally {
    setRecordsDir();
    await Deno.remove(dir, { recursive: true });
  }
});
