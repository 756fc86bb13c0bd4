/* atax: y := A^T * (A * x), with A (M x N); tmp := A * x. */
#include "common.h"

#if defined(MINI_DATASET)
#define M 38
#define N 42
#elif defined(SMALL_DATASET)
#define M 116
#define N 124
#elif defined(MEDIUM_DATASET)
#define M 390
#define N 410
#elif defined(LARGE_DATASET)
#define M 1900
#define N 2100
#elif defined(EXTRALARGE_DATASET)
#define M 1800
#define N 2200
#endif

static DATA_TYPE A[M][N];
static DATA_TYPE x[N];
static DATA_TYPE y[N];
static DATA_TYPE tmp[M];

int main(void)
{
  int i, j;
  int m = M, n = N;

  for (j = 0; j < N; j++)
    x[j] = 1.0 + (DATA_TYPE)j / N;
  for (i = 0; i < M; i++)
    for (j = 0; j < N; j++)
      A[i][j] = (DATA_TYPE)((i + j) % N) / (5.0 * M);

#pragma scop
  for (j = 0; j < n; j++)
    y[j] = 0.0;
  for (i = 0; i < m; i++) {
    tmp[i] = 0.0;
    for (j = 0; j < n; j++)
      tmp[i] += A[i][j] * x[j];
    for (j = 0; j < n; j++)
      y[j] += A[i][j] * tmp[i];
  }
#pragma endscop

  ds_dump_double("tmp", tmp, M);
  ds_dump_double("y", y, N);
  return 0;
}
