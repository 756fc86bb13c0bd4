/* 2mm: tmp := alpha * A * B;  D := tmp * C + beta * D, i.e. D := alpha * A * B * C + beta * D. */
#include "common.h"

#if defined(MINI_DATASET)
#define NI 16
#define NJ 18
#define NK 22
#define NL 24
#elif defined(SMALL_DATASET)
#define NI 40
#define NJ 50
#define NK 70
#define NL 80
#elif defined(MEDIUM_DATASET)
#define NI 180
#define NJ 190
#define NK 210
#define NL 220
#elif defined(LARGE_DATASET)
#define NI 800
#define NJ 900
#define NK 1100
#define NL 1200
#elif defined(EXTRALARGE_DATASET)
#define NI 1600
#define NJ 1800
#define NK 2200
#define NL 2400
#endif

static void kernel_mm2(int ni, int nj, int nk, int nl, DATA_TYPE alpha, DATA_TYPE beta,
                       DATA_TYPE tmp[NI][NJ], DATA_TYPE A[NI][NK], DATA_TYPE B[NK][NJ],
                       DATA_TYPE C[NJ][NL], DATA_TYPE D[NI][NL])
{
  int i, j, k;

#pragma scop
  for (i = 0; i < ni; i++)
    for (j = 0; j < nj; j++) {
      DATA_TYPE s = 0.0;
      for (k = 0; k < nk; k++)
        s += alpha * A[i][k] * B[k][j];
      tmp[i][j] = s;
    }

  for (i = 0; i < ni; i++)
    for (j = 0; j < nl; j++) {
      D[i][j] *= beta;
      for (k = 0; k < nj; k++)
        D[i][j] += tmp[i][k] * C[k][j];
    }
#pragma endscop
}

int main(void)
{
  int ni = NI, nj = NJ, nk = NK, nl = NL;
  int i, j;
  DATA_TYPE alpha = 1.5;
  DATA_TYPE beta = 1.2;
  DATA_TYPE (*tmp)[NJ] = ds_alloc(sizeof(DATA_TYPE) * NI * NJ);
  DATA_TYPE (*A)[NK] = ds_alloc(sizeof(DATA_TYPE) * NI * NK);
  DATA_TYPE (*B)[NJ] = ds_alloc(sizeof(DATA_TYPE) * NK * NJ);
  DATA_TYPE (*C)[NL] = ds_alloc(sizeof(DATA_TYPE) * NJ * NL);
  DATA_TYPE (*D)[NL] = ds_alloc(sizeof(DATA_TYPE) * NI * NL);

  for (i = 0; i < ni; i++)
    for (j = 0; j < nk; j++)
      A[i][j] = (DATA_TYPE)((i * j + 1) % ni) / ni;
  for (i = 0; i < nk; i++)
    for (j = 0; j < nj; j++)
      B[i][j] = (DATA_TYPE)(i * (j + 1) % nj) / nj;
  for (i = 0; i < nj; i++)
    for (j = 0; j < nl; j++)
      C[i][j] = (DATA_TYPE)((i * (j + 3) + 1) % nl) / nl;
  for (i = 0; i < ni; i++)
    for (j = 0; j < nl; j++)
      D[i][j] = (DATA_TYPE)(i * (j + 2) % nk) / nk;

  kernel_mm2(ni, nj, nk, nl, alpha, beta, tmp, A, B, C, D);

  ds_dump_double("tmp", &tmp[0][0], (size_t)NI * NJ);
  ds_dump_double("D", &D[0][0], (size_t)NI * NL);

  free(tmp);
  free(A);
  free(B);
  free(C);
  free(D);
  return 0;
}
