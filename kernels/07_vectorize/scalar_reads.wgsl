// vectorize with 06's workgroup tiles (a control for kernel.wgsl): the same vec4 global loads
// and address bounds check, but the tiles are stored untransposed as scalars and read as 16
// scalars per k step, as in 06. Against kernel.wgsl only the workgroup-memory layout and reads
// differ.
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

// Out-of-bounds loads read the zero vec4 the runner keeps after A's and B's data, as in
// kernel.wgsl (whose comment says why the address, not the value, is selected).
@group(0) @binding(0) var<storage, read> A: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> B: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

// As[m * BK + k] and Bs[k * BN + n], scalars in row order, as in 06.
var<workgroup> As: array<f32, BM * BK>;
var<workgroup> Bs: array<f32, BK * BN>;

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
    // A tile: BM rows of BK/4 vec4s, each written as four scalars of its row.
    for (var i = tid; i < BM * BK / 4u; i += THREADS) {
      let r = i / (BK / 4u);
      let kq = (i % (BK / 4u)) * 4u;
      let gr = m0 + r;
      let gk = k0 + kq;
      let v = A[select(arrayLength(&A) - 1u, (gr * dims.K + gk) / 4u, gr < dims.M && gk < dims.K)];
      let at = r * BK + kq;
      As[at] = v.x;
      As[at + 1u] = v.y;
      As[at + 2u] = v.z;
      As[at + 3u] = v.w;
    }
    for (var i = tid; i < BK * BN / 4u; i += THREADS) {
      let gk = k0 + i / (BN / 4u);
      let gn = n0 + (i % (BN / 4u)) * 4u;
      let v = B[select(arrayLength(&B) - 1u, (gk * dims.N + gn) / 4u, gk < dims.K && gn < dims.N)];
      let at = i * 4u;
      Bs[at] = v.x;
      Bs[at + 1u] = v.y;
      Bs[at + 2u] = v.z;
      Bs[at + 3u] = v.w;
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
  store(row, col, c00); store(row, col + 4u, c01);
  store(row + 1u, col, c10); store(row + 1u, col + 4u, c11);
  store(row + 2u, col, c20); store(row + 2u, col + 4u, c21);
  store(row + 3u, col, c30); store(row + 3u, col + 4u, c31);
  store(row + 4u, col, c40); store(row + 4u, col + 4u, c41);
  store(row + 5u, col, c50); store(row + 5u, col + 4u, c51);
  store(row + 6u, col, c60); store(row + 6u, col + 4u, c61);
  store(row + 7u, col, c70); store(row + 7u, col + 4u, c71);
}
