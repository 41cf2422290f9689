/**
 * The README's interactive path, headless: the kernelspec `deno task kernel` installs (with no
 * deno on PATH), Debian's classic notebook server started on 127.0.0.1 with a token, and a small
 * notebook executed through it, over the REST API and the kernel's websocket, the way a browser
 * tab does. Every step has a time limit, and the server is always stopped.
 */
import assert from "node:assert/strict";

const root = new URL("../", import.meta.url).pathname;
const INSTALLER = `${root}tools/install_kernel.ts`;
const SERVER = "/usr/bin/jupyter-notebook";
const NOTEBOOK = "tests/fixtures/late_outputs.ipynb";
/** Outputs Deno publishes after a cell's idle come within milliseconds; this is ample. */
const QUIET_MS = 300;

/** A Jupyter message as the notebook server's websocket carries it (JSON text frames). */
interface Message {
  header: { msg_id: string; msg_type: string };
  parent_header: { msg_id?: string };
  channel: string;
  content: Record<string, unknown>;
}

/** An output of a cell, as a notebook stores it. */
interface Output {
  type: string;
  data: Record<string, unknown>;
  text: string;
  displayId?: string;
}

/**
 * Calls `check` every few milliseconds until it returns a value, for at most `ms` (then throws
 * naming `what`). Polling, unlike a race with a timer, leaves nothing running after a timeout.
 */
async function poll<T>(
  ms: number,
  what: string,
  check: () => T | undefined | Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${what}: nothing in ${ms / 1000} s`);
}

/** Write the project's `deno` kernelspec into `dataDir` as `deno task kernel` does, no deno on PATH. */
async function installKernel(dataDir: string): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-env", "--allow-read", "--allow-write", INSTALLER],
    env: { PATH: "/usr/bin:/bin", JUPYTER_DATA_DIR: dataDir },
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(60_000),
  }).output();
  const dec = new TextDecoder();
  assert.equal(out.code, 0, dec.decode(out.stdout) + dec.decode(out.stderr));
  const spec = JSON.parse(await Deno.readTextFile(`${dataDir}/kernels/deno/kernel.json`));
  return spec.argv[0];
}

/** A free port on 127.0.0.1 (released again for the server to take). */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** The notebook server, started headless; `log` holds what it printed, for failure reports. */
function startServer(port: number, token: string, dir: string) {
  const child = new Deno.Command(SERVER, {
    args: [
      "--no-browser",
      "--ip=127.0.0.1",
      `--port=${port}`,
      "--port-retries=0",
      `--NotebookApp.token=${token}`,
      `--notebook-dir=${root}`,
      // Containers and CI run as root, which the server refuses without this; harmless otherwise.
      "--allow-root",
    ],
    env: {
      JUPYTER_DATA_DIR: `${dir}/data`,
      JUPYTER_CONFIG_DIR: `${dir}/config`,
      JUPYTER_RUNTIME_DIR: `${dir}/runtime`,
      XDG_RUNTIME_DIR: Deno.env.get("XDG_RUNTIME_DIR") ?? "/tmp",
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const log: string[] = [];
  const collect = async (stream: ReadableStream<Uint8Array<ArrayBuffer>>) => {
    for await (const text of stream.pipeThrough(new TextDecoderStream())) log.push(text);
  };
  const drained = Promise.all([collect(child.stdout), collect(child.stderr)]);
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  return {
    log: () => log.join("").split("\n").slice(-30).join("\n"),
    exited: () => exited,
    /** SIGTERM, then SIGKILL if it has not exited within 15 s. */
    async stop() {
      if (!exited) child.kill("SIGTERM");
      try {
        await poll(15_000, "notebook server shutdown", () => exited || undefined);
      } catch {
        child.kill("SIGKILL");
      }
      await status;
      await drained;
    },
  };
}

/** The server's REST API with the token. */
function api(port: number, token: string) {
  return async (path: string, init: RequestInit = {}): Promise<Response> => {
    return await fetch(`http://127.0.0.1:${port}${path}`, {
      ...init,
      headers: { Authorization: `token ${token}`, "Content-Type": "application/json" },
      signal: AbortSignal.timeout(20_000),
    });
  };
}

