/**
 * The small part of ZeroMQ a Jupyter client needs, over TCP with Deno's own sockets: ZMTP 3.0
 * with the NULL security mechanism (greeting, READY handshake, framed multipart messages), as a
 * DEALER (shell, control) or a SUB subscribed to everything (iopub). No reconnects: a kernel that
 * drops a connection has died, and the caller reports that.
 * Reference: https://rfc.zeromq.org/spec/23/ (ZMTP 3.0).
 */

export type SocketType = "DEALER" | "SUB";

const FLAG_MORE = 0x01;
const FLAG_LONG = 0x02;
const FLAG_COMMAND = 0x04;
const GREETING_BYTES = 64;

const encoder = new TextEncoder();

/** The 64-byte greeting: signature, version 3.0, mechanism NULL, as-server 0, filler. */
function greeting(): Uint8Array {
  const bytes = new Uint8Array(GREETING_BYTES);
  bytes[0] = 0xff;
  bytes[9] = 0x7f;
  bytes[10] = 3;
  bytes[11] = 0;
  bytes.set(encoder.encode("NULL"), 12);
  return bytes;
}

/** One frame: flags, a 1- or 8-byte big-endian size, the body. */
function frame(body: Uint8Array, flags: number): Uint8Array {
  const long = body.length > 255;
  const head = long ? 9 : 2;
  const out = new Uint8Array(head + body.length);
  out[0] = flags | (long ? FLAG_LONG : 0);
  if (long) new DataView(out.buffer).setBigUint64(1, BigInt(body.length));
  else out[1] = body.length;
  out.set(body, head);
  return out;
}

/** The READY command with its metadata properties (name, 4-byte value length, value). */
function readyCommand(properties: Record<string, string>): Uint8Array {
  const parts: Uint8Array[] = [new Uint8Array([5]), encoder.encode("READY")];
  for (const [name, value] of Object.entries(properties)) {
    const v = encoder.encode(value);
    const length = new Uint8Array(4);
    new DataView(length.buffer).setUint32(0, v.length);
    parts.push(new Uint8Array([name.length]), encoder.encode(name), length, v);
  }
  return frame(concat(parts), FLAG_COMMAND);
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

/** Buffered reads of exact byte counts from a connection. */
class Reader {
  #buffer: Uint8Array = new Uint8Array(0);
  #reader: ReadableStreamDefaultReader<Uint8Array>;

  constructor(conn: Deno.TcpConn) {
    this.#reader = conn.readable.getReader();
  }

  /** Exactly n bytes, or null when the peer closed the connection first. */
  async read(n: number): Promise<Uint8Array | null> {
    while (this.#buffer.length < n) {
      const { value, done } = await this.#reader.read();
      if (done) return null;
      this.#buffer = concat([this.#buffer, value]);
    }
    const out = this.#buffer.slice(0, n);
    this.#buffer = this.#buffer.subarray(n);
    return out;
  }

  cancel(): Promise<void> {
    return this.#reader.cancel().catch(() => {});
  }
}

/** A connected ZMTP socket that sends and receives multipart messages (lists of frames). */
export class ZmqSocket {
  #conn: Deno.TcpConn;
  #reader: Reader;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #closed = false;

  private constructor(conn: Deno.TcpConn) {
    this.#conn = conn;
    this.#reader = new Reader(conn);
    this.#writer = conn.writable.getWriter();
  }

  /** Connect, exchange greetings and READY commands; a SUB subscribes to every topic. */
  static async connect(hostname: string, port: number, type: SocketType): Promise<ZmqSocket> {
    const socket = new ZmqSocket(await Deno.connect({ hostname, port }));
    await socket.#handshake(type);
    return socket;
  }

  async #handshake(type: SocketType): Promise<void> {
    await this.#writer.write(greeting());
    const theirs = await this.#reader.read(GREETING_BYTES);
    if (!theirs || theirs[0] !== 0xff || theirs[9] !== 0x7f) {
      throw new Error("zmtp: the peer did not answer with a ZMTP greeting");
    }
    if (theirs[10] < 3) throw new Error(`zmtp: peer speaks ZMTP ${theirs[10]}, not 3.x`);
    const mechanism = new TextDecoder().decode(theirs.subarray(12, 32)).replace(/\0+$/, "");
    if (mechanism !== "NULL") throw new Error(`zmtp: peer wants mechanism ${mechanism}`);
    await this.#writer.write(readyCommand({ "Socket-Type": type, "Identity": "" }));
    const ready = await this.#readFrame();
    if (!ready?.command) throw new Error("zmtp: the peer sent no READY command");
    const nameLength = ready.body[0];
    const name = new TextDecoder().decode(ready.body.subarray(1, 1 + nameLength));
    if (name === "ERROR") throw new Error("zmtp: the peer refused the handshake");
    if (name !== "READY") throw new Error(`zmtp: expected READY, got ${name}`);
    // ZMTP 3.0 subscriptions are messages: 0x01 then the topic prefix (empty: everything).
    if (type === "SUB") await this.send([new Uint8Array([1])]);
  }

  async #readFrame(): Promise<{ body: Uint8Array; more: boolean; command: boolean } | null> {
    const head = await this.#reader.read(2);
    if (!head) return null;
    const flags = head[0];
    let size = head[1];
    if (flags & FLAG_LONG) {
      const rest = await this.#reader.read(7);
      if (!rest) return null;
      const eight = concat([head.subarray(1), rest]);
      size = Number(new DataView(eight.buffer).getBigUint64(0));
    }
    const body = await this.#reader.read(size);
    if (!body) return null;
    return { body, more: (flags & FLAG_MORE) !== 0, command: (flags & FLAG_COMMAND) !== 0 };
  }

  /** Send one multipart message. */
  async send(frames: Uint8Array[]): Promise<void> {
    const encoded = frames.map((f, i) => frame(f, i < frames.length - 1 ? FLAG_MORE : 0));
    await this.#writer.write(concat(encoded));
  }

  /** The next multipart message (commands such as PING are skipped), or null once closed. */
  async receive(): Promise<Uint8Array[] | null> {
    const frames: Uint8Array[] = [];
    while (true) {
      const f = await this.#readFrame();
      if (!f) return null;
      if (f.command) continue;
      frames.push(f.body);
      if (!f.more) return frames;
    }
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    void this.#reader.cancel();
    this.#writer.releaseLock();
    try {
      this.#conn.close();
    } catch {
      // already closed by the peer
    }
  }
}
