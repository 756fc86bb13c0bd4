/* Modified Gram-Schmidt QR factorisation A = Q R of an M x N matrix (M >= N); A is overwritten by residuals. */
#include "common.h"

#if defined(MINI_DATASET)
#define M 30
#define N 20
#elif defined(SMALL_DATASET)
#define M 80
#define N 60
#elif defined(MEDIUM_DATASET)
#define M 240
#define N 200
#elif defined(LARGE_DATASET)
#define M 1200
#define N 1000
#elif defined(EXTRALARGE_DATASET)
#define M 2600
#define N 2000
#endif

static void kernel_gramschmidt(int m, int n, DATA_TYPE A[M][N], DATA_TYPE R[N][N], DATA_TYPE Q[M][N])
{
  int i, j, k;
  DATA_TYPE nrm;

#pragma scop
  for (k = 0; k < n; k++) {
    nrm = 0.0;
    for (i = 0; i < m; i++)
      nrm += A[i][k] * A[i][k];
    R[k][k] = sqrt(nrm);
    for (i = 0; i < m; i++)
      Q[i][k] = A[i][k] / R[k][k];
    for (j = k + 1; j < n; j++) {
      R[k][j] = 0.0;
      for (i = 0; i < m; i++)
        R[k][j] += Q[i][k] * A[i][j];
      for (i = 0; i < m; i++)
        A[i][j] -= Q[i][k] * R[k][j];
    }
  }
#pragma endscop
}

int main(void)
{
  int i, j;
  DATA_TYPE (*A)[N] = ds_alloc(sizeof(DATA_TYPE) * M * N);
  DATA_TYPE (*R)[N] = ds_alloc(sizeof(DATA_TYPE) * N * N);
  DATA_TYPE (*Q)[N] = ds_alloc(sizeof(DATA_TYPE) * M * N);

  /* Top N x N block strictly diagonally dominant (diagonal 2, off-diagonal row sums below 1):
   * full column rank with moderate condition number at every size. */
  for (i = 0; i < M; i++)
    for (j = 0; j < N; j++)
      A[i][j] = (DATA_TYPE)((i * j + 2 * i + j) % 19) / (19.0 * N) + (i == j ? 2.0 : 0.0);

  kernel_gramschmidt(M, N, A, R, Q);

  ds_dump_double("A", &A[0][0], (size_t)M * N);
  ds_dump_double("R", &R[0][0], (size_t)N * N);
  ds_dump_double("Q", &Q[0][0], (size_t)M * N);
  free(A);
  free(R);
  free(Q);
  return 0;
}
