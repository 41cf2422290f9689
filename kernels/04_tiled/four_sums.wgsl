// tiled, four-sums variant (a control): kernel.wgsl with each invocation's dot product split into
// four partial sums, k steps p, p + 1, p + 2 and p + 3 of a tile each adding into its own, added
// together at the end. In kernel.wgsl every multiply-add waits for the one before it (one `sum`);
// here four are independent. Same tiles, barriers and loads, but the loop also changes shape (four
// k steps per trip): one_sum_by_four.wgsl keeps that loop with one sum, so the two together
// separate the chain of additions from the loop.

struct Dims {
  M: u32,
  K: u32,
  N: u32,
}

// A multiple of 4 (step.ts checks): the tile's k steps split evenly over the four sums.
override TILE: u32 = 16;

@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> B: array<f32>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@group(0) @binding(3) var<uniform> dims: Dims;

var<workgroup> As: array<f32, TILE * TILE>;
var<workgroup> Bs: array<f32, TILE * TILE>;

@compute @workgroup_size(TILE, TILE)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let row = wid.y * TILE + lid.y;
  let col = wid.x * TILE + lid.x;
  var sum0 = 0.0;
  var sum1 = 0.0;
  var sum2 = 0.0;
  var sum3 = 0.0;
  let tiles = (dims.K + TILE - 1u) / TILE;
  for (var t = 0u; t < tiles; t++) {
    let ka = t * TILE + lid.x;
    let kb = t * TILE + lid.y;
    As[lid.y * TILE + lid.x] = select(0.0, A[row * dims.K + ka], row < dims.M && ka < dims.K);
    Bs[lid.y * TILE + lid.x] = select(0.0, B[kb * dims.N + col], kb < dims.K && col < dims.N);
    workgroupBarrier();
    for (var p = 0u; p < TILE; p += 4u) {
      sum0 += As[lid.y * TILE + p] * Bs[p * TILE + lid.x];
      sum1 += As[lid.y * TILE + p + 1u] * Bs[(p + 1u) * TILE + lid.x];
      sum2 += As[lid.y * TILE + p + 2u] * Bs[(p + 2u) * TILE + lid.x];
      sum3 += As[lid.y * TILE + p + 3u] * Bs[(p + 3u) * TILE + lid.x];
    }
    workgroupBarrier();
  }
  if (row < dims.M && col < dims.N) {
    C[row * dims.N + col] = (sum0 + sum1) + (sum2 + sum3);
  }
}
