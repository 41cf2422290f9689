// tiled: a workgroup of TILE x TILE invocations computes a TILE x TILE block of C. It walks
// K in steps of TILE: every invocation copies one element of A and one of B into workgroup
// memory, then all of them read the whole tile from there. Each global element is now loaded
// once per tile instead of once per multiply-add: TILE times less global traffic.
//
// Two barriers guard the shared tiles:
// - read-after-write (RAW): nobody may read the tile until every invocation has written its
//   element of it;
// - write-after-read (WAR): nobody may overwrite the tile with the next one until every
//   invocation has finished reading the current one.
// RAW_BARRIER and WAR_BARRIER exist only so the teaching variants can drop one and show the
// validation catching the race; the real kernel keeps both (1).
//
// Edges: elements past M, N or K are loaded as zero and contribute nothing, and invocations
// past the edge keep running (they must reach every barrier) but do not store.

struct Dims {
  M: u32,
  K: u32,
  N: u32,
}

override TILE: u32 = 16;
override RAW_BARRIER: u32 = 1;
override WAR_BARRIER: u32 = 1;

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
    if (RAW_BARRIER != 0u) {
      workgroupBarrier();
    }
    for (var p = 0u; p < TILE; p++) {
      sum += As[lid.y * TILE + p] * Bs[p * TILE + lid.x];
    }
    if (WAR_BARRIER != 0u) {
      workgroupBarrier();
    }
  }
  if (row < dims.M && col < dims.N) {
    C[row * dims.N + col] = sum;
  }
}
