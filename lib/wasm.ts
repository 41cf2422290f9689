/**
 * A small WebAssembly module writer: enough of the binary format (types, one imported memory,
 * functions with locals, exports) and of the instruction set (integer arithmetic, loops,
 * 128-bit SIMD on f32x4) for the CPU matmul's kernels to be written in TypeScript and compiled
 * by the runtime that loads them, in Deno and in a browser alike. Every byte the module holds
 * comes from here and from the functions that use it (lib/cpu_simd.ts).
 *
 * Reference: the WebAssembly Core Specification 2.0 (https://webassembly.github.io/spec/core/),
 * binary format chapter, and the relaxed SIMD proposal
 * (https://github.com/WebAssembly/relaxed-simd/blob/main/proposals/relaxed-simd/Overview.md).
 */

/** Value types. */
export const I32 = 0x7f, F32 = 0x7d, V128 = 0x7b;
type ValueType = typeof I32 | typeof F32 | typeof V128;

/** Unsigned LEB128, the encoding of every count and index. */
export function uleb(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

/** Signed LEB128, the encoding of integer constants. */
export function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (byte & 0x40) === 0) || (n === -1 && (byte & 0x40) !== 0)) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
}

const utf8 = (s: string) => [...new TextEncoder().encode(s)];
/** A name: its UTF-8 bytes after their count. */
const name = (s: string) => [...uleb(utf8(s).length), ...utf8(s)];
const vec = (items: number[][]) => [...uleb(items.length), ...items.flat()];
const section = (id: number, body: number[]) => [id, ...uleb(body.length), ...body];

/** A memory operand: the alignment (log2 bytes) and a constant byte offset. */
const memarg = (alignLog2: number, offset: number) => [...uleb(alignLog2), ...uleb(offset)];
/** An opcode of the SIMD prefix (0xfd) with its LEB-encoded index. */
const simd = (op: number) => [0xfd, ...uleb(op)];

/**
 * Instructions, each a function returning its bytes, so a kernel reads as a list of them. Only
 * the ones the kernels use; names follow the text format (`local.get` is `get`).
 */
export const op = {
  get: (i: number) => [0x20, ...uleb(i)],
  set: (i: number) => [0x21, ...uleb(i)],
  tee: (i: number) => [0x22, ...uleb(i)],
  i32: (v: number) => [0x41, ...sleb(v)],
  add: () => [0x6a],
  sub: () => [0x6b],
  mul: () => [0x6c],
  ltU: () => [0x49],
  leU: () => [0x4d],
  eqz: () => [0x45],
  /** `block` and `loop` with no result; `end` closes either. */
  block: () => [0x02, 0x40],
  loop: () => [0x03, 0x40],
  end: () => [0x0b],
  br: (depth: number) => [0x0c, ...uleb(depth)],
  brIf: (depth: number) => [0x0d, ...uleb(depth)],
  /** v128.load / v128.store of 16 bytes at address + offset (aligned to 4 bytes at least). */
  load: (offset = 0) => [...simd(0x00), ...memarg(2, offset)],
  store: (offset = 0) => [...simd(0x0b), ...memarg(2, offset)],
  /** One f32 loaded and copied to all four lanes. */
  loadSplat: (offset = 0) => [...simd(0x09), ...memarg(2, offset)],
  f32x4Add: () => simd(0xe4),
  f32x4Mul: () => simd(0xe6),
  /** a * b + c, fused where the processor can (relaxed SIMD: either rounding is allowed). */
  f32x4RelaxedMadd: () => simd(0x105),
};

/** One function of a module: its signature, extra locals and body (without the final `end`). */
export interface WasmFunction {
  name: string;
  params: ValueType[];
  results: ValueType[];
  locals: ValueType[];
  body: number[][];
}

/**
 * A module whose memory is imported as env.memory (shared: the same memory for every thread)
 * and whose functions are all exported under their names.
 */
export function wasmModule(
  functions: WasmFunction[],
  memory: { minPages: number; maxPages: number; shared: boolean },
): Uint8Array<ArrayBuffer> {
  const types = functions.map((
    f,
  ) => [0x60, ...vec(f.params.map((t) => [t])), ...vec(f.results.map((t) => [t]))]);
  const limits = [memory.shared ? 0x03 : 0x01, ...uleb(memory.minPages), ...uleb(memory.maxPages)];
  const imports = [[...name("env"), ...name("memory"), 0x02, ...limits]];
  const code = functions.map((f) => {
    const locals = vec(f.locals.map((t) => [1, t]));
    const body = [...locals, ...f.body.flat(), 0x0b];
    return [...uleb(body.length), ...body];
  });
  const exports = functions.map((f, i) => [...name(f.name), 0x00, ...uleb(i)]);
  return new Uint8Array([
    0x00,
    0x61,
    0x73,
    0x6d,
    0x01,
    0x00,
    0x00,
    0x00,
    ...section(1, vec(types)),
    ...section(2, vec(imports)),
    ...section(3, vec(functions.map((_, i) => uleb(i)))),
    ...section(7, vec(exports)),
    ...section(10, vec(code)),
  ]);
}
