// Step 12 (generated): 128 x 128 tiles of C, k tiles of 8, 8 x 8 outputs
// per invocation, 256 invocations. Written by kernels/12_generated/generate.ts for
// BM=128 BN=128 BK=8 TN=8 PAD=0 GROUP_M=1 AHEAD=0.

struct Dims {
  M: u32,
  K: u32,
  N: u32,
  // Row stride of C: the real N (B's rows are padded to whole vec4s when N is not).
  ldc: u32,
}

// Out-of-bounds loads read the zero vec4 the runner keeps after A's and B's data.
@group(0) @binding(0) var<storage, read> A: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> B: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

// [buffer][k row][vec4 column]: A transposed (its columns are rows of C), B as it is.
var<workgroup> As: array<array<array<vec4<f32>, 32>, 8>, 2>;
var<workgroup> Bs: array<array<array<vec4<f32>, 32>, 8>, 2>;

// Four k values of row `row` of A, from column `k`.
fn loadA(row: u32, k: u32) -> vec4<f32> {
  return A[select(arrayLength(&A) - 1u, (row * dims.K + k) / 4u, row < dims.M && k < dims.K)];
}

// Four columns of row `k` of B, from column `col`.
fn loadB(k: u32, col: u32) -> vec4<f32> {
  return B[select(arrayLength(&B) - 1u, (k * dims.N + col) / 4u, k < dims.K && col < dims.N)];
}

// Row `row`, columns k..k+3 of the A tile go to k rows k..k+3 of the transposed tile.
fn stashA(buf: u32, row: u32, k: u32, v: vec4<f32>) {
  let at = row / 4u;
  let lane = row % 4u;
  As[buf][k][at][lane] = v.x;
  As[buf][k + 1u][at][lane] = v.y;
  As[buf][k + 2u][at][lane] = v.z;
  As[buf][k + 3u][at][lane] = v.w;
}

// Four scalar stores: a row of the unpadded C need not start on a 16-byte boundary.
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

// (tile row, tile column) of workgroup `wid`: 1 tile rows are walked column by column
// before moving on. The grid, not C's size, says how many tiles there are.
fn tileOf(wid: vec3<u32>, grid: vec3<u32>) -> vec2<u32> {
  let perGroup = 1u * grid.x;
  let linear = wid.y * grid.x + wid.x;
  let first = (linear / perGroup) * 1u;
  let rows = min(grid.y - first, 1u);
  let inGroup = linear % perGroup;
  return vec2<u32>(first + inGroup % rows, inGroup / rows);
}

