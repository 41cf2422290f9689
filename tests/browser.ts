/**
 * Headless Chromium for tests, driven over the Chrome DevTools Protocol with Deno's own
 * WebSocket (no puppeteer), and a static file server for the built site on 127.0.0.1.
 * Chromium runs WebGPU on its software adapter (SwiftShader), with a fresh profile and no
 * background network.
 */

const TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  json: "application/json",
  wgsl: "text/plain; charset=utf-8",
};

/**
 * Serve a folder on 127.0.0.1 (a free port), with `headers` on every response; `requests` lists
 * every path asked for.
 */
export function serveFolder(root: string, headers: Record<string, string> = {}) {
  const requests: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const path = decodeURIComponent(new URL(req.url).pathname);
    requests.push(path);
    if (path.includes("..")) return new Response("bad path", { status: 400 });
    try {
      const body = await Deno.readFile(`${root}${path.endsWith("/") ? `${path}index.html` : path}`);
      const type = TYPES[path.split(".").pop() ?? ""] ?? "application/octet-stream";
      return new Response(body, { headers: { ...headers, "content-type": type } });
    } catch {
      return new Response("not found", { status: 404 });
    }
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, requests, close: () => server.shutdown() };
}

/** One DevTools session on one page. */
export class Page {
  private next = 1;
  private pending = new Map<number, (msg: Record<string, unknown>) => void>();
  private listeners: ((method: string, params: Record<string, unknown>) => void)[] = [];

  private constructor(private ws: WebSocket) {
    ws.onmessage = (e) => {
      const msg = JSON.parse(e.data);
      if (msg.id) this.pending.get(msg.id)?.(msg);
      else for (const l of this.listeners) l(msg.method, msg.params);
    };
  }

  static async connect(url: string): Promise<Page> {
    const ws = new WebSocket(url);
    await new Promise((resolve, reject) => {
      ws.onopen = resolve;
      ws.onerror = reject;
    });
    return new Page(ws);
  }

  send<T = Record<string, unknown>>(method: string, params: object = {}): Promise<T> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, (msg) => {
        this.pending.delete(id);
        if (msg.error) reject(new Error(`${method}: ${JSON.stringify(msg.error)}`));
        else resolve(msg.result as T);
      });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  on(listener: (method: string, params: Record<string, unknown>) => void): void {
    this.listeners.push(listener);
  }

  /** Evaluate an expression in the page (promises awaited); returns its JSON value. */
  async eval<T>(expression: string): Promise<T> {
    const r = await this.send<{ result: { value: T }; exceptionDetails?: unknown }>(
      "Runtime.evaluate",
      { expression, awaitPromise: true, returnByValue: true },
    );
    if (r.exceptionDetails) throw new Error(`${expression}: ${JSON.stringify(r.exceptionDetails)}`);
    return r.result.value;
  }

  /** Poll an expression until it is truthy; throws after `timeoutMs`. */
  async waitFor<T>(expression: string, timeoutMs: number): Promise<T> {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      const v = await this.eval<T>(expression);
      if (v) return v;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`timed out after ${timeoutMs} ms waiting for ${expression}`);
  }

  /** Load a URL and wait for its load event. */
  async open(url: string): Promise<void> {
    const loaded = new Promise<void>((resolve) => {
      const off = (m: string) => m === "Page.loadEventFired" && resolve();
      this.on(off);
    });
    await this.send("Page.navigate", { url });
    await loaded;
  }

  async screenshot(): Promise<Uint8Array> {
    const { data } = await this.send<{ data: string }>("Page.captureScreenshot", {
      format: "png",
      captureBeyondViewport: true,
    });
    return Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
  }

  close(): void {
    this.ws.close();
  }
}

/** The flags that give headless Chromium WebGPU on SwiftShader and keep it off the network. */
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--enable-unsafe-webgpu",
  "--enable-features=Vulkan",
  "--use-vulkan=swiftshader",
  "--use-webgpu-adapter=swiftshader",
  "--disable-gpu-sandbox",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--window-size=1200,900",
];

/** Start Chromium with a fresh profile; its first page, and a stop that cleans up. */
export async function launchChromium(): Promise<{ page: Page; stop(): Promise<void> }> {
  const profile = await Deno.makeTempDir({ prefix: "gemm-chromium-" });
  const child = new Deno.Command("chromium", {
    args: [
      ...CHROMIUM_FLAGS,
      `--user-data-dir=${profile}`,
      "--remote-debugging-port=0",
      "about:blank",
    ],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  // Chromium prints the DevTools address on stderr; the rest of stderr is drained and dropped.
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  let port: string | undefined;
  while (!port) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`chromium exited before DevTools listened:\n${text}`);
    text += value;
    port = /DevTools listening on ws:\/\/127\.0\.0\.1:(\d+)\//.exec(text)?.[1];
  }
  (async () => {
    while (!(await reader.read()).done);
  })().catch(() => {});
  const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json() as {
    type: string;
    webSocketDebuggerUrl: string;
  }[];
  const target = targets.find((t) => t.type === "page");
  if (!target) throw new Error("chromium has no page target");
  const page = await Page.connect(target.webSocketDebuggerUrl);
  return {
    page,
    async stop() {
      page.close();
      child.kill("SIGTERM");
      await child.status;
      await Deno.remove(profile, { recursive: true }).catch(() => {});
    },
  };
}
