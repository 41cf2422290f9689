/**
 * cuBLAS SGEMM as a peer, called through Deno FFI (no native addon, nothing to compile): the
 * yardstick the ladder climbs toward. TF32 stays off (CUBLAS_DEFAULT_MATH), so it is the same
 * float32 arithmetic our kernels do. Timed with CUDA events, validated like our kernels.
 */
import type { Shape } from "../matrix.ts";
import { peerRow, recordFailure, timerNumbers, validateThenTime } from "../measure.ts";
import { envOrUndefined, type PeerResult } from "../record.ts";
import { F32_NUMERICS } from "../accuracy.ts";
import { summarize } from "../timing.ts";

/** Where the CUDA 13 libraries are looked for, after $GEMM_CUDA_LIB_DIR. */
export const CUDA_LIB_DIRS = [
  "/usr/local/cuda-13.0/targets/x86_64-linux/lib",
  "/usr/local/cuda/lib64",
  "/usr/local/cuda/targets/x86_64-linux/lib",
  "/usr/local/cuda-13.0/lib",
  // The nvidia-cublas wheel PyTorch ships with, on images that have no toolkit copy.
  "/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib",
];

const CUDART = {
  cudaGetDeviceCount: { parameters: ["buffer"], result: "i32" },
  cudaSetDevice: { parameters: ["i32"], result: "i32" },
  cudaRuntimeGetVersion: { parameters: ["buffer"], result: "i32" },
  cudaGetErrorString: { parameters: ["i32"], result: "pointer" },
  cudaDeviceGetAttribute: { parameters: ["buffer", "i32", "i32"], result: "i32" },
  cudaMalloc: { parameters: ["buffer", "usize"], result: "i32" },
  cudaFree: { parameters: ["pointer"], result: "i32" },
  cudaMemcpy: { parameters: ["pointer", "pointer", "usize", "i32"], result: "i32" },
  cudaMemset: { parameters: ["pointer", "i32", "usize"], result: "i32" },
  cudaDeviceSynchronize: { parameters: [], result: "i32" },
  cudaEventCreate: { parameters: ["buffer"], result: "i32" },
  cudaEventDestroy: { parameters: ["pointer"], result: "i32" },
  cudaEventRecord: { parameters: ["pointer", "pointer"], result: "i32" },
  cudaEventSynchronize: { parameters: ["pointer"], result: "i32" },
  cudaEventQuery: { parameters: ["pointer"], result: "i32" },
  cudaEventElapsedTime: { parameters: ["buffer", "pointer", "pointer"], result: "i32" },
} as const;

const CUBLAS = {
  cublasCreate_v2: { parameters: ["buffer"], result: "i32" },
  cublasDestroy_v2: { parameters: ["pointer"], result: "i32" },
  cublasGetVersion_v2: { parameters: ["pointer", "buffer"], result: "i32" },
  cublasSetMathMode: { parameters: ["pointer", "i32"], result: "i32" },
  cublasGetMathMode: { parameters: ["pointer", "buffer"], result: "i32" },
  cublasSgemm_v2: {
    parameters: [
      "pointer", // handle
      "i32", // transa
      "i32", // transb
      "i32", // m
      "i32", // n
      "i32", // k
      "buffer", // alpha (host pointer: the default pointer mode)
      "pointer", // A
      "i32", // lda
      "pointer", // B
      "i32", // ldb
      "buffer", // beta
      "pointer", // C
      "i32", // ldc
    ],
    result: "i32",
  },
} as const;

const CUBLAS_OP_N = 0;
/** Plain FP32 math: no TF32 tensor-core shortcut (that would be CUBLAS_TF32_TENSOR_OP_MATH = 3). */
const CUBLAS_DEFAULT_MATH = 0;
const MEMCPY_HOST_TO_DEVICE = 1;
const MEMCPY_DEVICE_TO_HOST = 2;
const ATTR_COMPUTE_CAPABILITY_MAJOR = 75;
const ATTR_COMPUTE_CAPABILITY_MINOR = 76;
const ATTR_MULTIPROCESSOR_COUNT = 16;

type Cudart = Deno.DynamicLibrary<typeof CUDART>["symbols"];
type Cublas = Deno.DynamicLibrary<typeof CUBLAS>["symbols"];

/** An opened cuBLAS: one handle on CUDA device 0, reused across shapes. */
export interface CublasPeer {
  /** Library versions, paths and the math mode, for the record. */
  details: Record<string, string | number | boolean>;
  /** Validate then time C = A * B for one shape. */
  run(shape: Shape, opts?: { reps?: number; budgetMs?: number }): Promise<PeerResult>;
  close(): void;
}

