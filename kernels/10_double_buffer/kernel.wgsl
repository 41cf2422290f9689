// double buffer: 09 with two copies of each workgroup tile and a register prefetch.
//
// In 09 every tile went: load from global -> wait -> store to workgroup memory -> barrier ->
// compute -> barrier. The global load latency (hundreds of cycles) is exposed once per tile,
// before the tile's multiply-adds can start. Here, while computing on tile t (in one buffer),
// each invocation has already issued its global loads for tile t+1 into registers (`next`);
// after the compute it writes them into the OTHER buffer, and a single barrier per tile
// separates the two. The loads fly while the multiply-adds run.
//
// Why one barrier is enough: the buffer written after computing tile t was last read while
// computing tile t-1, which every invocation finished before the previous barrier (WAR), and
// it is not read before the barrier that follows the write (RAW).
//
// Each invocation moves LA vec4s of A and LB of B per tile (1..4, checked by step.ts), held
// in named registers: a function-local array indexed in a loop runs many times slower (06's
// local-array variant measures it).
// Mapping (with its WARP_TILES switch) and edges as in 09; align k: 4, n: 4 for the vec4 rows of
// A and B. C is written at its
// real size (see `store`), so the runner pads only A and B and never copies C back.
// The autotune step is this kernel with the block per invocation as one more
// knob, its parameters found by lib/search.ts.

struct Dims {
  M: u32,
  K: u32,
  N: u32,
  // Row stride of C: the real N (N is B's row length, padded when not a multiple of 4).
  ldc: u32,
}

override BM: u32 = 128;
override BN: u32 = 128;
override BK: u32 = 8;
override PAD: u32 = 1;
// 1: 09's subgroup tiles; 0: 08's flat mapping. Both mappings are computed; select() keeps one.
override WARP_TILES: u32 = 1u;
// 2: two copies of each tile, one barrier per tile. 1: the prefetch alone, as a control: one
// copy, so a second barrier must wait for every read of it before the next tile overwrites it
// (workgroup memory stays allocated for two, so both keep the same occupancy).
override BUFFERS: u32 = 2u;
// 0: the next tile is stored after this tile's multiply-adds, its loads in flight meanwhile. 1, a
// control: stored before them (into the other copy, free since the last barrier), so each tile's
// loads are still issued together but their wait is no longer hidden behind the multiply-adds.
// 2, a control for 1: stored before them in 09's order, each vec4 stored as soon as it is loaded
// (`fetch` stores, `stash` has nothing left to do), so only issuing the loads together differs.
override STASH_FIRST: u32 = 0u;
// 1, a control for STASH_FIRST 2: a barrier between the next tile's stores and this tile's
// multiply-adds, as 09 has between its stores and its multiply-adds, so two barriers per tile.
override EXTRA_BARRIER: u32 = 0u;
override THREADS: u32 = (BM / 8u) * (BN / 8u);
override AS: u32 = BM / 4u + PAD;
// vec4 loads per invocation per tile, of A and of B.
override LA: u32 = BM * BK / 4u / THREADS;
override LB: u32 = BK * BN / 4u / THREADS;
// Size of one buffer of each tile, in vec4s.
override A_TILE: u32 = BK * AS;
override B_TILE: u32 = BK * BN / 4u;

// Out-of-bounds loads read the zero vec4 the runner keeps after A's and B's data (see 07).
@group(0) @binding(0) var<storage, read> A: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> B: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

var<workgroup> As: array<vec4<f32>, 2u * A_TILE>;
var<workgroup> Bs: array<vec4<f32>, 2u * B_TILE>;

// One invocation's share of a tile in flight from global memory to workgroup memory.
struct Staged {
  a0: vec4<f32>,
  a1: vec4<f32>,
  a2: vec4<f32>,
  a3: vec4<f32>,
  b0: vec4<f32>,
  b1: vec4<f32>,
  b2: vec4<f32>,
  b3: vec4<f32>,
}

// vec4 number i of the A tile at (m0, k0): row i / (BK/4), columns 4 * (i % (BK/4)) + 0..3.
fn loadA(i: u32, m0: u32, k0: u32) -> vec4<f32> {
  let gr = m0 + i / (BK / 4u);
  let gk = k0 + (i % (BK / 4u)) * 4u;
  return A[select(arrayLength(&A) - 1u, (gr * dims.K + gk) / 4u, gr < dims.M && gk < dims.K)];
}

// vec4 number i of the B tile at (k0, n0): row i / (BN/4), columns 4 * (i % (BN/4)) + 0..3.
fn loadB(i: u32, k0: u32, n0: u32) -> vec4<f32> {
  let gk = k0 + i / (BN / 4u);
  let gn = n0 + (i % (BN / 4u)) * 4u;
  return B[select(arrayLength(&B) - 1u, (gk * dims.N + gn) / 4u, gk < dims.K && gn < dims.N)];
}

