/* 3mm: E := A * B;  F := C * D;  G := E * F, with A (NI x NK), B (NK x NJ), C (NJ x NM), D (NM x NL). */
#include "common.h"

#if defined(MINI_DATASET)
#define NI 16
#define NJ 18
#define NK 20
#define NL 22
#define NM 24
#elif defined(SMALL_DATASET)
#define NI 40
#define NJ 50
#define NK 60
#define NL 70
#define NM 80
#elif defined(MEDIUM_DATASET)
#define NI 180
#define NJ 190
#define NK 200
#define NL 210
#define NM 220
#elif defined(LARGE_DATASET)
#define NI 800
#define NJ 900
#define NK 1000
#define NL 1100
#define NM 1200
#elif defined(EXTRALARGE_DATASET)
#define NI 1600
#define NJ 1800
#define NK 2000
#define NL 2200
#define NM 2400
#endif

static void kernel_mm3(int ni, int nj, int nk, int nl, int nm,
                       DATA_TYPE E[NI][NJ], DATA_TYPE A[NI][NK], DATA_TYPE B[NK][NJ],
                       DATA_TYPE F[NJ][NL], DATA_TYPE C[NJ][NM], DATA_TYPE D[NM][NL],
                       DATA_TYPE G[NI][NL])
{
  int i, j, k;

#pragma scop
  /* E := A * B */
  for (i = 0; i < ni; i++)
    for (j = 0; j < nj; j++) {
      E[i][j] = 0.0;
      for (k = 0; k < nk; k++)
        E[i][j] += A[i][k] * B[k][j];
    }

  /* F := C * D */
  for (i = 0; i < nj; i++)
    for (j = 0; j < nl; j++) {
      DATA_TYPE s = 0.0;
      for (k = 0; k < nm; k++)
        s += C[i][k] * D[k][j];
      F[i][j] = s;
    }

  /* G := E * F */
  for (i = 0; i < ni; i++) {
    for (j = 0; j < nl; j++)
      G[i][j] = 0.0;
    for (k = 0; k < nj; k++)
      for (j = 0; j < nl; j++)
        G[i][j] += E[i][k] * F[k][j];
  }
#pragma endscop
}

int main(void)
{
  int ni = NI, nj = NJ, nk = NK, nl = NL, nm = NM;
  int i, j;
  DATA_TYPE (*E)[NJ] = ds_alloc(sizeof(DATA_TYPE) * NI * NJ);
  DATA_TYPE (*A)[NK] = ds_alloc(sizeof(DATA_TYPE) * NI * NK);
  DATA_TYPE (*B)[NJ] = ds_alloc(sizeof(DATA_TYPE) * NK * NJ);
  DATA_TYPE (*F)[NL] = ds_alloc(sizeof(DATA_TYPE) * NJ * NL);
  DATA_TYPE (*C)[NM] = ds_alloc(sizeof(DATA_TYPE) * NJ * NM);
  DATA_TYPE (*D)[NL] = ds_alloc(sizeof(DATA_TYPE) * NM * NL);
  DATA_TYPE (*G)[NL] = ds_alloc(sizeof(DATA_TYPE) * NI * NL);

  for (i = 0; i < ni; i++)
    for (j = 0; j < nk; j++)
      A[i][j] = (DATA_TYPE)((i * j + 1) % ni) / (5 * ni);
  for (i = 0; i < nk; i++)
    for (j = 0; j < nj; j++)
      B[i][j] = (DATA_TYPE)((i * (j + 1) + 2) % nj) / (5 * nj);
  for (i = 0; i < nj; i++)
    for (j = 0; j < nm; j++)
      C[i][j] = (DATA_TYPE)(i * (j + 3) % nl) / (5 * nl);
  for (i = 0; i < nm; i++)
    for (j = 0; j < nl; j++)
      D[i][j] = (DATA_TYPE)((i * (j + 2) + 2) % nk) / (5 * nk);

  kernel_mm3(ni, nj, nk, nl, nm, E, A, B, F, C, D, G);

  ds_dump_double("E", &E[0][0], (size_t)NI * NJ);
  ds_dump_double("F", &F[0][0], (size_t)NJ * NL);
  ds_dump_double("G", &G[0][0], (size_t)NI * NL);

  free(E);
  free(A);
  free(B);
  free(F);
  free(C);
  free(D);
  free(G);
  return 0;
}
