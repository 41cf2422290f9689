// 02's `naive` and 03's `coalesce` ported line for line to CUDA, to read what WebGPU cannot: the
// hardware counters (Nsight Compute) behind two open questions. 02: why `naive` runs 1.56x slower
// whenever K is a multiple of 32 (4096 against 4095), and whether padding A's row stride ends it
// (the cache-set hypothesis). 03: why `coalesce` drops between 2560 and 3072 (the L2 hypothesis).
// A diagnostic, not a step of the ladder: the port stands for the WGSL kernel only where its
// times match the WGSL kernel's (the notebooks' records), which this program reports beside them.
//
// The mapping is the WGSL's: a 16 x 16 block, threadIdx.x fastest (WebGPU's local_invocation_id.x
// varies fastest within a subgroup, as CUDA's threadIdx.x within a warp). `naive` takes the row
// from x, `coalesce` the column. A is M x K with row stride LDA >= K (LDA = K unless padded).
//
//   nvcc -O3 -arch=sm_90 -o memory_counters lab/cuda/memory_counters.cu -Xcompiler -fopenmp -lgomp
//   ./memory_counters                 # every configuration: validated, then timed (JSON lines)
//   ./memory_counters only REGEX      # the configurations whose names REGEX matches
//   ./memory_counters once NAME       # one launch of one configuration, for ncu
// lab/cuda/run_counters.sh runs both, the second under ncu.
#include "cuda_lab.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <regex>
#include <string>
#include <vector>

constexpr int WG = 16;

// kernels/02_naive/kernel.wgsl (x picks the row, y the column) and kernels/03_coalesce/kernel.wgsl
// (x picks the column): the one line in which the two steps differ. nvcc unrolls the K loop (32
// registers), so each invocation has several loads in flight; the Vulkan driver compiles the WGSL
// loop as written (16 registers, lab/driver), one pair of loads at a time. ROLLED keeps the loop
// as the driver does, to see whether that is what separates the port's speed from the WGSL's.
template <bool COALESCED, bool ROLLED>
__global__ void product(const float* A, const float* B, float* C, int M, int K, int N, int lda) {
  int x = blockIdx.x * WG + threadIdx.x, y = blockIdx.y * WG + threadIdx.y;
  int row = COALESCED ? y : x, col = COALESCED ? x : y;
  if (row >= M || col >= N) return;
  float sum = 0.0f;
  if constexpr (ROLLED) {
#pragma unroll 1
    for (int p = 0; p < K; p++) sum += A[(size_t)row * lda + p] * B[(size_t)p * N + col];
  } else {
    for (int p = 0; p < K; p++) sum += A[(size_t)row * lda + p] * B[(size_t)p * N + col];
  }
  C[(size_t)row * N + col] = sum;
}

struct Config {
  const char* name;
  bool coalesced, rolled;
  int M, K, N, lda;
  // The WGSL kernel's speed at this shape in the notebooks' records (GFLOP/s, NVIDIA H200), for
  // the comparison that says whether the port stands for it; 0 where no record has the shape.
  double wgslGflops;
};

