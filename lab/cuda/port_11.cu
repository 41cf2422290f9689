// kernels/11_autotune.wgsl, ported line for line to CUDA: a diagnostic, not a step of the ladder.
// It answers one question: is 11 held at ~0.63 of cuBLAS by its algorithm (tiles staged through
// registers, one barrier per tile) or by the path WGSL takes to the GPU (naga's SPIR-V, then the
// Vulkan driver's compiler)? Same tiles, same workgroup-memory layout (A transposed, B as is),
// same thread mapping, same launch order; nvcc instead of naga + the driver. The ABLATE bits are
// those of `lab/probe_kernels.ts --ablate`, so the two decompositions line up. Two more bits
// follow 10's control kernels (kernels/10_double_buffer): one copy of each tile, and the next
// tile stored before the multiply-adds, so Nsight can count what each costs in stalls.
//
// Aligned sizes only (M % BM, N % BN, K % BK == 0): the port skips 11's edge handling.
// Build and run on the GPU host (lab/cuda/run_port.sh does both and keeps the SASS):
//   nvcc -O3 -arch=sm_90 -Xptxas -v -o port_11 lab/cuda/port_11.cu \
//     -L/usr/local/cuda-13.0/targets/x86_64-linux/lib -l:libcublas.so.13
//   ./port_11 4096          # 11's configurations
//   ./port_11 4096 ten      # 10's tile and its controls
//   ./port_11 4096 tn       # 11's tile at TN 16 and 8, the k loop written out and kept
#include "cuda_lab.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

// The cuBLAS entry points used here, declared by hand: the GPU host has the library, not the
// headers. Values from cublas_api.h.
typedef struct cublasContext* cublasHandle_t;
extern "C" int cublasCreate_v2(cublasHandle_t*);
extern "C" int cublasSetMathMode(cublasHandle_t, int);
extern "C" int cublasSgemm_v2(cublasHandle_t, int, int, int, int, int, const float*, const float*,
                              int, const float*, int, const float*, float*, int);
const int CUBLAS_OP_N = 0, CUBLAS_DEFAULT_MATH = 0;

// ABLATE bits: 1 synthetic staged values instead of global loads; 2 nothing staged (no loads, no
// stores to shared memory); 4 no barrier in the tile loop; 8 fragments read once per tile.
// Two more add what the WGSL path adds around memory accesses: 16 clamps every shared-memory
// index (and vector component) to its array, as naga does for every dynamic index; 32 clamps
// every global index to the buffer's length and keeps 11's explicit bounds select on the loads.
// 64 keeps one copy of each tile (10's BUFFERS 1): a second barrier per tile, so no invocation
// overwrites it while another still reads it. 128 stores the next tile before this tile's
// multiply-adds (10's STASH_FIRST 1): its loads are still issued together, but their wait is no
// longer hidden behind the multiply-adds. 64 and 128 together: 09's order (load, store, barrier,
// multiply-adds, barrier), nothing in flight across the multiply-adds. 256 keeps the k loop a
// loop (one k step per trip), as the Vulkan driver keeps 11's, where nvcc writes it out: the
// trips' own instructions then count as they do in WebGPU. WGS_PER_SM > 1 holds
// registers to what that many resident workgroups leave (10's tile: 2, as the Vulkan driver's 117
// registers allow), so a control's occupancy does not change with nvcc's register choice.
template <int BM, int BN, int BK, int TN, int GROUP_M, int ABLATE, int PAD = 0, int WGS_PER_SM = 1>
__global__ void __launch_bounds__((BM / 8) * (BN / TN), WGS_PER_SM)
    port11(const float4* __restrict__ A, const float4* __restrict__ B, float* __restrict__ C,
           int M, int K, int N) {
  constexpr int THREADS = (BM / 8) * (BN / TN);
  constexpr int AS = BM / 4 + PAD;  // 11's fastest point: PAD 0; 10's default: 1
  constexpr int LA = BM * BK / 4 / THREADS;
  constexpr int LB = BK * BN / 4 / THREADS;
  constexpr int A_TILE = BK * AS;
  constexpr int B_TILE = BK * BN / 4;
  __shared__ float4 As[2 * A_TILE];
  __shared__ float4 Bs[2 * B_TILE];

  constexpr bool CLAMP_SHARED = ABLATE & 16, CLAMP_GLOBAL = ABLATE & 32;
  constexpr bool ONE_COPY = ABLATE & 64, STORE_FIRST = ABLATE & 128;
  constexpr int K_UNROLL = (ABLATE & 256) ? 1 : BK;
  // naga's policy for a dynamic index: min(index, length - 1), unsigned.
  auto inShared = [](int i, int length) {
    return CLAMP_SHARED ? int(min(unsigned(i), unsigned(length - 1))) : i;
  };
  auto inGlobal = [](int i, int length) {
    return CLAMP_GLOBAL ? int(min(unsigned(i), unsigned(length - 1))) : i;
  };
  const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);
  const int tid = threadIdx.x;
  // tileOf(): GROUP_M tile rows walked column by column.
  const int tilesN = gridDim.x, tilesM = gridDim.y;
  const int perGroup = GROUP_M * tilesN;
  const int linear = blockIdx.y * tilesN + blockIdx.x;
  const int first = (linear / perGroup) * GROUP_M;
  const int rows = min(tilesM - first, GROUP_M);
  const int inGroup = linear % perGroup;
  const int m0 = (first + inGroup % rows) * BM;
  const int n0 = (inGroup / rows) * BN;

  const int warp = tid / 32, lane = tid % 32;
  const int wx = warp % (BN / (8 * TN)), wy = warp / (BN / (8 * TN));
  const int lx = lane % 8, ly = lane / 8;
  const int a0At = wy * 8 + ly, a1At = wy * 8 + 4 + ly;
  const int b0At = wx * 2 * TN + lx;

  float4 acc[8][TN / 4];
