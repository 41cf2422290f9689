// tiled, one sum in steps of four (a control for four_sums.wgsl): the same loop as four_sums.wgsl,
// four k steps of a tile per trip with the same reads of the tiles, but every product added into
// the one `sum`, in k order as kernel.wgsl adds them. Against four_sums.wgsl, only the chain of
// dependent additions differs; against kernel.wgsl, only the shape of the loop.
struct Dims {
  M: u32,
  K: u32,
  N: u32,
}

// A multiple of 4 (step.ts checks): four k steps per trip.
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
  var sum = 0.0;
  let tiles = (dims.K + TILE - 1u) / TILE;
  for (var t = 0u; t < tiles; t++) {
    let ka = t * TILE + lid.x;
    let kb = t * TILE + lid.y;
    As[lid.y * TILE + lid.x] = select(0.0, A[row * dims.K + ka], row < dims.M && ka < dims.K);
    Bs[lid.y * TILE + lid.x] = select(0.0, B[kb * dims.N + col], kb < dims.K && col < dims.N);
    workgroupBarrier();
    for (var p = 0u; p < TILE; p += 4u) {
      sum += As[lid.y * TILE + p] * Bs[p * TILE + lid.x];
      sum += As[lid.y * TILE + p + 1u] * Bs[(p + 1u) * TILE + lid.x];
      sum += As[lid.y * TILE + p + 2u] * Bs[(p + 2u) * TILE + lid.x];
      sum += As[lid.y * TILE + p + 3u] * Bs[(p + 3u) * TILE + lid.x];
    }
    workgroupBarrier();
  }
  if (row < dims.M && col < dims.N) {
    C[row * dims.N + col] = sum;
  }
}
