// The arithmetic ceilings again, in CUDA on the same GPU: what the hardware does with f32 FMAs
// (FFMA), packed f16 FMAs (HFMA2: two halves in one 32-bit register, one instruction for both) and
// f16 FMAs one lane at a time. Notebook 14's WGSL ceiling (kernels/ceiling_f16.wgsl, vec2<f16>
// chains) reaches 1.06x the f32 one; if HFMA2 here reaches about 2x FFMA, packed f16 is in the
// hardware and the WebGPU path (naga, then the driver) does not reach it.
//
// Each thread keeps CHAINS independent accumulators in registers and runs a = a * x + y on each,
// ROUNDS times per loop trip. x and y are kernel arguments, so nothing folds. With x = 0.5 and
// y = 0.25 every chain converges to exactly 0.5 in f32 and in f16, so every thread's stored sum
// has one exact expected value: the host checks all of them (the sink is poisoned with NaN first).
//
// `./fma_ceiling sweep` also runs each with fewer chains and fewer resident blocks: if the rate
// holds as both shrink toward the defaults, the defaults measure throughput, not latency.
//
//   nvcc -O3 -arch=sm_90 -o fma_ceiling fma_ceiling.cu && ./fma_ceiling [sweep]   # JSON lines
#include <string>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "cuda_lab.h"

constexpr int ROUNDS = 8;
constexpr int THREADS = 256;

struct F32 {
  using T = float;
  static constexpr const char* name = "ffma_f32";
  static constexpr int lanes = 1;
  __device__ static T fma(T a, T x, T y) { return fmaf(a, x, y); }
  __device__ static T from(float v) { return v; }
  __device__ static float sum(T a) { return a; }
};

struct F16 {
  using T = __half;
  static constexpr const char* name = "hfma_f16_one_lane";
  static constexpr int lanes = 1;
  __device__ static T fma(T a, T x, T y) { return __hfma(a, x, y); }
  __device__ static T from(float v) { return __float2half(v); }
  __device__ static float sum(T a) { return __half2float(a); }
};

struct F16x2 {
  using T = __half2;
  static constexpr const char* name = "hfma2_f16_packed";
  static constexpr int lanes = 2;
  __device__ static T fma(T a, T x, T y) { return __hfma2(a, x, y); }
  __device__ static T from(float v) { return __float2half2_rn(v); }
  __device__ static float sum(T a) { return __low2float(a) + __high2float(a); }
};

template <class Op, int CHAINS>
__global__ void chains(float* sink, int iters, float xf, float yf) {
  using T = typename Op::T;
  const T x = Op::from(xf), y = Op::from(yf);
  T a[CHAINS];
#pragma unroll
  for (int c = 0; c < CHAINS; c++) a[c] = Op::from(0.0625f * c);
  for (int i = 0; i < iters; i++) {
#pragma unroll
    for (int r = 0; r < ROUNDS; r++) {
#pragma unroll
      for (int c = 0; c < CHAINS; c++) a[c] = Op::fma(a[c], x, y);
    }
  }
  float s = 0;
#pragma unroll
  for (int c = 0; c < CHAINS; c++) s += Op::sum(a[c]);
  sink[blockIdx.x * THREADS + threadIdx.x] = s;
}

// One kernel at CHAINS chains per thread and `perSm` blocks of THREADS per SM (8: 2048 threads,
// every slot an SM has), validated, then timed.
template <class Op, int CHAINS = 16>
void measure(int sms, int perSm = 8) {
  const int blocks = sms * perSm, iters = 4096;
  const size_t n = (size_t)blocks * THREADS;
  float* sink;
  CHECK(cudaMalloc(&sink, n * sizeof(float)));
  CHECK(cudaMemset(sink, 0xff, n * sizeof(float)));  // NaN: a thread that stores nothing fails
  auto launch = [&] { chains<Op, CHAINS><<<blocks, THREADS>>>(sink, iters, 0.5f, 0.25f); };
  launch();
  CHECK(cudaDeviceSynchronize());
  std::vector<float> out(n);
  CHECK(cudaMemcpy(out.data(), sink, n * sizeof(float), cudaMemcpyDeviceToHost));
  const float expected = 0.5f * CHAINS * Op::lanes;
  size_t wrong = 0;
  for (float v : out) wrong += !(v == expected);  // NaN compares unequal: it never passes
  const std::vector<float> ms = eventTimes(launch, 3, 21);
  const double median = ms[ms.size() / 2];
  const double flop = 2.0 * Op::lanes * CHAINS * ROUNDS * (double)iters * n;
  std::printf(
      "{\"kernel\":\"%s\",\"chains\":%d,\"blocksPerSm\":%d,\"validated\":%s,\"wrongThreads\":%zu,"
      "\"threads\":%zu,\"medianMs\":%.4f,\"minMs\":%.4f,\"maxMs\":%.4f,\"tflops\":%.2f}\n",
      Op::name, CHAINS, perSm, wrong ? "false" : "true", wrong, n, median, ms.front(), ms.back(),
      flop / (median * 1e-3) / 1e12);
  CHECK(cudaFree(sink));
}

template <class Op>
void sweep(int sms) {
  measure<Op, 2>(sms);
  measure<Op, 4>(sms);
  measure<Op, 8>(sms);
  for (int perSm : {1, 2, 4}) measure<Op, 16>(sms, perSm);
}

int main(int argc, char** argv) {
  int sms;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  measure<F32>(sms);
  measure<F16>(sms);
  measure<F16x2>(sms);
  if (argc > 1 && std::string(argv[1]) == "sweep") {
    sweep<F32>(sms);
    sweep<F16x2>(sms);
  }
  return 0;
}
