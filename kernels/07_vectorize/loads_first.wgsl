// vectorize with both tile loads issued together (a control for kernel.wgsl): the same loads,
// stores and reads, but each invocation's vec4 of B is loaded before its vec4 of A is stored,
// where kernel.wgsl's two loops store A's before loading B's. Against kernel.wgsl the loops are
// written out (for the default tile: one vec4 of each per invocation) and the loads reordered; in
// 09's kernel, whose written-out control separates the two, the writing out pays all of it.
//
// The runner pads A and B as for kernel.wgsl (align k: 4, n: 4); C is written at its real size.

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
override THREADS: u32 = (BM / 8u) * (BN / 8u);
// 0: both loads before the first store; 1: the step's order (A's vec4 stored before B's is
// loaded), still written out: against 0 only the order differs, against kernel.wgsl only the loops
// are gone.
override IN_ORDER: u32 = 0u;

// Out-of-bounds loads read the zero vec4 the runner keeps after A's and B's data, as in
// kernel.wgsl (whose comment says why the address, not the value, is selected).
@group(0) @binding(0) var<storage, read> A: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> B: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

// As[k * BM/4 + m/4] holds A rows m..m+3 at column k; Bs[k * BN/4 + n/4] holds B row k,
// columns n..n+3.
var<workgroup> As: array<vec4<f32>, BK * BM / 4u>;
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
  let tx = tid % (BN / 8u);
  let ty = tid / (BN / 8u);
  // Invocations whose whole block lies past M or N skip the multiply-adds (they still load and
  // wait at the barriers); where a whole subgroup does, an edge tile costs little.
  let computes = m0 + ty * 8u < dims.M && n0 + tx * 8u < dims.N;
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
    // Both loads are issued before the first store: each invocation's one vec4 of A and one of
    // B (BM * BK / 4 = BK * BN / 4 = THREADS, step.ts checks).
    let va = loadA(tid, m0, k0);
    var vb = vec4<f32>(0.0);
    if (IN_ORDER == 0u) {
      vb = loadB(tid, n0, k0);
    }
    let r = tid / (BK / 4u);
    let at = ((tid % (BK / 4u)) * 4u) * (BM / 4u) + r / 4u;
    let lane = r % 4u;
    As[at][lane] = va.x;
    As[at + BM / 4u][lane] = va.y;
    As[at + 2u * (BM / 4u)][lane] = va.z;
    As[at + 3u * (BM / 4u)][lane] = va.w;
    if (IN_ORDER == 1u) {
      vb = loadB(tid, n0, k0);
    }
    Bs[tid] = vb;
    workgroupBarrier();
    if (computes) {
      for (var p = 0u; p < BK; p++) {
        let a0 = As[p * (BM / 4u) + ty * 2u];
        let a1 = As[p * (BM / 4u) + ty * 2u + 1u];
        let b0 = Bs[p * (BN / 4u) + tx * 2u];
        let b1 = Bs[p * (BN / 4u) + tx * 2u + 1u];
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
  let row = m0 + ty * 8u;
  let col = n0 + tx * 8u;
  store(row, col, c00); store(row, col + 4u, c01);
  store(row + 1u, col, c10); store(row + 1u, col + 4u, c11);
  store(row + 2u, col, c20); store(row + 2u, col + 4u, c21);
  store(row + 3u, col, c30); store(row + 3u, col + 4u, c31);
  store(row + 4u, col, c40); store(row + 4u, col + 4u, c41);
  store(row + 5u, col, c50); store(row + 5u, col + 4u, c51);
  store(row + 6u, col, c60); store(row + 6u, col + 4u, c61);
  store(row + 7u, col, c70); store(row + 7u, col + 4u, c71);
}
