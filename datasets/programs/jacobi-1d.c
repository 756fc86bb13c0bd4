/* 1-D Jacobi relaxation: tsteps sweeps of the 3-point average u_i <- (u_{i-1} + u_i + u_{i+1}) / 3, alternating between two arrays. */
#define DATA_TYPE float
#include "common.h"

#if defined(MINI_DATASET)
#define TSTEPS 20
#define N 30
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

static DATA_TYPE A[N];
static DATA_TYPE B[N];

int main(void)
{
  int t, i;
  int n = N;
  int tsteps = TSTEPS;

  for (i = 0; i < N; i++) {
    A[i] = (DATA_TYPE)((i * 5) % 23 + 2) / (DATA_TYPE)N;
    B[i] = (DATA_TYPE)(i % 11 + 3) / (DATA_TYPE)N;
  }

#pragma scop
  for (t = 0; t < tsteps; t++) {
    for (i = 1; i < n - 1; i++)
      B[i] = (A[i - 1] + A[i] + A[i + 1]) / 3.0f;
    for (i = 1; i < n - 1; i++)
      A[i] = (B[i - 1] + B[i] + B[i + 1]) / 3.0f;
  }
#pragma endscop

  ds_dump_float("A", A, N);
  ds_dump_float("B", B, N);
  return 0;
}
