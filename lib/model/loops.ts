/**
 * The inner loops of the ladder's kernels as lib/model/bounds.ts counts them, one builder per
 * way of tiling, transcribed from the WGSL (a step's spec names its builder in `loop`): the
 * workgroup-memory reads of one k step and
 * their byte offsets per invocation, the stores that fill a tile, the global loads and barriers
 * per tile, the multiply-adds, and an estimate of the registers an invocation holds. The index
 * expressions here are the kernels' own; the tests check them on hand-worked cases.
 */
import type { Shape } from "../matrix.ts";
import type { Access, Params, TileLoop } from "../steps/spec.ts";

const F32 = 4;
const VEC4 = 16;
/** Registers an invocation needs beyond its data: indices, bases, loop counters (a guess). */
const OVERHEAD_REGISTERS = 24;

/** The registers estimate: accumulators + fragment words + staged words + overhead. */
function registers(accumulators: number, reads: Access[], stagedWords: number): number {
  const fragments = reads.reduce((sum, r) => sum + Math.max(1, r.width / F32), 0);
  return Math.ceil(accumulators + fragments + stagedWords + OVERHEAD_REGISTERS);
}

/** Invocation `tid`'s element `i = tid + j * threads` of a cooperative copy of `count` items. */
const nth = (tid: number, j: number, threads: number, count: number) => {
  const i = tid + j * threads;
  return i < count ? i : undefined;
};

/** Cooperative copies of `count` items per tile over `threads` invocations, one access each. */
const copies = (count: number, threads: number) => Math.ceil(count / threads);

/** Stores of a scalar-per-element tile copy (04-06: `As[i] = ...` for i = tid + j * threads). */
function flatStores(array: string, count: number, threads: number): Access[] {
  return Array.from({ length: copies(count, threads) }, (_, j) => ({
    array,
    width: F32,
    at: (tid: number) => {
      const i = nth(tid, j, threads, count);
      return i === undefined ? undefined : F32 * i;
    },
  }));
}

/**
 * The transposed A tile's stores (07-12): vec4 i of the A tile (row r = i / (BK/4), k columns
 * kq..kq+3) goes to k rows kq..kq+3, vec4 column r/4, lane r%4; rows are `row` vec4s apart.
 * `element` is the stored scalar's bytes (4, or 2 for f16).
 */
function transposedStores(
  p: Params,
  threads: number,
  row: number,
  element = F32,
  count = (p.BM * p.BK) / 4,
): Access[] {
  const out: Access[] = [];
  for (let j = 0; j < copies(count, threads); j++) {
    for (let c = 0; c < 4; c++) {
      out.push({
        array: "As",
        width: element as 2 | 4,
        at: (tid) => {
          const i = nth(tid, j, threads, count);
          if (i === undefined) return undefined;
          const r = Math.floor(i / (p.BK / 4)), kq = (i % (p.BK / 4)) * 4;
          return 4 * element * ((kq + c) * row + Math.floor(r / 4)) + element * (r % 4);
        },
      });
    }
  }
  return out;
}

/** B tile stores of vec4 i = tid + j * threads, row by row (07-12). */
function vec4Stores(array: string, count: number, threads: number, bytes = VEC4): Access[] {
  return Array.from({ length: copies(count, threads) }, (_, j) => ({
    array,
    width: bytes as 8 | 16,
    at: (tid: number) => {
      const i = nth(tid, j, threads, count);
      return i === undefined ? undefined : bytes * i;
    },
  }));
}

/** A vec4 read of element `index(tid) + k * row` of a tile (`bytes` per vec4). */
const vec4Read = (
  array: string,
  row: number,
  index: (tid: number) => number,
  bytes = VEC4,
): Access => ({
  array,
  width: bytes as 8 | 16,
  at: (tid, k) => bytes * (k * row + index(tid)),
});

/** The warp tiling of 09-13: a subgroup owns 32 rows x 8*TN columns (lanes 8 wide, 4 high). */
function warpTile(tid: number, bn: number, tn: number) {
  const warp = Math.floor(tid / 32), lane = tid % 32;
  const across = bn / (8 * tn);
  return {
    wx: warp % across,
    wy: Math.floor(warp / across),
    lx: lane % 8,
    ly: Math.floor(lane / 8),
  };
}

