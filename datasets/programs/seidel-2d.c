/* 2-D Gauss-Seidel relaxation: tsteps in-place sweeps replacing each interior point by the mean of its 3x3 neighbourhood. */
#include "common.h"

#if defined(MINI_DATASET)
#define TSTEPS 20
#define N 40
#elif defined(SMALL_DATASET)
#define TSTEPS 40
#define N 120
#elif defined(MEDIUM_DATASET)
#define TSTEPS 100
#define N 400
#elif defined(LARGE_DATASET)
#define TSTEPS 500
#define N 2000
#elif defined(EXTRALARGE_DATASET)
#define TSTEPS 1000
#define N 4000
#endif

static void kernel_seidel_2d(int tsteps, int n, DATA_TYPE A[N][N])
{
  int t, i, j;

#pragma scop
  for (t = 0; t < tsteps; t++)
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        A[i][j] = (A[i - 1][j - 1] + A[i - 1][j] + A[i - 1][j + 1]
                   + A[i][j - 1] + A[i][j] + A[i][j + 1]
                   + A[i + 1][j - 1] + A[i + 1][j] + A[i + 1][j + 1]) / 9.0;
#pragma endscop
}

int main(void)
{
  int i, j;
  DATA_TYPE (*A)[N] = ds_alloc(sizeof(DATA_TYPE) * N * N);

  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      A[i][j] = (DATA_TYPE)((i * (j + 2) + 2) % (N + 3)) / N;

  kernel_seidel_2d(TSTEPS, N, A);

  ds_dump_double("A", &A[0][0], (size_t)N * N);
  free(A);
  return 0;
}
