/**
 * A Jupyter client for Deno's own kernel that needs nothing but Deno: it starts
 * `deno jupyter --kernel --conn FILE` and speaks the Jupyter messaging protocol 5.3 (HMAC-SHA256
 * signed, https://jupyter-client.readthedocs.io/en/stable/messaging.html) over ZeroMQ sockets
 * (tools/zmtp.ts): a DEALER for shell and control, a SUB for iopub.
 */
import { ZmqSocket } from "./zmtp.ts";

export type Content = Record<string, unknown>;

/** A message as the kernel sends it (header, parent header and content parsed). */
export interface Message {
  header: { msg_id: string; msg_type: string };
  parent_header: { msg_id?: string };
  metadata: Content;
  content: Content;
}

const DELIMITER = "<IDS|MSG>";
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** `n` distinct free ports on 127.0.0.1 (all held until all are found, then released). */
function freePorts(n: number): number[] {
  const listeners = Array.from(
    { length: n },
    () => Deno.listen({ hostname: "127.0.0.1", port: 0 }),
  );
  const ports = listeners.map((l) => (l.addr as Deno.NetAddr).port);
  for (const l of listeners) l.close();
  return ports;
}

/**
 * How Deno's kernel is started: this Deno's own binary (an absolute path, so a Jupyter started
 * from any shell finds it) and the connection file Jupyter writes.
 */
export function kernelArgv(connectionFile: string): string[] {
  return [Deno.execPath(), "jupyter", "--kernel", "--conn", connectionFile];
}

/** The kernel's environment: WebGPU's Vulkan loader needs XDG_RUNTIME_DIR; outputs need no colour codes. */
export function kernelEnv(): Record<string, string> {
  return { NO_COLOR: "1", XDG_RUNTIME_DIR: Deno.env.get("XDG_RUNTIME_DIR") ?? "/tmp" };
}

/** The kernel process ended before its ports answered. */
class KernelStartError extends Error {}

const hex = (bytes: ArrayBuffer) =>
  Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");

/** The kernel, its three sockets, and what has arrived on them. */
export class KernelClient {
  /** kernel_info_reply's content, as the kernel sent it. */
  info: Content = {};
  /** Called for every iopub message, in arrival order. */
  onIopub: (message: Message) => void = () => {};

  #process: Deno.ChildProcess;
  #shell!: ZmqSocket;
  #control!: ZmqSocket;
  #iopub!: ZmqSocket;
  #key: CryptoKey;
  #session = crypto.randomUUID();
  #replies = new Map<string, Message>();
  #idle = new Set<string>();
  #log: string[] = [];
  #exited = false;
  #lastIopub = 0;
  #wake: (() => void)[] = [];
  #dir: string;

