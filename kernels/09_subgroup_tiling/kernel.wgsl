// subgroup tiling: a third level in the tiling hierarchy. Workgroup tile -> subgroup
// ("warp") tile -> invocation tile. Each group of 32 consecutive invocations owns a 32 x 64
// block of the workgroup tile, laid out as 4 x 8 invocations, each with 2 x 2 blocks of 4 x 4
// outputs (rows ly*4 and 16 + ly*4, columns lx*4 and 32 + lx*4 of the warp tile).
//
// Why: at each k step a subgroup reads its A and B fragments from workgroup memory. In 08 one
// subgroup of 32 spanned 2 rows x 16 columns of invocations: 2 distinct A vec4s and 16
// distinct B vec4s per read. Here it spans 4 x 8: 4 distinct A vec4s and 8 distinct B vec4s.
// A 16-byte read is served in 4 phases of 8 invocations either way, so both layouts take 4
// wavefronts per read: the layout changes which vec4s each phase touches, not how many. It is
// the block the next steps pipeline (10) and widen (11). WARP_TILES = 0 keeps 08's mapping, so
// one constant compares the two layouts here and in 10.
//
// The groups of 32 are a mapping of local_invocation_index, not a claim about the hardware:
// the kernel is correct for any subgroup size (NVIDIA 32, lavapipe 8); the layout pays where
// the subgroup really is 32 wide. Subgroup operations (shuffles, broadcasts) are not used:
// every value an invocation needs is already one broadcast-friendly workgroup-memory read
// away, and on NVIDIA a shuffle goes through the same crossbar at the same rate as that read,
// so trading reads for shuffles buys nothing here.
//
// Tile: BM x BN (BM a multiple of 32, BN of 64), (BM / 8) * (BN / 8) invocations.

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
// 1: 09's subgroup tiles; 0: 08's flat mapping. Both mappings are computed; select() keeps one.
override WARP_TILES: u32 = 1u;
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
  let warp = tid / 32u;
  let lane = tid % 32u;
  let wx = warp % (BN / 64u);
  let wy = warp / (BN / 64u);
  let lx = lane % 8u;
  let ly = lane / 8u;
  // 08's flat mapping, which WARP_TILES = 0 runs instead: invocation (tx, ty) of a BN / 8 grid.
  let tx = tid % (BN / 8u);
  let ty = tid / (BN / 8u);
  let warpTiles = WARP_TILES == 1u;
  // vec4 offsets of this invocation's two A fragments and two B fragments within a tile row.
  let a0At = select(ty, wy * 8u + ly, warpTiles);
  let a1At = select(BM / 8u + ty, wy * 8u + 4u + ly, warpTiles);
  let b0At = select(tx, wx * 16u + lx, warpTiles);
  let b1At = select(BN / 8u + tx, wx * 16u + 8u + lx, warpTiles);
  // Subgroups whose whole 32 x 64 block lies past M or N skip the multiply-adds: at the
  // right and bottom edges most of a tile's subgroups do, so edge tiles cost little.
  let computes = select(
    m0 + ty * 4u < dims.M && n0 + tx * 4u < dims.N,
    m0 + wy * 32u < dims.M && n0 + wx * 64u < dims.N,
    warpTiles,
  );
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
