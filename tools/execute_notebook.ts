/**
 * Execute notebooks with Deno's kernel and nothing but Deno (no Jupyter, no Python), check what
 * each code cell shows, and write them in the exact form the Jupyter server saves
 * (tools/notebook_json.ts), so JupyterLab opens them without marking them modified:
 *
 *   deno task notebooks    # every notebooks/*.ipynb, written to site/executed/ (git-ignored)
 *   deno run -A tools/execute_notebook.ts [--stamp] [--out DIR] [--timeout S] [NB.ipynb ...]
 *
 * With no notebook named, every notebooks/*.ipynb; without --out, each is rewritten in place.
 * Each notebook gets a fresh kernel (the Deno running this script) started in its folder. Cells
 * run in order; the first error is recorded in its cell and later cells are left without outputs.
 *
 * Every code cell declares what it must show in its metadata, e.g.
 *   "metadata": {"expect": ["image/svg+xml", "text:validated"]}
 * where an entry is a MIME type that some output must carry ("stream" for printed text), or
 * "text:MARKER" that the cell's text outputs must contain; a cell that shows nothing declares [],
 * so a lost output can never pass silently. A table that shows a kernel not validated lists those
 * rows under UNVALIDATED_MIME; a cell whose outputs carry it fails unless it declares that MIME
 * type in `expect` (a deliberate demonstration of a wrong kernel, which then must show one).
 *
 * Deno's kernel can publish a cell's outputs after its `idle` status, and a client that stops
 * listening at `idle` (stock nbclient does) loses them. After each cell a silent sentinel runs,
 * and messages are collected until the sentinel is idle and iopub has been quiet for a while.
 * Every iopub message goes to the cell whose request is its parent, whenever it comes, and the
 * `expect` checks run once the whole notebook has run. The kernel parents printed text by the
 * request it is serving when it publishes the text, not when the code printed it, so the tail
 * of a cell's printing can arrive as the sentinel's: the sentinel prints nothing itself, and what
 * arrives under it belongs to the cell before it.
 *
 * Every complete run records where it ran, in the notebook's metadata `gemm_ladder`: executed_on
 * (the adapter's description, from the kernel's own session) and date, replacing what an earlier
 * run recorded. --stamp, for notebooks to commit, adds the commit (lib/record.ts: GEMM_COMMIT or
 * git's HEAD) and each code cell's SHA-256 of its source, so tests/notebook_store_test.ts can
 * prove that the outputs come from the committed code. A run that stops at an error records
 * neither. The language_info becomes the kernel's own (JupyterLab copies it from the kernel on
 * open). Prints one line per notebook and, last, a JSON summary; exit status 1 on any failure.
 */
import { currentCommit } from "../lib/record.ts";
import { UNVALIDATED_MIME } from "../lib/notebook/format.ts";
import { KernelClient, type Message } from "./kernel_client.ts";
import { listNotebooks } from "./notebook_cells.ts";
import {
  type Cell,
  type Json,
  type JsonObject,
  type Notebook,
  parseNotebook,
  serializeNotebook,
  sourceSha256,
} from "./notebook_json.ts";

const ROOT = new URL("../", import.meta.url);
/**
 * Late outputs come soon after `idle`, later on a loaded machine: the quiet period is at least
 * QUIET_MS and grows with the sentinel's round trip, which measures the load.
 */
const QUIET_MS = 300;
const QUIET_PER_ROUND_TRIP = 3;
const SESSION_MODULE = new URL("lib/notebook/session.ts", ROOT).href;
const DEVICE_MARK = "gemm-ladder-device:";

type Output = JsonObject;

interface Options {
  stamp: boolean;
  out?: string;
  timeoutSeconds: number;
}

/** A code cell's outputs as they arrive, merged the way JupyterLab's output model merges them. */
class CellOutputs {
  outputs: Output[] = [];
  #clearOnNext = false;

  add(output: Output): void {
    if (this.#clearOnNext) {
      this.outputs = [];
      this.#clearOnNext = false;
    }
    const last = this.outputs.at(-1);
    if (
      output.output_type === "stream" && last?.output_type === "stream" &&
      last.name === output.name
    ) {
      last.text = (last.text as string) + (output.text as string);
      return;
    }
    this.outputs.push(output);
  }

  clear(wait: boolean): void {
    if (wait) this.#clearOnNext = true;
    else this.outputs = [];
  }
}

/** Runs one notebook's code cells in one kernel. */
class NotebookRun {
  /** Output collectors by the msg_id of the request they answer. */
  #byRequest = new Map<string, CellOutputs>();
  /** Every output shown with a display_id, wherever it is, for update_display_data. */
  #displays = new Map<string, Output[]>();

  constructor(private kernel: KernelClient) {
    kernel.onIopub = (m) => this.#route(m);
  }

