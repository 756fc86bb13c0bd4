/* Levinson-Durbin recursion: solve the Toeplitz Yule-Walker system T y = -r, T_ij = t_|i-j|, t_0 = 1, r_i = t_{i+1}. */
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

static void kernel_durbin(int n, DATA_TYPE r[N], DATA_TYPE y[N], DATA_TYPE z[N])
{
  int i, k;
  DATA_TYPE alpha, beta, sum;

#pragma scop
  y[0] = -r[0];
  beta = 1.0;
  alpha = -r[0];
  for (k = 1; k < n; k++) {
    /* prediction error of order k */
    beta = (1.0 - alpha * alpha) * beta;
    sum = 0.0;
    for (i = 0; i < k; i++)
      sum += r[k - i - 1] * y[i];
    alpha = -(r[k] + sum) / beta;
    for (i = 0; i < k; i++)
      z[i] = y[i] + alpha * y[k - i - 1];
    for (i = 0; i < k; i++)
      y[i] = z[i];
    y[k] = alpha;
  }
#pragma endscop
}

int main(void)
{
  int i;
  DATA_TYPE *r = ds_alloc(sizeof(DATA_TYPE) * N);
  DATA_TYPE *y = ds_alloc(sizeof(DATA_TYPE) * N);
  DATA_TYPE *z = ds_alloc(sizeof(DATA_TYPE) * N);

  /* Autocorrelation t_m = 0.6 / (m + 1) + 0.4 * 0.8^m * cos(0.5 m), t_0 = 1. Both terms are positive-definite
   * sequences (1 / (m + 1) = integral over x in [0, 1] of x^m) whose spectra are bounded away from zero,
   * so every reflection coefficient satisfies |alpha| < 1 and beta stays bounded below; r_i = t_{i+1}. */
  for (i = 0; i < N; i++) {
    double m = (double)(i + 1);
    r[i] = 0.6 / (m + 1.0) + 0.4 * pow(0.8, m) * cos(0.5 * m);
  }

  kernel_durbin(N, r, y, z);

  ds_dump_double("y", y, N);
  ds_dump_double("z", z, N);
  free(r);
  free(y);
  free(z);
  return 0;
}