/** A CUDA runtime or cuBLAS call that returned an error code. */
export class CudaError extends Error {
  constructor(call: string, code: number, text: string) {
    super(`${call} failed with ${code} (${text})`);
  }
}

/**
 * Find and open libcudart + libcublas. Returns the peer, or a reason string when they are not
 * there (no CUDA, no --allow-ffi, no GPU) so the bench can record why the peer was skipped.
 */
export function openCublas(): CublasPeer | string {
  const dirs = [envOrUndefined("GEMM_CUDA_LIB_DIR"), ...CUDA_LIB_DIRS].filter((d): d is string =>
    d !== undefined
  );
  // Failures other than "this file is not there" (a missing dependency such as libcublasLt,
  // a missing symbol): worth reporting, since the library itself was found.
  const broken: string[] = [];
  const open = <S extends Deno.ForeignLibraryInterface>(names: string[], symbols: S) => {
    const candidates = [...dirs.flatMap((d) => names.map((n) => `${d}/${n}`)), ...names];
    for (const path of candidates) {
      try {
        return { lib: Deno.dlopen(path, symbols), path };
      } catch (e) {
        if (e instanceof Deno.errors.NotCapable) throw e;
        const message = (e as Error).message;
        if (!message.includes(`${path}: cannot open shared object file`)) broken.push(message);
      }
    }
    return undefined;
  };
  let rt, blas;
  try {
    rt = open(["libcudart.so.13", "libcudart.so.12", "libcudart.so"], CUDART);
    blas = rt && open(["libcublas.so.13", "libcublas.so.12", "libcublas.so"], CUBLAS);
  } catch (e) {
    rt?.lib.close();
    return `cuBLAS peer skipped: ${(e as Error).message} (run with --allow-ffi)`;
  }
  if (!rt || !blas) {
    rt?.lib.close();
    return `cuBLAS peer skipped: ${rt ? "libcublas" : "libcudart"} not found ` +
      `(set GEMM_CUDA_LIB_DIR; looked in ${dirs.join(", ")} and the loader's path)` +
      (broken.length ? `; load errors: ${[...new Set(broken)].join("; ")}` : "");
  }
  try {
    return new Peer(rt, blas);
  } catch (e) {
    blas.lib.close();
    rt.lib.close();
    return `cuBLAS peer skipped: ${(e as Error).message}`;
  }
}

class Peer implements CublasPeer {
  readonly details: Record<string, string | number | boolean>;
  private rt: Cudart;
  private blas: Cublas;
  private handle: Deno.PointerValue;

  constructor(
    private cudart: { lib: Deno.DynamicLibrary<typeof CUDART>; path: string },
    private cublas: { lib: Deno.DynamicLibrary<typeof CUBLAS>; path: string },
  ) {
    this.rt = cudart.lib.symbols;
    this.blas = cublas.lib.symbols;
    const count = this.int((out) => this.rt.cudaGetDeviceCount(out), "cudaGetDeviceCount");
    if (count < 1) throw new Error("no CUDA device");
    this.cuda("cudaSetDevice", this.rt.cudaSetDevice(0));
    const handleOut = new BigUint64Array(1);
    this.blasCall("cublasCreate_v2", this.blas.cublasCreate_v2(handleOut));
    this.handle = Deno.UnsafePointer.create(handleOut[0]);
    this.blasCall(
      "cublasSetMathMode",
      this.blas.cublasSetMathMode(this.handle, CUBLAS_DEFAULT_MATH),
    );
    const mathMode = this.int(
      (out) => this.blas.cublasGetMathMode(this.handle, out),
      "cublasGetMathMode",
      true,
    );
    const attr = (a: number) =>
      this.int((out) => this.rt.cudaDeviceGetAttribute(out, a, 0), "cudaDeviceGetAttribute");
    this.details = {
      cudart: cudart.path,
      cublas: cublas.path,
      cudaRuntimeVersion: this.int(
        (out) => this.rt.cudaRuntimeGetVersion(out),
        "cudaRuntimeGetVersion",
      ),
      cublasVersion: this.int(
        (out) => this.blas.cublasGetVersion_v2(this.handle, out),
        "cublasGetVersion_v2",
        true,
      ),
      mathMode: mathMode === CUBLAS_DEFAULT_MATH ? "CUBLAS_DEFAULT_MATH (TF32 off)" : `${mathMode}`,
      tf32: false,
      computeCapability: `${attr(ATTR_COMPUTE_CAPABILITY_MAJOR)}.${
        attr(ATTR_COMPUTE_CAPABILITY_MINOR)
      }`,
      multiprocessors: attr(ATTR_MULTIPROCESSOR_COUNT),
      cudaDevice: 0,
      layout: "row-major C = A B as column-major C^T = B^T A^T (B passed first)",
    };
  }

