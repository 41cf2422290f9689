/**
 * The CPU matmul's last rungs: a register micro-kernel written in WebAssembly SIMD (four f32
 * lanes per instruction, a fused multiply-add where relaxed SIMD gives one), fed by packed
 * panels of A and B in cache-sized blocks (the BLIS loop structure: Van Zee and van de Geijn,
 * "BLIS: A Framework for Rapidly Instantiating BLAS Functionality", ACM TOMS 41(3), 2015,
 * https://doi.org/10.1145/2764454). Block sizes come from the cache sizes the machine reports.
 * The same code runs on one thread here and on several in lib/cpu_threads.ts, over one memory.
 *
 * Layout in the WebAssembly memory (byte offsets in a `SimdLayout`):
 * - 16 bytes for the threads' strip counter;
 * - A and B copied in row-major (A's blocks are packed from here by the thread that needs them);
 * - B packed whole: for each k block, for each NR-column panel, kc rows of NR floats;
 * - C padded to whole MR x NR tiles (ldc = N rounded up to NR), zeroed, copied out at the end;
 * - one scratch panel of A (MC x KC, MR-row panels) per thread.
 */
import { GemmError } from "./errors.ts";
import { commandOutput } from "./platform.ts";
import { checkOperands, type Shape } from "./matrix.ts";
import { I32, op, V128, type WasmFunction, wasmModule } from "./wasm.ts";

/** Rows of C one micro-kernel call holds in registers. */
export const MR = 6;
/** Columns of C one micro-kernel call holds in registers: NR / 4 vectors of four lanes. */
export const NR = 8;
/** k steps the micro-kernel's loop body does per trip. */
const UNROLL = 4;

/** The caches the block sizes are derived from, in bytes. */
export interface CacheSizes {
  l1d: number;
  l2: number;
  l3: number;
  /** Where the sizes came from: the operating system, or the defaults below. */
  source: string;
}

/** Sizes assumed when the system does not say (a browser): common x86 and Arm cores. */
export const DEFAULT_CACHES: CacheSizes = {
  l1d: 32 * 1024,
  l2: 512 * 1024,
  l3: 8 * 1024 * 1024,
  source: "defaults (32 KiB L1d, 512 KiB L2, 8 MiB L3)",
};

/** Cache sizes from `getconf` (POSIX; glibc reads them from the processor), else the defaults. */
export function cacheSizes(): CacheSizes {
  const { text, why } = commandOutput("getconf", ["-a"]);
  const fallback = (reason: string) => ({
    ...DEFAULT_CACHES,
    source: `${DEFAULT_CACHES.source}: ${reason}`,
  });
  if (text === undefined) return fallback(why!);
  const size = (name: string) =>
    Number(text.match(new RegExp(`^${name}\\s+(\\d+)`, "m"))?.[1] ?? 0);
  const l1d = size("LEVEL1_DCACHE_SIZE"), l2 = size("LEVEL2_CACHE_SIZE");
  if (!l1d || !l2) return fallback("getconf gave no L1d or L2 size");
  return { l1d, l2, l3: size("LEVEL3_CACHE_SIZE") || DEFAULT_CACHES.l3, source: "getconf" };
}

/** The cache blocks: KC deep, MC rows of A, each a multiple of the micro-kernel's tile. */
export interface Blocks {
  kc: number;
  mc: number;
}

/**
 * KC: one MR x KC panel of A and one KC x NR panel of B take half of L1 (the other half holds
 * C's tile and what streams past). MC: an MC x KC block of A takes half of L2, so each of its
 * panels is still in L2 when the next B panel comes by. B's packed panels stream from L3/DRAM.
 */
export function blocksFor(caches: CacheSizes): Blocks {
  const kc = Math.max(16, Math.floor(caches.l1d / 2 / ((MR + NR) * 4) / 16) * 16);
  const mc = Math.max(MR, Math.floor(caches.l2 / 2 / (kc * 4) / MR) * MR);
  return { kc, mc };
}

