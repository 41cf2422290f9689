// Helpers the runner dispatches around the matmul kernels (not part of the ladder).
//
// copy2d: copies the top-left min(src, dst) corner of a row-major matrix into another of a
// different shape and zero-fills the rest. Used to pad A and B up to a kernel's tile multiples
// and to cut the padded C back to M x N, inside the timed pass so padding is never free.
// pad: copy2d into a destination whose rows are whole vec4s (dstCols a multiple of 4, as in
// the padded A and B): one 16-byte store per invocation instead of four 4-byte ones.
// fill: writes one 32-bit pattern everywhere (the runner poisons C with NaN before each check).
// sumSlices: adds the partial products of a split-K launch (slice s at s * sliceStride in
// parts) into C, slice 0 first, so the sum is the same on every run (deterministic).

struct Copy2d {
  srcRows: u32,
  srcCols: u32,
  dstRows: u32,
  dstCols: u32,
}

@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> cp: Copy2d;

@compute @workgroup_size(16, 16)
fn copy2d(@builtin(global_invocation_id) gid: vec3<u32>) {
  let row = gid.y;
  let col = gid.x;
  if (row >= cp.dstRows || col >= cp.dstCols) {
    return;
  }
  var v = 0u;
  if (row < cp.srcRows && col < cp.srcCols) {
    v = src[row * cp.srcCols + col];
  }
  dst[row * cp.dstCols + col] = v;
}

@group(0) @binding(5) var<storage, read_write> dst4: array<vec4<u32>>;

@compute @workgroup_size(64, 4)
fn pad(@builtin(global_invocation_id) gid: vec3<u32>) {
  let row = gid.y;
  let col = gid.x * 4u;
  if (row >= cp.dstRows || col >= cp.dstCols) {
    return;
  }
  var v = vec4<u32>(0u);
  if (row < cp.srcRows) {
    let at = row * cp.srcCols + col;
    if (col < cp.srcCols) { v.x = src[at]; }
    if (col + 1u < cp.srcCols) { v.y = src[at + 1u]; }
    if (col + 2u < cp.srcCols) { v.z = src[at + 2u]; }
    if (col + 3u < cp.srcCols) { v.w = src[at + 3u]; }
  }
  dst4[(row * cp.dstCols + col) / 4u] = v;
}

struct Fill {
  count: u32,
  pattern: u32,
  rowStride: u32,
  pad1: u32,
}

@group(0) @binding(3) var<storage, read_write> fill_dst: array<u32>;
@group(0) @binding(4) var<uniform> fill_args: Fill;

@compute @workgroup_size(256)
fn fill(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.y * fill_args.rowStride + gid.x;
  if (i < fill_args.count) {
    fill_dst[i] = fill_args.pattern;
  }
}

struct SumSlices {
  rows: u32,
  cols: u32,
  // Row stride of C and of each slice.
  ldc: u32,
  slices: u32,
  sliceStride: u32,
  // Invocations per grid row (the grid is 2D when one row of workgroups would be too long).
  rowStride: u32,
}

@group(0) @binding(6) var<storage, read> parts: array<f32>;
@group(0) @binding(7) var<storage, read_write> sums: array<f32>;
@group(0) @binding(8) var<uniform> sum_args: SumSlices;

@compute @workgroup_size(256)
fn sumSlices(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = gid.y * sum_args.rowStride + gid.x;
  if (i >= sum_args.rows * sum_args.cols) {
    return;
  }
  let at = (i / sum_args.cols) * sum_args.ldc + i % sum_args.cols;
  var total = parts[at];
  for (var s = 1u; s < sum_args.slices; s++) {
    total += parts[s * sum_args.sliceStride + at];
  }
  sums[at] = total;
}