  async run(shape: Shape, opts: { reps?: number; budgetMs?: number } = {}): Promise<PeerResult> {
    const { m, n } = shape;
    const result = peerRow({
      peer: "cublas",
      kernel: "cublas_sgemm",
      title: "cuBLAS SGEMM (TF32 off)",
      timer: TIMER_QUEUED,
      details: this.details,
    }, shape);
    const buffers: Deno.PointerValue[] = [];
    const events: Deno.PointerValue[] = [];
    let sgemm = () => {};
    try {
      await validateThenTime(result, {
        numerics: F32_NUMERICS,
        compute: (a, b) => {
          const dA = this.malloc(a.byteLength, buffers);
          const dB = this.malloc(b.byteLength, buffers);
          const dC = this.malloc(m * n * 4, buffers);
          this.cuda(
            "cudaMemcpy",
            this.rt.cudaMemcpy(dA, ptr(a), BigInt(a.byteLength), MEMCPY_HOST_TO_DEVICE),
          );
          this.cuda(
            "cudaMemcpy",
            this.rt.cudaMemcpy(dB, ptr(b), BigInt(b.byteLength), MEMCPY_HOST_TO_DEVICE),
          );
          // Poison C: 0xFFFFFFFF is a NaN, so any element SGEMM does not write fails the check.
          this.cuda("cudaMemset", this.rt.cudaMemset(dC, 0xff, BigInt(m * n * 4)));
          sgemm = () => this.sgemm(shape, dA, dB, dC);
          sgemm();
          this.cuda("cudaDeviceSynchronize", this.rt.cudaDeviceSynchronize());
          const c = new Float32Array(m * n);
          this.cuda(
            "cudaMemcpy",
            this.rt.cudaMemcpy(ptr(c), dC, BigInt(c.byteLength), MEMCPY_DEVICE_TO_HOST),
          );
          return c;
        },
        time: () => {
          // Warm-up, then an estimate to size the timed run.
          for (let i = 0; i < 3; i++) sgemm();
          const scratch = this.malloc(HEAD_START_BYTES, buffers);
          const estimate = this.timeCalls(sgemm, 3, events, scratch).times
            .sort((x, y) => x - y)[1];
          const reps = opts.reps ??
            Math.max(
              10,
              Math.min(200, Math.round((opts.budgetMs ?? 400) / Math.max(estimate, 1e-3))),
            );
          const { times, queued } = this.timeCalls(sgemm, reps, events, scratch);
          if (!queued) result.timer = TIMER_GAPS;
          return timerNumbers(summarize(times, "timestamp-query"));
        },
        errorKind: (e) => e instanceof CudaError ? "cuda" : undefined,
      });
    } finally {
      // A failing free or destroy reports an earlier asynchronous error: the run is suspect.
      const codes = [
        ...events.map((ev) => ["cudaEventDestroy", this.rt.cudaEventDestroy(ev)] as const),
        ...buffers.map((p) => ["cudaFree", this.rt.cudaFree(p)] as const),
      ].filter(([, code]) => code !== 0);
      if (codes.length && result.validated) {
        const [call, code] = codes[0];
        recordFailure(result, new CudaError(call, code, this.errorText(code)).message, "cuda");
      }
    }
    return result;
  }

  close() {
    const status = this.blas.cublasDestroy_v2(this.handle);
    this.cublas.lib.close();
    this.cudart.lib.close();
    if (status !== 0) {
      throw new CudaError("cublasDestroy_v2", status, CUBLAS_STATUS[status] ?? "cuBLAS status");
    }
  }

  /** Row-major C (m x n) = A B is column-major C^T (n x m) = B^T A^T: pass B first, no transposes. */
  private sgemm(
    { m, k, n }: Shape,
    dA: Deno.PointerValue,
    dB: Deno.PointerValue,
    dC: Deno.PointerValue,
  ) {
    const one = new Float32Array([1]);
    const zero = new Float32Array([0]);
    this.blasCall(
      "cublasSgemm_v2",
      this.blas.cublasSgemm_v2(
        this.handle,
        CUBLAS_OP_N,
        CUBLAS_OP_N,
        n,
        m,
        k,
        one,
        dB,
        n,
        dA,
        k,
        zero,
        dC,
        n,
      ),
    );
  }