#pragma unroll
  for (int i = 0; i < 8; i++)
#pragma unroll
    for (int j = 0; j < TN / 4; j++) acc[i][j] = make_float4(0.f, 0.f, 0.f, 0.f);

  float4 sa[LA], sb[LB];
  auto fetch = [&](int k0) {
#pragma unroll
    for (int l = 0; l < LA; l++) {
      const int i = tid + l * THREADS;
      const int gr = m0 + i / (BK / 4), gk = k0 + (i % (BK / 4)) * 4;
      const float4 v = A[inGlobal((gr * K + gk) / 4, M * K / 4)];
      sa[l] = (ABLATE & 1)                            ? make_float4(float(k0 + tid), 0.f, 0.f, 0.f)
              : CLAMP_GLOBAL && !(gr < M && gk < K) ? zero
                                                      : v;
    }
#pragma unroll
    for (int l = 0; l < LB; l++) {
      const int i = tid + l * THREADS;
      const int gk = k0 + i / (BN / 4), gn = n0 + (i % (BN / 4)) * 4;
      const float4 v = B[inGlobal((gk * N + gn) / 4, K * N / 4)];
      sb[l] = (ABLATE & 1)                            ? make_float4(float(k0 + tid), 0.f, 0.f, 0.f)
              : CLAMP_GLOBAL && !(gk < K && gn < N) ? zero
                                                      : v;
    }
  };
  auto stash = [&](int buf) {
    if (ABLATE & 2) return;
    float* as = reinterpret_cast<float*>(As);
#pragma unroll
    for (int l = 0; l < LA; l++) {
      // storeVec4A(): four k values of one row of A go to four rows of the transposed tile.
      const int i = tid + l * THREADS;
      const int r = i / (BK / 4);
      const int at = buf * A_TILE + (i % (BK / 4)) * 4 * AS + r / 4;
      const int comp = inShared(r % 4, 4);
      as[inShared(at, 2 * A_TILE) * 4 + comp] = sa[l].x;
      as[inShared(at + AS, 2 * A_TILE) * 4 + comp] = sa[l].y;
      as[inShared(at + 2 * AS, 2 * A_TILE) * 4 + comp] = sa[l].z;
      as[inShared(at + 3 * AS, 2 * A_TILE) * 4 + comp] = sa[l].w;
    }
#pragma unroll
    for (int l = 0; l < LB; l++) Bs[inShared(buf * B_TILE + tid + l * THREADS, 2 * B_TILE)] = sb[l];
  };

  auto multiply = [&](int cur) {
#pragma unroll K_UNROLL
    for (int p = 0; p < BK; p++) {
      const int q = (ABLATE & 8) ? 0 : p;
      const float4 a0 = As[inShared(cur * A_TILE + q * AS + a0At, 2 * A_TILE)];
      const float4 a1 = As[inShared(cur * A_TILE + q * AS + a1At, 2 * A_TILE)];
      float4 b[TN / 4];
#pragma unroll
      for (int j = 0; j < TN / 4; j++) {
        b[j] = Bs[inShared(cur * B_TILE + q * (BN / 4) + b0At + 8 * j, 2 * B_TILE)];
      }
      const float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
#pragma unroll
      for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < TN / 4; j++) {
          acc[i][j].x += av[i] * b[j].x;
          acc[i][j].y += av[i] * b[j].y;
          acc[i][j].z += av[i] * b[j].z;
          acc[i][j].w += av[i] * b[j].w;
        }
    }
  };

  const int tiles = K / BK;
  if (ONE_COPY && STORE_FIRST) {
    // 09's order: each tile loaded and stored, then used; nothing in flight across the FMAs.
    for (int t = 0; t < tiles; t++) {
      fetch(t * BK);
      stash(0);
      __syncthreads();
      multiply(0);
      __syncthreads();
    }
  } else {
    if (!(ABLATE & 2)) fetch(0);
    stash(0);
    __syncthreads();
    for (int t = 0; t < tiles; t++) {
      const int cur = ONE_COPY ? 0 : t % 2, next = ONE_COPY ? 0 : 1 - cur;
      const bool hasNext = t + 1 < tiles;
      if (hasNext && !(ABLATE & 2)) fetch((t + 1) * BK);
      if (STORE_FIRST && hasNext) stash(next);
      multiply(cur);
      if (ONE_COPY) __syncthreads();
      if (!STORE_FIRST && hasNext) stash(next);
      if (!(ABLATE & 4)) __syncthreads();
    }
  }
  const int r0 = m0 + a0At * 4, r1 = m0 + a1At * 4;
