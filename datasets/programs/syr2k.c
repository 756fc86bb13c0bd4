/* syr2k: C := alpha * (A * B^T + B * A^T) + beta * C on the lower triangle of C (N x N), A, B (N x M). */
#include "common.h"

#if defined(MINI_DATASET)
#define M 20
#define N 30
#elif defined(SMALL_DATASET)
#define M 60
#define N 80
#elif defined(MEDIUM_DATASET)
#define M 200
#define N 240
#elif defined(LARGE_DATASET)
#define M 1000
#define N 1200
#elif defined(EXTRALARGE_DATASET)
#define M 2000
#define N 2600
#endif

static void kernel_syr2k(int m, int n, DATA_TYPE alpha, DATA_TYPE beta,
                         DATA_TYPE C[N][N], DATA_TYPE A[N][M], DATA_TYPE B[N][M])
{
  int i, j, k;

#pragma scop
  for (i = 0; i < n; i++) {
    for (j = 0; j <= i; j++)
      C[i][j] *= beta;
    for (k = 0; k < m; k++)
      for (j = 0; j <= i; j++)
        C[i][j] += alpha * A[i][k] * B[j][k] + alpha * B[i][k] * A[j][k];
  }
#pragma endscop
}

int main(void)
{
  int m = M, n = N;
  int i, j;
  DATA_TYPE alpha = 1.5;
  DATA_TYPE beta = 1.2;
  DATA_TYPE (*A)[M] = ds_alloc(sizeof(DATA_TYPE) * N * M);
  DATA_TYPE (*B)[M] = ds_alloc(sizeof(DATA_TYPE) * N * M);
  DATA_TYPE (*C)[N] = ds_alloc(sizeof(DATA_TYPE) * N * N);

  for (i = 0; i < n; i++) {
    for (j = 0; j < m; j++) {
      A[i][j] = (DATA_TYPE)((i * j + 1) % n) / n;
      B[i][j] = (DATA_TYPE)((i * j + 2) % m) / m;
    }
    for (j = 0; j < n; j++)
      C[i][j] = (DATA_TYPE)((i * j + 3) % n) / m;
  }

  kernel_syr2k(m, n, alpha, beta, C, A, B);

  ds_dump_double("C", &C[0][0], (size_t)N * N);

  free(A);
  free(B);
  free(C);
  return 0;
}
