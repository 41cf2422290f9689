/**
 * The threaded CPU matmul: the WebAssembly SIMD kernel of lib/cpu_simd.ts on one Worker per
 * core, all over one shared WebAssembly memory. The calling thread copies A and B in; the
 * threads pack a share of B's panels each, then multiply strips of C's rows (packing their own
 * panels of A); the calling thread copies C out. Needs SharedArrayBuffer: in a browser, a
 * cross-origin-isolated page (COOP and COEP headers). Rows are taken in strips from a shared
 * counter, so a core that runs slower (another load, a smaller core) takes fewer of them.
 */
import { GemmError } from "./errors.ts";
import { checkOperands, type Shape } from "./matrix.ts";
import {
  type Blocks,
  defaultBlocks,
  hasRelaxedSimd,
  kernelModule,
  MAX_PAGES,
  MR,
  NR,
  simdLayout,
  stage,
  STRIP_COUNTER,
  unstage,
} from "./cpu_simd.ts";
import type { ThreadReply, ThreadTask } from "./cpu_worker.ts";

/**
 * The thread's module: lib/cpu_worker.ts beside this file, or, inside a bundle (dist/bench.js,
 * built by tools/bundle.sh), the worker's own bundle beside it.
 */
const WORKER_URL = new URL(
  import.meta.url.endsWith(".ts") ? "./cpu_worker.ts" : "./cpu_worker.js",
  import.meta.url,
).href;

/** Cores the runtime reports (navigator.hardwareConcurrency), at least 1. */
export function coreCount(): number {
  return Math.max(1, globalThis.navigator?.hardwareConcurrency ?? 1);
}

/** A pool of threads over one shared memory. Close it when done: live workers keep Deno running. */
export class CpuThreads {
  private constructor(
    private readonly workers: Worker[],
    private readonly memory: WebAssembly.Memory,
  ) {}

  get threads(): number {
    return this.workers.length;
  }

  /** Start `threads` workers (default: one per core) and give each the kernel and the memory. */
  static async start(threads = coreCount()): Promise<CpuThreads> {
    if (typeof SharedArrayBuffer === "undefined") {
      throw new GemmError(
        "feature",
        "threads need SharedArrayBuffer (in a browser: a cross-origin-isolated page)",
      );
    }
    const memory = new WebAssembly.Memory({ initial: 1, maximum: MAX_PAGES, shared: true });
    const module = new WebAssembly.Module(kernelModule(hasRelaxedSimd(), true));
    const workers = Array.from(
      { length: threads },
      () => new Worker(WORKER_URL, { type: "module" }),
    );
    const pool = new CpuThreads(workers, memory);
    try {
      await pool.each(() => ({ kind: "init", module, memory }));
    } catch (e) {
      pool.close();
      throw e;
    }
    return pool;
  }

  /** Send each worker its task (from its index) and wait until all have answered. */
  private each(task: (thread: number) => ThreadTask | undefined): Promise<void[]> {
    return Promise.all(this.workers.map((w, t) => {
      const message = task(t);
      if (!message) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        w.onmessage = (e: MessageEvent<ThreadReply>) =>
          e.data.kind === "done" ? resolve() : reject(new GemmError("cpu", e.data.message));
        w.onerror = (e) => {
          e.preventDefault();
          reject(new GemmError("cpu", e.message));
        };
        w.postMessage(message);
      });
    }));
  }

  /** C = A * B on every thread of the pool. */
  async multiply(
    a: Float32Array,
    b: Float32Array,
    shape: Shape,
    blocks: Blocks = defaultBlocks(),
  ): Promise<Float32Array> {
    checkOperands(shape, a, b);
    const layout = simdLayout(shape, blocks);
    stage(this.memory, a, b, layout, this.threads);
    // B's panels in equal shares, one per thread.
    const panels = layout.ldc / NR, per = Math.ceil(panels / this.threads);
    await this.each((t) => {
      const from = Math.min(panels, t * per), to = Math.min(panels, (t + 1) * per);
      return from < to ? { kind: "pack", layout, from, to } : undefined;
    });
    // Strips of at most MC rows, at least four per thread, taken from a shared counter.
    const strip = Math.max(
      MR,
      Math.min(blocks.mc, Math.ceil(layout.rows / (4 * this.threads) / MR) * MR),
    );
    new Int32Array(this.memory.buffer, 0, 4)[STRIP_COUNTER] = 0;
    await this.each((thread) => ({ kind: "rows", layout, strip, thread }));
    return unstage(this.memory, layout);
  }

  close(): void {
    for (const w of this.workers) w.terminate();
    this.workers.length = 0;
  }
}
