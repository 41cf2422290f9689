/* A stand-in for libcudart.so.13 with host memory, so the cuBLAS peer's FFI calls can be tested
 * on machines without a GPU. Only the entry points lib/peers/cublas.ts uses. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
int cudaGetDeviceCount(int *count) { *count = 1; return 0; }
int cudaSetDevice(int device) { return device == 0 ? 0 : 101; }
int cudaRuntimeGetVersion(int *version) { *version = 13000; return 0; }
const char *cudaGetErrorString(int code) { return code == 2 ? "out of memory" : "mock error"; }
int cudaDeviceGetAttribute(int *value, int attr, int device) {
  *value = attr == 75 ? 9 : attr == 76 ? 0 : 1;
  return 0;
}
int cudaMalloc(void **ptr, size_t bytes) { *ptr = malloc(bytes); return *ptr ? 0 : 2; }
int cudaFree(void *ptr) { free(ptr); return 0; }
int cudaMemcpy(void *dst, const void *src, size_t bytes, int kind) { memcpy(dst, src, bytes); return 0; }
/* Buffers over 16 MiB are only the cuBLAS peer's head start, which nothing reads: one page is
 * enough, and keeps the mock fast. */
int cudaMemset(void *dst, int value, size_t bytes) {
  memset(dst, value, bytes > (16u << 20) ? 4096 : bytes);
  return 0;
}
int cudaDeviceSynchronize(void) { return 0; }
int cudaEventCreate(double **event) { *event = malloc(sizeof(double)); return 0; }
int cudaEventDestroy(double *event) { free(event); return 0; }
int cudaEventRecord(double *event, void *stream) { *event = now_ms(); return 0; }
int cudaEventSynchronize(double *event) { return 0; }
/* cudaErrorNotReady: as if the GPU were still busy with the head start (the mock runs at once);
 * with MOCK_CUDA_QUEUE_DRY set, as if it had caught up with the host. */
int cudaEventQuery(double *event) { return getenv("MOCK_CUDA_QUEUE_DRY") ? 0 : 600; }
int cudaEventElapsedTime(float *ms, double *start, double *stop) { *ms = (float)(*stop - *start); return 0; }