/**
 * The micro-kernel and the loop over one block's tiles, as one WebAssembly function:
 *   tiles(ap, bp, c, ldcBytes, mTiles, nTiles, kc)
 * For each NR-column panel of packed B (nTiles) and each MR-row panel of packed A (mTiles), the
 * MR x NR tile of C at c is loaded into MR * NR / 4 vector registers, kc rank-1 updates are
 * added (each: NR / 4 loads of B, MR loads of A each copied to four lanes, MR * NR / 4 fused
 * multiply-adds), and the tile is stored back.
 */
function tilesFunction(relaxed: boolean): WasmFunction {
  // Parameters 0-6, then locals.
  const [ap, bp, c, ldc, mTiles, nTiles, kc] = [0, 1, 2, 3, 4, 5, 6];
  const [ir, jr, aPtr, bPtr, aEnd, cPtr] = [7, 8, 9, 10, 11, 12];
  const vectors = NR / 4;
  const acc = (r: number, v: number) => 13 + r * vectors + v;
  const bVec = (v: number) => 13 + MR * vectors + v;
  const aVec = 13 + MR * vectors + vectors;
  const madd = (r: number, v: number) =>
    relaxed
      ? [op.get(aVec), op.get(bVec(v)), op.get(acc(r, v)), op.f32x4RelaxedMadd(), op.set(acc(r, v))]
      : [
        op.get(aVec),
        op.get(bVec(v)),
        op.f32x4Mul(),
        op.get(acc(r, v)),
        op.f32x4Add(),
        op.set(acc(r, v)),
      ];
  const rows = Array.from({ length: MR }, (_, r) => r);
  const vecs = Array.from({ length: vectors }, (_, v) => v);
  // The u-th k step after aPtr and bPtr: NR / 4 vectors of B, then each row's A times them.
  const kStep = (u: number) => [
    ...vecs.flatMap((v) => [op.get(bPtr), op.load(u * NR * 4 + 16 * v), op.set(bVec(v))]),
    ...rows.flatMap((r) => [
      op.get(aPtr),
      op.loadSplat(u * MR * 4 + 4 * r),
      op.set(aVec),
      ...vecs.flatMap((v) => madd(r, v)),
    ]),
  ];
  // C's tile: row r at cPtr + r * ldc, vector v at 16 v bytes.
  const cRow = (r: number) => [op.get(cPtr), op.get(ldc), op.i32(r), op.mul(), op.add()];
  const body: number[][] = [
    op.i32(0),
    op.set(jr),
    op.block(),
    op.loop(),
    op.get(jr),
    op.get(nTiles),
    op.ltU(),
    op.eqz(),
    op.brIf(1), // i32.eqz: jr >= nTiles ends
    op.i32(0),
    op.set(ir),
    op.block(),
    op.loop(),
    op.get(ir),
    op.get(mTiles),
    op.ltU(),
    op.eqz(),
    op.brIf(1),
    // aPtr = ap + ir * MR * kc * 4; bPtr = bp + jr * NR * kc * 4; aEnd = aPtr + kc * MR * 4
    op.get(ap),
    op.get(ir),
    op.get(kc),
    op.mul(),
    op.i32(MR * 4),
    op.mul(),
    op.add(),
    op.tee(aPtr),
    op.get(kc),
    op.i32(MR * 4),
    op.mul(),
    op.add(),
    op.set(aEnd),
    op.get(bp),
    op.get(jr),
    op.get(kc),
    op.mul(),
    op.i32(NR * 4),
    op.mul(),
    op.add(),
    op.set(bPtr),
    // cPtr = c + ir * MR * ldc + jr * NR * 4
    op.get(c),
    op.get(ir),
    op.i32(MR),
    op.mul(),
    op.get(ldc),
    op.mul(),
    op.add(),
    op.get(jr),
    op.i32(NR * 4),
    op.mul(),
    op.add(),
    op.set(cPtr),
    ...rows.flatMap((r) => vecs.flatMap((v) => [...cRow(r), op.load(16 * v), op.set(acc(r, v))])),
    // UNROLL k steps per trip while that many remain, then one at a time.
    op.block(),
    op.loop(),
    op.get(aPtr),
    op.i32(UNROLL * MR * 4),
    op.add(),
    op.get(aEnd),
    op.leU(),
    op.eqz(),
    op.brIf(1),
    ...Array.from({ length: UNROLL }, (_, u) => kStep(u)).flat(),
    op.get(aPtr),
    op.i32(UNROLL * MR * 4),
    op.add(),
    op.set(aPtr),
    op.get(bPtr),
    op.i32(UNROLL * NR * 4),
    op.add(),
    op.set(bPtr),
    op.br(0),
    op.end(),
    op.end(),
    op.block(),
    op.loop(),
    op.get(aPtr),
    op.get(aEnd),
    op.ltU(),
    op.eqz(),
    op.brIf(1),
    ...kStep(0),
    op.get(aPtr),
    op.i32(MR * 4),
    op.add(),
    op.set(aPtr),
    op.get(bPtr),
    op.i32(NR * 4),
    op.add(),
    op.set(bPtr),
    op.br(0),
    op.end(),
    op.end(),
    ...rows.flatMap((r) => vecs.flatMap((v) => [...cRow(r), op.get(acc(r, v)), op.store(16 * v)])),
    op.get(ir),
    op.i32(1),
    op.add(),
    op.set(ir),
    op.br(0),
    op.end(),
    op.end(),
    op.get(jr),
    op.i32(1),
    op.add(),
    op.set(jr),
    op.br(0),
    op.end(),
    op.end(),
  ];
  return {
    name: "tiles",
    params: [I32, I32, I32, I32, I32, I32, I32],
    results: [],
    locals: [...Array(6).fill(I32), ...Array(MR * vectors + vectors + 1).fill(V128)],
    body,
  };
}

