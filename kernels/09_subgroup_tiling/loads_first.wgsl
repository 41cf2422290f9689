// subgroup tiling with both tile loads issued together (a control for kernel.wgsl): the same
// mapping (WARP_TILES 1: 09's subgroup tiles; 0: 08's flat mapping), stores and reads, but each
// invocation's vec4 of B is loaded before its vec4 of A is stored, where kernel.wgsl's two loops
// store A's before loading B's. Written out for tiles where each invocation loads one vec4 of
// each (BM * BK / 4 = BK * BN / 4 = THREADS, step.ts checks), as 07's loads_first.wgsl is for 07:
// against kernel.wgsl the loops are gone and the order differs.
//
// IN_ORDER 1 keeps the written-out code but goes back to kernel.wgsl's order (A's vec4 stored
// before B's is loaded): against kernel.wgsl only the loops are gone, against IN_ORDER 0 only the
// order differs. On the H200 the two run alike, 1.19x the step: the loops, not the order, cost.

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
override THREADS: u32 = (BM / 8u) * (BN / 8u);
// Row stride of the transposed A tile, in vec4s.
override AS: u32 = BM / 4u + PAD;
// 0: both loads before the first store; 1: kernel.wgsl's order, written out.
override IN_ORDER: u32 = 0u;

// Out-of-bounds loads read the zero vec4 the runner keeps after A's and B's data (see 07).
@group(0) @binding(0) var<storage, read> A: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> B: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

var<workgroup> As: array<vec4<f32>, BK * AS>;
var<workgroup> Bs: array<vec4<f32>, BK * BN / 4u>;

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

// vec4 i of the A tile (row i / (BK/4), columns 4 * (i % (BK/4)) ..) and of the B tile, zero past
// M, N or K, as kernel.wgsl's loops load them.
fn loadA(i: u32, m0: u32, k0: u32) -> vec4<f32> {
  let gr = m0 + i / (BK / 4u);
  let gk = k0 + (i % (BK / 4u)) * 4u;
  return A[select(arrayLength(&A) - 1u, (gr * dims.K + gk) / 4u, gr < dims.M && gk < dims.K)];
}

fn loadB(i: u32, n0: u32, k0: u32) -> vec4<f32> {
  let gk = k0 + i / (BN / 4u);
  let gn = n0 + (i % (BN / 4u)) * 4u;
  return B[select(arrayLength(&B) - 1u, (gk * dims.N + gn) / 4u, gk < dims.K && gn < dims.N)];
}

@compute @workgroup_size(THREADS)
fn main(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
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
  // Subgroups whose whole 32 x 64 block lies past M or N skip the multiply-adds: at the
  // right and bottom edges most of a tile's subgroups do, so edge tiles cost little.
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
  for (var t = 0u; t < tiles; t++) {
    let k0 = t * BK;
    // Both loads are issued before the first store (IN_ORDER 0), or B's after A's stores.
    let va = loadA(tid, m0, k0);
    var vb = vec4<f32>(0.0);
    if (IN_ORDER == 0u) {
      vb = loadB(tid, n0, k0);
    }
    let r = tid / (BK / 4u);
    let at = ((tid % (BK / 4u)) * 4u) * AS + r / 4u;
    let lane = r % 4u;
    As[at][lane] = va.x;
    As[at + AS][lane] = va.y;
    As[at + 2u * AS][lane] = va.z;
    As[at + 3u * AS][lane] = va.w;
    if (IN_ORDER == 1u) {
      vb = loadB(tid, n0, k0);
    }
    Bs[tid] = vb;
    workgroupBarrier();
    if (computes) {
      for (var p = 0u; p < BK; p++) {
        let a0 = As[p * AS + a0At];
        let a1 = As[p * AS + a1At];
        let b0 = Bs[p * (BN / 4u) + b0At];
        let b1 = Bs[p * (BN / 4u) + b1At];
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
