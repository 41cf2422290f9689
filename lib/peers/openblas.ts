/**
 * OpenBLAS `cblas_sgemm` as the CPU peer, called through Deno FFI: the bar for what a CPU can
 * do (SIMD micro-kernels, every core). Row-major is native to CBLAS, so A, B and C pass as is.
 * Measured with 1 thread and with all threads, validated like our kernels.
 */
import { timeCpu } from "../cpu.ts";
import { GemmError } from "../errors.ts";
import { checkOperands, type Shape } from "../matrix.ts";
import { peerRow, timerNumbers, validateThenTime } from "../measure.ts";
import { envOrUndefined, type PeerResult } from "../record.ts";
import { F32_NUMERICS } from "../accuracy.ts";

/** Where libopenblas is looked for, after $GEMM_OPENBLAS (Debian's libopenblas0-pthread first). */
export const OPENBLAS_PATHS = [
  "libopenblas.so.0",
  "/usr/lib/x86_64-linux-gnu/libopenblas.so.0",
  "/usr/lib/aarch64-linux-gnu/libopenblas.so.0",
  "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0",
  "/usr/lib64/libopenblas.so.0",
  "/usr/local/lib/libopenblas.so.0",
  "/opt/homebrew/opt/openblas/lib/libopenblas.dylib",
  "/usr/local/opt/openblas/lib/libopenblas.dylib",
];

const SYMBOLS = {
  cblas_sgemm: {
    parameters: [
      "i32", // order
      "i32", // transA
      "i32", // transB
      "i32", // M
      "i32", // N
      "i32", // K
      "f32", // alpha
      "buffer", // A
      "i32", // lda
      "buffer", // B
      "i32", // ldb
      "f32", // beta
      "buffer", // C
      "i32", // ldc
    ],
    result: "void",
  },
  openblas_set_num_threads: { parameters: ["i32"], result: "void" },
  openblas_get_num_threads: { parameters: [], result: "i32" },
  openblas_get_num_procs: { parameters: [], result: "i32" },
  openblas_get_config: { parameters: [], result: "pointer" },
} as const;

const CBLAS_ROW_MAJOR = 101;
const CBLAS_NO_TRANS = 111;

/** An opened OpenBLAS. */
export interface OpenBlasPeer {
  /** The library file that was loaded. */
  path: string;
  /** openblas_get_config(): version, build target, threading. */
  config: string;
  /** Cores OpenBLAS will use when asked for all threads. */
  maxThreads: number;
  /** C = A * B into `c` (allocated if absent) with the current thread count. */
  sgemm(a: Float32Array, b: Float32Array, shape: Shape, c?: Float32Array): Float32Array;
  /** Set the thread count for following calls (1 .. maxThreads). */
  setThreads(threads: number): void;
  /** Validate then time one shape with `threads` threads: a record `peers` row. */
  run(shape: Shape, opts?: OpenBlasRunOptions): Promise<PeerResult>;
  close(): void;
}

export interface OpenBlasRunOptions {
  /** A thread count or "all" (default 1). */
  threads?: number | "all";
  /** Timed calls (default 20) within `budgetMs` (default 3000). */
  reps?: number;
  budgetMs?: number;
  /** Rows of C checked against float64 (default: all, or a sample for large shapes). */
  checkRows?: number;
}

/** Either the peer, or why it cannot run (so the bench can skip it and say why). */
export type OpenBlasOutcome =
  | { available: true; peer: OpenBlasPeer }
  | { available: false; reason: string };

