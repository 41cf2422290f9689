// Helpers the runner dispatches around the matmul kernels (not part of the ladder).
//
// copy2d: copies the top-left min(src, dst) corner of a row-major matrix into another of a
// different shape and zero-fills the rest. Used to pad A and B up to a kernel's tile multiples
// and to cut the padded C back to M x N, inside the timed pass so padding is never free.
// fill: writes one 32-bit pattern everywhere (the runner poisons C with NaN before each check).

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