@compute @workgroup_size(256)
fn main(
  @builtin(local_invocation_index) tid: u32,
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(num_workgroups) grid: vec3<u32>,
) {
  let tile = tileOf(wid, grid);
  let m0 = tile.x * 128u;
  let n0 = tile.y * 128u;
  // What this invocation loads: row aRow (+ 128 per further load), k columns aCol..+3
  // of the A tile; k row bRow (+ 8 per further load), vec4 column bVec of the B tile.
  let aRow = tid / 2u;
  let aCol = (tid % 2u) * 4u;
  let bRow = tid / 32u;
  let bVec = tid % 32u;
  let bCol = bVec * 4u;
  // What it computes: its subgroup owns 32 rows x 64 columns; its 4 x 8 lanes own rows
  // 4*ly and 16 + 4*ly (+0..3) and columns 4*lx + 32*j, j < 2.
  let warp = tid / 32u;
  let lane = tid % 32u;
  let wx = warp % 2u;
  let wy = warp / 2u;
  let lx = lane % 8u;
  let ly = lane / 8u;
  let a0At = wy * 8u + ly;
  let a1At = a0At + 4u;
  let b0At = wx * 16u + lx;
  let b1At = wx * 16u + lx + 8u;
  let computes = m0 + wy * 32u < dims.M && n0 + wx * 64u < dims.N;
  var c00 = vec4<f32>(0.0); var c01 = vec4<f32>(0.0);
  var c10 = vec4<f32>(0.0); var c11 = vec4<f32>(0.0);
  var c20 = vec4<f32>(0.0); var c21 = vec4<f32>(0.0);
  var c30 = vec4<f32>(0.0); var c31 = vec4<f32>(0.0);
  var c40 = vec4<f32>(0.0); var c41 = vec4<f32>(0.0);
  var c50 = vec4<f32>(0.0); var c51 = vec4<f32>(0.0);
  var c60 = vec4<f32>(0.0); var c61 = vec4<f32>(0.0);
  var c70 = vec4<f32>(0.0); var c71 = vec4<f32>(0.0);
  let tiles = (dims.K + 7u) / 8u;
  stashA(0u, aRow, aCol, loadA(m0 + aRow, aCol));
  Bs[0][bRow][bVec] = loadB(bRow, n0 + bCol);
  workgroupBarrier();
  for (var t = 0u; t < tiles; t += 1u) {
    let cur = t % 2u;
    let other = 1u - cur;
    {
      // Tile t + 1 into registers while tile t (buffer cur) is multiplied.
      let k1 = (t + 1u) * 8u;
      let hasNext = t + 1u < tiles;
      var la0: vec4<f32>;
      var lb0: vec4<f32>;
      if (hasNext) {
        la0 = loadA(m0 + aRow, k1 + aCol);
        lb0 = loadB(k1 + bRow, n0 + bCol);
      }
      if (computes) {
        let a0_0 = As[cur][0][a0At];
        let a1_0 = As[cur][0][a1At];
        let b0_0 = Bs[cur][0][b0At];
        let b1_0 = Bs[cur][0][b1At];
        c00 += a0_0.x * b0_0; c01 += a0_0.x * b1_0;
        c10 += a0_0.y * b0_0; c11 += a0_0.y * b1_0;
        c20 += a0_0.z * b0_0; c21 += a0_0.z * b1_0;
        c30 += a0_0.w * b0_0; c31 += a0_0.w * b1_0;
        c40 += a1_0.x * b0_0; c41 += a1_0.x * b1_0;
        c50 += a1_0.y * b0_0; c51 += a1_0.y * b1_0;
        c60 += a1_0.z * b0_0; c61 += a1_0.z * b1_0;
        c70 += a1_0.w * b0_0; c71 += a1_0.w * b1_0;
        let a0_1 = As[cur][1][a0At];
        let a1_1 = As[cur][1][a1At];
        let b0_1 = Bs[cur][1][b0At];
        let b1_1 = Bs[cur][1][b1At];
        c00 += a0_1.x * b0_1; c01 += a0_1.x * b1_1;
        c10 += a0_1.y * b0_1; c11 += a0_1.y * b1_1;
        c20 += a0_1.z * b0_1; c21 += a0_1.z * b1_1;
        c30 += a0_1.w * b0_1; c31 += a0_1.w * b1_1;
        c40 += a1_1.x * b0_1; c41 += a1_1.x * b1_1;
        c50 += a1_1.y * b0_1; c51 += a1_1.y * b1_1;
        c60 += a1_1.z * b0_1; c61 += a1_1.z * b1_1;
        c70 += a1_1.w * b0_1; c71 += a1_1.w * b1_1;
        let a0_2 = As[cur][2][a0At];
        let a1_2 = As[cur][2][a1At];
        let b0_2 = Bs[cur][2][b0At];
        let b1_2 = Bs[cur][2][b1At];
        c00 += a0_2.x * b0_2; c01 += a0_2.x * b1_2;
        c10 += a0_2.y * b0_2; c11 += a0_2.y * b1_2;
        c20 += a0_2.z * b0_2; c21 += a0_2.z * b1_2;
        c30 += a0_2.w * b0_2; c31 += a0_2.w * b1_2;
        c40 += a1_2.x * b0_2; c41 += a1_2.x * b1_2;
        c50 += a1_2.y * b0_2; c51 += a1_2.y * b1_2;
        c60 += a1_2.z * b0_2; c61 += a1_2.z * b1_2;
        c70 += a1_2.w * b0_2; c71 += a1_2.w * b1_2;
        let a0_3 = As[cur][3][a0At];
        let a1_3 = As[cur][3][a1At];
        let b0_3 = Bs[cur][3][b0At];
        let b1_3 = Bs[cur][3][b1At];
        c00 += a0_3.x * b0_3; c01 += a0_3.x * b1_3;
        c10 += a0_3.y * b0_3; c11 += a0_3.y * b1_3;
        c20 += a0_3.z * b0_3; c21 += a0_3.z * b1_3;
        c30 += a0_3.w * b0_3; c31 += a0_3.w * b1_3;
        c40 += a1_3.x * b0_3; c41 += a1_3.x * b1_3;
        c50 += a1_3.y * b0_3; c51 += a1_3.y * b1_3;
        c60 += a1_3.z * b0_3; c61 += a1_3.z * b1_3;
        c70 += a1_3.w * b0_3; c71 += a1_3.w * b1_3;
        let a0_4 = As[cur][4][a0At];
        let a1_4 = As[cur][4][a1At];
        let b0_4 = Bs[cur][4][b0At];
        let b1_4 = Bs[cur][4][b1At];
        c00 += a0_4.x * b0_4; c01 += a0_4.x * b1_4;
        c10 += a0_4.y * b0_4; c11 += a0_4.y * b1_4;
        c20 += a0_4.z * b0_4; c21 += a0_4.z * b1_4;
        c30 += a0_4.w * b0_4; c31 += a0_4.w * b1_4;
        c40 += a1_4.x * b0_4; c41 += a1_4.x * b1_4;
        c50 += a1_4.y * b0_4; c51 += a1_4.y * b1_4;
        c60 += a1_4.z * b0_4; c61 += a1_4.z * b1_4;
        c70 += a1_4.w * b0_4; c71 += a1_4.w * b1_4;
        let a0_5 = As[cur][5][a0At];
        let a1_5 = As[cur][5][a1At];
        let b0_5 = Bs[cur][5][b0At];
        let b1_5 = Bs[cur][5][b1At];
        c00 += a0_5.x * b0_5; c01 += a0_5.x * b1_5;
        c10 += a0_5.y * b0_5; c11 += a0_5.y * b1_5;
        c20 += a0_5.z * b0_5; c21 += a0_5.z * b1_5;
        c30 += a0_5.w * b0_5; c31 += a0_5.w * b1_5;
        c40 += a1_5.x * b0_5; c41 += a1_5.x * b1_5;
        c50 += a1_5.y * b0_5; c51 += a1_5.y * b1_5;
        c60 += a1_5.z * b0_5; c61 += a1_5.z * b1_5;
        c70 += a1_5.w * b0_5; c71 += a1_5.w * b1_5;
        let a0_6 = As[cur][6][a0At];
        let a1_6 = As[cur][6][a1At];
        let b0_6 = Bs[cur][6][b0At];
        let b1_6 = Bs[cur][6][b1At];
        c00 += a0_6.x * b0_6; c01 += a0_6.x * b1_6;
        c10 += a0_6.y * b0_6; c11 += a0_6.y * b1_6;
        c20 += a0_6.z * b0_6; c21 += a0_6.z * b1_6;
        c30 += a0_6.w * b0_6; c31 += a0_6.w * b1_6;
        c40 += a1_6.x * b0_6; c41 += a1_6.x * b1_6;
        c50 += a1_6.y * b0_6; c51 += a1_6.y * b1_6;
        c60 += a1_6.z * b0_6; c61 += a1_6.z * b1_6;
        c70 += a1_6.w * b0_6; c71 += a1_6.w * b1_6;
        let a0_7 = As[cur][7][a0At];
        let a1_7 = As[cur][7][a1At];
        let b0_7 = Bs[cur][7][b0At];
        let b1_7 = Bs[cur][7][b1At];
        c00 += a0_7.x * b0_7; c01 += a0_7.x * b1_7;
        c10 += a0_7.y * b0_7; c11 += a0_7.y * b1_7;
        c20 += a0_7.z * b0_7; c21 += a0_7.z * b1_7;
        c30 += a0_7.w * b0_7; c31 += a0_7.w * b1_7;
        c40 += a1_7.x * b0_7; c41 += a1_7.x * b1_7;
        c50 += a1_7.y * b0_7; c51 += a1_7.y * b1_7;
        c60 += a1_7.z * b0_7; c61 += a1_7.z * b1_7;
        c70 += a1_7.w * b0_7; c71 += a1_7.w * b1_7;
      }
      if (hasNext) {
        stashA(other, aRow, aCol, la0);
        Bs[other][bRow][bVec] = lb0;
      }
      workgroupBarrier();
    }
  }
  let r0 = m0 + a0At * 4u;
  let r1 = m0 + a1At * 4u;
  let col0 = n0 + (wx * 16u + lx) * 4u;
  store(r0, col0, c00); store(r0, col0 + 32u, c01);
  store(r0 + 1u, col0, c10); store(r0 + 1u, col0 + 32u, c11);
  store(r0 + 2u, col0, c20); store(r0 + 2u, col0 + 32u, c21);
  store(r0 + 3u, col0, c30); store(r0 + 3u, col0 + 32u, c31);
  store(r1, col0, c40); store(r1, col0 + 32u, c41);
  store(r1 + 1u, col0, c50); store(r1 + 1u, col0 + 32u, c51);
  store(r1 + 2u, col0, c60); store(r1 + 2u, col0 + 32u, c61);
  store(r1 + 3u, col0, c70); store(r1 + 3u, col0 + 32u, c71);
}