  #route(m: Message): void {
    const target = this.#byRequest.get(m.parent_header.msg_id ?? "");
    if (!target) return;
    const c = m.content;
    const displayId = (c.transient as { display_id?: string } | undefined)?.display_id;
    switch (m.header.msg_type) {
      case "stream":
        target.add({ output_type: "stream", name: c.name as string, text: c.text as string });
        break;
      case "display_data":
      case "execute_result": {
        const output: Output = {
          output_type: m.header.msg_type,
          data: c.data as Json,
          metadata: (c.metadata ?? {}) as Json,
        };
        if (m.header.msg_type === "execute_result") {
          output.execution_count = c.execution_count as number;
        }
        target.add(output);
        if (displayId) {
          this.#displays.set(displayId, [...this.#displays.get(displayId) ?? [], output]);
        }
        break;
      }
      case "update_display_data":
        for (const output of this.#displays.get(displayId ?? "") ?? []) {
          output.data = c.data as Json;
          output.metadata = (c.metadata ?? {}) as Json;
        }
        break;
      case "error":
        target.add({
          output_type: "error",
          ename: c.ename as string,
          evalue: c.evalue as string,
          traceback: c.traceback as Json,
        });
        break;
      case "clear_output":
        target.clear(Boolean(c.wait));
        break;
    }
  }

  /** Execute code; its outputs, execution count and whether it raised. */
  async run(code: string, timeoutMs: number) {
    const collector = new CellOutputs();
    const id = await this.kernel.execute(code);
    this.#byRequest.set(id, collector);
    const reply = await this.kernel.until(
      timeoutMs,
      () => this.kernel.isIdle(id) ? this.kernel.reply(id, 30_000) : undefined,
    );
    if (!reply) throw new Error(`no reply within ${timeoutMs / 1000} s`);
    const { content } = await reply;
    const sent = performance.now();
    const sentinel = crypto.randomUUID();
    this.#byRequest.set(sentinel, collector);
    await this.kernel.execute("void 0", true, sentinel);
    if (!await this.kernel.until(30_000, () => this.kernel.isIdle(sentinel) || undefined)) {
      throw new Error("the kernel did not finish the sentinel after the cell within 30 s");
    }
    const roundTrip = performance.now() - sent;
    await this.kernel.quiet(Math.max(QUIET_MS, QUIET_PER_ROUND_TRIP * roundTrip));
    return {
      collector,
      executionCount: (content.execution_count as number | undefined) ?? null,
      failed: content.status !== "ok",
      content,
    };
  }
}

const codeOf = (cell: Cell) => cell.source;

/** Text of everything a cell printed or displayed as text, for `expect` checks. */
function cellText(outputs: Output[]): string {
  const parts: string[] = [];
  for (const out of outputs) {
    if (out.output_type === "stream") parts.push(out.text as string);
    const data = (out.data ?? {}) as JsonObject;
    for (const mime of ["text/plain", "text/markdown", "text/html", "image/svg+xml"]) {
      if (typeof data[mime] === "string") parts.push(data[mime] as string);
    }
  }
  return parts.join("\n");
}

/** The outputs a cell declares in `expect` that it does not show. */
function missingOutputs(cell: Cell, index: number): string[] {
  const expect = cell.metadata.expect as string[] | undefined;
  if (!expect) return [`cell ${index}: no \`expect\` metadata (declare [] for no output)`];
  const outputs = cell.outputs as Output[];
  const mimes = new Set(
    outputs.flatMap((o) =>
      o.output_type === "stream" ? ["stream"] : Object.keys((o.data ?? {}) as JsonObject)
    ),
  );
  const text = cellText(outputs);
  const unvalidated = mimes.has(UNVALIDATED_MIME) && !expect.includes(UNVALIDATED_MIME)
    ? [
      `cell ${index}: shows a kernel not validated (${
        outputs.flatMap((o) => ((o.data ?? {}) as JsonObject)[UNVALIDATED_MIME] ?? []).join(", ")
      }); a deliberate demonstration declares ${UNVALIDATED_MIME} in \`expect\``,
    ]
    : [];
  return [
    ...unvalidated,
    ...expect.flatMap((item) => {
      if (item.startsWith("text:")) {
        return text.includes(item.slice(5))
          ? []
          : [`cell ${index}: missing text "${item.slice(5)}"`];
      }
      return mimes.has(item) ? [] : [`cell ${index}: missing output ${item}`];
    }),
  ];
}

/** The commit a stamp names: GEMM_COMMIT or git's HEAD (lib/record.ts), which must be known. */
async function stampCommit(): Promise<string> {
  const commit = await currentCommit();
  if (commit === "unknown") throw new Error("no commit: set GEMM_COMMIT (no git repository here)");
  return commit;
}

/** The adapter the kernel's notebook session runs on, asked of the kernel itself. */
async function deviceOf(run: NotebookRun, timeoutMs: number): Promise<string> {
  const probe = `const { session } = await import(${JSON.stringify(SESSION_MODULE)});\n` +
    `console.log(${JSON.stringify(DEVICE_MARK)} + (await session()).summary.description);`;
  const { collector, failed, content } = await run.run(probe, timeoutMs);
  const text = cellText(collector.outputs);
  const line = text.split("\n").find((l) => l.startsWith(DEVICE_MARK));
  if (failed || !line) {
    throw new Error(`the device probe failed: ${content.ename ?? ""} ${content.evalue ?? text}`);
  }
  return line.slice(DEVICE_MARK.length).trim();
}

