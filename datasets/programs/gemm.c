/* gemm: C := alpha * A * B + beta * C, with A (NI x NK), B (NK x NJ), C (NI x NJ). */
#include "common.h"

#if defined(MINI_DATASET)
#define NI 20
#define NJ 25
#define NK 30
#elif defined(SMALL_DATASET)
#define NI 60
#define NJ 70
#define NK 80
#elif defined(MEDIUM_DATASET)
#define NI 200
#define NJ 220
#define NK 240
#elif defined(LARGE_DATASET)
#define NI 1000
#define NJ 1100
#define NK 1200
#elif defined(EXTRALARGE_DATASET)
#define NI 2000
#define NJ 2300
#define NK 2600
#endif

static void kernel_gemm(int ni, int nj, int nk, DATA_TYPE alpha, DATA_TYPE beta,
                        DATA_TYPE C[NI][NJ], DATA_TYPE A[NI][NK], DATA_TYPE B[NK][NJ])
{
  int i, j, k;

#pragma scop
  for (i = 0; i < ni; i++) {
    for (j = 0; j < nj; j++)
      C[i][j] *= beta;
    for (k = 0; k < nk; k++)
      for (j = 0; j < nj; j++)
        C[i][j] += alpha * A[i][k] * B[k][j];
  }
#pragma endscop
}

int main(void)
{
  int ni = NI, nj = NJ, nk = NK;
  int i, j;
  DATA_TYPE alpha = 1.5;
  DATA_TYPE beta = 1.2;
  DATA_TYPE (*A)[NK] = ds_alloc(sizeof(DATA_TYPE) * NI * NK);
  DATA_TYPE (*B)[NJ] = ds_alloc(sizeof(DATA_TYPE) * NK * NJ);
  DATA_TYPE (*C)[NJ] = ds_alloc(sizeof(DATA_TYPE) * NI * NJ);

  for (i = 0; i < ni; i++)
    for (j = 0; j < nk; j++)
      A[i][j] = (DATA_TYPE)((i * (j + 1) + 1) % nk) / nk;
  for (i = 0; i < nk; i++)
    for (j = 0; j < nj; j++)
      B[i][j] = (DATA_TYPE)((i * (j + 2)) % nj) / nj;
  for (i = 0; i < ni; i++)
    for (j = 0; j < nj; j++)
      C[i][j] = (DATA_TYPE)((i * j + 3) % ni) / ni;

  kernel_gemm(ni, nj, nk, alpha, beta, C, A, B);

  ds_dump_double("C", &C[0][0], (size_t)NI * NJ);

  free(A);
  free(B);
  free(C);
  return 0;
}
