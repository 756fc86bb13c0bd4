double tune_bench_now(void); void tune_bench_add(double t0); static double tune_bench_t0;
/* Vector loops of an older code base: C89 (declarations first, no // comments),
 * an OpenMP parallel loop under a repetition loop and a simd reduction.
 * Built with -std=c89 -pedantic -fopenmp. */
#include <stdio.h>

#ifdef LARGE_DATASET
#define LEN 4000000
#define REPS 20
#else
#define LEN 4000
#define REPS 8
#endif

static float a[LEN], b[LEN], c[LEN];

static float kernel(void)
{
  int i, r;
  float dot = 0.0f;
tune_bench_t0 = tune_bench_now();
#pragma scop
  for (r = 0; r < REPS; r++) {
#pragma omp parallel for
    for (i = 0; i < LEN; i++)
      c[i] = a[i] * b[i] + c[i] * 0.5f;
  }
  /* The user vectorized the reduction. */
#pragma omp simd reduction(+:dot)
  for (i = 0; i < LEN; i++)
    dot += c[i] * a[i];
#pragma endscop
tune_bench_add(tune_bench_t0);
#line 31
  return dot;
}

int main(void)
{
  int i;
  float d;
  for (i = 0; i < LEN; i++) {
    a[i] = (float)(i % 13) * 0.25f;
    b[i] = (float)(i % 7) * 0.5f;
    c[i] = 1.0f;
  }
  d = kernel();
  printf("%.2f\n", d);
  return 0;
}
