/* gemver: A := A + u1*v1^T + u2*v2^T;  x := x + beta * A^T * y + z;  w := w + alpha * A * x. */
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

static void kernel_gemver(int n, DATA_TYPE alpha, DATA_TYPE beta, DATA_TYPE A[N][N],
                          DATA_TYPE u1[N], DATA_TYPE v1[N], DATA_TYPE u2[N], DATA_TYPE v2[N],
                          DATA_TYPE w[N], DATA_TYPE x[N], DATA_TYPE y[N], DATA_TYPE z[N])
{
  int i, j;

#pragma scop
  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      A[i][j] = A[i][j] + u1[i] * v1[j] + u2[i] * v2[j];

  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      x[i] = x[i] + beta * A[j][i] * y[j];

  for (i = 0; i < n; i++)
    x[i] = x[i] + z[i];

  for (i = 0; i < n; i++)
    for (j = 0; j < n; j++)
      w[i] = w[i] + alpha * A[i][j] * x[j];
#pragma endscop
}

int main(void)
{
  int n = N;
  int i, j;
  DATA_TYPE alpha = 1.5;
  DATA_TYPE beta = 1.2;
  DATA_TYPE (*A)[N] = ds_alloc(sizeof(DATA_TYPE) * N * N);
  DATA_TYPE *u1 = ds_alloc(sizeof(DATA_TYPE) * N);
  DATA_TYPE *v1 = ds_alloc(sizeof(DATA_TYPE) * N);
  DATA_TYPE *u2 = ds_alloc(sizeof(DATA_TYPE) * N);
  DATA_TYPE *v2 = ds_alloc(sizeof(DATA_TYPE) * N);
  DATA_TYPE *w = ds_alloc(sizeof(DATA_TYPE) * N);
  DATA_TYPE *x = ds_alloc(sizeof(DATA_TYPE) * N);
  DATA_TYPE *y = ds_alloc(sizeof(DATA_TYPE) * N);
  DATA_TYPE *z = ds_alloc(sizeof(DATA_TYPE) * N);

  for (i = 0; i < n; i++) {
    u1[i] = (DATA_TYPE)i / n;
    v1[i] = (DATA_TYPE)(i + 1) / n / 4.0;
    u2[i] = (DATA_TYPE)(i + 1) / n / 2.0;
    v2[i] = (DATA_TYPE)(i + 1) / n / 6.0;
    y[i] = (DATA_TYPE)(i + 1) / n / 8.0;
    z[i] = (DATA_TYPE)(i + 1) / n / 9.0;
    x[i] = 0.0;
    w[i] = 0.0;
    for (j = 0; j < n; j++)
      A[i][j] = (DATA_TYPE)((i * j) % n) / n;
  }

  kernel_gemver(n, alpha, beta, A, u1, v1, u2, v2, w, x, y, z);

  ds_dump_double("A", &A[0][0], (size_t)N * N);
  ds_dump_double("x", x, N);
  ds_dump_double("w", w, N);

  free(A);
  free(u1);
  free(v1);
  free(u2);
  free(v2);
  free(w);
  free(x);
  free(y);
  free(z);
  return 0;
}
