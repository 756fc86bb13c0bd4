/* correlation: Pearson correlation matrix of M variables (columns) over N observations (rows). */
#include "common.h"

#if defined(MINI_DATASET)
#define M 28
#define N 32
#elif defined(SMALL_DATASET)
#define M 80
#define N 100
#elif defined(MEDIUM_DATASET)
#define M 240
#define N 260
#elif defined(LARGE_DATASET)
#define M 1200
#define N 1400
#elif defined(EXTRALARGE_DATASET)
#define M 2600
#define N 3000
#endif

/* data is standardised in place, z = (x - mean) / (sqrt(n) * stddev), so corr = Z^T Z.
 * A (near-)constant column has stddev <= eps; its stddev is taken as 1 to avoid dividing by 0. */
static void kernel_correlation(int m, int n, DATA_TYPE float_n, DATA_TYPE data[N][M],
                               DATA_TYPE corr[M][M], DATA_TYPE mean[M], DATA_TYPE stddev[M])
{
  int i, j, k;
  DATA_TYPE eps = 0.1;

#pragma scop
  for (j = 0; j < m; j++) {
    mean[j] = 0.0;
    for (i = 0; i < n; i++)
      mean[j] += data[i][j];
    mean[j] /= float_n;
  }

  for (j = 0; j < m; j++) {
    stddev[j] = 0.0;
    for (i = 0; i < n; i++)
      stddev[j] += (data[i][j] - mean[j]) * (data[i][j] - mean[j]);
    stddev[j] = sqrt(stddev[j] / float_n);
    stddev[j] = stddev[j] <= eps ? 1.0 : stddev[j];
  }

  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++) {
      data[i][j] -= mean[j];
      data[i][j] /= sqrt(float_n) * stddev[j];
    }

  for (i = 0; i < m; i++) {
    corr[i][i] = 1.0;
    for (j = i + 1; j < m; j++) {
      DATA_TYPE s = 0.0;
      for (k = 0; k < n; k++)
        s += data[k][i] * data[k][j];
      corr[i][j] = s;
      corr[j][i] = s;
    }
  }
#pragma endscop
}

int main(void)
{
  int m = M, n = N;
  int i, j;
  DATA_TYPE float_n = (DATA_TYPE)N;
  DATA_TYPE (*data)[M] = ds_alloc(sizeof(DATA_TYPE) * N * M);
  DATA_TYPE (*corr)[M] = ds_alloc(sizeof(DATA_TYPE) * M * M);
  DATA_TYPE *mean = ds_alloc(sizeof(DATA_TYPE) * M);
  DATA_TYPE *stddev = ds_alloc(sizeof(DATA_TYPE) * M);

  /* every 13th column is constant, exercising the small-stddev guard */
  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++)
      data[i][j] = (DATA_TYPE)((i * (j + 1)) % 13) / 13.0 + (DATA_TYPE)((i + j) % 5) / 50.0 * ((j + 1) % 13 != 0);

  kernel_correlation(m, n, float_n, data, corr, mean, stddev);

  ds_dump_double("corr", &corr[0][0], (size_t)M * M);
  ds_dump_double("mean", mean, M);
  ds_dump_double("stddev", stddev, M);
  ds_dump_double("data", &data[0][0], (size_t)N * M);

  free(data);
  free(corr);
  free(mean);
  free(stddev);
  return 0;
}
