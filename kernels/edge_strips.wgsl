// Thin edges of C for the big-tile kernels (06-11). When M or N ends a few rows or columns past
// a whole number of tiles (4097 = 32 x 128 + 1), one more row or column of tiles would each do
// a row's worth of work while running the whole K loop, and push the grid into one more, nearly
// empty wave. The runner then launches only the whole tiles, and this kernel for the rest:
// - the bottom strip: rows rowsFrom..M-1 (at most WIDTH of them), every column;
// - the right strip: columns colsFrom..N-1 (at most WIDTH), the rows above the bottom strip.
// Each is a skinny product that reads one operand whole (B for the bottom strip, A for the right
// one) and does little arithmetic per byte, so what matters is keeping many loads in flight:
// every workgroup splits K over SLICES groups of LANES invocations and adds their partial sums
// in workgroup memory at the end.

struct Strips {
  M: u32,
  K: u32,
  N: u32,
  // Row strides of A and B as stored (padded for the vec4 kernels), and of C.
  lda: u32,
  ldb: u32,
  ldc: u32,
  // First row of the bottom strip (M when there is none), first column of the right strip (N
  // when there is none).
  rowsFrom: u32,
  colsFrom: u32,
  // Workgroups 0..bottomGroups-1 do the bottom strip, the rest the right strip.
  bottomGroups: u32,
}

// Columns of the bottom strip, or rows of the right strip, per workgroup: one per lane, so the
// lanes of a subgroup read neighbouring floats of B (bottom) or store neighbouring rows (right).
const LANES = 32u;
// K is split over this many groups of LANES invocations.
const SLICES = 8u;
// The most rows (bottom) or columns (right) a strip has: two vec4 accumulators. After the K
// loop, group s adds up the slices' sums of strip row (or column) s, so WIDTH == SLICES.
const WIDTH = 8u;

@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> B: array<f32>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@group(0) @binding(3) var<uniform> s: Strips;

// partial[(slice * WIDTH + w) * LANES + lane]: one slice's sum for strip row (or column) w.
var<workgroup> partial: array<f32, SLICES * WIDTH * LANES>;

@compute @workgroup_size(LANES, SLICES)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let lane = lid.x;
  let slice = lid.y;
  let bottom = wid.x < s.bottomGroups;
  // Strip rows (bottom) or columns (right) 0-3 and 4-7 of this lane's sums.
  var lo = vec4<f32>(0.0);
  var hi = vec4<f32>(0.0);
  // The lane's place along the strip's long side; lanes past its end repeat the last column
  // (or row) so every load is in bounds, and store nothing.
  var along: u32;
  if (bottom) {
    along = wid.x * LANES + lane;
    let col = min(along, s.N - 1u);
    // Row offsets into A of the strip's rows; rows past M repeat the last one.
    let last = s.M - 1u;
    let r0 = min(s.rowsFrom, last) * s.lda;
    let r1 = min(s.rowsFrom + 1u, last) * s.lda;
    let r2 = min(s.rowsFrom + 2u, last) * s.lda;
    let r3 = min(s.rowsFrom + 3u, last) * s.lda;
    let r4 = min(s.rowsFrom + 4u, last) * s.lda;
    let r5 = min(s.rowsFrom + 5u, last) * s.lda;
    let r6 = min(s.rowsFrom + 6u, last) * s.lda;
    let r7 = min(s.rowsFrom + 7u, last) * s.lda;
    // Slices take groups of 4 consecutive k in turn; the 4 loads of a group are independent.
    for (var k4 = slice * 4u; k4 < s.K; k4 += SLICES * 4u) {
      for (var u = 0u; u < 4u; u++) {
        let k = min(k4 + u, s.K - 1u);
        let b = select(0.0, B[k * s.ldb + col], k4 + u < s.K);
        lo += vec4<f32>(A[r0 + k], A[r1 + k], A[r2 + k], A[r3 + k]) * b;
        hi += vec4<f32>(A[r4 + k], A[r5 + k], A[r6 + k], A[r7 + k]) * b;
      }
    }
  } else {
    along = (wid.x - s.bottomGroups) * LANES + lane;
    let row = min(along, s.rowsFrom - 1u) * s.lda;
    let last = s.N - 1u;
    let c0 = min(s.colsFrom, last);
    let c1 = min(s.colsFrom + 1u, last);
    let c2 = min(s.colsFrom + 2u, last);
    let c3 = min(s.colsFrom + 3u, last);
    let c4 = min(s.colsFrom + 4u, last);
    let c5 = min(s.colsFrom + 5u, last);
    let c6 = min(s.colsFrom + 6u, last);
    let c7 = min(s.colsFrom + 7u, last);
    for (var k4 = slice * 4u; k4 < s.K; k4 += SLICES * 4u) {
      for (var u = 0u; u < 4u; u++) {
        let k = min(k4 + u, s.K - 1u);
        let a = select(0.0, A[row + k], k4 + u < s.K);
        let bk = k * s.ldb;
        lo += a * vec4<f32>(B[bk + c0], B[bk + c1], B[bk + c2], B[bk + c3]);
        hi += a * vec4<f32>(B[bk + c4], B[bk + c5], B[bk + c6], B[bk + c7]);
      }
    }
  }
  let at = slice * WIDTH * LANES + lane;
  partial[at] = lo.x;
  partial[at + LANES] = lo.y;
  partial[at + 2u * LANES] = lo.z;
  partial[at + 3u * LANES] = lo.w;
  partial[at + 4u * LANES] = hi.x;
  partial[at + 5u * LANES] = hi.y;
  partial[at + 6u * LANES] = hi.z;
  partial[at + 7u * LANES] = hi.w;
  workgroupBarrier();
  let w = slice;
  var sum = 0.0;
  for (var t = 0u; t < SLICES; t++) {
    sum += partial[(t * WIDTH + w) * LANES + lane];
  }
  if (bottom) {
    let row = s.rowsFrom + w;
    if (row < s.M && along < s.N) {
      C[row * s.ldc + along] = sum;
    }
  } else {
    let col = s.colsFrom + w;
    if (along < s.rowsFrom && col < s.N) {
      C[along * s.ldc + col] = sum;
    }
  }
}
