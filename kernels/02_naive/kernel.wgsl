// naive: one invocation computes one element of C = A * B.
// A is M x K, B is K x N, C is M x N, all row-major float32.
//
// global_invocation_id.x picks the ROW and .y the COLUMN. Invocations that run together
// (a subgroup) differ mostly in x, so at every step of the k loop their reads of A land K
// floats apart and their writes of C N floats apart: 16 sectors (the 32-byte blocks memory
// moves) each where 2 (A) and 4 (C) would do. Only B, read at neighbouring columns, comes in
// one. The caches serve most of A's reads again; when K is a multiple of 32 all 16 also fall
// in one bank of the L1 cache and queue there.
// coalesce, the next step, swaps the row and the column and nothing else.

struct Dims {
  M: u32,
  K: u32,
  N: u32,
}

override WG: u32 = 16;

@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> B: array<f32>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

@compute @workgroup_size(WG, WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let row = gid.x;
  let col = gid.y;
  // The grid is rounded up to whole workgroups: invocations past the edge do nothing.
  if (row >= dims.M || col >= dims.N) {
    return;
  }
  var sum = 0.0;
  for (var p = 0u; p < dims.K; p++) {
    sum += A[row * dims.K + p] * B[p * dims.N + col];
  }
  C[row * dims.N + col] = sum;
}
