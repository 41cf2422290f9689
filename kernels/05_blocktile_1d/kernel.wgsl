// blocktile 1d: each invocation computes a column of 8 outputs (rows r..r+7 of one column)
// instead of one. Per step of the inner loop it reads one element of the B tile and reuses it
// for 8 multiply-adds, so workgroup-memory reads per multiply-add drop from 2 to 9/8.
//
// The 8 accumulators are two vec4 variables, indexed with constants only. A function-local
// array indexed in a loop would be the obvious way to write it, but it is many times slower on
// the H200 (06's local-array variant measures it). A hypothesis, not confirmed from the driver's
// output: wgpu clamps every dynamic index, so the driver cannot resolve the indices at compile
// time and keeps the array in local memory instead of registers.
//
// Tile: BM x BN outputs per workgroup, BK deep; BM * BN / 8 invocations.
// Edges: loads past M, N or K read zero; stores past M or N are skipped.

struct Dims {
  M: u32,
  K: u32,
  N: u32,
}

override BM: u32 = 64;
override BN: u32 = 64;
override BK: u32 = 8;
const TM: u32 = 8u;
override THREADS: u32 = BM * BN / TM;

@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> B: array<f32>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

var<workgroup> As: array<f32, BM * BK>;
var<workgroup> Bs: array<f32, BK * BN>;

fn store(row: u32, col: u32, v: f32) {
  if (row < dims.M && col < dims.N) {
    C[row * dims.N + col] = v;
  }
}

@compute @workgroup_size(THREADS)
fn main(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
  let m0 = wid.y * BM;
  let n0 = wid.x * BN;
  let col = tid % BN;
  let r0 = (tid / BN) * TM;
  var acc0 = vec4<f32>(0.0);
  var acc1 = vec4<f32>(0.0);
  let tiles = (dims.K + BK - 1u) / BK;
  for (var t = 0u; t < tiles; t++) {
    let k0 = t * BK;
    for (var i = tid; i < BM * BK; i += THREADS) {
      let r = m0 + i / BK;
      let k = k0 + i % BK;
      As[i] = select(0.0, A[r * dims.K + k], r < dims.M && k < dims.K);
    }
    for (var i = tid; i < BK * BN; i += THREADS) {
      let k = k0 + i / BN;
      let c = n0 + i % BN;
      Bs[i] = select(0.0, B[k * dims.N + c], k < dims.K && c < dims.N);
    }
    workgroupBarrier();
    for (var p = 0u; p < BK; p++) {
      let b = Bs[p * BN + col];
      let a = r0 * BK + p;
      acc0 += b * vec4<f32>(As[a], As[a + BK], As[a + 2u * BK], As[a + 3u * BK]);
      acc1 += b * vec4<f32>(As[a + 4u * BK], As[a + 5u * BK], As[a + 6u * BK], As[a + 7u * BK]);
    }
    workgroupBarrier();
  }
  let row = m0 + r0;
  let c = n0 + col;
  store(row, c, acc0.x);
  store(row + 1u, c, acc0.y);
  store(row + 2u, c, acc0.z);
  store(row + 3u, c, acc0.w);
  store(row + 4u, c, acc1.x);
  store(row + 5u, c, acc1.y);
  store(row + 6u, c, acc1.z);
  store(row + 7u, c, acc1.w);
}
