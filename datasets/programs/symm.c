/* symm: C := alpha * A * B + beta * C, A symmetric (M x M) given by its lower triangle, B and C (M x N). */
#include "common.h"

#if defined(MINI_DATASET)
#define M 20
#define N 30
#elif defined(SMALL_DATASET)
#define M 60
#define N 80
#elif defined(MEDIUM_DATASET)
#define M 200
#define N 240
#elif defined(LARGE_DATASET)
#define M 1000
#define N 1200
#elif defined(EXTRALARGE_DATASET)
#define M 2000
#define N 2600
#endif

/* Only A[i][k] with k <= i is referenced; A(i,k) for k > i is taken as A[k][i]. */
static void kernel_symm(int m, int n, DATA_TYPE alpha, DATA_TYPE beta,
                        DATA_TYPE C[M][N], DATA_TYPE A[M][M], DATA_TYPE B[M][N])
{
  int i, j, k;

#pragma scop
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++) {
      DATA_TYPE acc = A[i][i] * B[i][j];
      for (k = 0; k < i; k++)
        acc += A[i][k] * B[k][j];
      for (k = i + 1; k < m; k++)
        acc += A[k][i] * B[k][j];
      C[i][j] = beta * C[i][j] + alpha * acc;
    }
#pragma endscop
}

int main(void)
{
  int m = M, n = N;
  int i, j;
  DATA_TYPE alpha = 1.5;
  DATA_TYPE beta = 1.2;
  DATA_TYPE (*A)[M] = ds_alloc(sizeof(DATA_TYPE) * M * M);
  DATA_TYPE (*B)[N] = ds_alloc(sizeof(DATA_TYPE) * M * N);
  DATA_TYPE (*C)[N] = ds_alloc(sizeof(DATA_TYPE) * M * N);

  for (i = 0; i < m; i++) {
    for (j = 0; j < m; j++)
      A[i][j] = j <= i ? (DATA_TYPE)((i + 2 * j) % 17) / 17.0 : -1.0; /* upper part unused */
    for (j = 0; j < n; j++) {
      B[i][j] = (DATA_TYPE)((i * j + 5) % m) / m;
      C[i][j] = (DATA_TYPE)((i + j) % 100) / 100.0;
    }
  }

  kernel_symm(m, n, alpha, beta, C, A, B);

  ds_dump_double("C", &C[0][0], (size_t)M * N);

  free(A);
  free(B);
  free(C);
  return 0;
}