/** 02 and 03: one invocation per element of C, no workgroup memory. */
export function oneElementLoop(p: Params, s: Shape, rowIsX: boolean): TileLoop {
  const wg = p.WG;
  // gid = wid * WG + lid; the row is gid.x in 02 and gid.y in 03 (workgroup (0, 0) stands for
  // all: the offsets of a warp's lanes relative to each other are what the sectors depend on).
  const rowCol = (tid: number) => {
    const x = tid % wg, y = Math.floor(tid / wg);
    return rowIsX ? { row: x, col: y } : { row: y, col: x };
  };
  const globalReads: Access[] = [
    { array: "A", width: F32, at: (tid, k) => F32 * (rowCol(tid).row * s.k + k) },
    { array: "B", width: F32, at: (tid, k) => F32 * (k * s.n + rowCol(tid).col) },
  ];
  return {
    invocations: wg * wg,
    steps: 1,
    fmas: 1,
    fmasPerInstruction: 1,
    reads: [],
    stores: [],
    globalLoads: 2,
    barriers: 0,
    other: 0,
    globalReads,
    registers: registers(1, [], 2),
  };
}

/** 04: TILE x TILE invocations; lid.x = tid % TILE, lid.y = tid / TILE. */
export function sharedTileLoop(p: Params): TileLoop {
  const t = p.TILE;
  const lx = (tid: number) => tid % t, ly = (tid: number) => Math.floor(tid / t);
  const reads: Access[] = [
    { array: "As", width: F32, at: (tid, k) => F32 * (ly(tid) * t + k) },
    { array: "Bs", width: F32, at: (tid, k) => F32 * (k * t + lx(tid)) },
  ];
  return {
    invocations: t * t,
    steps: t,
    fmas: 1,
    fmasPerInstruction: 1,
    reads,
    stores: [
      { array: "As", width: F32, at: (tid) => F32 * tid },
      { array: "Bs", width: F32, at: (tid) => F32 * tid },
    ],
    globalLoads: 2,
    barriers: 2,
    other: 0,
    registers: registers(1, reads, 2),
  };
}

/**
 * 05 and 06: BM x BK and BK x BN tiles staged as scalars (flat stores, two barriers per tile),
 * `fmas` multiply-adds per invocation per k step from `reads`.
 */
function scalarBlockLoop(p: Params, threads: number, fmas: number, reads: Access[]): TileLoop {
  const loads = copies(p.BM * p.BK, threads) + copies(p.BK * p.BN, threads);
  return {
    invocations: threads,
    steps: p.BK,
    fmas,
    fmasPerInstruction: 1,
    reads,
    stores: [...flatStores("As", p.BM * p.BK, threads), ...flatStores("Bs", p.BK * p.BN, threads)],
    globalLoads: loads,
    barriers: 2,
    other: 0,
    registers: registers(fmas, reads, loads),
  };
}

/** 05: col = tid % BN, rows r0 = (tid / BN) * 8 .. +7; A read as 8 scalars BK apart. */
export function blockTile1dLoop(p: Params): TileLoop {
  const threads = (p.BM * p.BN) / 8;
  const col = (tid: number) => tid % p.BN, r0 = (tid: number) => Math.floor(tid / p.BN) * 8;
  const reads: Access[] = [
    { array: "Bs", width: F32, at: (tid, k) => F32 * (k * p.BN + col(tid)) },
    ...Array.from({ length: 8 }, (_, i): Access => ({
      array: "As",
      width: F32,
      at: (tid, k) => F32 * (r0(tid) * p.BK + k + i * p.BK),
    })),
  ];
  return scalarBlockLoop(p, threads, 8, reads);
}

/** 06: tx = tid % (BN/8), ty = tid / (BN/8); 8 scalars of A (BK apart) and 8 of B per k. */
export function blockTile2dLoop(p: Params): TileLoop {
  const threads = (p.BM / 8) * (p.BN / 8);
  const tx = (tid: number) => tid % (p.BN / 8), ty = (tid: number) => Math.floor(tid / (p.BN / 8));
  const reads: Access[] = [
    ...Array.from({ length: 8 }, (_, i): Access => ({
      array: "As",
      width: F32,
      at: (tid, k) => F32 * (ty(tid) * 8 * p.BK + k + i * p.BK),
    })),
    ...Array.from({ length: 8 }, (_, j): Access => ({
      array: "Bs",
      width: F32,
      at: (tid, k) => F32 * (k * p.BN + tx(tid) * 8 + j),
    })),
  ];
  return scalarBlockLoop(p, threads, 64, reads);
}

