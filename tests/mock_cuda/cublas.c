/* A stand-in for libcublas.so.13: column-major SGEMM on the host, as cuBLAS defines it, so a
 * wrong operand order or leading dimension in lib/peers/cublas.ts fails validation. With
 * MOCK_CUBLAS_SKIP_LAST_COLUMN set it leaves C's last column unwritten (the poison must catch it). */
#include <stdlib.h>

static int math_mode = -1;
int cublasCreate_v2(void **handle) { *handle = malloc(8); return 0; }
int cublasDestroy_v2(void *handle) { free(handle); return 0; }
int cublasGetVersion_v2(void *handle, int *version) { *version = 130000; return 0; }
int cublasSetMathMode(void *handle, int mode) { math_mode = mode; return 0; }
int cublasGetMathMode(void *handle, int *mode) { *mode = math_mode; return 0; }
int cublasSgemm_v2(void *handle, int transa, int transb, int m, int n, int k, const float *alpha,
                   const float *A, int lda, const float *B, int ldb, const float *beta, float *C,
                   int ldc) {
  if (transa || transb || lda < m || ldb < k || ldc < m) return 7; /* INVALID_VALUE */
  int cols = getenv("MOCK_CUBLAS_SKIP_LAST_COLUMN") ? n - 1 : n;
  for (int j = 0; j < cols; j++)
    for (int i = 0; i < m; i++) {
      float sum = 0;
      for (int p = 0; p < k; p++) sum += A[i + p * lda] * B[p + j * ldb];
      C[i + j * ldc] = *alpha * sum + (*beta == 0 ? 0 : *beta * C[i + j * ldc]);
    }
  return 0;
}
