/* ADI (Peaceman-Rachford) for 2-D heat u_t = D lap(u): tridiagonal solves along columns, then along rows, each step. */
#include "common.h"

#if defined(MINI_DATASET)
#define TSTEPS 20
#define N 20
#elif defined(SMALL_DATASET)
#define TSTEPS 40
#define N 60
#elif defined(MEDIUM_DATASET)
#define TSTEPS 100
#define N 200
#elif defined(LARGE_DATASET)
#define TSTEPS 500
#define N 1000
#elif defined(EXTRALARGE_DATASET)
#define TSTEPS 1000
#define N 2000
#endif

/* r = D * dt / (2 * dx^2): each half step solves (1 + 2r) w_i - r w_{i-1} - r w_{i+1} = rhs_i.
 * p and q hold the Thomas algorithm's modified super-diagonal and right-hand side. */
static void kernel_adi(int tsteps, int n, DATA_TYPE r, DATA_TYPE u[N][N], DATA_TYPE v[N][N],
                       DATA_TYPE p[N][N], DATA_TYPE q[N][N])
{
  int t, i, j;
  DATA_TYPE den;

#pragma scop
  for (t = 0; t < tsteps; t++) {
    /* half step 1: implicit in i (along each column j), explicit in j; result in v */
    for (j = 1; j < n - 1; j++) {
      p[0][j] = 0.0;
      q[0][j] = u[0][j];
      v[0][j] = u[0][j];
      for (i = 1; i < n - 1; i++) {
        den = 1.0 + 2.0 * r + r * p[i - 1][j];
        p[i][j] = -r / den;
        q[i][j] = (r * u[i][j - 1] + (1.0 - 2.0 * r) * u[i][j] + r * u[i][j + 1] + r * q[i - 1][j]) / den;
      }
      v[n - 1][j] = u[n - 1][j];
      for (i = n - 2; i >= 1; i--)
        v[i][j] = q[i][j] - p[i][j] * v[i + 1][j];
    }
    /* half step 2: implicit in j (along each row i), explicit in i; result back in u */
    for (i = 1; i < n - 1; i++) {
      p[i][0] = 0.0;
      q[i][0] = u[i][0];
      for (j = 1; j < n - 1; j++) {
        den = 1.0 + 2.0 * r + r * p[i][j - 1];
        p[i][j] = -r / den;
        q[i][j] = (r * v[i - 1][j] + (1.0 - 2.0 * r) * v[i][j] + r * v[i + 1][j] + r * q[i][j - 1]) / den;
      }
      for (j = n - 2; j >= 1; j--)
        u[i][j] = q[i][j] - p[i][j] * u[i][j + 1];
    }
  }
#pragma endscop
}

int main(void)
{
  int i, j;
  DATA_TYPE (*u)[N] = ds_alloc(sizeof(DATA_TYPE) * N * N);
  DATA_TYPE (*v)[N] = ds_alloc(sizeof(DATA_TYPE) * N * N);
  DATA_TYPE (*p)[N] = ds_alloc(sizeof(DATA_TYPE) * N * N);
  DATA_TYPE (*q)[N] = ds_alloc(sizeof(DATA_TYPE) * N * N);
  /* unit square, total simulated time 1, diffusivity 1e-3 */
  DATA_TYPE dx = 1.0 / (N - 1);
  DATA_TYPE dt = 1.0 / TSTEPS;
  DATA_TYPE r = 1.0e-3 * dt / (2.0 * dx * dx);

  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      u[i][j] = (DATA_TYPE)((i * 3 + j * 5) % (N + 1)) / N + (DATA_TYPE)(i + j) / (2.0 * N);

  kernel_adi(TSTEPS, N, r, u, v, p, q);

  ds_dump_double("u", &u[0][0], (size_t)N * N);
  ds_dump_double("v", &v[0][0], (size_t)N * N);
  ds_dump_double("p", &p[0][0], (size_t)N * N);
  ds_dump_double("q", &q[0][0], (size_t)N * N);
  free(u);
  free(v);
  free(p);
  free(q);
  return 0;
}
