/* Solve A x = b by in-place LU factorisation (no pivoting), forward substitution L y = b, backward substitution U x = y. */
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

static void kernel_ludcmp(int n, DATA_TYPE A[N][N], DATA_TYPE b[N], DATA_TYPE x[N], DATA_TYPE y[N])
{
  int i, j, k;
  DATA_TYPE w;

#pragma scop
  for (k = 0; k < n; k++) {
    for (i = k + 1; i < n; i++)
      A[i][k] /= A[k][k];
    for (i = k + 1; i < n; i++)
      for (j = k + 1; j < n; j++)
        A[i][j] -= A[i][k] * A[k][j];
  }
  for (i = 0; i < n; i++) {
    w = b[i];
    for (j = 0; j < i; j++)
      w -= A[i][j] * y[j];
    y[i] = w;
  }
  for (i = n - 1; i >= 0; i--) {
    w = y[i];
    for (j = i + 1; j < n; j++)
      w -= A[i][j] * x[j];
    x[i] = w / A[i][i];
  }
#pragma endscop
}

int main(void)
{
  int i, j;
  DATA_TYPE (*A)[N] = ds_alloc(sizeof(DATA_TYPE) * N * N);
  DATA_TYPE *b = ds_alloc(sizeof(DATA_TYPE) * N);
  DATA_TYPE *x = ds_alloc(sizeof(DATA_TYPE) * N);
  DATA_TYPE *y = ds_alloc(sizeof(DATA_TYPE) * N);

  /* Strictly diagonally dominant (by rows and columns): no pivoting needed. */
  for (i = 0; i < N; i++) {
    for (j = 0; j < N; j++)
      A[i][j] = (i == j) ? (DATA_TYPE)(N + 1 + i % 3)
                         : (DATA_TYPE)((5 * i + 2 * j + 1) % 17 + 1) / 18.0 - 0.4;
    b[i] = 1.0 + (DATA_TYPE)(i % 10) / 4.0;
  }

  kernel_ludcmp(N, A, b, x, y);

  ds_dump_double("A", &A[0][0], (size_t)N * N);
  ds_dump_double("x", x, N);
  ds_dump_double("y", y, N);
  free(A);
  free(b);
  free(x);
  free(y);
  return 0;
}
