/* 2-D Jacobi relaxation: tsteps sweeps of the 5-point average over the interior, alternating between two arrays. */
#include "common.h"

#if defined(MINI_DATASET)
#define TSTEPS 20
#define N 30
#elif defined(SMALL_DATASET)
#define TSTEPS 40
#define N 90
#elif defined(MEDIUM_DATASET)
#define TSTEPS 100
#define N 250
#elif defined(LARGE_DATASET)
#define TSTEPS 500
#define N 1300
#elif defined(EXTRALARGE_DATASET)
#define TSTEPS 1000
#define N 2800
#endif

static void kernel_jacobi_2d(int tsteps, int n, DATA_TYPE A[N][N], DATA_TYPE B[N][N])
{
  int t, i, j;

#pragma scop
  for (t = 0; t < tsteps; t++) {
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        B[i][j] = 0.2 * (A[i][j] + A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]);
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        A[i][j] = 0.2 * (B[i][j] + B[i - 1][j] + B[i + 1][j] + B[i][j - 1] + B[i][j + 1]);
  }
#pragma endscop
}

int main(void)
{
  int i, j;
  DATA_TYPE (*A)[N] = ds_alloc(sizeof(DATA_TYPE) * N * N);
  DATA_TYPE (*B)[N] = ds_alloc(sizeof(DATA_TYPE) * N * N);

  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++) {
      A[i][j] = (DATA_TYPE)((i * (j + 3) + 1) % N) / N;
      B[i][j] = (DATA_TYPE)((i + 2 * j + 5) % N) / N;
    }

  kernel_jacobi_2d(TSTEPS, N, A, B);

  ds_dump_double("A", &A[0][0], (size_t)N * N);
  ds_dump_double("B", &B[0][0], (size_t)N * N);
  free(A);
  free(B);
  return 0;
}
