/**
 * Executed notebooks as they are committed: tools/execute_notebook.ts against the real Deno
 * kernel, the stored form against Debian's nbformat and a real Jupyter server (open and save must
 * leave the file's bytes alone), and every committed notebook that carries the executor's stamp.
 */
import assert from "node:assert/strict";
import { parseNotebook, serializeNotebook } from "../tools/notebook_json.ts";
import { storeProblems } from "../tools/notebook_store.ts";
import { chartBundle } from "../lib/notebook/charts.ts";

const root = new URL("../", import.meta.url).pathname;
const PYTHON = "/usr/bin/python3";
const SERVER = "/usr/bin/jupyter-notebook";

/** What Debian's nbformat writes for a notebook file (read and written back, as the server does). */
async function nbformatRewrite(path: string): Promise<string> {
  const out = await new Deno.Command(PYTHON, {
    args: [
      "-c",
      "import nbformat, sys\n" +
      "sys.stdout.write(nbformat.writes(nbformat.read(sys.argv[1], as_version=4)) + '\\n')",
      path,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout);
}

async function committedNotebooks(): Promise<string[]> {
  const paths = [];
  for await (const e of Deno.readDir(`${root}notebooks`)) {
    if (e.name.endsWith(".ipynb")) paths.push(`${root}notebooks/${e.name}`);
  }
  return paths.sort();
}

const code = (id: string, source: string, expect: string[]) => ({
  id,
  cell_type: "code",
  metadata: { expect },
  execution_count: null,
  source,
  outputs: [],
});

/** A tiny notebook: merged prints and a result, a display updated in place, late outputs, a chart. */
function probeNotebook(extra: ReturnType<typeof code>[] = []) {
  const chart = {
    kind: "vega-lite",
    name: "probe",
    spec: {
      data: { values: [{ x: 1, y: 2 }, { x: 2, y: 3 }] },
      mark: "point",
      encoding: {
        x: { field: "x", type: "quantitative" },
        y: { field: "y", type: "quantitative" },
      },
    },
  };
  return {
    nbformat: 4,
    nbformat_minor: 5,
    metadata: { kernelspec: { name: "deno", display_name: "Deno", language: "typescript" } },
    cells: [
      { id: "probe-0", cell_type: "markdown", metadata: {}, source: "# Probe\n\nÜnïcode prose." },
      code("probe-1", 'console.log("first");\nconsole.log("second");\n40 + 2', [
        "stream",
        "text:42",
      ]),
      code(
        "probe-2",
        'await Deno.jupyter.display({ "text/plain": "pending" }, { raw: true, display_id: "p" });\n' +
          'console.log("between");\n' +
          'await Deno.jupyter.display({ "text/plain": "final value" }, ' +
          '{ raw: true, display_id: "p", update: true });',
        ["text:final value"],
      ),
      // Not awaited: Deno's kernel publishes this after the cell's idle.
      code(
        "probe-3",
        'Deno.jupyter.display({ "text/plain": "late", "text/html": "<b>late</b>" }, { raw: true });',
        ["text/html"],
      ),
      code(
        "probe-4",
        `const { showChart } = await import(${
          JSON.stringify(`${root}lib/notebook/charts.ts`)
        });\n` +
          `await showChart(${JSON.stringify(chart)});`,
        ["application/vnd.vegalite.v5+json", "image/png"],
      ),
      ...extra,
    ],
  };
}

/**
 * Run the executor as the GPU host does; its exit status, output and the notebook it wrote. The
 * kernel starts in `dir`, given the project's import map so the library loads there.
 */
async function execute(nb: unknown, dir: string, ...flags: string[]) {
  const { imports } = JSON.parse(await Deno.readTextFile(`${root}deno.json`));
  await Deno.writeTextFile(
    `${dir}/deno.json`,
    JSON.stringify({ imports, nodeModulesDir: "none", lock: false }),
  );
  await Deno.writeTextFile(`${dir}/probe.ipynb`, JSON.stringify(nb));
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `${root}tools/execute_notebook.ts`,
      ...flags,
      "--out",
      `${dir}/out`,
      `${dir}/probe.ipynb`,
    ],
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(180_000),
  }).output();
  const log = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  // A run that wrote nothing (the kernel did not start, say) fails with the executor's log.
  const text = await Deno.readTextFile(`${dir}/out/probe.ipynb`).catch((e) => {
    throw new Error(`${e}\n${log}`);
  });
  return { code: out.code, log, text, nb: parseNotebook(text) };
}

type Output = { output_type: string; text?: string; data?: Record<string, unknown> };
const outputsOf = (nb: ReturnType<typeof parseNotebook>, id: string) =>
  nb.cells.find((c) => c.id === id)!.outputs as unknown as Output[];