// 02: 4096 against 4095 and 4097 (the records' 980, 1 530, 1 540), then 4096 with A's rows
// padded by 1 float (not line-aligned) and by 8 (32-byte aligned, not 128). 03: the sizes around
// the drop (the records' 2 630 at 2048 and 2560, 1 590 at 3072, 1 570 at 4096).
const Config CONFIGS[] = {
    {"naive_4096", false, false, 4096, 4096, 4096, 4096, 980},
    {"naive_4095", false, false, 4095, 4095, 4095, 4095, 1530},
    {"naive_4097", false, false, 4097, 4097, 4097, 4097, 1540},
    {"naive_4096_lda4097", false, false, 4096, 4096, 4096, 4097, 0},
    {"naive_4096_lda4104", false, false, 4096, 4096, 4096, 4104, 0},
    {"coalesce_2048", true, false, 2048, 2048, 2048, 2048, 2630},
    {"coalesce_2560", true, false, 2560, 2560, 2560, 2560, 2630},
    {"coalesce_3072", true, false, 3072, 3072, 3072, 3072, 1590},
    {"coalesce_4096", true, false, 4096, 4096, 4096, 4096, 1570},
    // The same with the loop kept rolled, as the driver compiles the WGSL.
    {"naive_4096_rolled", false, true, 4096, 4096, 4096, 4096, 980},
    {"naive_4095_rolled", false, true, 4095, 4095, 4095, 4095, 1530},
    {"naive_4096_lda4097_rolled", false, true, 4096, 4096, 4096, 4097, 0},
    {"coalesce_2048_rolled", true, true, 2048, 2048, 2048, 2048, 2630},
    {"coalesce_2560_rolled", true, true, 2560, 2560, 2560, 2560, 2630},
    {"coalesce_3072_rolled", true, true, 3072, 3072, 3072, 3072, 1590},
    {"coalesce_4096_rolled", true, true, 4096, 4096, 4096, 4096, 1570},
    // A's row stride alone, K = 4096 (rolled): 16, 64, 128, 256 and 512 bytes past 16 KiB, to
    // tell "a multiple of 128 bytes" from "a power of two" (02's K sweep cannot: K sets both).
    {"naive_4096_lda4100_rolled", false, true, 4096, 4096, 4096, 4100, 0},
    {"naive_4096_lda4104_rolled", false, true, 4096, 4096, 4096, 4104, 0},
    {"naive_4096_lda4112_rolled", false, true, 4096, 4096, 4096, 4112, 0},
    {"naive_4096_lda4128_rolled", false, true, 4096, 4096, 4096, 4128, 0},
    {"naive_4096_lda4160_rolled", false, true, 4096, 4096, 4096, 4160, 0},
    {"naive_4096_lda4224_rolled", false, true, 4096, 4096, 4096, 4224, 0},
    // Between 03's 2560 and 3072 (B 28.9, 31.7, 34.7 MB), rolled: where the L2 hits go.
    {"coalesce_2688_rolled", true, true, 2688, 2688, 2688, 2688, 0},
    {"coalesce_2816_rolled", true, true, 2816, 2816, 2816, 2816, 0},
    {"coalesce_2944_rolled", true, true, 2944, 2944, 2944, 2944, 0},
    // naive through the same sizes, one less so A's stride is no multiple of 128 bytes (02's
    // slowdown): does it lose its L2 hits where coalesce does?
    {"naive_2047_rolled", false, true, 2047, 2047, 2047, 2047, 0},
    {"naive_2559_rolled", false, true, 2559, 2559, 2559, 2559, 0},
    {"naive_2687_rolled", false, true, 2687, 2687, 2687, 2687, 0},
    {"naive_2815_rolled", false, true, 2815, 2815, 2815, 2815, 0},
    {"naive_2943_rolled", false, true, 2943, 2943, 2943, 2943, 0},
    {"naive_3071_rolled", false, true, 3071, 3071, 3071, 3071, 0},
};

struct Buffers {
  float *A, *B, *C;
  std::vector<float> a, b;
};

