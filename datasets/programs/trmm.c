/* trmm: B := alpha * A^T * B, A (M x M) unit lower triangular (strict lower part stored), B (M x N), in place. */
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

/* (A^T B)(i,j) = B(i,j) + sum_{k>i} A(k,i) B(k,j): rows are updated top-down, so every
 * B[k][j] read for k > i still holds its original value. */
static void kernel_trmm(int m, int n, DATA_TYPE alpha, DATA_TYPE A[M][M], DATA_TYPE B[M][N])
{
  int i, j, k;

#pragma scop
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++) {
      for (k = i + 1; k < m; k++)
        B[i][j] += A[k][i] * B[k][j];
      B[i][j] = alpha * B[i][j];
    }
#pragma endscop
}

int main(void)
{
  int m = M, n = N;
  int i, j;
  DATA_TYPE alpha = 1.5;
  DATA_TYPE (*A)[M] = ds_alloc(sizeof(DATA_TYPE) * M * M);
  DATA_TYPE (*B)[N] = ds_alloc(sizeof(DATA_TYPE) * M * N);

  for (i = 0; i < m; i++) {
    for (j = 0; j < m; j++)
      A[i][j] = j < i ? (DATA_TYPE)((i * j + 1) % m) / m : (j == i ? 1.0 : -1.0); /* upper unused */
    for (j = 0; j < n; j++)
      B[i][j] = (DATA_TYPE)((n + i - j) % n) / n;
  }

  kernel_trmm(m, n, alpha, A, B);

  ds_dump_double("B", &B[0][0], (size_t)M * N);

  free(A);
  free(B);
  return 0;
}