Deno.test("the serializer writes what nbformat writes, committed notebooks and odd values alike", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gemm-nbjson-" });
  try {
    const odd = probeNotebook();
    Object.assign(odd.metadata, {
      numbers: [1.5e-5, 1e-7, 0.0001, 123.456, 1e22, -2.5e-10, 0.1, 3, -0],
      text: "tab\t, bell\u0007, nul\u0000, é, 😀, \u2028 and \r\n crlf, \u000b vt\n",
    });
    odd.cells[1].source = "a\rb\r\nc\u000bd\u0085e\n\n";
    await Deno.writeTextFile(`${dir}/odd.ipynb`, JSON.stringify(odd));
    for (const path of [...await committedNotebooks(), `${dir}/odd.ipynb`]) {
      const mine = serializeNotebook(parseNotebook(await Deno.readTextFile(path)));
      assert.equal(mine, await nbformatRewrite(path), path);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a vega-lite bundle carries the PNG JupyterLab's vega renderer would add", async () => {
  const bundle = await chartBundle(
    {
      kind: "vega-lite",
      name: "probe",
      spec: { data: { values: [{ x: 1 }] }, mark: "point", encoding: { x: { field: "x" } } },
    } as Parameters<typeof chartBundle>[0],
  );
  const png = Uint8Array.from(atob(bundle["image/png"] as string), (c) => c.charCodeAt(0));
  assert.deepEqual([...png.subarray(1, 4)], [0x50, 0x4e, 0x47]);
});

Deno.test("committed notebooks with a stamp ran from their code and store cleanly", async () => {
  for (const path of await committedNotebooks()) {
    const text = await Deno.readTextFile(path);
    const problems = await storeProblems(text);
    if (problems === undefined) continue;
    assert.deepEqual(problems, [], path);
    assert.equal(await nbformatRewrite(path), text, `${path}: nbformat would rewrite it`);
  }
});

Deno.test("the executor runs a notebook with Deno's kernel and stores it as Jupyter does", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gemm-executor-" });
  try {
    const run = await execute(probeNotebook(), dir, "--stamp");
    assert.equal(run.code, 0, run.log);
    const { nb, text } = run;
    assert.deepEqual(await storeProblems(text), [], run.log);
    assert.equal(await nbformatRewrite(`${dir}/out/probe.ipynb`), text);

    const [stream, result] = outputsOf(nb, "probe-1");
    assert.deepEqual(stream, { output_type: "stream", name: "stdout", text: "first\nsecond\n" });
    assert.deepEqual(result.data, { "text/plain": "42" });
    assert.deepEqual(
      nb.cells.filter((c) => c.cell_type === "code").map((c) => c.execution_count),
      [1, 2, 3, 4],
    );
    // The display was updated in place, before the print that followed it.
    const updated = outputsOf(nb, "probe-2");
    assert.deepEqual(updated.map((o) => o.data?.["text/plain"] ?? o.text), [
      "final value",
      "between\n",
    ]);
    assert.ok(outputsOf(nb, "probe-3").some((o) => o.data?.["text/html"] === "<b>late</b>"));
    const chart = outputsOf(nb, "probe-4").find((o) => o.data?.["image/png"]);
    assert.ok(chart?.data?.["image/svg+xml"], "the chart keeps its SVG too");

    const meta = nb.metadata as Record<string, Record<string, string>>;
    assert.equal(meta.language_info.name, "typescript");
    assert.ok(meta.language_info.version, "language_info is the kernel's, version included");
    assert.ok(meta.gemm_ladder.executed_on.length > 0);
    assert.match(meta.gemm_ladder.date, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    // A stamped cell whose source changes afterwards no longer passes.
    const edited = parseNotebook(text);
    edited.cells[1].source += ";";
    assert.match((await storeProblems(serializeNotebook(edited)))!.join("\n"), /source changed/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** A stamp from another machine, as a notebook committed from the GPU host carries one. */
const ELSEWHERE = {
  executed_on: "the GPU host (planted)",
  commit: "abcdef1",
  date: "2026-01-01T00:00:00Z",
};

Deno.test("a run without --stamp says where it ran: this adapter replaces the recorded one", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gemm-executor-" });
  try {
    const nb = probeNotebook();
    nb.cells.splice(4, 1); // no chart: this run is about the metadata
    Object.assign(nb.metadata, { gemm_ladder: ELSEWHERE });
    Object.assign(nb.cells[1].metadata, { gemm_ladder: { source_sha256: "0".repeat(64) } });
    const run = await execute(nb, dir);
    assert.equal(run.code, 0, run.log);
    const stamp = run.nb.metadata.gemm_ladder as Record<string, string>;
    assert.ok(stamp.executed_on.length > 0, run.log);
    assert.notEqual(stamp.executed_on, ELSEWHERE.executed_on);
    assert.match(stamp.date, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.notEqual(stamp.date, ELSEWHERE.date);
    // Not a stamp for committing: no commit, no source hashes, and the store checks pass it by.
    assert.equal(stamp.commit, undefined);
    assert.ok(run.nb.cells.every((c) => c.metadata.gemm_ladder === undefined));
    assert.equal(await storeProblems(run.text), undefined);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the executor stops at the first error, records it, and exits non-zero", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gemm-executor-" });
  try {
    const nb = probeNotebook([
      code("probe-5", 'throw new Error("probe failure");', []),
      code("probe-6", 'console.log("never");', ["stream"]),
    ]);
    nb.cells.splice(4, 1); // no chart: this run is about the error
    Object.assign(nb.metadata, { gemm_ladder: ELSEWHERE });
    const run = await execute(nb, dir);
    assert.equal(run.code, 1, run.log);
    assert.match(run.log, /probe failure/);
    const error = outputsOf(run.nb, "probe-5").find((o) => o.output_type === "error");
    assert.ok(error, "the error is recorded in its cell");
    assert.deepEqual(outputsOf(run.nb, "probe-6"), []);
    assert.equal(run.nb.metadata.gemm_ladder, undefined);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** A free port on 127.0.0.1 (released again for the server to take). */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

Deno.test("opening and saving through a Jupyter server leaves stored notebooks byte for byte", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gemm-store-server-" });
  const token = crypto.randomUUID().replaceAll("-", "");
  const port = freePort();
  let server: Deno.ChildProcess | undefined;
  try {
    // The executor's output, and every committed notebook that is stamped.
    await Deno.mkdir(`${dir}/nb`);
    const run = await execute(probeNotebook(), `${dir}/nb`, "--stamp");
    assert.equal(run.code, 0, run.log);
    const names = ["out/probe.ipynb"];
    for (const path of await committedNotebooks()) {
      const text = await Deno.readTextFile(path);
      if (await storeProblems(text) === undefined) continue;
      const name = path.slice(path.lastIndexOf("/") + 1);
      await Deno.writeTextFile(`${dir}/nb/${name}`, text);
      names.push(name);
    }
    server = new Deno.Command(SERVER, {
      args: [
        "--no-browser",
        "--ip=127.0.0.1",
        `--port=${port}`,
        "--port-retries=0",
        `--NotebookApp.token=${token}`,
        `--notebook-dir=${dir}/nb`,
        "--allow-root",
      ],
      env: {
        JUPYTER_DATA_DIR: `${dir}/data`,
        JUPYTER_CONFIG_DIR: `${dir}/config`,
        JUPYTER_RUNTIME_DIR: `${dir}/runtime`,
      },
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    const call = (path: string, init: RequestInit = {}) =>
      fetch(`http://127.0.0.1:${port}${path}`, {
        ...init,
        headers: { Authorization: `token ${token}`, "Content-Type": "application/json" },
        signal: AbortSignal.timeout(20_000),
      });
    const started = Date.now();
    while (true) {
      const ok = await call("/api/status").then(async (r) => (await r.body?.cancel(), r.ok))
        .catch(() => false);
      if (ok) break;
      assert.ok(Date.now() - started < 60_000, "the notebook server did not start");
      await new Promise((r) => setTimeout(r, 200));
    }
    for (const name of names) {
      const before = await Deno.readFile(`${dir}/nb/${name}`);
      const { mtime } = await Deno.stat(`${dir}/nb/${name}`);
      const got = await call(`/api/contents/${name}?type=notebook&content=1`);
      assert.equal(got.status, 200, name);
      const model = await got.json();
      const put = await call(`/api/contents/${name}`, {
        method: "PUT",
        body: JSON.stringify({ type: "notebook", format: "json", content: model.content }),
      });
      await put.body?.cancel();
      assert.equal(put.status, 200, name);
      const after = await Deno.readFile(`${dir}/nb/${name}`);
      assert.notEqual((await Deno.stat(`${dir}/nb/${name}`)).mtime!.getTime(), mtime!.getTime());
      assert.equal(new TextDecoder().decode(after), new TextDecoder().decode(before), name);
    }
  } finally {
    if (server) {
      server.kill("SIGTERM");
      await server.status;
    }
    await Deno.remove(dir, { recursive: true });
  }
});
