// Memory-bandwidth ceiling: stream a buffer far larger than the last-level cache through the
// GPU as vec4<f32> (16-byte loads and stores, the widest WGSL has).
//
// Each invocation handles PER vec4s, `stride` elements apart, so that at every step the
// invocations of a subgroup touch consecutive addresses (coalesced), and the grid stays small
// enough to be resident. `copy_vec4` reads and writes (2 x bytes moved); `read_sum` only reads
// and keeps its sum in a register, storing it only when it equals a runtime sentinel that never
// matches, so the compiler cannot drop the loads. (Entry points cannot be named `copy` or
// `read`: naga takes `read` for the access mode.)

struct Params {
  count: u32, // vec4 elements in src (and dst)
  stride: u32, // invocations in the whole grid
  sentinel: f32,
  _pad: u32,
}

override WG: u32 = 256;
override PER: u32 = 4;

@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;
@group(0) @binding(2) var<uniform> params: Params;

// Dispatches larger than 65535 workgroups are split over y; flatten back to one index.
fn flatIndex(wid: vec3<u32>, lid: vec3<u32>, groups: vec3<u32>) -> u32 {
  return (wid.y * groups.x + wid.x) * WG + lid.x;
}

@compute @workgroup_size(WG)
fn copy_vec4(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(local_invocation_id) lid: vec3<u32>,
  @builtin(num_workgroups) groups: vec3<u32>,
) {
  let first = flatIndex(wid, lid, groups);
  for (var j = 0u; j < PER; j++) {
    let i = first + j * params.stride;
    if (i < params.count) {
      dst[i] = src[i];
    }
  }
}

@compute @workgroup_size(WG)
fn read_sum(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(local_invocation_id) lid: vec3<u32>,
  @builtin(num_workgroups) groups: vec3<u32>,
) {
  let first = flatIndex(wid, lid, groups);
  var sum = vec4<f32>(0.0);
  for (var j = 0u; j < PER; j++) {
    let i = first + j * params.stride;
    if (i < params.count) {
      sum += src[i];
    }
  }
  if (first < params.count && dot(sum, vec4<f32>(1.0)) == params.sentinel) {
    dst[first] = sum;
  }
}

// Fill the source with non-zero, non-repeating values before timing: some GPUs compress
// buffers of zeros, which would inflate the measured bandwidth.
@compute @workgroup_size(WG)
fn init(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(local_invocation_id) lid: vec3<u32>,
  @builtin(num_workgroups) groups: vec3<u32>,
) {
  let first = flatIndex(wid, lid, groups);
  for (var j = 0u; j < PER; j++) {
    let i = first + j * params.stride;
    if (i < params.count) {
      let h = (i * 2654435761u) ^ (i >> 7u);
      dst[i] = vec4<f32>(f32(h & 1023u), f32(i & 255u), f32(h >> 22u), 1.0) * 0.001;
    }
  }
}
