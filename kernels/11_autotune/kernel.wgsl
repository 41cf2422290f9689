// autotune: 10 with the invocation's block of C as one more tuning knob, TN = 8 (10's
// 8 x 8) or 16 (8 x 16, 32 vec4 accumulators). With TN 16 a warp owns 32 x 128 and each k step
// reads 2 A and 4 B vec4s from workgroup memory for 128 FMAs instead of 2 + 2 for 64: a quarter
// fewer workgroup-memory bytes per FMA, for 64 more accumulators (the NVIDIA driver allots 208
// registers against 113 at TN 8 at the H200's winning tile). The TN 16 blocks are constant-
// false branches when TN is 8, which the compiler removes. Everything else (double buffering,
// edges, unpadded C) is 10's; lib/search.ts searches the tile sizes and TN per device.
//
// Tiles are loaded as vec4s, which need every row of A and B to start on 16 bytes: the runner
// pads K and N to multiples of 4 when they are not. Loading four scalars instead needs no
// padding, but with the bounds checks selecting the load's address (see 07) vec4 loads with
// padding were faster on every shape measured on the H200, 13 547 vs 11 311 GFLOP/s at
// 1000x3000x777 included.

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
// Columns of C per invocation: 8 (10's 8 x 8 block) or 16 (8 x 16).
override TN: u32 = 8;
override THREADS: u32 = (BM / 8u) * (BN / TN);
override AS: u32 = BM / 4u + PAD;
// vec4 loads per invocation per tile, of A and of B.
override LA: u32 = BM * BK / 4u / THREADS;
override LB: u32 = BK * BN / 4u / THREADS;
// Launch order of the tiles: GROUP_M tile rows are walked column by column before moving on,
// so tiles that run at the same time share rows of A and columns of B in the L2 cache.
// 1 keeps the plain row-by-row order. (A knob for the autotuner.)
override GROUP_M: u32 = 1;
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

