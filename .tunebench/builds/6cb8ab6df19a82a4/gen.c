double tune_bench_now(void); void tune_bench_add(double t0); static double tune_bench_t0;
/* A matrix product the user already parallelized with OpenMP, and a scaling loop
 * after it. Built with -fopenmp. */
#include <stdio.h>

#ifdef LARGE_DATASET
#define N 1200
#else
#define N 64
#endif

static double a[N][N], b[N][N], c[N][N];

static void product(void)
{
  int i, j, k;
tune_bench_t0 = tune_bench_now();
#pragma scop
  /* The user's own parallel loop: tune must keep it. */
#pragma omp parallel for private(j, k)
  for (i = 0; i < N; i++) {
    for (k = 0; k < N; k += 2) {
      if (k + 1 < N) {
        for (j = 0; j < N; j++) {
          c[i][j] += a[i][k] * b[k][j];
          c[i][j] += a[i][k + 1] * b[k + 1][j];
        }
      } else {
        for (int k_r = k; k_r < N; k_r++) {
#pragma omp simd
          for (j = 0; j < N; j++) {
            c[i][j] += a[i][k_r] * b[k_r][j];
          }
        }
      }
    }
  }
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      a[i][j] = c[i][j] * 0.5;
#pragma endscop
tune_bench_add(tune_bench_t0);
#line 40
}

int main(void)
{
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      a[i][j] = (i + j) % 5;
      b[i][j] = (i * j) % 3;
      c[i][j] = 0;
    }
  product();
  double s = 0.0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      s += a[i][j] * (j + 1);
  printf("%.3f\n", s);
  return 0;
}