/** Largest memory a module may grow to, in 64 KiB pages (wasm32's 4 GiB). */
export const MAX_PAGES = 65536;

/** The module's bytes: with the relaxed fused multiply-add, or with a separate multiply and add. */
export function kernelModule(relaxed: boolean, shared: boolean): Uint8Array<ArrayBuffer> {
  return wasmModule([tilesFunction(relaxed)], { minPages: 1, maxPages: MAX_PAGES, shared });
}

/** Whether this runtime compiles relaxed SIMD (the fused multiply-add). */
export function hasRelaxedSimd(): boolean {
  return WebAssembly.validate(kernelModule(true, false));
}

/** Where each operand lives in the memory, for one product (byte offsets). */
export interface SimdLayout {
  shape: Shape;
  blocks: Blocks;
  /** C's row length in the memory: N rounded up to NR. */
  ldc: number;
  /** Rows of C in the memory: M rounded up to MR. */
  rows: number;
  /** A and B as given, row-major. */
  a: number;
  b: number;
  /** B packed: for each k block, each NR-column panel holds kc rows of NR floats. */
  bPacked: number;
  /** C padded to ldc x rows. */
  c: number;
  /** The first thread's scratch panel of A; thread t's is at scratch + t * scratchBytes. */
  scratch: number;
  scratchBytes: number;
}

const roundUp = (x: number, to: number) => Math.ceil(x / to) * to;

export function simdLayout(shape: Shape, blocks: Blocks): SimdLayout {
  const { m, k, n } = shape;
  const ldc = roundUp(n, NR), rows = roundUp(m, MR);
  // The first 16 bytes hold the threads' strip counter (lib/cpu_threads.ts).
  const a = 16;
  const b = a + roundUp(m * k * 4, 16);
  const bPacked = b + roundUp(k * n * 4, 16);
  const c = bPacked + k * ldc * 4;
  const scratch = c + rows * ldc * 4;
  return {
    shape,
    blocks,
    ldc,
    rows,
    a,
    b,
    bPacked,
    c,
    scratch,
    scratchBytes: blocks.mc * blocks.kc * 4,
  };
}