#pragma unroll
  for (int i = 0; i < 8; i++) {
    const int row = (i < 4 ? r0 : r1) + i % 4;
#pragma unroll
    for (int j = 0; j < TN / 4; j++) {
      *reinterpret_cast<float4*>(C + row * N + n0 + b0At * 4 + 32 * j) = acc[i][j];
    }
  }
}

struct Timing {
  float median, min, max;
};

template <int BM, int BN, int BK, int TN, int ABLATE, int GROUP_M = 8, int PAD = 0,
          int WGS_PER_SM = 1>
Timing timeKernel(const float* A, const float* B, float* C, int n, int reps) {
  const dim3 grid(n / BN, n / BM), block((BM / 8) * (BN / TN));
  auto launch = [&] {
    port11<BM, BN, BK, TN, GROUP_M, ABLATE, PAD, WGS_PER_SM><<<grid, block>>>(
        reinterpret_cast<const float4*>(A), reinterpret_cast<const float4*>(B), C, n, n, n);
  };
  const std::vector<float> ms = eventTimes(launch, 20, reps);
  return {ms[ms.size() / 2], ms.front(), ms.back()};
}

// Relative error norm of C against a float64 reference, over a sample of entries (a full
// float64 product at 4096 would take minutes on the host).
double sampledError(const std::vector<float>& a, const std::vector<float>& b,
                    const std::vector<float>& c, int n) {
  std::mt19937 rng(7);
  double num = 0, den = 0;
  for (int s = 0; s < 4096; s++) {
    const int i = rng() % n, j = rng() % n;
    double ref = 0;
    for (int k = 0; k < n; k++) ref += double(a[size_t(i) * n + k]) * b[size_t(k) * n + j];
    const double got = c[size_t(i) * n + j];
    if (std::isnan(got)) return INFINITY;
    num += (got - ref) * (got - ref);
    den += ref * ref;
  }
  return std::sqrt(num / den);
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 4096;
  const std::string set = argc > 2 ? argv[2] : "";
  const int reps = 50;
  const double flop = 2.0 * n * n * n;
  std::vector<float> a(size_t(n) * n), b(size_t(n) * n), c(size_t(n) * n);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (auto& x : a) x = u(rng);
  for (auto& x : b) x = u(rng);
  float *dA, *dB, *dC;
  const size_t bytes = size_t(n) * n * sizeof(float);
  CHECK(cudaMalloc(&dA, bytes));
  CHECK(cudaMalloc(&dB, bytes));
  CHECK(cudaMalloc(&dC, bytes));
  CHECK(cudaMemcpy(dA, a.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dB, b.data(), bytes, cudaMemcpyHostToDevice));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, n = %d, median of %d timed launches after 20 warm-up\n", prop.name, n,
              reps);

  // cuBLAS, TF32 off, in the same process: row-major C = A B is column-major C^T = B^T A^T.
  cublasHandle_t handle;
  if (cublasCreate_v2(&handle) || cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH)) return 1;
  const float one = 1.f, zero = 0.f;
  auto sgemm = [&] {
    cublasSgemm_v2(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, dB, n, dA, n, &zero, dC, n);
  };
  CHECK(cudaMemset(dC, 0xff, bytes));  // poison: NaN everywhere
  sgemm();
  CHECK(cudaMemcpy(c.data(), dC, bytes, cudaMemcpyDeviceToHost));
  const double blasErr = sampledError(a, b, c, n);
  const std::vector<float> ms = eventTimes(sgemm, 20, reps);
  const double blas = flop / (ms[reps / 2] * 1e6);
  std::printf("%-52s %8.3f ms %9.0f GFLOP/s  1.000 cuBLAS  err %.1e\n", "cuBLAS SGEMM (TF32 off)",
              ms[reps / 2], blas, blasErr);

  auto report = [&](const char* label, Timing t, bool validate) {
    double err = NAN;
    if (validate) {
      CHECK(cudaMemcpy(c.data(), dC, bytes, cudaMemcpyDeviceToHost));
      err = sampledError(a, b, c, n);
    }
    const double g = flop / (t.median * 1e6);
    std::printf("%-52s %8.3f ms %9.0f GFLOP/s  %.3f cuBLAS  %s%.1e  (min %.3f, max %.3f)\n", label,
                t.median, g, g / blas, validate ? "err " : "time only ", validate ? err : 0.0,
                t.min, t.max);
    if (validate && !(err < 1e-4)) {
      std::printf("FAILED validation: %s\n", label);
      std::exit(1);
    }
  };
