// tiled, one sum, STEPS k steps per trip (a control for one_sum_by_four.wgsl, which writes out
// STEPS = 4): the same tiles, loads, barriers and order of additions into the one `sum`, with the
// inner loop's trip split into STEPS k steps. Swept from 1 (kernel.wgsl's loop) to TILE (one trip
// per tile), it shows how the time depends on the k steps per trip.
struct Dims {
  M: u32,
  K: u32,
  N: u32,
}

override TILE: u32 = 16;
// k steps per trip of the inner loop, a divisor of TILE (step.ts checks).
override STEPS: u32 = 4;

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
    for (var p = 0u; p < TILE; p += STEPS) {
      // A trip count fixed when the pipeline is made: the driver may write this loop out.
      for (var u = 0u; u < STEPS; u++) {
        sum += As[lid.y * TILE + p + u] * Bs[(p + u) * TILE + lid.x];
      }
    }
    workgroupBarrier();
  }
  if (row < dims.M && col < dims.N) {
    C[row * dims.N + col] = sum;
  }
}
