/* doitgen: A(r,q,:) := A(r,q,:) * C4 for every (r,q), i.e. A[r][q][p] = sum_s A[r][q][s] * C4[s][p]. */
#include "common.h"

#if defined(MINI_DATASET)
#define NQ 8
#define NR 10
#define NP 12
#elif defined(SMALL_DATASET)
#define NQ 20
#define NR 25
#define NP 30
#elif defined(MEDIUM_DATASET)
#define NQ 40
#define NR 50
#define NP 60
#elif defined(LARGE_DATASET)
#define NQ 140
#define NR 150
#define NP 160
#elif defined(EXTRALARGE_DATASET)
#define NQ 220
#define NR 250
#define NP 270
#endif

/* sum is a work vector shared by all (r,q) iterations; it is left holding the last row. */
static void kernel_doitgen(int nr, int nq, int np, DATA_TYPE A[NR][NQ][NP],
                           DATA_TYPE C4[NP][NP], DATA_TYPE sum[NP])
{
#pragma scop
  for (int r = 0; r < nr; r++)
    for (int q = 0; q < nq; q++) {
      for (int p = 0; p < np; p++) {
        sum[p] = 0.0;
        for (int s = 0; s < np; s++)
          sum[p] += A[r][q][s] * C4[s][p];
      }
      for (int p = 0; p < np; p++)
        A[r][q][p] = sum[p];
    }
#pragma endscop
}

int main(void)
{
  int nr = NR, nq = NQ, np = NP;
  DATA_TYPE (*A)[NQ][NP] = ds_alloc(sizeof(DATA_TYPE) * NR * NQ * NP);
  DATA_TYPE (*C4)[NP] = ds_alloc(sizeof(DATA_TYPE) * NP * NP);
  DATA_TYPE *sum = ds_alloc(sizeof(DATA_TYPE) * NP);

  for (int r = 0; r < nr; r++)
    for (int q = 0; q < nq; q++)
      for (int p = 0; p < np; p++)
        A[r][q][p] = (DATA_TYPE)((r * q + p) % np) / np;
  for (int s = 0; s < np; s++)
    for (int p = 0; p < np; p++)
      C4[s][p] = (DATA_TYPE)(s * (p + 1) % np) / np;

  kernel_doitgen(nr, nq, np, A, C4, sum);

  ds_dump_double("A", &A[0][0][0], (size_t)NR * NQ * NP);
  ds_dump_double("sum", sum, NP);

  free(A);
  free(C4);
  free(sum);
  return 0;
}