/** Find and load libopenblas: $GEMM_OPENBLAS if set (then only that), else OPENBLAS_PATHS. */
export function openOpenBlas(): OpenBlasOutcome {
  const override = envOrUndefined("GEMM_OPENBLAS");
  const candidates = override ? [override] : OPENBLAS_PATHS;
  const failures: string[] = [];
  for (const path of candidates) {
    let lib: Deno.DynamicLibrary<typeof SYMBOLS>;
    try {
      lib = Deno.dlopen(path, SYMBOLS);
    } catch (e) {
      if (e instanceof Deno.errors.NotCapable || e instanceof Deno.errors.PermissionDenied) {
        return { available: false, reason: `OpenBLAS needs FFI: run with --allow-ffi (${e})` };
      }
      failures.push(`${path}: ${(e as Error).message}`);
      continue;
    }
    return { available: true, peer: new Peer(lib, path) };
  }
  const where = override
    ? `GEMM_OPENBLAS=${override} could not be loaded`
    : `libopenblas not found (looked for ${candidates.join(", ")})`;
  return {
    available: false,
    reason: `${where}; install Debian's libopenblas0-pthread or set GEMM_OPENBLAS to the ` +
      `library's path. Last error: ${failures.at(-1) ?? "none"}`,
  };
}

class Peer implements OpenBlasPeer {
  readonly config: string;
  readonly maxThreads: number;

  constructor(private lib: Deno.DynamicLibrary<typeof SYMBOLS>, readonly path: string) {
    const config = lib.symbols.openblas_get_config();
    this.config = config ? new Deno.UnsafePointerView(config).getCString() : "unknown";
    this.maxThreads = Math.max(1, lib.symbols.openblas_get_num_procs());
  }

  setThreads(threads: number): void {
    if (!Number.isInteger(threads) || threads < 1 || threads > this.maxThreads) {
      throw new RangeError(`threads must be an integer in 1..${this.maxThreads}, got ${threads}`);
    }
    this.lib.symbols.openblas_set_num_threads(threads);
  }

  sgemm(a: Float32Array, b: Float32Array, shape: Shape, c?: Float32Array): Float32Array {
    checkOperands(shape, a, b);
    const { m, k, n } = shape;
    const out = c ?? new Float32Array(m * n);
    if (out.length !== m * n) {
      throw new RangeError(`C has ${out.length} elements, expected ${m * n}`);
    }
    // beta = 0: BLAS overwrites C without reading it, so a NaN-poisoned C must come back clean.
    this.lib.symbols.cblas_sgemm(
      CBLAS_ROW_MAJOR,
      CBLAS_NO_TRANS,
      CBLAS_NO_TRANS,
      m,
      n,
      k,
      1,
      a,
      k,
      b,
      n,
      0,
      out,
      n,
    );
    return out;
  }

  run(shape: Shape, opts: OpenBlasRunOptions = {}): Promise<PeerResult> {
    const threads = opts.threads === "all" ? this.maxThreads : opts.threads ?? 1;
    const label = opts.threads === "all" ? "openblas-all" : `openblas-${threads}t`;
    const result = peerRow({
      peer: label,
      kernel: label,
      title: `OpenBLAS cblas_sgemm, ${threads} thread${threads === 1 ? "" : "s"}`,
      timer: "performance.now (CPU)",
    }, shape);
    let inputs: { a: Float32Array; b: Float32Array; c: Float32Array } | undefined;
    return validateThenTime(result, {
      numerics: F32_NUMERICS,
      checkRows: opts.checkRows,
      compute: (a, b) => {
        this.setThreads(threads);
        inputs = { a, b, c: new Float32Array(shape.m * shape.n).fill(NaN) };
        return this.sgemm(a, b, shape, inputs.c);
      },
      time: async () =>
        timerNumbers(
          await timeCpu((x, y, s) => this.sgemm(x, y, s, inputs?.c), shape, opts.reps ?? 20, {
            a: inputs?.a,
            b: inputs?.b,
            budgetMs: opts.budgetMs ?? 3000,
          }),
        ),
      // A thrown error here comes from the library or its FFI call, not from our check.
      errorKind: (e) => e instanceof GemmError ? undefined : "openblas",
    });
  }

  close(): void {
    this.lib.close();
  }
}
