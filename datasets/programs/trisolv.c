/* Triangular solve: forward substitution for L x = b with L lower triangular. */
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

static DATA_TYPE L[N][N];
static DATA_TYPE x[N];
static DATA_TYPE b[N];

int main(void)
{
  int i, j;
  int n = N;

  for (i = 0; i < N; i++) {
    for (j = 0; j < i; j++)
      L[i][j] = (DATA_TYPE)((i + 2 * j) % 9 + 1) / (10.0 * N);
    L[i][i] = 1.0 + 0.25 * (i % 4);
    b[i] = (DATA_TYPE)(i % 7) - 2.5;
  }

#pragma scop
  for (i = 0; i < n; i++) {
    x[i] = b[i];
    for (j = 0; j < i; j++)
      x[i] -= L[i][j] * x[j];
    x[i] = x[i] / L[i][i];
  }
#pragma endscop

  ds_dump_double("x", x, N);
  return 0;
}