  /**
   * Each call between its own pair of events, timed as our kernels are: GPU time only. A call's
   * host side (FFI, cuBLAS's choice of kernel, the launch) can take longer than a small product
   * runs; the GPU would then wait for the host inside the events and time the launch too. So
   * memsets of `scratch` go first, a head start that keeps the GPU busy while the host queues
   * every call. `queued`: the GPU had not reached the first event when the last call was queued,
   * checked with cudaEventQuery, so no call waited for its launch. A head start too short is
   * retried four times longer, three times at most.
   */
  private timeCalls(
    call: () => void,
    count: number,
    events: Deno.PointerValue[],
    scratch: Deno.PointerValue,
  ): { times: number[]; queued: boolean } {
    const pairs: [Deno.PointerValue, Deno.PointerValue][] = [];
    for (let i = 0; i < count; i++) pairs.push([this.event(events), this.event(events)]);
    const ms = new Float32Array(1);
    for (let attempt = 0, memsets = HEAD_START_MEMSETS;; attempt++, memsets *= 4) {
      for (let i = 0; i < memsets; i++) {
        this.cuda("cudaMemset", this.rt.cudaMemset(scratch, 0, BigInt(HEAD_START_BYTES)));
      }
      for (const [start, stop] of pairs) {
        this.cuda("cudaEventRecord", this.rt.cudaEventRecord(start, null));
        call();
        this.cuda("cudaEventRecord", this.rt.cudaEventRecord(stop, null));
      }
      const queued = this.rt.cudaEventQuery(pairs[0][0]) === CUDA_ERROR_NOT_READY;
      this.cuda("cudaEventSynchronize", this.rt.cudaEventSynchronize(pairs.at(-1)![1]));
      const times = pairs.map(([start, stop]) => {
        this.cuda("cudaEventElapsedTime", this.rt.cudaEventElapsedTime(ms, start, stop));
        return ms[0];
      });
      if (queued || attempt === 3) return { times, queued };
    }
  }

  private event(owned: Deno.PointerValue[]): Deno.PointerValue {
    const out = new BigUint64Array(1);
    this.cuda("cudaEventCreate", this.rt.cudaEventCreate(out));
    const ev = Deno.UnsafePointer.create(out[0]);
    owned.push(ev);
    return ev;
  }

  private malloc(bytes: number, owned: Deno.PointerValue[]): Deno.PointerValue {
    const out = new BigUint64Array(1);
    this.cuda("cudaMalloc", this.rt.cudaMalloc(out, BigInt(bytes)));
    const p = Deno.UnsafePointer.create(out[0]);
    owned.push(p);
    return p;
  }

  /** Call something that writes one int through a pointer; throw on a bad status. */
  private int(call: (out: Int32Array) => number, name: string, isBlas = false): number {
    const out = new Int32Array(1);
    const status = call(out);
    if (isBlas) this.blasCall(name, status);
    else this.cuda(name, status);
    return out[0];
  }

  private cuda(call: string, code: number) {
    if (code !== 0) throw new CudaError(call, code, this.errorText(code));
  }

  private errorText(code: number): string {
    const text = this.rt.cudaGetErrorString(code);
    return text ? Deno.UnsafePointerView.getCString(text) : "?";
  }

  private blasCall(call: string, status: number) {
    if (status !== 0) throw new CudaError(call, status, CUBLAS_STATUS[status] ?? "cuBLAS status");
  }
}

const TIMER_QUEUED = "CUDA events, calls queued behind a head start (launches not timed)";
const TIMER_GAPS = "CUDA events (the queue ran dry: launch gaps may be timed)";
/** cudaEventQuery's answer for an event the GPU has not reached yet. */
const CUDA_ERROR_NOT_READY = 600;
/** The head start: memsets of 256 MiB, about 0.1 ms each on a current data-centre GPU. */
const HEAD_START_BYTES = 256 * 2 ** 20;
const HEAD_START_MEMSETS = 8;

const CUBLAS_STATUS: Record<number, string> = {
  1: "CUBLAS_STATUS_NOT_INITIALIZED",
  3: "CUBLAS_STATUS_ALLOC_FAILED",
  7: "CUBLAS_STATUS_INVALID_VALUE",
  8: "CUBLAS_STATUS_ARCH_MISMATCH",
  11: "CUBLAS_STATUS_MAPPING_ERROR",
  13: "CUBLAS_STATUS_EXECUTION_FAILED",
  14: "CUBLAS_STATUS_INTERNAL_ERROR",
  15: "CUBLAS_STATUS_NOT_SUPPORTED",
  16: "CUBLAS_STATUS_LICENSE_ERROR",
};

function ptr(view: ArrayBufferView): Deno.PointerValue {
  return Deno.UnsafePointer.of(view as unknown as BufferSource);
}
