/* mvt: x1 := x1 + A * y1;  x2 := x2 + A^T * y2, with A (N x N). */
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

/* (y_1, y_2 rather than y1, y2: math.h may declare Bessel functions named y1.) */
static DATA_TYPE A[N][N];
static DATA_TYPE x1[N];
static DATA_TYPE x2[N];
static DATA_TYPE y_1[N];
static DATA_TYPE y_2[N];

int main(void)
{
  int i, j;
  int n = N;

  for (i = 0; i < N; i++) {
    x1[i] = (DATA_TYPE)(i % N) / N;
    x2[i] = (DATA_TYPE)((i + 1) % N) / N;
    y_1[i] = (DATA_TYPE)((i + 3) % N) / N;
    y_2[i] = (DATA_TYPE)((i + 4) % N) / N;
    for (j = 0; j < N; j++)
      A[i][j] = (DATA_TYPE)(i * j % N) / N;
  }

#pragma scop
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      x1[i] += A[i][j] * y_1[j];
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      x2[i] += A[j][i] * y_2[j];
#pragma endscop

  ds_dump_double("x1", x1, N);
  ds_dump_double("x2", x2, N);
  return 0;
}
