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

// A workgroup is GROUPS groups of LANES invocations (a subgroup on most GPUs). The runner and the
// cost model (lib/kernels/cost.ts) mirror LANES, GROUPS and WIDTH; a test checks they agree.
const LANES = 32u;
const GROUPS = 8u;
// The most rows (bottom) or columns (right) a strip has: two vec4s per k. At the end group g
// adds up strip row g of the bottom strip, so WIDTH == GROUPS.
const WIDTH = 8u;
// K per chunk: the staging below takes KC == LANES * GROUPS (one k per invocation, bottom)
// and KC == 8 * LANES (8 per invocation, right).
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

// The whole operand at k clamped to K - 1 (the staged thin operand is zero there).
fn bAt(k: u32, col: u32) -> f32 {
  return B[min(k, s.K - 1u) * s.ldb + col];
}

fn aAt(row: u32, k: u32) -> f32 {
  return A[row * s.lda + min(k, s.K - 1u)];
}

// The thin operand for staging: zero past K.
fn stageA(row: u32, k: u32) -> f32 {
  return select(0.0, A[row * s.lda + min(k, s.K - 1u)], k < s.K);
}

fn stageB(k: u32, col: u32) -> f32 {
  return select(0.0, B[min(k, s.K - 1u) * s.ldb + col], k < s.K);
}

// Four k (kk, kk + step, kk + 2 step, kk + 3 step) of the whole operand, q, times the thin one.
fn accumulate(
  kk: u32,
  q: vec4<f32>,
  step: u32,
  lo: ptr<function, vec4<f32>>,
  hi: ptr<function, vec4<f32>>,
) {
  *lo += thin[2u * kk] * q.x + thin[2u * (kk + step)] * q.y;
  *hi += thin[2u * kk + 1u] * q.x + thin[2u * (kk + step) + 1u] * q.y;
  *lo += thin[2u * (kk + 2u * step)] * q.z + thin[2u * (kk + 3u * step)] * q.w;
  *hi += thin[2u * (kk + 2u * step) + 1u] * q.z + thin[2u * (kk + 3u * step) + 1u] * q.w;
}

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
  // A GPU stalls at the first use of a pending load, so a loop that loads and uses one value
  // per trip has one load in flight. Here every step issues its loads (8 or 16) before using any.
  for (var k0 = 0u; k0 < s.K; k0 += KC) {
    // Stage the thin operand, KC x WIDTH floats, 8 per invocation, neighbours reading
    // neighbouring floats: along k in A's rows, along the strip's columns in B's rows.
    if (bottom) {
      // Invocation tid stages k0 + tid of the strip's 8 rows (rows past M repeat the last).
      let k = k0 + tid;
      let last = s.M - 1u;
      let v0 = stageA(min(s.rowsFrom, last), k);
      let v1 = stageA(min(s.rowsFrom + 1u, last), k);
      let v2 = stageA(min(s.rowsFrom + 2u, last), k);
      let v3 = stageA(min(s.rowsFrom + 3u, last), k);
      let v4 = stageA(min(s.rowsFrom + 4u, last), k);
      let v5 = stageA(min(s.rowsFrom + 5u, last), k);
      let v6 = stageA(min(s.rowsFrom + 6u, last), k);
      let v7 = stageA(min(s.rowsFrom + 7u, last), k);
      thin[2u * tid] = vec4<f32>(v0, v1, v2, v3);
      thin[2u * tid + 1u] = vec4<f32>(v4, v5, v6, v7);
    } else {
      // Invocation tid stages strip column w = tid % 8 at k0 + tid / 8 + 32 j, j = 0..7.
      let w = tid % WIDTH;
      let kk = tid / WIDTH;
      let c = min(s.colsFrom + w, s.N - 1u);
      let v0 = stageB(k0 + kk, c);
      let v1 = stageB(k0 + kk + 32u, c);
      let v2 = stageB(k0 + kk + 64u, c);
      let v3 = stageB(k0 + kk + 96u, c);
      let v4 = stageB(k0 + kk + 128u, c);
      let v5 = stageB(k0 + kk + 160u, c);
      let v6 = stageB(k0 + kk + 192u, c);
      let v7 = stageB(k0 + kk + 224u, c);
      let at = 2u * kk + w / 4u;
      thin[at][w % 4u] = v0;
      thin[at + 64u][w % 4u] = v1;
      thin[at + 128u][w % 4u] = v2;
      thin[at + 192u][w % 4u] = v3;
      thin[at + 256u][w % 4u] = v4;
      thin[at + 320u][w % 4u] = v5;
      thin[at + 384u][w % 4u] = v6;
      thin[at + 448u][w % 4u] = v7;
    }
    workgroupBarrier();
    if (bottom) {
      // KC / GROUPS = 32 k per invocation: two steps of 16 loads of B.
      for (var t = 0u; t < KC / GROUPS; t += 16u) {
        let kk = t * GROUPS + group;
        let k = k0 + kk;
        let G = GROUPS;
        let q0 = vec4<f32>(
          bAt(k, colIn),
          bAt(k + G, colIn),
          bAt(k + 2u * G, colIn),
          bAt(k + 3u * G, colIn),
        );
        let q1 = vec4<f32>(
          bAt(k + 4u * G, colIn),
          bAt(k + 5u * G, colIn),
          bAt(k + 6u * G, colIn),
          bAt(k + 7u * G, colIn),
        );
        let q2 = vec4<f32>(
          bAt(k + 8u * G, colIn),
          bAt(k + 9u * G, colIn),
          bAt(k + 10u * G, colIn),
          bAt(k + 11u * G, colIn),
        );
        let q3 = vec4<f32>(
          bAt(k + 12u * G, colIn),
          bAt(k + 13u * G, colIn),
          bAt(k + 14u * G, colIn),
          bAt(k + 15u * G, colIn),
        );
        accumulate(kk, q0, G, &lo, &hi);
        accumulate(kk + 4u * G, q1, G, &lo, &hi);
        accumulate(kk + 8u * G, q2, G, &lo, &hi);
        accumulate(kk + 12u * G, q3, G, &lo, &hi);
      }
    } else {
      // KC / LANES = 8 k per invocation: one step of 8 loads of A.
      let kk = lane;
      let k = k0 + kk;
      let L = LANES;
      let q0 = vec4<f32>(
        aAt(rowIn, k),
        aAt(rowIn, k + L),
        aAt(rowIn, k + 2u * L),
        aAt(rowIn, k + 3u * L),
      );
      let q1 = vec4<f32>(
        aAt(rowIn, k + 4u * L),
        aAt(rowIn, k + 5u * L),
        aAt(rowIn, k + 6u * L),
        aAt(rowIn, k + 7u * L),
      );
      accumulate(kk, q0, L, &lo, &hi);
      accumulate(kk + 4u * L, q1, L, &lo, &hi);
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
