// coalesce with its k loop unrolled by four, four partial sums: a control for 03, not a rung.
//
// In naive and coalesce each invocation has one load of A and one of B in flight: it waits for
// them before it asks for more, so the time per k step is mostly the wait, whatever the loads
// cost the memory system. Here each trip issues four of each before the first multiply-add, so
// the memory system sees four times the requests at once, and what each access pattern costs in
// sectors can show. COLUMNS = 1: x picks the column of C, as coalesce; COLUMNS = 0: x picks the
// row, as naive. A K that is no multiple of four finishes in a plain loop.

struct Dims {
  M: u32,
  K: u32,
  N: u32,
}

override WG: u32 = 16;
override COLUMNS: u32 = 1u;

@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> B: array<f32>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

@compute @workgroup_size(WG, WG)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let col = select(gid.y, gid.x, COLUMNS == 1u);
  let row = select(gid.x, gid.y, COLUMNS == 1u);
  if (row >= dims.M || col >= dims.N) {
    return;
  }
  let a = row * dims.K;
  let n = dims.N;
  var s0 = 0.0;
  var s1 = 0.0;
  var s2 = 0.0;
  var s3 = 0.0;
  var p = 0u;
  for (; p + 4u <= dims.K; p += 4u) {
    let a0 = A[a + p];
    let a1 = A[a + p + 1u];
    let a2 = A[a + p + 2u];
    let a3 = A[a + p + 3u];
    let b0 = B[p * n + col];
    let b1 = B[(p + 1u) * n + col];
    let b2 = B[(p + 2u) * n + col];
    let b3 = B[(p + 3u) * n + col];
    s0 += a0 * b0;
    s1 += a1 * b1;
    s2 += a2 * b2;
    s3 += a3 * b3;
  }
  for (; p < dims.K; p++) {
    s0 += A[a + p] * B[p * n + col];
  }
  C[row * dims.N + col] = (s0 + s1) + (s2 + s3);
}
