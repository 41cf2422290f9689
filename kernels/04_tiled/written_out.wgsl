// tiled with the inner loop written out (a control for steps.wgsl): the same tiles, loads,
// barriers and order of additions into the one `sum`, with a tile's 16 k steps as 16 lines and no
// inner loop left. steps.wgsl at STEPS = 16 asks the driver for this with a loop of fixed trip
// count; here it is written by hand, so whether the driver wrote that loop out does not matter.
// A 16 x 16 tile only (step.ts checks): the lines are written for it.
struct Dims {
  M: u32,
  K: u32,
  N: u32,
}

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
    sum += As[lid.y * 16u] * Bs[lid.x];
    sum += As[lid.y * 16u + 1u] * Bs[16u + lid.x];
    sum += As[lid.y * 16u + 2u] * Bs[32u + lid.x];
    sum += As[lid.y * 16u + 3u] * Bs[48u + lid.x];
    sum += As[lid.y * 16u + 4u] * Bs[64u + lid.x];
    sum += As[lid.y * 16u + 5u] * Bs[80u + lid.x];
    sum += As[lid.y * 16u + 6u] * Bs[96u + lid.x];
    sum += As[lid.y * 16u + 7u] * Bs[112u + lid.x];
    sum += As[lid.y * 16u + 8u] * Bs[128u + lid.x];
    sum += As[lid.y * 16u + 9u] * Bs[144u + lid.x];
    sum += As[lid.y * 16u + 10u] * Bs[160u + lid.x];
    sum += As[lid.y * 16u + 11u] * Bs[176u + lid.x];
    sum += As[lid.y * 16u + 12u] * Bs[192u + lid.x];
    sum += As[lid.y * 16u + 13u] * Bs[208u + lid.x];
    sum += As[lid.y * 16u + 14u] * Bs[224u + lid.x];
    sum += As[lid.y * 16u + 15u] * Bs[240u + lid.x];
    workgroupBarrier();
  }
  if (row < dims.M && col < dims.N) {
    C[row * dims.N + col] = sum;
  }
}
