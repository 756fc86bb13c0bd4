/* covariance: cov = (X - mean)^T (X - mean) / (N - 1) for N observations (rows) of M variables (columns). */
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

/* data is centred in place; cov is symmetric and filled completely. */
static void kernel_covariance(int m, int n, DATA_TYPE float_n, DATA_TYPE data[N][M],
                              DATA_TYPE cov[M][M], DATA_TYPE mean[M])
{
  int i, j, k;

#pragma scop
  /* column means */
  for (j = 0; j < m; j++) {
    mean[j] = 0.0;
    for (i = 0; i < n; i++)
      mean[j] += data[i][j];
    mean[j] /= float_n;
  }

  /* centre the observations */
  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++)
      data[i][j] -= mean[j];

  /* upper triangle of the covariance matrix, mirrored to the lower one */
  for (i = 0; i < m; i++)
    for (j = i; j < m; j++) {
      cov[i][j] = 0.0;
      for (k = 0; k < n; k++)
        cov[i][j] += data[k][i] * data[k][j];
      cov[i][j] /= (float_n - 1.0);
      cov[j][i] = cov[i][j];
    }
#pragma endscop
}

int main(void)
{
  int m = M, n = N;
  int i, j;
  DATA_TYPE float_n = (DATA_TYPE)N;
  DATA_TYPE (*data)[M] = ds_alloc(sizeof(DATA_TYPE) * N * M);
  DATA_TYPE (*cov)[M] = ds_alloc(sizeof(DATA_TYPE) * M * M);
  DATA_TYPE *mean = ds_alloc(sizeof(DATA_TYPE) * M);

  for (i = 0; i < n; i++)
    for (j = 0; j < m; j++)
      data[i][j] = (DATA_TYPE)((i * (j + 1)) % 23 + (i + 2 * j) % 7) / 10.0;

  kernel_covariance(m, n, float_n, data, cov, mean);

  ds_dump_double("cov", &cov[0][0], (size_t)M * M);
  ds_dump_double("mean", mean, M);
  ds_dump_double("data", &data[0][0], (size_t)N * M);

  free(data);
  free(cov);
  free(mean);
  return 0;
}
