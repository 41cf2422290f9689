// bank conflicts: 07 with a workgroup-memory layout and thread mapping that avoid bank
// conflicts. Workgroup memory is split into 32 banks of 4 bytes; when invocations of one
// subgroup touch different addresses in the same bank, the accesses are serialised.
//
// Two changes, nothing else:
// - Mapping: in 07 invocation tx read the vec4s at columns tx*8 and tx*8+4, so neighbours were
//   32 bytes apart and every other 16-byte slot was skipped. Here each invocation owns columns
//   tx*4 and BN/2 + tx*4 (and rows ty*4 and BM/2 + ty*4): neighbours read adjacent vec4s.
// - Padding: the transposed A tile gets PAD extra vec4s per row, so the four scalar stores of
//   one loaded vec4 (k, k+1, k+2, k+3 of one row) land in different banks from those of the
//   neighbouring invocations. On the H200 this measured no gain (the stores run once per tile,
//   and the mapping is what pays); PAD stays a parameter to show that.
// Invocation (tx, ty) still owns 8 x 8 outputs: 2 x 2 blocks of 4 x 4.

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
override THREADS: u32 = (BM / 8u) * (BN / 8u);
// Row stride of the transposed A tile, in vec4s.
override AS: u32 = BM / 4u + PAD;

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

@compute @workgroup_size(THREADS)
fn main(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
  let m0 = wid.y * BM;
  let n0 = wid.x * BN;
  let tx = tid % (BN / 8u);
  let ty = tid / (BN / 8u);
  // vec4 offsets of this invocation's two A fragments and two B fragments within a tile row.
  let a0At = ty;
  let a1At = BM / 8u + ty;
  let b0At = tx;
  let b1At = BN / 8u + tx;
  // Invocations whose whole block lies past M or N skip the multiply-adds, as in 07.
  let computes = m0 + ty * 4u < dims.M && n0 + tx * 4u < dims.N;
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
    for (var i = tid; i < BM * BK / 4u; i += THREADS) {
      let r = i / (BK / 4u);
      let kq = (i % (BK / 4u)) * 4u;
      let gr = m0 + r;
      let gk = k0 + kq;
      let v = A[select(arrayLength(&A) - 1u, (gr * dims.K + gk) / 4u, gr < dims.M && gk < dims.K)];
      let at = kq * AS + r / 4u;
      let lane = r % 4u;
      As[at][lane] = v.x;
      As[at + AS][lane] = v.y;
      As[at + 2u * AS][lane] = v.z;
      As[at + 3u * AS][lane] = v.w;
    }
    for (var i = tid; i < BK * BN / 4u; i += THREADS) {
      let gk = k0 + i / (BN / 4u);
      let gn = n0 + (i % (BN / 4u)) * 4u;
      Bs[i] = B[select(arrayLength(&B) - 1u, (gk * dims.N + gn) / 4u, gk < dims.K && gn < dims.N)];
    }
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
