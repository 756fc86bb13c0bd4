/* gesummv: y := alpha * A * x + beta * B * x (single precision), tmp := A * x. */
#define DATA_TYPE float
#include "common.h"

#if defined(MINI_DATASET)
#define N 30
#elif defined(SMALL_DATASET)
#define N 90
#elif defined(MEDIUM_DATASET)
#define N 250
#elif defined(LARGE_DATASET)
#define N 1300
#elif defined(EXTRALARGE_DATASET)
#define N 2800
#endif

static DATA_TYPE A[N][N];
static DATA_TYPE B[N][N];
static DATA_TYPE x[N];
static DATA_TYPE y[N];
static DATA_TYPE tmp[N];

int main(void)
{
  int i, j;
  int n = N;
  DATA_TYPE alpha = 1.5f;
  DATA_TYPE beta = 1.2f;

  for (i = 0; i < N; i++) {
    x[i] = (DATA_TYPE)(i % N) / N;
    for (j = 0; j < N; j++) {
      A[i][j] = (DATA_TYPE)((i * j + 1) % N) / N;
      B[i][j] = (DATA_TYPE)((i * j + 2) % N) / N;
    }
  }

#pragma scop
  for (i = 0; i < n; i++) {
    tmp[i] = 0.0f;
    y[i] = 0.0f;
    for (j = 0; j < n; j++) {
      tmp[i] += A[i][j] * x[j];
      y[i] += B[i][j] * x[j];
    }
    y[i] = alpha * tmp[i] + beta * y[i];
  }
#pragma endscop

  ds_dump_float("tmp", tmp, N);
  ds_dump_float("y", y, N);
  return 0;
}