// Scatter one A vec4 (four k values of one row) into the transposed tile at `buf`.
fn storeA(buf: u32, i: u32, v: vec4<f32>) {
  let r = i / (BK / 4u);
  let at = buf + (i % (BK / 4u)) * 4u * AS + r / 4u;
  let lane = r % 4u;
  As[at][lane] = v.x;
  As[at + AS][lane] = v.y;
  As[at + 2u * AS][lane] = v.z;
  As[at + 3u * AS][lane] = v.w;
}

fn fetch(tid: u32, m0: u32, n0: u32, k0: u32) -> Staged {
  var s: Staged;
  if (STASH_FIRST == 2u) {
    // Tile k0 / BK goes to copy (k0 / BK) % 2, as the loop's `cur` and `1 - cur` pick it.
    loadInOrder(tid, (k0 / BK) % 2u, m0, n0, k0);
    return s;
  }
  s.a0 = loadA(tid, m0, k0);
  s.b0 = loadB(tid, k0, n0);
  if (LA > 1u) { s.a1 = loadA(tid + THREADS, m0, k0); }
  if (LA > 2u) { s.a2 = loadA(tid + 2u * THREADS, m0, k0); }
  if (LA > 3u) { s.a3 = loadA(tid + 3u * THREADS, m0, k0); }
  if (LB > 1u) { s.b1 = loadB(tid + THREADS, k0, n0); }
  if (LB > 2u) { s.b2 = loadB(tid + 2u * THREADS, k0, n0); }
  if (LB > 3u) { s.b3 = loadB(tid + 3u * THREADS, k0, n0); }
  return s;
}

// The tile at k0 loaded and stored one vec4 at a time, A's then B's, as 09 does (STASH_FIRST 2).
fn loadInOrder(tid: u32, buf: u32, m0: u32, n0: u32, k0: u32) {
  let aBuf = buf * A_TILE;
  let bBuf = buf * B_TILE;
  storeA(aBuf, tid, loadA(tid, m0, k0));
  if (LA > 1u) { storeA(aBuf, tid + THREADS, loadA(tid + THREADS, m0, k0)); }
  if (LA > 2u) { storeA(aBuf, tid + 2u * THREADS, loadA(tid + 2u * THREADS, m0, k0)); }
  if (LA > 3u) { storeA(aBuf, tid + 3u * THREADS, loadA(tid + 3u * THREADS, m0, k0)); }
  Bs[bBuf + tid] = loadB(tid, k0, n0);
  if (LB > 1u) { Bs[bBuf + tid + THREADS] = loadB(tid + THREADS, k0, n0); }
  if (LB > 2u) { Bs[bBuf + tid + 2u * THREADS] = loadB(tid + 2u * THREADS, k0, n0); }
  if (LB > 3u) { Bs[bBuf + tid + 3u * THREADS] = loadB(tid + 3u * THREADS, k0, n0); }
}

fn stash(tid: u32, buf: u32, s: Staged) {
  if (STASH_FIRST == 2u) {
    return; // fetch stored the tile already
  }
  let aBuf = buf * A_TILE;
  let bBuf = buf * B_TILE;
  storeA(aBuf, tid, s.a0);
  Bs[bBuf + tid] = s.b0;
  if (LA > 1u) { storeA(aBuf, tid + THREADS, s.a1); }
  if (LA > 2u) { storeA(aBuf, tid + 2u * THREADS, s.a2); }
  if (LA > 3u) { storeA(aBuf, tid + 3u * THREADS, s.a3); }
  if (LB > 1u) { Bs[bBuf + tid + THREADS] = s.b1; }
  if (LB > 2u) { Bs[bBuf + tid + 2u * THREADS] = s.b2; }
  if (LB > 3u) { Bs[bBuf + tid + 3u * THREADS] = s.b3; }
}

// Four scalar stores: a row of the unpadded C need not start on a 16-byte boundary. They run
// once per invocation, after the K loop, so they cost little next to the multiply-adds.
fn store(row: u32, col: u32, v: vec4<f32>) {
  if (row >= dims.M) {
    return;
  }
  let at = row * dims.ldc + col;
  if (col + 3u < dims.ldc) {
    C[at] = v.x;
    C[at + 1u] = v.y;
    C[at + 2u] = v.z;
    C[at + 3u] = v.w;
    return;
  }
  if (col < dims.ldc) { C[at] = v.x; }
  if (col + 1u < dims.ldc) { C[at + 1u] = v.y; }
  if (col + 2u < dims.ldc) { C[at + 2u] = v.z; }
}

