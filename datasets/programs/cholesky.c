/* Cholesky factorisation A = L * L^T of a symmetric positive-definite matrix; L overwrites the lower triangle of A. */
#include "common.h"

#if defined(MINI_DATASET)
#define N 40
#elif defined(SMALL_DATASET)
#define N 120
#elif defined(MEDIUM_DATASET)
#define N 400
#elif defined(LARGE_DATASET)
#define N 2000
#elif defined(EXTRALARGE_DATASET)
#define N 4000
#endif

static void kernel_cholesky(int n, DATA_TYPE A[N][N])
{
  int i, j, k;

#pragma scop
  for (i = 0; i < n; i++) {
    for (j = 0; j < i; j++) {
      for (k = 0; k < j; k++)
        A[i][j] -= A[i][k] * A[j][k];
      A[i][j] /= A[j][j];
    }
    for (k = 0; k < i; k++)
      A[i][i] -= A[i][k] * A[i][k];
    A[i][i] = sqrt(A[i][i]);
  }
#pragma endscop
}

int main(void)
{
  int i, j;
  DATA_TYPE (*A)[N] = ds_alloc(sizeof(DATA_TYPE) * N * N);

  /* Symmetric, off-diagonal entries in (0, 1), diagonal larger than n:
   * strictly diagonally dominant with a positive diagonal, hence SPD. */
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      A[i][j] = (i == j) ? (DATA_TYPE)(N + 1 + i % 5)
                         : (DATA_TYPE)((i * j + 3) % 11 + 1) / 12.0;

  kernel_cholesky(N, A);

  ds_dump_double("A", &A[0][0], (size_t)N * N);
  free(A);
  return 0;
}
