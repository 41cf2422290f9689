// FP32 ceiling: as many independent fused multiply-adds as the GPU can issue.
//
// Each invocation keeps CHAINS vec4 accumulators (4 x CHAINS independent scalar chains) in
// named variables, never in an array: wgpu clamps dynamic array indexes and arrays indexed in
// loops end up in slow local memory. The loop body is unrolled ROUNDS = 8 times so the loop
// counter and branch cost little next to the FMAs. x and y come from a uniform, and the result
// is stored only when it equals a runtime sentinel that never matches, so the compiler can
// neither fold the arithmetic nor drop it. a = a * x + y with x < 1 converges to y / (1 - x):
// no overflow, no denormals. FLOPs per invocation: iters * ROUNDS * CHAINS * 4 lanes * 2.

struct Params {
  iters: u32,
  x: f32,
  y: f32,
  sentinel: f32,
}

override WG: u32 = 256;
// vec4 accumulators in use: 2, 4 or 8 (the others stay constant and are removed).
override CHAINS: u32 = 8;

@group(0) @binding(0) var<storage, read_write> sink: array<f32>;
@group(0) @binding(1) var<uniform> params: Params;

@compute @workgroup_size(WG)
fn fma_peak(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(local_invocation_id) lid: vec3<u32>,
  @builtin(num_workgroups) groups: vec3<u32>,
) {
  let index = (wid.y * groups.x + wid.x) * WG + lid.x;
  let s = f32(index & 15u) * 0.0625;
  var a0 = vec4<f32>(s, s + 0.1, s + 0.2, s + 0.3);
  var a1 = a0 + 0.01;
  var a2 = a0 + 0.02;
  var a3 = a0 + 0.03;
  var a4 = a0 + 0.04;
  var a5 = a0 + 0.05;
  var a6 = a0 + 0.06;
  var a7 = a0 + 0.07;
  let x = vec4<f32>(params.x);
  let y = vec4<f32>(params.y);
  for (var i = 0u; i < params.iters; i++) {
    a0 = fma(a0, x, y); a1 = fma(a1, x, y);
    if (CHAINS >= 4u) { a2 = fma(a2, x, y); a3 = fma(a3, x, y); }
    if (CHAINS >= 8u) {
      a4 = fma(a4, x, y); a5 = fma(a5, x, y); a6 = fma(a6, x, y); a7 = fma(a7, x, y);
    }
    a0 = fma(a0, x, y); a1 = fma(a1, x, y);
    if (CHAINS >= 4u) { a2 = fma(a2, x, y); a3 = fma(a3, x, y); }
    if (CHAINS >= 8u) {
      a4 = fma(a4, x, y); a5 = fma(a5, x, y); a6 = fma(a6, x, y); a7 = fma(a7, x, y);
    }
    a0 = fma(a0, x, y); a1 = fma(a1, x, y);
    if (CHAINS >= 4u) { a2 = fma(a2, x, y); a3 = fma(a3, x, y); }
    if (CHAINS >= 8u) {
      a4 = fma(a4, x, y); a5 = fma(a5, x, y); a6 = fma(a6, x, y); a7 = fma(a7, x, y);
    }
    a0 = fma(a0, x, y); a1 = fma(a1, x, y);
    if (CHAINS >= 4u) { a2 = fma(a2, x, y); a3 = fma(a3, x, y); }
    if (CHAINS >= 8u) {
      a4 = fma(a4, x, y); a5 = fma(a5, x, y); a6 = fma(a6, x, y); a7 = fma(a7, x, y);
    }
    a0 = fma(a0, x, y); a1 = fma(a1, x, y);
    if (CHAINS >= 4u) { a2 = fma(a2, x, y); a3 = fma(a3, x, y); }
    if (CHAINS >= 8u) {
      a4 = fma(a4, x, y); a5 = fma(a5, x, y); a6 = fma(a6, x, y); a7 = fma(a7, x, y);
    }
    a0 = fma(a0, x, y); a1 = fma(a1, x, y);
    if (CHAINS >= 4u) { a2 = fma(a2, x, y); a3 = fma(a3, x, y); }
    if (CHAINS >= 8u) {
      a4 = fma(a4, x, y); a5 = fma(a5, x, y); a6 = fma(a6, x, y); a7 = fma(a7, x, y);
    }
    a0 = fma(a0, x, y); a1 = fma(a1, x, y);
    if (CHAINS >= 4u) { a2 = fma(a2, x, y); a3 = fma(a3, x, y); }
    if (CHAINS >= 8u) {
      a4 = fma(a4, x, y); a5 = fma(a5, x, y); a6 = fma(a6, x, y); a7 = fma(a7, x, y);
    }
    a0 = fma(a0, x, y); a1 = fma(a1, x, y);
    if (CHAINS >= 4u) { a2 = fma(a2, x, y); a3 = fma(a3, x, y); }
    if (CHAINS >= 8u) {
      a4 = fma(a4, x, y); a5 = fma(a5, x, y); a6 = fma(a6, x, y); a7 = fma(a7, x, y);
    }
  }
  let total = (a0 + a1) + (a2 + a3) + (a4 + a5) + (a6 + a7);
  let sum = dot(total, vec4<f32>(1.0));
  if (sum == params.sentinel) {
    sink[index % arrayLength(&sink)] = sum;
  }
}