/** Bytes a layout takes with `threads` scratch panels. */
export const layoutBytes = (l: SimdLayout, threads: number): number =>
  l.scratch + threads * l.scratchBytes;

/**
 * Pack the NR-column panels from..to (panel indices) of B, every k block: kc rows of NR floats
 * each, zeros past N. Threads each pack a share of the panels.
 */
export function packB(mem: Float32Array, l: SimdLayout, from: number, to: number): void {
  const { k, n } = l.shape, { kc } = l.blocks;
  const b = l.b >> 2;
  for (let p0 = 0; p0 < k; p0 += kc) {
    const depth = Math.min(kc, k - p0);
    for (let panel = from; panel < to; panel++) {
      const j0 = panel * NR;
      let at = (l.bPacked >> 2) + p0 * l.ldc + j0 * depth;
      const width = Math.min(NR, n - j0);
      for (let p = 0; p < depth; p++) {
        const row = b + (p0 + p) * n + j0;
        for (let j = 0; j < NR; j++) mem[at++] = j < width ? mem[row + j] : 0;
      }
    }
  }
}

/** Pack rows i0..i0+mc of A's k block p0..p0+depth into MR-row panels (zeros past M). */
function packA(
  mem: Float32Array,
  l: SimdLayout,
  at: number,
  i0: number,
  mc: number,
  p0: number,
  depth: number,
) {
  const { m, k } = l.shape;
  const a = l.a >> 2;
  for (let r0 = 0; r0 < mc; r0 += MR) {
    for (let p = 0; p < depth; p++) {
      for (let r = 0; r < MR; r++) {
        const i = i0 + r0 + r;
        mem[at++] = i < m ? mem[a + i * k + p0 + p] : 0;
      }
    }
  }
}

/** The exported kernel: tiles(ap, bp, c, ldcBytes, mTiles, nTiles, kc). */
export type TilesKernel = (
  ap: number,
  bp: number,
  c: number,
  ldc: number,
  mTiles: number,
  nTiles: number,
  kc: number,
) => void;

/**
 * Rows from..to of C (multiples of MR, or to = the padded row count): zero them, then for each
 * MC rows and each k block, pack that block of A into this thread's scratch panel and run the
 * tiles over all of B's panels. What one thread does; one thread alone does all rows.
 */
export function multiplyRows(
  memory: WebAssembly.Memory,
  tiles: TilesKernel,
  l: SimdLayout,
  from: number,
  to: number,
  thread: number,
): void {
  const { k } = l.shape, { kc, mc } = l.blocks;
  const scratch = l.scratch + thread * l.scratchBytes;
  const mem = new Float32Array(memory.buffer);
  mem.fill(0, (l.c >> 2) + from * l.ldc, (l.c >> 2) + to * l.ldc);
  // Equal strips of at most MC rows: a short last strip would stream all of B for little work.
  const strips = Math.ceil((to - from) / mc);
  const strip = roundUp(Math.ceil((to - from) / strips), MR);
  for (let i0 = from; i0 < to; i0 += strip) {
    const rows = Math.min(strip, to - i0);
    for (let p0 = 0; p0 < k; p0 += kc) {
      const depth = Math.min(kc, k - p0);
      packA(mem, l, scratch >> 2, i0, rows, p0, depth);
      tiles(
        scratch,
        l.bPacked + p0 * l.ldc * 4,
        l.c + i0 * l.ldc * 4,
        l.ldc * 4,
        rows / MR,
        l.ldc / NR,
        depth,
      );
    }
  }
}

/** Index (in 32-bit words) of the counter threads take strips of C's rows from. */
export const STRIP_COUNTER = 0;

