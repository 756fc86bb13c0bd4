/* Nussinov RNA folding: S(i,j) = max(S(i+1,j), S(i,j-1), S(i+1,j-1) + pair(i,j), max_k S(i,k) + S(k+1,j)). */
#include "common.h"

#if defined(MINI_DATASET)
#define N 60
#elif defined(SMALL_DATASET)
#define N 180
#elif defined(MEDIUM_DATASET)
#define N 500
#elif defined(LARGE_DATASET)
#define N 2500
#elif defined(EXTRALARGE_DATASET)
#define N 5500
#endif

/* bases coded 0..3 (A, C, G, U); A-U and C-G are complementary, i.e. codes summing to 3 */
#define PAIRS(a, b) (((a) + (b)) == 3 ? 1 : 0)
#define MAX2(a, b) ((a) > (b) ? (a) : (b))

static void kernel_nussinov(int n, int seq[N], int table[N][N])
{
  int i, j, k;
  int best;

#pragma scop
  for (i = n - 1; i >= 0; i--) {
    for (j = i + 1; j < n; j++) {
      best = MAX2(table[i + 1][j], table[i][j - 1]);
      best = MAX2(best, table[i + 1][j - 1] + PAIRS(seq[i], seq[j]));
      for (k = i + 1; k < j; k++)
        best = MAX2(best, table[i][k] + table[k + 1][j]);
      table[i][j] = best;
    }
  }
#pragma endscop
}

int main(void)
{
  int i;
  int *seq = ds_alloc(sizeof(int) * N);
  /* table[i][j] for j < i (empty subsequences) stays 0 from ds_alloc */
  int (*table)[N] = ds_alloc(sizeof(int) * N * N);

  for (i = 0; i < N; i++)
    seq[i] = (i * 7 + i / 5 + (i * i) % 3) % 4;

  kernel_nussinov(N, seq, table);

  ds_dump_int("table", &table[0][0], (size_t)N * N);
  free(seq);
  free(table);
  return 0;
}