@compute @workgroup_size(THREADS)
fn main(
  @builtin(local_invocation_index) tid: u32,
  @builtin(workgroup_id) wid: vec3<u32>,
) {
  // This workgroup's tile of C: the grid is x over tile columns, y over tile rows.
  let m0 = wid.y * BM;
  let n0 = wid.x * BN;
  let warp = tid / 32u;
  let lane = tid % 32u;
  let wx = warp % (BN / 64u);
  let wy = warp / (BN / 64u);
  let lx = lane % 8u;
  let ly = lane / 8u;
  // 08's flat mapping, which WARP_TILES = 0 runs instead: invocation (tx, ty) of a BN / 8 grid.
  let tx = tid % (BN / 8u);
  let ty = tid / (BN / 8u);
  let warpTiles = WARP_TILES == 1u;
  // vec4 offsets of this invocation's two A fragments and two B fragments within a tile row.
  let a0At = select(ty, wy * 8u + ly, warpTiles);
  let a1At = select(BM / 8u + ty, wy * 8u + 4u + ly, warpTiles);
  let b0At = select(tx, wx * 16u + lx, warpTiles);
  let b1At = select(BN / 8u + tx, wx * 16u + 8u + lx, warpTiles);
  // Edge tiles: a warp whose whole 32 x 64 block lies past M or N skips the multiply-adds (it
  // still loads and meets every barrier), so a mostly empty edge tile finishes early.
  let computes = select(
    m0 + ty * 4u < dims.M && n0 + tx * 4u < dims.N,
    m0 + wy * 32u < dims.M && n0 + wx * 64u < dims.N,
    warpTiles,
  );
  var c00 = vec4<f32>(0.0); var c01 = vec4<f32>(0.0);
  var c10 = vec4<f32>(0.0); var c11 = vec4<f32>(0.0);
  var c20 = vec4<f32>(0.0); var c21 = vec4<f32>(0.0);
  var c30 = vec4<f32>(0.0); var c31 = vec4<f32>(0.0);
  var c40 = vec4<f32>(0.0); var c41 = vec4<f32>(0.0);
  var c50 = vec4<f32>(0.0); var c51 = vec4<f32>(0.0);
  var c60 = vec4<f32>(0.0); var c61 = vec4<f32>(0.0);
  var c70 = vec4<f32>(0.0); var c71 = vec4<f32>(0.0);
  let tiles = (dims.K + BK - 1u) / BK;
  stash(tid, 0u, fetch(tid, m0, n0, 0u));
  workgroupBarrier();
  for (var t = 0u; t < tiles; t++) {
    let cur = select(0u, t % 2u, BUFFERS == 2u);
    let hasNext = t + 1u < tiles;
    var next: Staged;
    if (hasNext) {
      next = fetch(tid, m0, n0, (t + 1u) * BK);
    }
    if (STASH_FIRST == 1u && hasNext) {
      stash(tid, 1u - cur, next);
    }
    if (EXTRA_BARRIER == 1u) { workgroupBarrier(); }
    let aBuf = cur * A_TILE;
    let bBuf = cur * B_TILE;
    if (computes) {
      for (var p = 0u; p < BK; p++) {
        let a0 = As[aBuf + p * AS + a0At];
        let a1 = As[aBuf + p * AS + a1At];
        let b0 = Bs[bBuf + p * (BN / 4u) + b0At];
        let b1 = Bs[bBuf + p * (BN / 4u) + b1At];
        c00 += a0.x * b0; c01 += a0.x * b1;
        c10 += a0.y * b0; c11 += a0.y * b1;
        c20 += a0.z * b0; c21 += a0.z * b1;
        c30 += a0.w * b0; c31 += a0.w * b1;
        c40 += a1.x * b0; c41 += a1.x * b1;
        c50 += a1.y * b0; c51 += a1.y * b1;
        c60 += a1.z * b0; c61 += a1.z * b1;
        c70 += a1.w * b0; c71 += a1.w * b1;
      }
    }
    // One copy (the control): every read of it must finish before the stash overwrites it.
    if (BUFFERS == 1u) { workgroupBarrier(); }
    if (STASH_FIRST == 0u && hasNext) {
      stash(tid, select(0u, 1u - cur, BUFFERS == 2u), next);
    }
    workgroupBarrier();
  }
  let r0 = m0 + a0At * 4u;
  let r1 = m0 + a1At * 4u;
  let col0 = n0 + b0At * 4u;
  let col1 = n0 + b1At * 4u;
  store(r0, col0, c00); store(r0, col1, c01);
  store(r0 + 1u, col0, c10); store(r0 + 1u, col1, c11);
  store(r0 + 2u, col0, c20); store(r0 + 2u, col1, c21);
  store(r0 + 3u, col0, c30); store(r0 + 3u, col1, c31);
  store(r1, col0, c40); store(r1, col1, c41);
  store(r1 + 1u, col0, c50); store(r1 + 1u, col1, c51);
  store(r1 + 2u, col0, c60); store(r1 + 2u, col1, c61);
  store(r1 + 3u, col0, c70); store(r1 + 3u, col1, c71);
}
