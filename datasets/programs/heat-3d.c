/* 3-D heat equation u_t = lap(u), explicit forward-Euler scheme with a 7-point Laplacian (r = 1/8 per axis), two arrays alternating. */
#include "common.h"

#if defined(MINI_DATASET)
#define TSTEPS 20
#define N 10
#elif defined(SMALL_DATASET)
#define TSTEPS 40
#define N 20
#elif defined(MEDIUM_DATASET)
#define TSTEPS 100
#define N 40
#elif defined(LARGE_DATASET)
#define TSTEPS 500
#define N 120
#elif defined(EXTRALARGE_DATASET)
#define TSTEPS 1000
#define N 200
#endif

static void kernel_heat_3d(int tsteps, int n, DATA_TYPE A[N][N][N], DATA_TYPE B[N][N][N])
{
#pragma scop
  for (int t = 0; t < tsteps; t++) {
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        for (int k = 1; k < n - 1; k++)
          B[i][j][k] = A[i][j][k]
                       + 0.125 * (A[i + 1][j][k] - 2.0 * A[i][j][k] + A[i - 1][j][k])
                       + 0.125 * (A[i][j + 1][k] - 2.0 * A[i][j][k] + A[i][j - 1][k])
                       + 0.125 * (A[i][j][k + 1] - 2.0 * A[i][j][k] + A[i][j][k - 1]);
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        for (int k = 1; k < n - 1; k++)
          A[i][j][k] = B[i][j][k]
                       + 0.125 * (B[i + 1][j][k] - 2.0 * B[i][j][k] + B[i - 1][j][k])
                       + 0.125 * (B[i][j + 1][k] - 2.0 * B[i][j][k] + B[i][j - 1][k])
                       + 0.125 * (B[i][j][k + 1] - 2.0 * B[i][j][k] + B[i][j][k - 1]);
  }
#pragma endscop
}

int main(void)
{
  DATA_TYPE (*A)[N][N] = ds_alloc(sizeof(DATA_TYPE) * N * N * N);
  DATA_TYPE (*B)[N][N] = ds_alloc(sizeof(DATA_TYPE) * N * N * N);

  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      for (int k = 0; k < N; k++) {
        A[i][j][k] = (DATA_TYPE)((i * j + 2 * k * k + 3 * i) % (N + 5)) * 10.0 / N;
        B[i][j][k] = A[i][j][k];
      }

  kernel_heat_3d(TSTEPS, N, A, B);

  ds_dump_double("A", &A[0][0][0], (size_t)N * N * N);
  ds_dump_double("B", &B[0][0][0], (size_t)N * N * N);
  free(A);
  free(B);
  return 0;
}