  private constructor(process: Deno.ChildProcess, key: CryptoKey, dir: string) {
    this.#process = process;
    this.#key = key;
    this.#dir = dir;
    void process.status.then(() => {
      this.#exited = true;
      this.#notify();
    });
    for (const stream of [process.stdout, process.stderr]) {
      void (async () => {
        for await (const text of stream.pipeThrough(new TextDecoderStream())) {
          this.#log.push(text);
          if (this.#log.length > 200) this.#log.splice(0, 100);
        }
      })();
    }
  }

  /**
   * Start a kernel whose relative imports resolve from `cwd` (the notebook's folder). A kernel
   * that exits at start is started once more on new ports: between releasing a free port and
   * the kernel binding it, another process may take it.
   */
  static async start(cwd: string): Promise<KernelClient> {
    try {
      return await KernelClient.#startOnce(cwd);
    } catch (e) {
      if (!(e instanceof KernelStartError)) throw e;
      return await KernelClient.#startOnce(cwd);
    }
  }

  static async #startOnce(cwd: string): Promise<KernelClient> {
    const dir = await Deno.makeTempDir({ prefix: "gemm-kernel-" });
    const secret = crypto.randomUUID();
    const [shell_port, iopub_port, stdin_port, control_port, hb_port] = freePorts(5);
    const ports = { shell_port, iopub_port, stdin_port, control_port, hb_port };
    const connection = `${dir}/connection.json`;
    await Deno.writeTextFile(
      connection,
      JSON.stringify({
        ...ports,
        ip: "127.0.0.1",
        transport: "tcp",
        signature_scheme: "hmac-sha256",
        key: secret,
        kernel_name: "deno",
      }),
    );
    const [command, ...args] = kernelArgv(connection);
    const process = new Deno.Command(command, {
      args,
      cwd,
      env: kernelEnv(),
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const key = await crypto.subtle.importKey(
      "raw",
      encoder.encode(secret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign", "verify"],
    );
    const client = new KernelClient(process, key, dir);
    try {
      await client.#connect(ports.shell_port, ports.control_port, ports.iopub_port);
    } catch (e) {
      await client.shutdown();
      throw e;
    }
    return client;
  }

  async #connect(shell: number, control: number, iopub: number): Promise<void> {
    const connect = async (port: number, type: "DEALER" | "SUB") => {
      const deadline = Date.now() + 60_000;
      while (true) {
        try {
          return await ZmqSocket.connect("127.0.0.1", port, type);
        } catch (e) {
          if (this.#exited) throw new KernelStartError(`kernel exited at start:\n${this.log()}`);
          if (Date.now() > deadline) throw new Error(`kernel port ${port}: ${e}\n${this.log()}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    };
    this.#iopub = await connect(iopub, "SUB");
    this.#shell = await connect(shell, "DEALER");
    this.#control = await connect(control, "DEALER");
    this.#listen(this.#iopub, (m) => {
      this.#lastIopub = Date.now();
      if (m.header.msg_type === "status" && m.content.execution_state === "idle") {
        this.#idle.add(m.parent_header.msg_id ?? "");
      }
      this.onIopub(m);
    });
    for (const socket of [this.#shell, this.#control]) {
      this.#listen(socket, (m) => this.#replies.set(m.parent_header.msg_id ?? "", m));
    }
    // A SUB misses what is published before its subscription lands: ask for kernel info until
    // iopub shows the request's status, so no cell output can be lost.
    for (let attempt = 0;; attempt++) {
      const id = await this.send("shell", "kernel_info_request", {});
      const seen = await this.until(2_000, () => this.#idle.has(id) || undefined);
      if (seen) {
        this.info = (await this.reply(id, 30_000)).content;
        return;
      }
      if (attempt === 30) throw new Error(`kernel never answered on iopub:\n${this.log()}`);
    }
  }

  #listen(socket: ZmqSocket, handle: (m: Message) => void): void {
    void (async () => {
      while (true) {
        const frames = await socket.receive().catch(() => null);
        if (!frames) return;
        const message = await this.#decode(frames);
        if (message) handle(message);
        this.#notify();
      }
    })();
  }

  async #decode(frames: Uint8Array[]): Promise<Message | undefined> {
    const at = frames.findIndex((f) => decoder.decode(f) === DELIMITER);
    if (at < 0 || frames.length < at + 6) return undefined;
    const [signature, header, parent, metadata, content] = frames.slice(at + 1, at + 6);
    const expected = hex(
      await crypto.subtle.sign("HMAC", this.#key, concat([header, parent, metadata, content])),
    );
    if (decoder.decode(signature) !== expected) {
      this.#log.push("dropped a message with a bad signature\n");
      return undefined;
    }
    return {
      header: JSON.parse(decoder.decode(header)),
      parent_header: JSON.parse(decoder.decode(parent)),
      metadata: JSON.parse(decoder.decode(metadata)),
      content: JSON.parse(decoder.decode(content)),
    };
  }

  #notify(): void {
    for (const wake of this.#wake.splice(0)) wake();
  }

  /**
   * Send a request; returns its msg_id. A caller that must route the request's iopub messages
   * before any can arrive names the msg_id itself.
   */
  async send(
    channel: "shell" | "control",
    msgType: string,
    content: Content,
    msgId: string = crypto.randomUUID(),
  ): Promise<string> {
    const header = {
      msg_id: msgId,
      msg_type: msgType,
      session: this.#session,
      username: "gemm-ladder",
      date: new Date().toISOString(),
      version: "5.3",
    };
    const parts = [header, {}, {}, content].map((p) => encoder.encode(JSON.stringify(p)));
    const signature = hex(await crypto.subtle.sign("HMAC", this.#key, concat(parts)));
    const socket = channel === "shell" ? this.#shell : this.#control;
    await socket.send([encoder.encode(DELIMITER), encoder.encode(signature), ...parts]);
    return msgId;
  }

  /** Send execute_request (as `msgId`, when given); returns its msg_id. */
  execute(code: string, silent = false, msgId?: string): Promise<string> {
    return this.send("shell", "execute_request", {
      code,
      silent,
      store_history: !silent,
      user_expressions: {},
      allow_stdin: false,
      stop_on_error: true,
    }, msgId);
  }

  /**
   * Wait until `check` returns a value (checked after every message), at most `ms`: the value,
   * or undefined on timeout. Throws if the kernel process exits meanwhile.
   */
  async until<T>(ms: number, check: () => T | undefined): Promise<T | undefined> {
    const deadline = Date.now() + ms;
    while (true) {
      const value = check();
      if (value !== undefined) return value;
      if (this.#exited) throw new Error(`the kernel exited:\n${this.log()}`);
      const left = deadline - Date.now();
      if (left <= 0) return undefined;
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((resolve) => {
        timer = setTimeout(resolve, left);
        this.#wake.push(resolve);
      });
      clearTimeout(timer);
    }
  }

  /** The reply to request `id`, waiting at most `ms`. */
  async reply(id: string, ms: number): Promise<Message> {
    const reply = await this.until(ms, () => this.#replies.get(id));
    if (!reply) throw new Error(`no reply in ${ms / 1000} s`);
    return reply;
  }

  /** True once the kernel has published `idle` for request `id`. */
  isIdle(id: string): boolean {
    return this.#idle.has(id);
  }

  /** Wait until iopub has been silent for `ms` (outputs Deno publishes after `idle`). */
  async quiet(ms: number): Promise<void> {
    while (Date.now() - this.#lastIopub < ms) {
      await this.until(ms - (Date.now() - this.#lastIopub), () => undefined);
    }
  }

  /** The kernel's recent stdout and stderr, for failure reports. */
  log(): string {
    return this.#log.join("").split("\n").slice(-40).join("\n");
  }

  /** Ask the kernel to shut down; kill it if it has not exited within a few seconds. */
  async shutdown(): Promise<void> {
    if (!this.#exited && this.#control) {
      try {
        const id = await this.send("control", "shutdown_request", { restart: false });
        await this.until(5_000, () => this.#exited || this.#replies.has(id) || undefined);
        await this.until(5_000, () => this.#exited || undefined);
      } catch {
        // the kernel is gone already
      }
    }
    for (const socket of [this.#shell, this.#control, this.#iopub]) socket?.close();
    if (!this.#exited) {
      try {
        this.#process.kill("SIGKILL");
      } catch {
        // exited between the check and the kill
      }
    }
    await this.#process.status;
    await Deno.remove(this.#dir, { recursive: true }).catch(() => {});
  }
}

function concat(parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