Buffers prepare(const Config& c, unsigned seed) {
  Buffers x;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  x.a.assign((size_t)c.M * c.lda, 0.0f);
  for (int i = 0; i < c.M; i++)
    for (int k = 0; k < c.K; k++) x.a[(size_t)i * c.lda + k] = u(rng);
  x.b.resize((size_t)c.K * c.N);
  for (auto& v : x.b) v = u(rng);
  CHECK(cudaMalloc(&x.A, x.a.size() * sizeof(float)));
  CHECK(cudaMalloc(&x.B, x.b.size() * sizeof(float)));
  CHECK(cudaMalloc(&x.C, (size_t)c.M * c.N * sizeof(float)));
  CHECK(cudaMemcpy(x.A, x.a.data(), x.a.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(x.B, x.b.data(), x.b.size() * sizeof(float), cudaMemcpyHostToDevice));
  return x;
}

void release(Buffers& x) {
  CHECK(cudaFree(x.A));
  CHECK(cudaFree(x.B));
  CHECK(cudaFree(x.C));
}

void launch(const Config& c, const Buffers& x) {
  dim3 block(WG, WG);
  int across = c.coalesced ? c.N : c.M, down = c.coalesced ? c.M : c.N;
  dim3 grid((across + WG - 1) / WG, (down + WG - 1) / WG);
  auto kernel = c.coalesced ? (c.rolled ? product<true, true> : product<true, false>)
                            : (c.rolled ? product<false, true> : product<false, false>);
  kernel<<<grid, block>>>(x.A, x.B, x.C, c.M, c.K, c.N, c.lda);
  CHECK(cudaGetLastError());
}

// Validation as the project's at GPU sizes: C poisoned (NaN) first; 32 rows spread over C
// compared element by element with a float64 reference; every element finite; the relative error
// norm of those rows under 1e-5 (float32 sums of K products: about 1e-6 expected).
bool validate(const Config& c, Buffers& x, double* relErr) {
  CHECK(cudaMemset(x.C, 0xff, (size_t)c.M * c.N * sizeof(float)));
  launch(c, x);
  CHECK(cudaDeviceSynchronize());
  std::vector<float> out((size_t)c.M * c.N);
  CHECK(cudaMemcpy(out.data(), x.C, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (float v : out)
    if (!std::isfinite(v)) return *relErr = NAN, false;
  const int rows = 32;
  double err = 0, ref = 0;
#pragma omp parallel for reduction(+ : err, ref)
  for (int r = 0; r < rows; r++) {
    int i = (int)((long)r * (c.M - 1) / (rows - 1));
    std::vector<double> acc(c.N, 0.0);
    for (int k = 0; k < c.K; k++) {
      double av = x.a[(size_t)i * c.lda + k];
      const float* brow = &x.b[(size_t)k * c.N];
      for (int j = 0; j < c.N; j++) acc[j] += av * brow[j];
    }
    for (int j = 0; j < c.N; j++) {
      double d = out[(size_t)i * c.N + j] - acc[j];
      err += d * d;
      ref += acc[j] * acc[j];
    }
  }
  *relErr = std::sqrt(err / ref);
  return *relErr < 1e-5;
}

int main(int argc, char** argv) {
  bool once = argc >= 3 && !std::strcmp(argv[1], "once");
  bool only = argc >= 3 && !std::strcmp(argv[1], "only");
  std::regex pattern(only ? argv[2] : ".");
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  if (!once) std::printf("{\"device\":\"%s\",\"sms\":%d}\n", prop.name, prop.multiProcessorCount);
  unsigned seed = 0;
  for (const Config& c : CONFIGS) {
    seed++;  // each configuration's inputs are the same whichever configurations run
    if (once && std::strcmp(argv[2], c.name)) continue;
    if (!std::regex_search(c.name, pattern)) continue;
    Buffers x = prepare(c, seed);
    double relErr;
    bool ok = validate(c, x, &relErr);
    if (once) {  // one more launch for the profiler, after the validated one
      if (ok) launch(c, x);
      CHECK(cudaDeviceSynchronize());
      release(x);
      return ok ? 0 : 1;
    }
    std::vector<float> ms;
    if (ok) ms = eventTimes([&] { launch(c, x); }, 3, 15);
    double median = ok ? ms[ms.size() / 2] : NAN;
    double gflops = ok ? 2.0 * c.M * c.K * c.N / (median * 1e6) : NAN;
    std::printf(
        "{\"config\":\"%s\",\"M\":%d,\"K\":%d,\"N\":%d,\"lda\":%d,\"validated\":%s,\"relErr\":%.3g,"
        "\"medianMs\":%.4f,\"spread\":%.4f,\"gflops\":%.1f,\"wgslGflops\":%.0f}\n",
        c.name, c.M, c.K, c.N, c.lda, ok ? "true" : "false", relErr, median,
        ok ? (ms.back() - ms.front()) / median : NAN, gflops, c.wgslGflops);
    std::fflush(stdout);
    release(x);
  }
  if (once) std::fprintf(stderr, "no configuration named %s\n", argv[2]);
  return once ? 2 : 0;
}
