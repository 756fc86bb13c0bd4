/* LU factorisation without pivoting, A = L * U (L unit lower, U upper), both stored in place in A. */
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

static void kernel_lu(int n, DATA_TYPE A[N][N])
{
  int i, j, k;

#pragma scop
  for (i = 0; i < n; i++) {
    /* row i of L: l_ij = (a_ij - sum_{k<j} l_ik u_kj) / u_jj */
    for (j = 0; j < i; j++) {
      for (k = 0; k < j; k++)
        A[i][j] -= A[i][k] * A[k][j];
      A[i][j] /= A[j][j];
    }
    /* row i of U: u_ij = a_ij - sum_{k<i} l_ik u_kj */
    for (j = i; j < n; j++)
      for (k = 0; k < i; k++)
        A[i][j] -= A[i][k] * A[k][j];
  }
#pragma endscop
}

int main(void)
{
  int i, j;
  DATA_TYPE (*A)[N] = ds_alloc(sizeof(DATA_TYPE) * N * N);

  /* Off-diagonal entries in (0, 1], diagonal larger than n: strictly diagonally
   * dominant by rows and columns, so elimination needs no pivoting. */
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      A[i][j] = (i == j) ? (DATA_TYPE)(N + 2 + i % 4)
                         : (DATA_TYPE)((3 * i + 7 * j) % 13 + 1) / 13.0;

  kernel_lu(N, A);

  ds_dump_double("A", &A[0][0], (size_t)N * N);
  free(A);
  return 0;
}
