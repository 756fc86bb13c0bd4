/* Hand-written gemms (C := alpha*A*B + beta*C, LARGE sizes) as ceilings for what
 * tune's transformations plus gcc reach on this machine, built and swept by
 * scripts/gemm-ceiling.sh. Prints the best of 3 runs in GFLOP/s (2*NI*NJ*NK flops)
 * and the largest relative difference from the straightforward loop (the summation
 * order per element is the same; only the compiler's fused multiply-adds can differ).
 *
 * Without PACKED: an R x W block of C kept in a local array across a k tile of KT, the
 * columns under `omp simd`, rows in parallel (tiling, unroll-and-jam and OpenMP).
 *
 * With PACKED: the technique of tune's register-tile step. Blocks of NC columns, KC
 * reduction steps and MC rows; each B block packed into slivers of NR = NV vectors
 * of columns, each A block (times alpha) into slivers of MR rows, contiguous in the
 * order the micro-kernel reads them; an MR x NR tile of C held in MR x NV GNU C
 * vectors of the target's widest width across the KC steps (one vector load of B per
 * vector, one broadcast of A per row, one FMA per accumulator); edges packed with
 * zeros and stored element by element. One OpenMP team: B packed together, row
 * blocks shared. */
#include <math.h>
#include <omp.h>
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
#ifndef MR
#define MR 8
#endif
#ifndef NV
#define NV 2
#endif
#ifndef KC
#define KC 256
#endif
#ifndef MC
#define MC 128
#endif
#ifndef NC
#define NC 2048
#endif
#if defined(__AVX512F__)
typedef double vd __attribute__((vector_size(64)));
#elif defined(__AVX__)
typedef double vd __attribute__((vector_size(32)));
#else
typedef double vd __attribute__((vector_size(16)));
#endif
/* The same vector at the alignment of a double: loads from the packed slivers. */
typedef double vdu __attribute__((vector_size(sizeof(vd)), aligned(sizeof(double))));
#define VL ((int)(sizeof(vd) / sizeof(double)))
#define NR (NV * VL)
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


#ifdef PACKED
static double Bp[KC * ((NC + NR - 1) / NR * NR)];

static void blocked(double alpha, double beta)
{
#pragma omp parallel
  {
    /* Row blocks of at most MC rows, as many as a multiple of the team, equal and
     * rounded up to whole register tiles. */
    int team = omp_get_num_threads();
    int nb = ((NI + MC - 1) / MC + team - 1) / team * team;
    int mc = ((NI + nb - 1) / nb + MR - 1) / MR * MR;
    double *Ap = __builtin_malloc(sizeof(double) * KC * mc);
#pragma omp for schedule(static)
    for (int i = 0; i < NI; i++)
      for (int j = 0; j < NJ; j++)
        C[i][j] *= beta;
    for (int jc = 0; jc < NJ; jc += NC) {
      int nv = NJ - jc < NC ? NJ - jc : NC;
      for (int pc = 0; pc < NK; pc += KC) {
        int nk = NK - pc < KC ? NK - pc : KC;
        /* B[pc.., jc..] as slivers of NR columns, NR values per step. */
#pragma omp for schedule(static)
        for (int jb = 0; jb < nv; jb += NR)
          for (int k = 0; k < nk; k++)
            for (int e = 0; e < NR; e++)
              Bp[jb * nk + k * NR + e] = jb + e < nv ? B[pc + k][jc + jb + e] : 0.0;
#pragma omp for schedule(static)
        for (int ic = 0; ic < NI; ic += mc) {
          int nu = NI - ic < mc ? NI - ic : mc;
          for (int ib = 0; ib < nu; ib += MR)
            for (int k = 0; k < nk; k++)
              for (int e = 0; e < MR; e++)
                Ap[ib * nk + k * MR + e] =
                    ib + e < nu ? alpha * A[ic + ib + e][pc + k] : 0.0;
          for (int jb = 0; jb < nv; jb += NR) {
            int mv = nv - jb < NR ? nv - jb : NR;
            for (int ib = 0; ib < nu; ib += MR) {
              const double *pa = Ap + ib * nk, *pb = Bp + jb * nk;
              vd c[MR][NV];
              double t[NR];
              int full = ib + MR <= nu && mv == NR;
              for (int r = 0; r < MR; r++) {
                if (full) {
                  for (int x = 0; x < NV; x++)
                    c[r][x] = *(const vdu *)&C[ic + ib + r][jc + jb + x * VL];
                  continue;
                }
                for (int e = 0; e < NR; e++)
                  t[e] = ib + r < nu && e < mv ? C[ic + ib + r][jc + jb + e] : 0.0;
                __builtin_memcpy(c[r], t, sizeof c[r]);
              }
              for (int k = 0; k < nk; k++) {
                vd b[NV];
                for (int x = 0; x < NV; x++)
                  b[x] = *(const vdu *)(pb + k * NR + x * VL);
                for (int r = 0; r < MR; r++) {
                  double a = pa[k * MR + r];
                  for (int x = 0; x < NV; x++)
                    c[r][x] = c[r][x] + a * b[x];
                }
              }
              for (int r = 0; r < MR; r++)
                if (full)
                  for (int x = 0; x < NV; x++)
                    *(vdu *)&C[ic + ib + r][jc + jb + x * VL] = c[r][x];
                else if (ib + r < nu) {
                  __builtin_memcpy(t, c[r], sizeof c[r]);
                  for (int e = 0; e < mv; e++)
                    C[ic + ib + r][jc + jb + e] = t[e];
                }
            }
          }
        }
      }
    }
    __builtin_free(Ap);
  }
}
#else
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
#endif

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
#ifdef PACKED
  printf("packed MR=%d NR=%d (%d-byte vectors) MC=%d KC=%d NC=%d: ", MR, NR, (int)sizeof(vd),
         MC, KC, NC);
#else
  printf("blocked R=%d W=%d KT=%d: ", R, W, KT);
#endif
  printf("%.1f ms, %.1f GFLOP/s, max relative difference %.1e\n", best * 1e3,
         2.0 * NI * NJ * NK / best / 1e9, diff);
  return diff > 1e-12;
}
