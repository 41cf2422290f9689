// Thin edges of C for the big-tile kernels (06-11). When M or N ends a few rows or columns past
// a whole number of tiles (4097 = 32 x 128 + 1), one more row or column of tiles would each do
// a row's worth of work while running the whole K loop, and push the grid into one more, nearly
// empty wave. The runner then launches only the whole tiles, and this kernel for the rest:
// - the bottom strip: rows rowsFrom..M-1 (at most WIDTH of them), every column;
// - the right strip: columns colsFrom..N-1 (at most WIDTH), the rows above the bottom strip.
// Each is a skinny product: one thin operand (the strip's rows of A, or columns of B) and one
// operand read whole (B, or A), with little arithmetic per byte. So the kernel is built for
// loads in flight: K goes in chunks of KC; each chunk of the thin operand is staged in
// workgroup memory, and every invocation issues KC / 8 or KC / 32 independent, coalesced loads
// of the whole operand before it needs the first.

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

// A workgroup is GROUPS groups of LANES invocations (a subgroup on most GPUs).
const LANES = 32u;
const GROUPS = 8u;
// The most rows (bottom) or columns (right) a strip has: two vec4s per k. At the end group g
// adds up strip row g of the bottom strip, so WIDTH == GROUPS.
const WIDTH = 8u;
// K per chunk.
const KC = 256u;

@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> B: array<f32>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@group(0) @binding(3) var<uniform> s: Strips;

// The thin operand for one chunk: thin[2 kk] holds strip rows (or columns) 0-3 at k0 + kk,
// thin[2 kk + 1] rows 4-7. Rows past the strip repeat its last one; k past K is zero.
var<workgroup> thin: array<vec4<f32>, 2u * KC>;
// Partial sums, added up after the K loop.
var<workgroup> partial: array<f32, GROUPS * WIDTH * LANES>;

@compute @workgroup_size(LANES, GROUPS)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let lane = lid.x;
  let group = lid.y;
  let tid = group * LANES + lane;
  let bottom = wid.x < s.bottomGroups;
  // Bottom strip: invocation (lane, group) owns column `col` and k = k0 + group + GROUPS t.
  // Right strip: group `group` owns row `row`, and its lanes take k = k0 + lane + LANES t.
  let col = wid.x * LANES + lane;
  let row = (wid.x - s.bottomGroups) * GROUPS + group;
  // Loads stay in bounds: lanes past N (or rows past the strip) repeat the last column (row)
  // and store nothing.
  let colIn = min(col, s.N - 1u);
  let rowIn = min(row, max(s.rowsFrom, 1u) - 1u);
  var lo = vec4<f32>(0.0);
  var hi = vec4<f32>(0.0);
  for (var k0 = 0u; k0 < s.K; k0 += KC) {
    // Stage the thin operand, KC x WIDTH floats, 8 per invocation, neighbours reading
    // neighbouring floats: along k in A's rows, along the strip's columns in B's rows.
    for (var i = tid; i < KC * WIDTH; i += LANES * GROUPS) {
      var w: u32;
      var kk: u32;
      var v = 0.0;
      if (bottom) {
        w = i / KC;
        kk = i % KC;
        let r = min(s.rowsFrom + w, s.M - 1u);
        if (k0 + kk < s.K) { v = A[r * s.lda + k0 + kk]; }
      } else {
        w = i % WIDTH;
        kk = i / WIDTH;
        let c = min(s.colsFrom + w, s.N - 1u);
        if (k0 + kk < s.K) { v = B[(k0 + kk) * s.ldb + c]; }
      }
      thin[2u * kk + w / 4u][w % 4u] = v;
    }
    workgroupBarrier();
    if (bottom) {
      for (var t = 0u; t < KC / GROUPS; t++) {
        let kk = t * GROUPS + group;
        let k = min(k0 + kk, s.K - 1u);
        let b = B[k * s.ldb + colIn];
        lo += thin[2u * kk] * b;
        hi += thin[2u * kk + 1u] * b;
      }
    } else {
      for (var t = 0u; t < KC / LANES; t++) {
        let kk = t * LANES + lane;
        let k = min(k0 + kk, s.K - 1u);
        let a = A[rowIn * s.lda + k];
        lo += a * thin[2u * kk];
        hi += a * thin[2u * kk + 1u];
      }
    }
    workgroupBarrier();
  }
  // partial[(group * WIDTH + w) * LANES + lane]: this invocation's sum for strip row (or
  // column) w.
  let at = group * WIDTH * LANES + lane;
  partial[at] = lo.x;
  partial[at + LANES] = lo.y;
  partial[at + 2u * LANES] = lo.z;
  partial[at + 3u * LANES] = lo.w;
  partial[at + 4u * LANES] = hi.x;
  partial[at + 5u * LANES] = hi.y;
  partial[at + 6u * LANES] = hi.z;
  partial[at + 7u * LANES] = hi.w;
  workgroupBarrier();
  if (bottom) {
    // Column `col`, strip row w = group: the sum over the groups (they split k).
    var sum = 0.0;
    for (var g = 0u; g < GROUPS; g++) {
      sum += partial[(g * WIDTH + group) * LANES + lane];
    }
    let r = s.rowsFrom + group;
    if (r < s.M && col < s.N) {
      C[r * s.ldc + col] = sum;
    }
  } else if (lane < WIDTH) {
    // Row `row`, strip column w = lane: the sum over the group's lanes (they split k).
    var sum = 0.0;
    for (var l = 0u; l < LANES; l++) {
      sum += partial[(group * WIDTH + lane) * LANES + l];
    }
    let c = s.colsFrom + lane;
    if (row < s.rowsFrom && c < s.N) {
      C[row * s.ldc + c] = sum;
    }
  }
}
