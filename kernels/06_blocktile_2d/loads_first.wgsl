// blocktile 2d with its tile loads issued together (a control for kernel.wgsl): the same loads,
// stores and reads, but each invocation's eight loads of a tile are issued before its first store,
// where kernel.wgsl's loops store each element before loading the next. Against kernel.wgsl the
// loops are written out and the loads reordered, two changes this control does not separate (09's
// written-out control does, in 09's kernel: the writing out pays all of it). 07's
// vectorize_scalar_loads_first is the same control for step 07.

struct Dims {
  M: u32,
  K: u32,
  N: u32,
}

override BM: u32 = 128;
override BN: u32 = 128;
override BK: u32 = 8;
override THREADS: u32 = (BM / 8u) * (BN / 8u);
// 0: the eight loads before the first store; 1: the step's order (each element stored before the
// next is loaded), still written out: against 0 only the order differs, against kernel.wgsl only
// the loops are gone.
override IN_ORDER: u32 = 0u;

@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> B: array<f32>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

var<workgroup> As: array<f32, BM * BK>;
var<workgroup> Bs: array<f32, BK * BN>;

fn store4(row: u32, col: u32, v: vec4<f32>) {
  if (row >= dims.M) {
    return;
  }
  let base = row * dims.N + col;
  if (col < dims.N) { C[base] = v.x; }
  if (col + 1u < dims.N) { C[base + 1u] = v.y; }
  if (col + 2u < dims.N) { C[base + 2u] = v.z; }
  if (col + 3u < dims.N) { C[base + 3u] = v.w; }
}

// Element i of the A tile (row i / BK, column i % BK) and of the B tile (row i / BN, column i % BN),
// zero past M, N or K, as kernel.wgsl's loops load them.
fn loadA(i: u32, m0: u32, k0: u32) -> f32 {
  let r = m0 + i / BK;
  let k = k0 + i % BK;
  return select(0.0, A[r * dims.K + k], r < dims.M && k < dims.K);
}

fn loadB(i: u32, n0: u32, k0: u32) -> f32 {
  let k = k0 + i / BN;
  let c = n0 + i % BN;
  return select(0.0, B[k * dims.N + c], k < dims.K && c < dims.N);
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
    // Each invocation's four A and four B elements (BM * BK = BK * BN = 4 * THREADS, step.ts
    // checks), THREADS apart.
    if (IN_ORDER == 1u) {
      As[tid] = loadA(tid, m0, k0);
      As[tid + THREADS] = loadA(tid + THREADS, m0, k0);
      As[tid + 2u * THREADS] = loadA(tid + 2u * THREADS, m0, k0);
      As[tid + 3u * THREADS] = loadA(tid + 3u * THREADS, m0, k0);
      Bs[tid] = loadB(tid, n0, k0);
      Bs[tid + THREADS] = loadB(tid + THREADS, n0, k0);
      Bs[tid + 2u * THREADS] = loadB(tid + 2u * THREADS, n0, k0);
      Bs[tid + 3u * THREADS] = loadB(tid + 3u * THREADS, n0, k0);
    } else {
      // All eight loads are issued before the first store.
      let a0 = loadA(tid, m0, k0);
      let a1 = loadA(tid + THREADS, m0, k0);
      let a2 = loadA(tid + 2u * THREADS, m0, k0);
      let a3 = loadA(tid + 3u * THREADS, m0, k0);
      let b0 = loadB(tid, n0, k0);
      let b1 = loadB(tid + THREADS, n0, k0);
      let b2 = loadB(tid + 2u * THREADS, n0, k0);
      let b3 = loadB(tid + 3u * THREADS, n0, k0);
      As[tid] = a0;
      As[tid + THREADS] = a1;
      As[tid + 2u * THREADS] = a2;
      As[tid + 3u * THREADS] = a3;
      Bs[tid] = b0;
      Bs[tid + THREADS] = b1;
      Bs[tid + 2u * THREADS] = b2;
      Bs[tid + 3u * THREADS] = b3;
    }
    workgroupBarrier();
    if (computes) {
      for (var p = 0u; p < BK; p++) {
        let a = ty * 8u * BK + p;
        let a0 = vec4<f32>(As[a], As[a + BK], As[a + 2u * BK], As[a + 3u * BK]);
        let a1 = vec4<f32>(As[a + 4u * BK], As[a + 5u * BK], As[a + 6u * BK], As[a + 7u * BK]);
        let b = p * BN + tx * 8u;
        let b0 = vec4<f32>(Bs[b], Bs[b + 1u], Bs[b + 2u], Bs[b + 3u]);
        let b1 = vec4<f32>(Bs[b + 4u], Bs[b + 5u], Bs[b + 6u], Bs[b + 7u]);
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
  store4(row, col, c00); store4(row, col + 4u, c01);
  store4(row + 1u, col, c10); store4(row + 1u, col + 4u, c11);
  store4(row + 2u, col, c20); store4(row + 2u, col + 4u, c21);
  store4(row + 3u, col, c30); store4(row + 3u, col + 4u, c31);
  store4(row + 4u, col, c40); store4(row + 4u, col + 4u, c41);
  store4(row + 5u, col, c50); store4(row + 5u, col + 4u, c51);
  store4(row + 6u, col, c60); store4(row + 6u, col + 4u, c61);
  store4(row + 7u, col, c70); store4(row + 7u, col + 4u, c71);
}