#define RUN(BM, BN, BK, TN, ABL, label)                                                      \
  do {                                                                                       \
    CHECK(cudaMemset(dC, 0xff, bytes));                                                      \
    report(label, timeKernel<BM, BN, BK, TN, ABL>(dA, dB, dC, n, reps), (ABL & 15) == 0);    \
  } while (0)
  // 10's tile and launch order (128 x 128 x 8, 8 columns per invocation, PAD 1, no grouping),
  // two workgroups per SM as in the WGSL kernel.
#define RUN10(ABL, label)                                                                    \
  do {                                                                                       \
    CHECK(cudaMemset(dC, 0xff, bytes));                                                      \
    report(label, timeKernel<128, 128, 8, 8, ABL, 1, 1, 2>(dA, dB, dC, n, reps), true);        \
  } while (0)
  if (set == "tn") {
    // 11's winning tile at TN 16 and TN 8, the k loop written out (nvcc's way) and kept (the
    // driver's): what TN 16 saves per FMA, with and without the loop's trips.
    RUN(128, 256, 16, 16, 0, "port 128x256x16 TN16: k loop written out");
    RUN(128, 256, 16, 16, 256, "port 128x256x16 TN16: k loop kept");
    RUN(128, 256, 16, 8, 0, "port 128x256x16 TN8: k loop written out");
    RUN(128, 256, 16, 8, 256, "port 128x256x16 TN8: k loop kept");
    return 0;
  }
  if (set == "ten") {
    RUN10(192, "port of 10 at 128x128x8: 09's order");
    RUN10(64, "port of 10 at 128x128x8: prefetch, one copy");
    RUN10(128, "port of 10 at 128x128x8: two copies, stored first");
    RUN10(0, "port of 10 at 128x128x8: double buffered (10)");
    return 0;
  }
  RUN(128, 256, 16, 16, 0, "port 128x256x16 TN16: whole kernel");
  RUN(128, 256, 16, 16, 1, "port 128x256x16 TN16: no global loads");
  RUN(128, 256, 16, 16, 2, "port 128x256x16 TN16: nothing staged");
  RUN(128, 256, 16, 16, 6, "port 128x256x16 TN16: nothing staged, no barrier");
  RUN(128, 256, 16, 16, 14, "port 128x256x16 TN16: multiply-adds from registers only");
  RUN(128, 256, 16, 16, 16, "port 128x256x16 TN16: whole, shared indices clamped");
  RUN(128, 256, 16, 16, 32, "port 128x256x16 TN16: whole, global indices clamped");
  RUN(128, 256, 16, 16, 48, "port 128x256x16 TN16: whole, all indices clamped");
  RUN(128, 256, 16, 16, 17, "port 128x256x16 TN16: shared clamped, no global loads");
  RUN(128, 128, 8, 8, 0, "port 128x128x8 TN8: whole kernel");
  RUN(128, 128, 8, 8, 48, "port 128x128x8 TN8: whole, all indices clamped");
  RUN(128, 128, 8, 8, 1, "port 128x128x8 TN8: no global loads");
  RUN(128, 128, 8, 8, 14, "port 128x128x8 TN8: multiply-adds from registers only");
  return 0;
}
