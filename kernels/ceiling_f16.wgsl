// f16 ceiling: as many independent packed half-precision fused multiply-adds as the GPU can
// issue. `vec2<f16>` is the packed form (two halves in one 32-bit register, one instruction for
// both lanes on GPUs with packed f16 math), the form the f16 matmul kernel computes in.
//
// Each invocation keeps CHAINS vec2<f16> accumulators (2 x CHAINS independent scalar chains) in
// named variables, never in an array (arrays indexed in loops end up in slow local memory). The
// loop body is unrolled ROUNDS = 8 times so the loop counter and branch cost little next to the
// FMAs. x and y come from a uniform, so the compiler can fold nothing; and every invocation
// whose index fits in `sink` stores the f32 sum of its chains, so nothing can be dropped and
// the host can check the arithmetic against the same chains computed on the CPU. With x < 1,
// a = a * x + y converges to y / (1 - x): no overflow, no denormals. FLOPs per invocation:
// iters * ROUNDS * CHAINS * 2 lanes * 2.
enable f16;

struct Params {
  iters: u32,
  x: f32,
  y: f32,
  _pad: u32,
}

override WG: u32 = 256;
// vec2<f16> accumulators in use: 4, 8 or 16 (the others stay at their start values).
override CHAINS: u32 = 16;

@group(0) @binding(0) var<storage, read_write> sink: array<f32>;
@group(0) @binding(1) var<uniform> params: Params;

/** Sum of a chain's two lanes, in f32 (exact for the values the host checks). */
fn lanes(a: vec2<f16>) -> f32 {
  return f32(a.x) + f32(a.y);
}