/** A kernel's channels over the server's websocket: send requests, wait for messages. */
async function openChannels(url: string) {
  const ws = new WebSocket(url);
  const inbox: Message[] = [];
  ws.onmessage = (e) => inbox.push(JSON.parse(e.data as string));
  await poll(20_000, "kernel websocket", () => {
    if (ws.readyState === WebSocket.CLOSED) throw new Error("kernel websocket refused");
    return ws.readyState === WebSocket.OPEN || undefined;
  });
  const session = crypto.randomUUID();
  return {
    inbox,
    send(msgType: string, content: Record<string, unknown>): string {
      const msgId = crypto.randomUUID();
      ws.send(JSON.stringify({
        header: {
          msg_id: msgId,
          msg_type: msgType,
          session,
          username: "test",
          version: "5.3",
          date: new Date().toISOString(),
        },
        parent_header: {},
        metadata: {},
        content,
        channel: "shell",
        buffers: [],
      }));
      return msgId;
    },
    /** The first message (in arrival order) that matches, waiting up to `ms`. */
    async waitFor(ms: number, what: string, match: (m: Message) => boolean): Promise<Message> {
      return await poll(ms, what, () => inbox.find(match));
    },
    async close() {
      ws.close();
      await poll(
        10_000,
        "closing the kernel websocket",
        () => ws.readyState === WebSocket.CLOSED || undefined,
      );
    },
  };
}

type Channels = Awaited<ReturnType<typeof openChannels>>;

const isReply = (id: string, type: string) => (m: Message) =>
  m.parent_header.msg_id === id && m.header.msg_type === type;
const isIdle = (id: string) => (m: Message) =>
  m.parent_header.msg_id === id && m.header.msg_type === "status" &&
  m.content.execution_state === "idle";

/**
 * Execute one cell and return its outputs. Deno's kernel can publish outputs after the cell's
 * `idle`, so (as tools/execute_notebook.ts does) a silent sentinel runs next, and the cell's
 * messages are gathered until the sentinel is idle and the channel has been quiet a while.
 */
async function execute(ch: Channels, code: string): Promise<Output[]> {
  const id = ch.send("execute_request", {
    code,
    silent: false,
    store_history: true,
    user_expressions: {},
    allow_stdin: false,
    stop_on_error: true,
  });
  const reply = await ch.waitFor(120_000, "execute_reply", isReply(id, "execute_reply"));
  await ch.waitFor(30_000, "idle after the cell", isIdle(id));
  const sentinel = ch.send("execute_request", { code: "void 0", silent: true });
  await ch.waitFor(30_000, "idle after the sentinel", isIdle(sentinel));
  for (let seen = -1; seen !== ch.inbox.length;) {
    seen = ch.inbox.length;
    await new Promise((r) => setTimeout(r, QUIET_MS));
  }
  // Deno's kernel parents printed text by the request it serves when it publishes the text, so
  // the tail of a long print can arrive as the sentinel's, which prints nothing itself: it is
  // the cell's (tools/execute_notebook.ts routes it the same way).
  const outputs: Output[] = [];
  const ours = new Set([id, sentinel]);
  for (const m of ch.inbox.filter((m) => ours.has(m.parent_header.msg_id ?? ""))) {
    const c = m.content as {
      name?: string;
      text?: string;
      data?: Record<string, unknown>;
      transient?: { display_id?: string };
      ename?: string;
      evalue?: string;
    };
    const type = m.header.msg_type;
    if (type === "error") throw new Error(`cell raised ${c.ename}: ${c.evalue}\n${code}`);
    if (type === "stream") outputs.push({ type, data: {}, text: c.text ?? "" });
    if (type === "display_data" || type === "execute_result") {
      outputs.push({ type, data: c.data ?? {}, text: "", displayId: c.transient?.display_id });
    }
    if (type === "update_display_data") {
      for (const o of outputs.filter((o) => o.displayId === c.transient?.display_id)) {
        o.data = c.data ?? {};
      }
    }
  }
  assert.equal(reply.content.status, "ok", `execute_reply ${JSON.stringify(reply.content)}`);
  return outputs;
}