/**
 * 07-12: vec4 fragments. `aAt` and `bAt` give an invocation's vec4 columns in the A row (`as`
 * vec4s long, padded) and the B row (BN/4); TN columns per invocation; `element` bytes per
 * scalar (2 for f16).
 */
function vec4Loop(
  p: Params,
  o: {
    threads: number;
    as: number;
    aAt: ((tid: number) => number)[];
    bAt: ((tid: number) => number)[];
    tn: number;
    barriers: number;
    element?: 2 | 4;
  },
): TileLoop {
  const element = o.element ?? F32;
  const vec = 4 * element;
  const reads = [
    ...o.aAt.map((at) => vec4Read("As", o.as, at, vec)),
    ...o.bAt.map((at) => vec4Read("Bs", p.BN / 4, at, vec)),
  ];
  const la = copies((p.BM * p.BK) / 4, o.threads), lb = copies((p.BK * p.BN) / 4, o.threads);
  // f16 loads its vec4s as four scalars (kernels/12_generated/generate.ts, f16Loads).
  const loadsPerVec = element === F32 ? 1 : 4;
  const f16 = element !== F32;
  return {
    invocations: o.threads,
    steps: p.BK,
    fmas: 8 * o.tn,
    fmasPerInstruction: f16 ? 2 : 1,
    reads,
    stores: [
      ...transposedStores(p, o.threads, o.as, element),
      ...vec4Stores("Bs", (p.BK * p.BN) / 4, o.threads, vec),
    ],
    globalLoads: loadsPerVec * (la + lb),
    barriers: o.barriers,
    // f16 flushes its 8 x TN f16 sums into the f32 accumulators once per tile.
    other: f16 ? 8 * o.tn : 0,
    registers: registers(8 * o.tn, reads, (la + lb) * (vec / F32)),
  };
}

/** 07: tx = tid % (BN/8), ty = tid / (BN/8); vec4s 2*ty, 2*ty+1 of A and 2*tx, 2*tx+1 of B. */
export function pairedVec4Loop(p: Params): TileLoop {
  const threads = (p.BM / 8) * (p.BN / 8);
  const tx = (tid: number) => tid % (p.BN / 8), ty = (tid: number) => Math.floor(tid / (p.BN / 8));
  return vec4Loop(p, {
    threads,
    as: p.BM / 4,
    aAt: [(t) => 2 * ty(t), (t) => 2 * ty(t) + 1],
    bAt: [(t) => 2 * tx(t), (t) => 2 * tx(t) + 1],
    tn: 8,
    barriers: 2,
  });
}

/** 08: vec4s ty and BM/8 + ty of A (rows padded by PAD), tx and BN/8 + tx of B. */
export function splitVec4Loop(p: Params): TileLoop {
  const threads = (p.BM / 8) * (p.BN / 8);
  const tx = (tid: number) => tid % (p.BN / 8), ty = (tid: number) => Math.floor(tid / (p.BN / 8));
  return vec4Loop(p, {
    threads,
    as: p.BM / 4 + p.PAD,
    aAt: [(t) => ty(t), (t) => p.BM / 8 + ty(t)],
    bAt: [(t) => tx(t), (t) => p.BN / 8 + tx(t)],
    tn: 8,
    barriers: 2,
  });
}

/**
 * 09-14: a subgroup's 32 x 8*TN block; A vec4s wy*8 + ly (+4), B vec4s wx*2*TN + lx + 8j.
 * `barriers`: 2 per tile in 09, 1 with double buffering; `element` 2 for 14's f16 tiles.
 */
export function warpTileLoop(p: Params, tn: number, barriers: number, element?: 2 | 4): TileLoop {
  const threads = (p.BM / 8) * (p.BN / tn);
  const w = (tid: number) => warpTile(tid, p.BN, tn);
  return vec4Loop(p, {
    threads,
    as: p.BM / 4 + (p.PAD ?? 0),
    aAt: [(t) => w(t).wy * 8 + w(t).ly, (t) => w(t).wy * 8 + 4 + w(t).ly],
    bAt: Array.from(
      { length: tn / 4 },
      (_, j) => (t: number) => w(t).wx * 2 * tn + w(t).lx + 8 * j,
    ),
    tn,
    barriers,
    element,
  });
}