@compute @workgroup_size(WG)
fn fma_peak(
  @builtin(workgroup_id) wid: vec3<u32>,
  @builtin(local_invocation_id) lid: vec3<u32>,
  @builtin(num_workgroups) groups: vec3<u32>,
) {
  let index = (wid.y * groups.x + wid.x) * WG + lid.x;
  // Start values k / 16 (exact in f16): chain j of invocation i starts at (i % 16 + j) / 16.
  let s = f16(index & 15u) * 0.0625h;
  var a0 = vec2<f16>(s, s + 0.0625h);
  var a1 = a0 + 0.125h;
  var a2 = a0 + 0.25h;
  var a3 = a0 + 0.375h;
  var a4 = a0 + 0.5h;
  var a5 = a0 + 0.625h;
  var a6 = a0 + 0.75h;
  var a7 = a0 + 0.875h;
  var a8 = a0 + 1.0h;
  var a9 = a0 + 1.125h;
  var a10 = a0 + 1.25h;
  var a11 = a0 + 1.375h;
  var a12 = a0 + 1.5h;
  var a13 = a0 + 1.625h;
  var a14 = a0 + 1.75h;
  var a15 = a0 + 1.875h;
  let x = vec2<f16>(f16(params.x));
  let y = vec2<f16>(f16(params.y));
  for (var i = 0u; i < params.iters; i++) {
    a0 = fma(a0, x, y); a1 = fma(a1, x, y); a2 = fma(a2, x, y); a3 = fma(a3, x, y);
    if (CHAINS >= 8u) {
      a4 = fma(a4, x, y); a5 = fma(a5, x, y); a6 = fma(a6, x, y); a7 = fma(a7, x, y);
    }
    if (CHAINS >= 16u) {
      a8 = fma(a8, x, y); a9 = fma(a9, x, y); a10 = fma(a10, x, y); a11 = fma(a11, x, y);
      a12 = fma(a12, x, y); a13 = fma(a13, x, y); a14 = fma(a14, x, y); a15 = fma(a15, x, y);
    }
    a0 = fma(a0, x, y); a1 = fma(a1, x, y); a2 = fma(a2, x, y); a3 = fma(a3, x, y);
    if (CHAINS >= 8u) {
      a4 = fma(a4, x, y); a5 = fma(a5, x, y); a6 = fma(a6, x, y); a7 = fma(a7, x, y);
    }
    if (CHAINS >= 16u) {
      a8 = fma(a8, x, y); a9 = fma(a9, x, y); a10 = fma(a10, x, y); a11 = fma(a11, x, y);
      a12 = fma(a12, x, y); a13 = fma(a13, x, y); a14 = fma(a14, x, y); a15 = fma(a15, x, y);
    }
    a0 = fma(a0, x, y); a1 = fma(a1, x, y); a2 = fma(a2, x, y); a3 = fma(a3, x, y);
    if (CHAINS >= 8u) {
      a4 = fma(a4, x, y); a5 = fma(a5, x, y); a6 = fma(a6, x, y); a7 = fma(a7, x, y);
    }
    if (CHAINS >= 16u) {
      a8 = fma(a8, x, y); a9 = fma(a9, x, y); a10 = fma(a10, x, y); a11 = fma(a11, x, y);
      a12 = fma(a12, x, y); a13 = fma(a13, x, y); a14 = fma(a14, x, y); a15 = fma(a15, x, y);
    }
    a0 = fma(a0, x, y); a1 = fma(a1, x, y); a2 = fma(a2, x, y); a3 = fma(a3, x, y);
    if (CHAINS >= 8u) {
      a4 = fma(a4, x, y); a5 = fma(a5, x, y); a6 = fma(a6, x, y); a7 = fma(a7, x, y);
    }
    if (CHAINS >= 16u) {
      a8 = fma(a8, x, y); a9 = fma(a9, x, y); a10 = fma(a10, x, y); a11 = fma(a11, x, y);
      a12 = fma(a12, x, y); a13 = fma(a13, x, y); a14 = fma(a14, x, y); a15 = fma(a15, x, y);
    }
    a0 = fma(a0, x, y); a1 = fma(a1, x, y); a2 = fma(a2, x, y); a3 = fma(a3, x, y);
    if (CHAINS >= 8u) {
      a4 = fma(a4, x, y); a5 = fma(a5, x, y); a6 = fma(a6, x, y); a7 = fma(a7, x, y);
    }
    if (CHAINS >= 16u) {
      a8 = fma(a8, x, y); a9 = fma(a9, x, y); a10 = fma(a10, x, y); a11 = fma(a11, x, y);
      a12 = fma(a12, x, y); a13 = fma(a13, x, y); a14 = fma(a14, x, y); a15 = fma(a15, x, y);
    }
    a0 = fma(a0, x, y); a1 = fma(a1, x, y); a2 = fma(a2, x, y); a3 = fma(a3, x, y);
    if (CHAINS >= 8u) {
      a4 = fma(a4, x, y); a5 = fma(a5, x, y); a6 = fma(a6, x, y); a7 = fma(a7, x, y);
    }
    if (CHAINS >= 16u) {
      a8 = fma(a8, x, y); a9 = fma(a9, x, y); a10 = fma(a10, x, y); a11 = fma(a11, x, y);
      a12 = fma(a12, x, y); a13 = fma(a13, x, y); a14 = fma(a14, x, y); a15 = fma(a15, x, y);
    }
    a0 = fma(a0, x, y); a1 = fma(a1, x, y); a2 = fma(a2, x, y); a3 = fma(a3, x, y);
    if (CHAINS >= 8u) {
      a4 = fma(a4, x, y); a5 = fma(a5, x, y); a6 = fma(a6, x, y); a7 = fma(a7, x, y);
    }
    if (CHAINS >= 16u) {
      a8 = fma(a8, x, y); a9 = fma(a9, x, y); a10 = fma(a10, x, y); a11 = fma(a11, x, y);
      a12 = fma(a12, x, y); a13 = fma(a13, x, y); a14 = fma(a14, x, y); a15 = fma(a15, x, y);
    }
    a0 = fma(a0, x, y); a1 = fma(a1, x, y); a2 = fma(a2, x, y); a3 = fma(a3, x, y);
    if (CHAINS >= 8u) {
      a4 = fma(a4, x, y); a5 = fma(a5, x, y); a6 = fma(a6, x, y); a7 = fma(a7, x, y);
    }
    if (CHAINS >= 16u) {
      a8 = fma(a8, x, y); a9 = fma(a9, x, y); a10 = fma(a10, x, y); a11 = fma(a11, x, y);
      a12 = fma(a12, x, y); a13 = fma(a13, x, y); a14 = fma(a14, x, y); a15 = fma(a15, x, y);
    }
  }
  if (index < arrayLength(&sink)) {
    sink[index] = ((lanes(a0) + lanes(a1)) + (lanes(a2) + lanes(a3))) +
      ((lanes(a4) + lanes(a5)) + (lanes(a6) + lanes(a7))) +
      ((lanes(a8) + lanes(a9)) + (lanes(a10) + lanes(a11))) +
      ((lanes(a12) + lanes(a13)) + (lanes(a14) + lanes(a15)));
  }
}
