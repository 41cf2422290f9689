// f16: the 10/11 kernel in half precision (`shader-f16`). A, B, C and the workgroup tiles
// hold 16-bit floats, and the multiply-adds of one BK-deep tile run in f16 on vec4<f16> values,
// where two f16 lanes share a 32-bit register and one packed instruction does two of them.
// After every tile the f16 partial sums are added into f32 accumulators, so the rounding error
// does not grow with K. Elements are loaded one f16 at a time with bounds checks, so this
// kernel handles any M, K, N itself (align 1).
//
// Accuracy: A and B rounded to f16 (unit roundoff 2^-11) perturb every product by up to two
// roundings, each BK-long f16 partial sum adds up to BK more, and C is rounded once at the
// end: a relative error norm near 5e-4 to 1e-3 instead of f32's ~1e-6. Its own tolerance is in
// step.ts. f16_storage (a demo, storage.wgsl) keeps the f16 storage but does f32 math.

enable f16;

struct Dims {
  M: u32,
  K: u32,
  N: u32,
}

override BM: u32 = 128;
override BN: u32 = 128;
override BK: u32 = 8;
override PAD: u32 = 1;
override THREADS: u32 = (BM / 8u) * (BN / 8u);
override AS: u32 = BM / 4u + PAD;
// vec4 loads per invocation per tile, of A and of B.
override LA: u32 = BM * BK / 4u / THREADS;
override LB: u32 = BK * BN / 4u / THREADS;
// Size of one buffer of each tile, in vec4s.
override A_TILE: u32 = BK * AS;
override B_TILE: u32 = BK * BN / 4u;

@group(0) @binding(0) var<storage, read> A: array<f16>;
@group(0) @binding(1) var<storage, read> B: array<f16>;
@group(0) @binding(2) var<storage, read_write> C: array<f16>;
@group(0) @binding(3) var<uniform> dims: Dims;

var<workgroup> As: array<vec4<f16>, 2u * A_TILE>;
var<workgroup> Bs: array<vec4<f16>, 2u * B_TILE>;

// One invocation's share of a tile in flight from global memory to workgroup memory.
struct Staged {
  a0: vec4<f16>,
  a1: vec4<f16>,
  a2: vec4<f16>,
  a3: vec4<f16>,
  b0: vec4<f16>,
  b1: vec4<f16>,
  b2: vec4<f16>,
  b3: vec4<f16>,
}

// Four consecutive k values of one row of A: group i of the A tile at (m0, k0), as f16.
fn loadA(i: u32, m0: u32, k0: u32) -> vec4<f16> {
  let gr = m0 + i / (BK / 4u);
  let gk = k0 + (i % (BK / 4u)) * 4u;
  if (gr >= dims.M) {
    return vec4<f16>(0.0h);
  }
  let at = gr * dims.K + gk;
  return vec4<f16>(
    select(0.0h, A[at], gk < dims.K),
    select(0.0h, A[at + 1u], gk + 1u < dims.K),
    select(0.0h, A[at + 2u], gk + 2u < dims.K),
    select(0.0h, A[at + 3u], gk + 3u < dims.K),
  );
}

// Four consecutive columns of one row of B: group i of the B tile at (k0, n0), as f16.
fn loadB(i: u32, k0: u32, n0: u32) -> vec4<f16> {
  let gk = k0 + i / (BN / 4u);
  let gn = n0 + (i % (BN / 4u)) * 4u;
  if (gk >= dims.K) {
    return vec4<f16>(0.0h);
  }
  let at = gk * dims.N + gn;
  return vec4<f16>(
    select(0.0h, B[at], gn < dims.N),
    select(0.0h, B[at + 1u], gn + 1u < dims.N),
    select(0.0h, B[at + 2u], gn + 2u < dims.N),
    select(0.0h, B[at + 3u], gn + 3u < dims.N),
  );
}

// Scatter one A vec4 (four k values of one row) into the transposed tile at `buf`.
fn storeA(buf: u32, i: u32, v: vec4<f16>) {
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

fn store(row: u32, col: u32, v: vec4<f32>) {
  if (row >= dims.M) {
    return;
  }
  let h = vec4<f16>(v);
  let at = row * dims.N + col;
  if (col < dims.N) { C[at] = h.x; }
  if (col + 1u < dims.N) { C[at + 1u] = h.y; }
  if (col + 2u < dims.N) { C[at + 2u] = h.z; }
  if (col + 3u < dims.N) { C[at + 3u] = h.w; }
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
  let a0At = wy * 8u + ly;
  let a1At = wy * 8u + 4u + ly;
  let b0At = wx * 16u + lx;
  let b1At = wx * 16u + 8u + lx;
  // Edge tiles: a warp whose whole 32 x 64 block lies past M or N skips the multiply-adds (it
  // still loads and meets every barrier), so a mostly empty edge tile finishes early.
  let computes = m0 + wy * 32u < dims.M && n0 + wx * 64u < dims.N;
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
    let cur = t % 2u;
    let hasNext = t + 1u < tiles;
    var next: Staged;
    if (hasNext) {
      next = fetch(tid, m0, n0, (t + 1u) * BK);
    }
    let aBuf = cur * A_TILE;
    let bBuf = cur * B_TILE;
    if (computes) {
      var h00 = vec4<f16>(0.0h);
      var h01 = vec4<f16>(0.0h);
      var h10 = vec4<f16>(0.0h);
      var h11 = vec4<f16>(0.0h);
      var h20 = vec4<f16>(0.0h);
      var h21 = vec4<f16>(0.0h);
      var h30 = vec4<f16>(0.0h);
      var h31 = vec4<f16>(0.0h);
      var h40 = vec4<f16>(0.0h);
      var h41 = vec4<f16>(0.0h);
      var h50 = vec4<f16>(0.0h);
      var h51 = vec4<f16>(0.0h);
      var h60 = vec4<f16>(0.0h);
      var h61 = vec4<f16>(0.0h);
      var h70 = vec4<f16>(0.0h);
      var h71 = vec4<f16>(0.0h);
      for (var p = 0u; p < BK; p++) {
        let a0 = As[aBuf + p * AS + a0At];
        let a1 = As[aBuf + p * AS + a1At];
        let b0 = Bs[bBuf + p * (BN / 4u) + b0At];
        let b1 = Bs[bBuf + p * (BN / 4u) + b1At];
        h00 += a0.x * b0; h01 += a0.x * b1;
        h10 += a0.y * b0; h11 += a0.y * b1;
        h20 += a0.z * b0; h21 += a0.z * b1;
        h30 += a0.w * b0; h31 += a0.w * b1;
        h40 += a1.x * b0; h41 += a1.x * b1;
        h50 += a1.y * b0; h51 += a1.y * b1;
        h60 += a1.z * b0; h61 += a1.z * b1;
        h70 += a1.w * b0; h71 += a1.w * b1;
      }
      c00 += vec4<f32>(h00);
      c01 += vec4<f32>(h01);
      c10 += vec4<f32>(h10);
      c11 += vec4<f32>(h11);
      c20 += vec4<f32>(h20);
      c21 += vec4<f32>(h21);
      c30 += vec4<f32>(h30);
      c31 += vec4<f32>(h31);
      c40 += vec4<f32>(h40);
      c41 += vec4<f32>(h41);
      c50 += vec4<f32>(h50);
      c51 += vec4<f32>(h51);
      c60 += vec4<f32>(h60);
      c61 += vec4<f32>(h61);
      c70 += vec4<f32>(h70);
      c71 += vec4<f32>(h71);
    }
    if (hasNext) {
      stash(tid, 1u - cur, next);
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
