double tune_bench_now(void); void tune_bench_add(double t0); static double tune_bench_t0;
/* A relaxation step written as OpenMP codes write it: one parallel region around
 * several worksharing loops, with a reduction. Built with -fopenmp. */
#include <stdio.h>

#ifdef LARGE_DATASET
#define N 3000
#define M 3000
#else
#define N 120
#define M 100
#endif

static double u[N][M], v[N][M];

static double relax(void)
{
  int i, j;
  double total = 0.0;
tune_bench_t0 = tune_bench_now();
#pragma scop
#pragma omp parallel private(i, j)
  {
    /* Rows of the sweep are shared among the threads. */
#pragma omp for
    for (i = 1; i < N - 1; i++)
      for (j = 1; j < M - 1; j++)
        v[i][j] = 0.25 * (u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1]);
    /* The residual, reduced across the team. */
#pragma omp for reduction(+:total)
    for (i = 1; i < N - 1; i++)
      for (j = 1; j < M - 1; j++)
        total += (v[i][j] - u[i][j]) * (v[i][j] - u[i][j]);
  }
#pragma endscop
tune_bench_add(tune_bench_t0);
#line 34
  return total;
}

int main(void)
{
  int i, j;
  for (i = 0; i < N; i++)
    for (j = 0; j < M; j++) {
      u[i][j] = (double)((i * 7 + j * 3) % 11);
      v[i][j] = 0.0;
    }
  printf("%.6f\n", relax());
  double s = 0.0;
  for (i = 0; i < N; i++)
    for (j = 0; j < M; j++)
      s += v[i][j] * (j + 1);
  printf("%.3f\n", s);
  return 0;
}
