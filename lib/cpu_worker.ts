/**
 * One thread of the threaded CPU matmul (lib/cpu_threads.ts): it instantiates the SIMD kernel
 * over the pool's shared memory once, then packs its share of B, or multiplies strips of C's
 * rows until none is left, when told, and answers each message when it is done.
 */
import { multiplyStrips, packB, type SimdLayout, type TilesKernel } from "./cpu_simd.ts";

/** What the pool sends a thread. */
export type ThreadTask =
  | { kind: "init"; module: WebAssembly.Module; memory: WebAssembly.Memory }
  | { kind: "pack"; layout: SimdLayout; from: number; to: number }
  | { kind: "rows"; layout: SimdLayout; strip: number; thread: number };

/** What a thread answers: done, or the error that stopped it. */
export type ThreadReply = { kind: "done" } | { kind: "error"; message: string };

/** The worker's global scope, typed here: the project's types are the main thread's. */
const scope = self as unknown as {
  onmessage: ((e: MessageEvent<ThreadTask>) => void) | null;
  postMessage(reply: ThreadReply): void;
};

let memory: WebAssembly.Memory | undefined;
let tiles: TilesKernel | undefined;

scope.onmessage = (e) => {
  const task = e.data;
  try {
    if (task.kind === "init") {
      memory = task.memory;
      const instance = new WebAssembly.Instance(task.module, { env: { memory } });
      tiles = instance.exports.tiles as TilesKernel;
    } else if (!memory || !tiles) {
      throw new Error("cpu_worker: a task before init");
    } else if (task.kind === "pack") {
      packB(new Float32Array(memory.buffer), task.layout, task.from, task.to);
    } else {
      multiplyStrips(memory, tiles, task.layout, task.strip, task.thread);
    }
    scope.postMessage({ kind: "done" });
  } catch (err) {
    scope.postMessage({ kind: "error", message: String(err) });
  }
};