/** The declared outputs (`expect` metadata, as tools/execute_notebook.ts reads it) that are absent. */
function missing(expect: string[], outputs: Output[]): string[] {
  const mimes = new Set(outputs.flatMap((o) =>
    o.type === "stream" ? ["stream"] : [
      ...Object.keys(o.data),
    ]
  ));
  const text = outputs.flatMap((o) => [
    o.text,
    ...Object.values(o.data).filter((v) => typeof v === "string"),
  ]).join("\n");
  return expect.filter((e) => e.startsWith("text:") ? !text.includes(e.slice(5)) : !mimes.has(e));
}

Deno.test("the documented Jupyter server runs a notebook with the project's Deno kernel", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gemm-jupyter-server-" });
  const token = crypto.randomUUID().replaceAll("-", "");
  let server: ReturnType<typeof startServer> | undefined;
  try {
    const deno = await installKernel(`${dir}/data`);
    assert.ok(deno.startsWith("/"), `kernelspec runs ${deno}, not an absolute path`);
    assert.ok((await Deno.stat(deno)).isFile, `kernelspec runs ${deno}, which is not a file`);

    const port = freePort();
    server = startServer(port, token, dir);
    const call = api(port, token);
    await poll(60_000, "notebook server start", async () => {
      if (server!.exited()) throw new Error(`notebook server exited:\n${server!.log()}`);
      try {
        const status = await fetch(`http://127.0.0.1:${port}/api/status?token=${token}`);
        await status.body?.cancel();
        return status.ok || undefined;
      } catch {
        return undefined; // not listening yet
      }
    });
    // The token guards the API: without it the server refuses.
    const anonymous = await fetch(`http://127.0.0.1:${port}/api/sessions`);
    await anonymous.body?.cancel();
    assert.equal(anonymous.status, 403);

    const specs = await (await call("/api/kernelspecs")).json();
    assert.deepEqual(specs.kernelspecs.deno?.spec.argv.slice(0, 3), [deno, "jupyter", "--kernel"]);

    const created = await call("/api/sessions", {
      method: "POST",
      body: JSON.stringify({ path: NOTEBOOK, type: "notebook", kernel: { name: "deno" } }),
    });
    assert.equal(created.status, 201, server.log());
    const session = await created.json();
    const ch = await openChannels(
      `ws://127.0.0.1:${port}/api/kernels/${session.kernel.id}/channels` +
        `?session_id=${session.id}&token=${token}`,
    );
    try {
      const info = ch.send("kernel_info_request", {});
      const reply = await ch.waitFor(
        60_000,
        "kernel_info_reply",
        isReply(info, "kernel_info_reply"),
      );
      assert.equal((reply.content.language_info as { name: string }).name, "typescript");

      const nb = JSON.parse(await Deno.readTextFile(`${root}${NOTEBOOK}`));
      const cells = nb.cells.filter((c: { cell_type: string }) => c.cell_type === "code");
      assert.ok(cells.length > 0);
      for (const cell of cells) {
        const source = Array.isArray(cell.source) ? cell.source.join("") : cell.source;
        const outputs = await execute(ch, source);
        assert.deepEqual(missing(cell.metadata.expect, outputs), [], `cell:\n${source}`);
      }
      // The project's library loads in the kernel the server started (from the notebook's folder).
      const table = await execute(
        ch,
        'const { showTable } = await import("../../lib/notebook/format.ts");\n' +
          'await showTable(["kernel", "GFLOP/s"], [["02_naive", 1.5]], "through the server");',
      );
      assert.deepEqual(missing(["text/html", "text:through the server"], table), []);
    } finally {
      await ch.close();
      const gone = await call(`/api/sessions/${session.id}`, { method: "DELETE" });
      await gone.body?.cancel();
      assert.equal(gone.status, 204);
    }
  } finally {
    await server?.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