fn stash(tid: u32, buf: u32, s: Staged) {
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

// (tile row, tile column) of workgroup `wid` in the GROUP_M launch order. The grid, not C's
// size, says how many tiles there are: the runner may launch only the whole ones.
fn tileOf(wid: vec3<u32>, grid: vec3<u32>) -> vec2<u32> {
  let tilesN = grid.x;
  let tilesM = grid.y;
  let perGroup = GROUP_M * tilesN;
  let linear = wid.y * tilesN + wid.x;
  let first = (linear / perGroup) * GROUP_M;
  let rows = min(tilesM - first, GROUP_M);
  let inGroup = linear % perGroup;
  return vec2<u32>(first + inGroup % rows, inGroup / rows);
}

@compute @workgroup_size(THREADS)
fn main(
  @builtin(local_invocation_index) tid: u32,
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) grid: vec3<u32>,
) {
  let tile = tileOf(wid, grid);
  let m0 = tile.x * BM;
  let n0 = tile.y * BN;
  let warp = tid / 32u;
  let lane = tid % 32u;
  // A warp owns 32 rows x 8 * TN columns; its 4 x 8 lanes own rows ly*4 and 16 + ly*4 and
  // columns lx*4 + 32*j, j < TN / 4.
  let wx = warp % (BN / (8u * TN));
  let wy = warp / (BN / (8u * TN));
  let lx = lane % 8u;
  let ly = lane / 8u;
  let a0At = wy * 8u + ly;
  let a1At = wy * 8u + 4u + ly;
  let b0At = wx * 2u * TN + lx;
  let computes = m0 + wy * 32u < dims.M && n0 + wx * 8u * TN < dims.N;
  var c00 = vec4<f32>(0.0); var c01 = vec4<f32>(0.0); var c02 = vec4<f32>(0.0); var c03 = vec4<f32>(0.0);
  var c10 = vec4<f32>(0.0); var c11 = vec4<f32>(0.0); var c12 = vec4<f32>(0.0); var c13 = vec4<f32>(0.0);
  var c20 = vec4<f32>(0.0); var c21 = vec4<f32>(0.0); var c22 = vec4<f32>(0.0); var c23 = vec4<f32>(0.0);
  var c30 = vec4<f32>(0.0); var c31 = vec4<f32>(0.0); var c32 = vec4<f32>(0.0); var c33 = vec4<f32>(0.0);
  var c40 = vec4<f32>(0.0); var c41 = vec4<f32>(0.0); var c42 = vec4<f32>(0.0); var c43 = vec4<f32>(0.0);
  var c50 = vec4<f32>(0.0); var c51 = vec4<f32>(0.0); var c52 = vec4<f32>(0.0); var c53 = vec4<f32>(0.0);
  var c60 = vec4<f32>(0.0); var c61 = vec4<f32>(0.0); var c62 = vec4<f32>(0.0); var c63 = vec4<f32>(0.0);
  var c70 = vec4<f32>(0.0); var c71 = vec4<f32>(0.0); var c72 = vec4<f32>(0.0); var c73 = vec4<f32>(0.0);
  let tiles = (dims.K + BK - 1u) / BK;
  stash(tid, 0u, fetch(tid, m0, n0, 0u));
  workgroupBarrier();
  for (var t = 0u; t < tiles; t++) {
    let cur = t % 2u;
    let hasNext = t + 1u < tiles;
    var next: Staged;
    if (hasNext) {
      next = fetch(tid, m0, n0, (t + 1u) * BK);
    }
    let aBuf = cur * A_TILE;
    let bBuf = cur * B_TILE;
    if (computes) {
      for (var p = 0u; p < BK; p++) {
        let a0 = As[aBuf + p * AS + a0At];
        let a1 = As[aBuf + p * AS + a1At];
        let bAt = bBuf + p * (BN / 4u) + b0At;
        let b0 = Bs[bAt];
        let b1 = Bs[bAt + 8u];
        c00 += a0.x * b0; c01 += a0.x * b1;
        c10 += a0.y * b0; c11 += a0.y * b1;
        c20 += a0.z * b0; c21 += a0.z * b1;
        c30 += a0.w * b0; c31 += a0.w * b1;
        c40 += a1.x * b0; c41 += a1.x * b1;
        c50 += a1.y * b0; c51 += a1.y * b1;
        c60 += a1.z * b0; c61 += a1.z * b1;
        c70 += a1.w * b0; c71 += a1.w * b1;
        if (TN == 16u) {
          let b2 = Bs[bAt + 16u];
          let b3 = Bs[bAt + 24u];
          c02 += a0.x * b2; c03 += a0.x * b3;
          c12 += a0.y * b2; c13 += a0.y * b3;
          c22 += a0.z * b2; c23 += a0.z * b3;
          c32 += a0.w * b2; c33 += a0.w * b3;
          c42 += a1.x * b2; c43 += a1.x * b3;
          c52 += a1.y * b2; c53 += a1.y * b3;
          c62 += a1.z * b2; c63 += a1.z * b3;
          c72 += a1.w * b2; c73 += a1.w * b3;
        }
      }
    }
    if (hasNext) {
      stash(tid, 1u - cur, next);
    }
    workgroupBarrier();
  }
  let r0 = m0 + a0At * 4u;
  let r1 = m0 + a1At * 4u;
  let col0 = n0 + b0At * 4u;
  let col1 = col0 + 32u;
  let col2 = col0 + 64u;
  let col3 = col0 + 96u;
  store(r0, col0, c00); store(r0, col1, c01);
  store(r0 + 1u, col0, c10); store(r0 + 1u, col1, c11);
  store(r0 + 2u, col0, c20); store(r0 + 2u, col1, c21);
  store(r0 + 3u, col0, c30); store(r0 + 3u, col1, c31);
  store(r1, col0, c40); store(r1, col1, c41);
  store(r1 + 1u, col0, c50); store(r1 + 1u, col1, c51);
  store(r1 + 2u, col0, c60); store(r1 + 2u, col1, c61);
  store(r1 + 3u, col0, c70); store(r1 + 3u, col1, c71);
  if (TN == 16u) {
    store(r0, col2, c02); store(r0, col3, c03);
    store(r0 + 1u, col2, c12); store(r0 + 1u, col3, c13);
    store(r0 + 2u, col2, c22); store(r0 + 2u, col3, c23);
    store(r0 + 3u, col2, c32); store(r0 + 3u, col3, c33);
    store(r1, col2, c42); store(r1, col3, c43);
    store(r1 + 1u, col2, c52); store(r1 + 1u, col3, c53);
    store(r1 + 2u, col2, c62); store(r1 + 2u, col3, c63);
    store(r1 + 3u, col2, c72); store(r1 + 3u, col3, c73);
  }
}