export interface NotebookResult {
  notebook: string;
  written: string;
  seconds: number;
  problems: string[];
}

/** Execute one notebook and write it; its problems are empty when every cell ran and showed what it declares. */
export async function executeNotebook(path: string, options: Options): Promise<NotebookResult> {
  const started = performance.now();
  const nb: Notebook = parseNotebook(await Deno.readTextFile(path));
  const folder = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) || "/" : ".";
  const name = path.slice(path.lastIndexOf("/") + 1);
  const written = options.out ? `${options.out}/${name}` : path;
  const problems: string[] = [];
  const seconds = () => Math.round((performance.now() - started) / 100) / 10;
  let kernel: KernelClient;
  try {
    kernel = await KernelClient.start(await Deno.realPath(folder));
  } catch (e) {
    return { notebook: name, written: path, seconds: seconds(), problems: [(e as Error).message] };
  }
  /** The code cells that ran, with their outputs, which may still grow until the kernel stops. */
  const ran: { cell: Cell; index: number; collector: CellOutputs; failed: boolean }[] = [];
  delete nb.metadata.gemm_ladder;
  try {
    const run = new NotebookRun(kernel);
    nb.metadata.language_info = kernel.info.language_info as Json;
    let stopped = false;
    for (const [index, cell] of nb.cells.entries()) {
      if (cell.cell_type !== "code") continue;
      delete cell.metadata.gemm_ladder;
      cell.outputs = [];
      cell.execution_count = null;
      if (stopped) continue;
      try {
        const result = await run.run(codeOf(cell), options.timeoutSeconds * 1000);
        ran.push({ cell, index, collector: result.collector, failed: result.failed });
        cell.execution_count = result.executionCount;
        if (options.stamp) {
          cell.metadata.gemm_ladder = { source_sha256: await sourceSha256(cell.source) };
        }
        if (result.failed) {
          const { ename, evalue } = result.content as { ename?: string; evalue?: string };
          problems.push(`cell ${index}: ${ename ?? "error"}: ${(evalue ?? "").split("\n")[0]}`);
          stopped = true;
        }
      } catch (e) {
        problems.push(`cell ${index}: ${(e as Error).message}`);
        stopped = true;
      }
    }
    if (!stopped) {
      const stamp: JsonObject = {
        executed_on: await deviceOf(run, 120_000),
        date: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
      };
      if (options.stamp) stamp.commit = await stampCommit();
      nb.metadata.gemm_ladder = stamp;
    }
  } catch (e) {
    problems.push((e as Error).message);
  } finally {
    await kernel.shutdown();
  }
  for (const { cell, index, collector, failed } of ran) {
    cell.outputs = collector.outputs;
    if (!failed) problems.push(...missingOutputs(cell, index));
  }
  if (options.out) await Deno.mkdir(options.out, { recursive: true });
  await Deno.writeTextFile(written, serializeNotebook(nb));
  return { notebook: name, written, seconds: seconds(), problems };
}

function parseArgs(args: string[]): { options: Options; paths: string[] } {
  const options: Options = { stamp: false, timeoutSeconds: 900 };
  const paths: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--stamp") options.stamp = true;
    else if (arg === "--out") options.out = args[++i];
    else if (arg === "--timeout") options.timeoutSeconds = Number(args[++i]);
    else if (arg.startsWith("-")) throw new Error(`unknown option ${arg}`);
    else paths.push(arg);
  }
  const badTimeout = !(options.timeoutSeconds > 0);
  if (badTimeout || (options.out === undefined && args.includes("--out"))) {
    throw new Error(
      "usage: deno run -A tools/execute_notebook.ts [--stamp] [--out DIR] [--timeout S] [NB.ipynb ...]",
    );
  }
  return { options, paths };
}

if (import.meta.main) {
  let parsed;
  try {
    parsed = parseArgs(Deno.args);
  } catch (e) {
    console.error(`execute_notebook: ${(e as Error).message}`);
    Deno.exit(2);
  }
  const started = performance.now();
  const results: NotebookResult[] = [];
  const paths = parsed.paths.length ? parsed.paths : await listNotebooks();
  for (const path of paths) {
    const result = await executeNotebook(path, parsed.options);
    const status = result.problems.length ? "FAILED" : "ok";
    console.log(`${result.notebook}: ${status} in ${result.seconds} s -> ${result.written}`);
    for (const problem of result.problems) console.log(`  ${problem}`);
    results.push(result);
  }
  const failed = results.filter((r) => r.problems.length);
  const seconds = Math.round((performance.now() - started) / 100) / 10;
  console.log(
    JSON.stringify({ runs: results.length, failed: failed.length, seconds, notebooks: results }),
  );
  Deno.exit(failed.length ? 1 : 0);
}
