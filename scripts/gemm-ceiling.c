/* A hand-blocked gemm (C := alpha*A*B + beta*C, LARGE sizes) as a ceiling for what
 * loop transformations plus gcc reach on this machine: an R x W block of C kept in a
 * local array across a k tile of KT, the columns under `omp simd`, rows in parallel.
 * Prints the best of 3 runs in GFLOP/s (2*NI*NJ*NK flops) and the largest relative
 * difference from the straightforward loop (the summation order per element is the
 * same; only the compiler's fused multiply-adds can differ). Built and swept by
 * scripts/gemm-ceiling.sh. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#define NI 1000
#define NJ 1100
#define NK 1200
#ifndef R
#define R 4
#endif
#ifndef W
#define W 8
#endif
#ifndef KT
#define KT 256
#endif
static double A[NI][NK], B[NK][NJ], C[NI][NJ], C0[NI][NJ], Cinit[NI][NJ];

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void plain(double alpha, double beta)
{
  for (int i = 0; i < NI; i++) {
    for (int j = 0; j < NJ; j++)
      C0[i][j] *= beta;
    for (int k = 0; k < NK; k++)
      for (int j = 0; j < NJ; j++)
        C0[i][j] += alpha * A[i][k] * B[k][j];
  }
}

static void blocked(double alpha, double beta)
{
#pragma omp parallel for schedule(static)
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++)
      C[i][j] *= beta;
  for (int kk = 0; kk < NK; kk += KT) {
    int ke = kk + KT < NK ? kk + KT : NK;
#pragma omp parallel for schedule(static)
    for (int ib = 0; ib < NI / R; ib++) {
      int i = ib * R;
      int j = 0;
      for (; j + W <= NJ; j += W) {
        double s[R][W];
        for (int r = 0; r < R; r++)
          for (int c = 0; c < W; c++)
            s[r][c] = C[i + r][j + c];
        for (int k = kk; k < ke; k++)
          for (int r = 0; r < R; r++) {
            double a = alpha * A[i + r][k];
#pragma omp simd
            for (int c = 0; c < W; c++)
              s[r][c] += a * B[k][j + c];
          }
        for (int r = 0; r < R; r++)
          for (int c = 0; c < W; c++)
            C[i + r][j + c] = s[r][c];
      }
      for (int r = 0; r < R; r++)
        for (int k = kk; k < ke; k++)
          for (int jr = j; jr < NJ; jr++)
            C[i + r][jr] += alpha * A[i + r][k] * B[k][jr];
    }
    for (int i = NI / R * R; i < NI; i++)
      for (int k = kk; k < ke; k++)
        for (int j = 0; j < NJ; j++)
          C[i][j] += alpha * A[i][k] * B[k][j];
  }
}

int main(void)
{
  for (int i = 0; i < NI; i++)
    for (int k = 0; k < NK; k++)
      A[i][k] = (double)((i * (k + 1) + 1) % NK) / NK;
  for (int k = 0; k < NK; k++)
    for (int j = 0; j < NJ; j++)
      B[k][j] = (double)((k * (j + 2)) % NJ) / NJ;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++)
      Cinit[i][j] = (double)((i * j + 3) % NI) / NI;
  memcpy(C0, Cinit, sizeof C0);
  plain(1.5, 1.2);
  double best = 1e30;
  for (int rep = 0; rep < 3; rep++) {
    memcpy(C, Cinit, sizeof C);
    double t0 = now();
    blocked(1.5, 1.2);
    double t = now() - t0;
    if (t < best)
      best = t;
  }
  double diff = 0.0;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++) {
      double d = fabs(C[i][j] - C0[i][j]) / fmax(fabs(C0[i][j]), 1e-300);
      diff = d > diff ? d : diff;
    }
  printf("R=%d W=%d KT=%d: %.1f ms, %.1f GFLOP/s, max relative difference %.1e\n", R, W,
         KT, best * 1e3, 2.0 * NI * NJ * NK / best / 1e9, diff);
  return diff > 1e-12;
}