/**
 * Take strips of `strip` rows of C from the shared counter until none is left, and multiply
 * each: threads that run faster (or are not interrupted) take more strips, so a slow core delays
 * the product by one strip at most, not by its whole share.
 */
export function multiplyStrips(
  memory: WebAssembly.Memory,
  tiles: TilesKernel,
  l: SimdLayout,
  strip: number,
  thread: number,
): void {
  const counter = new Int32Array(memory.buffer, 0, 4);
  for (;;) {
    const from = Atomics.add(counter, STRIP_COUNTER, 1) * strip;
    if (from >= l.rows) return;
    multiplyRows(memory, tiles, l, from, Math.min(l.rows, from + strip), thread);
  }
}

/** Grow `memory` to hold `bytes`. */
export function ensureBytes(memory: WebAssembly.Memory, bytes: number): void {
  const pages = Math.ceil(bytes / 65536);
  const have = memory.buffer.byteLength / 65536;
  if (pages > MAX_PAGES) {
    throw new GemmError("limit", `the product needs ${bytes} bytes, more than wasm32's 4 GiB`);
  }
  if (pages > have) memory.grow(pages - have);
}

/** Copy A and B into the memory (grown to fit `threads` scratch panels). */
export function stage(
  memory: WebAssembly.Memory,
  a: Float32Array,
  b: Float32Array,
  l: SimdLayout,
  threads: number,
): void {
  ensureBytes(memory, layoutBytes(l, threads));
  const mem = new Float32Array(memory.buffer);
  mem.set(a, l.a >> 2);
  mem.set(b, l.b >> 2);
}

/** C (m x n) out of its padded copy in the memory. */
export function unstage(memory: WebAssembly.Memory, l: SimdLayout): Float32Array {
  const { m, n } = l.shape;
  const mem = new Float32Array(memory.buffer);
  const c = new Float32Array(m * n);
  for (let i = 0; i < m; i++) {
    const from = (l.c >> 2) + i * l.ldc;
    c.set(mem.subarray(from, from + n), i * n);
  }
  return c;
}

/** One module instance over its own memory, for one thread. */
interface Engine {
  memory: WebAssembly.Memory;
  tiles: TilesKernel;
}

/** One engine per kind of multiply-add (fused or not), made at first use. */
const engines = new Map<boolean, Engine>();

function singleThreadEngine(relaxed: boolean): Engine {
  let engine = engines.get(relaxed);
  if (!engine) {
    const memory = new WebAssembly.Memory({ initial: 1, maximum: MAX_PAGES });
    const module = new WebAssembly.Module(kernelModule(relaxed, false));
    const instance = new WebAssembly.Instance(module, { env: { memory } });
    engine = { memory, tiles: instance.exports.tiles as TilesKernel };
    engines.set(relaxed, engine);
  }
  return engine;
}

/**
 * C = A * B on one thread with the WebAssembly SIMD micro-kernel, blocked for this machine's
 * caches (or `blocks`), with relaxed SIMD's fused multiply-add where the runtime has it (or, with
 * `relaxed` false, a separate multiply and add: the control that splits the fused step off).
 */
export function simdMatmul(
  a: Float32Array,
  b: Float32Array,
  shape: Shape,
  blocks: Blocks = defaultBlocks(),
  relaxed: boolean = hasRelaxedSimd(),
): Float32Array {
  checkOperands(shape, a, b);
  const { memory, tiles } = singleThreadEngine(relaxed);
  const l = simdLayout(shape, blocks);
  stage(memory, a, b, l, 1);
  packB(new Float32Array(memory.buffer), l, 0, l.ldc / NR);
  multiplyRows(memory, tiles, l, 0, l.rows, 0);
  return unstage(memory, l);
}

let machineBlocks: Blocks | undefined;

/** The blocks for this machine's caches, read once. */
export function defaultBlocks(): Blocks {
  return machineBlocks ??= blocksFor(cacheSizes());
}
