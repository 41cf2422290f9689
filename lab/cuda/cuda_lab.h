// What the lab's CUDA programs share: CHECK(call), which stops at the first failed runtime call
// and says where, and eventTimes, the sorted CUDA-event times of a launch.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                  \
  do {                                                                               \
    cudaError_t e = (call);                                                          \
    if (e != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

// `launch()` run `warmups` times (clocks up, caches primed), then `reps` times each between two
// events: the times in ms, sorted.
template <class Launch>
std::vector<float> eventTimes(Launch launch, int warmups, int reps) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < warmups; i++) launch();
  CHECK(cudaGetLastError());
  std::vector<float> ms;
  for (int i = 0; i < reps; i++) {
    CHECK(cudaEventRecord(start));
    launch();
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float t;
    CHECK(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  std::sort(ms.begin(), ms.end());
  return ms;
}
