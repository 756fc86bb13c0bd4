double tune_bench_now(void); void tune_bench_add(double t0); static double tune_bench_t0;
/* A stencil written as C99 code usually is: loop variables declared in the loops,
 * a size macro, comments inside the region. Built with -std=c99, under which
 * <stdlib.h> does not declare aligned_alloc. */
#include <stdio.h>
#include <stdlib.h>

#ifndef LEN
#ifdef LARGE_DATASET
#define LEN 3000
#else
#define LEN 96
#endif
#endif

static double a[LEN][LEN], b[LEN][LEN];

static void smooth(void)
{
tune_bench_t0 = tune_bench_now();
#pragma scop
  /* Four neighbours, equally weighted. */
  for (int i = 1; i < LEN - 1; i++)
    for (int j = 1; j < LEN - 1; j++)
      a[i][j] = 0.25 * (b[i - 1][j] + b[i + 1][j] + b[i][j - 1] + b[i][j + 1]);
#pragma endscop
tune_bench_add(tune_bench_t0);
#line 25
}

int main(void)
{
  for (int i = 0; i < LEN; i++)
    for (int j = 0; j < LEN; j++)
      b[i][j] = (double)((i * 7 + j * 3) % 11);
  smooth();
  double s = 0.0;
  for (int i = 0; i < LEN; i++)
    for (int j = 0; j < LEN; j++)
      s += a[i][j] * (i + 1);
  printf("%.6f\n", s);
  return 0;
}
