// coalesce: the naive kernel with one change, x now walks the COLUMNS of C.
//
// Invocations of one subgroup have consecutive local_invocation_id.x, so they now read
// consecutive elements of a row of B and write consecutive elements of a row of C: one
// memory transaction serves many of them. They read one or two elements of A (one per row of
// C they cover), each broadcast. The arithmetic is unchanged; only the mapping of ids to elements moved.

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
  let col = gid.x;
  let row = gid.y;
  if (row >= dims.M || col >= dims.N) {
    return;
  }
  var sum = 0.0;
  for (var p = 0u; p < dims.K; p++) {
    sum += A[row * dims.K + p] * B[p * dims.N + col];
  }
  C[row * dims.N + col] = sum;
}
