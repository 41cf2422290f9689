// blocktile 2d, local-array variant (teaching demo): the same kernel as kernel.wgsl, but
// written the way CUDA code usually is, with the 8 x 8 accumulators and the A and B fragments
// in function-local arrays indexed inside loops. It computes the same result, many times slower
// on the H200. The likely cause (not measured directly): on wgpu every dynamic index into such
// an array is clamped, so the driver cannot resolve the indices to registers and keeps the
// arrays in local (off-chip) memory. Compare the two timings.

struct Dims {
  M: u32,
  K: u32,
  N: u32,
}

override BM: u32 = 128;
override BN: u32 = 128;
override BK: u32 = 8;
const TM: u32 = 8u;
const TN: u32 = 8u;
override THREADS: u32 = (BM / TM) * (BN / TN);

@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> B: array<f32>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

var<workgroup> As: array<f32, BM * BK>;
var<workgroup> Bs: array<f32, BK * BN>;

@compute @workgroup_size(THREADS)
fn main(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
  let m0 = wid.y * BM;
  let n0 = wid.x * BN;
  let tx = tid % (BN / TN);
  let ty = tid / (BN / TN);
  var acc: array<array<f32, TN>, TM>;
  var regA: array<f32, TM>;
  var regB: array<f32, TN>;
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
      for (var i = 0u; i < TM; i++) {
        regA[i] = As[(ty * TM + i) * BK + p];
      }
      for (var j = 0u; j < TN; j++) {
        regB[j] = Bs[p * BN + tx * TN + j];
      }
      for (var i = 0u; i < TM; i++) {
        for (var j = 0u; j < TN; j++) {
          acc[i][j] += regA[i] * regB[j];
        }
      }
    }
    workgroupBarrier();
  }
  for (var i = 0u; i < TM; i++) {
    for (var j = 0u; j < TN; j++) {
      let row = m0 + ty * TM + i;
      let col = n0 + tx * TN + j;
      if (row < dims.M && col < dims.N) {
        C[row * dims.N + col] = acc[i][j];
      }
    }
  }
}
