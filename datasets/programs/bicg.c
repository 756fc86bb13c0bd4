/* bicg: s := A^T * r and q := A * p (the two products of a BiCG iteration), A (N x M). */
#include "common.h"

#if defined(MINI_DATASET)
#define M 38
#define N 42
#elif defined(SMALL_DATASET)
#define M 116
#define N 124
#elif defined(MEDIUM_DATASET)
#define M 390
#define N 410
#elif defined(LARGE_DATASET)
#define M 1900
#define N 2100
#elif defined(EXTRALARGE_DATASET)
#define M 1800
#define N 2200
#endif

static void kernel_bicg(int m, int n, DATA_TYPE A[N][M], DATA_TYPE s[M], DATA_TYPE q[N],
                        DATA_TYPE p[M], DATA_TYPE r[N])
{
#pragma scop
  for (int j = 0; j < m; j++)
    s[j] = 0.0;
  for (int i = 0; i < n; i++) {
    q[i] = 0.0;
    for (int j = 0; j < m; j++) {
      s[j] += r[i] * A[i][j];
      q[i] += A[i][j] * p[j];
    }
  }
#pragma endscop
}

int main(void)
{
  int m = M, n = N;
  DATA_TYPE (*A)[M] = ds_alloc(sizeof(DATA_TYPE) * N * M);
  DATA_TYPE *s = ds_alloc(sizeof(DATA_TYPE) * M);
  DATA_TYPE *q = ds_alloc(sizeof(DATA_TYPE) * N);
  DATA_TYPE *p = ds_alloc(sizeof(DATA_TYPE) * M);
  DATA_TYPE *r = ds_alloc(sizeof(DATA_TYPE) * N);

  for (int j = 0; j < m; j++)
    p[j] = (DATA_TYPE)(j % m) / m;
  for (int i = 0; i < n; i++) {
    r[i] = (DATA_TYPE)(i % n) / n;
    for (int j = 0; j < m; j++)
      A[i][j] = (DATA_TYPE)(i * (j + 1) % n) / n;
  }

  kernel_bicg(m, n, A, s, q, p, r);

  ds_dump_double("s", s, M);
  ds_dump_double("q", q, N);

  free(A);
  free(s);
  free(q);
  free(p);
  free(r);
  return 0;
}
