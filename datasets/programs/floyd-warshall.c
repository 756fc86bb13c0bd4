/* Floyd-Warshall all-pairs shortest paths: d_ij <- min(d_ij, d_ik + d_kj) for each intermediate vertex k. */
#include "common.h"

#if defined(MINI_DATASET)
#define N 60
#elif defined(SMALL_DATASET)
#define N 180
#elif defined(MEDIUM_DATASET)
#define N 500
#elif defined(LARGE_DATASET)
#define N 2800
#elif defined(EXTRALARGE_DATASET)
#define N 5600
#endif

/* "no edge": larger than any real path (at most 50 * (N - 1)), and twice it still fits an int */
#define NO_EDGE 1000000

static void kernel_floyd_warshall(int n, int paths[N][N])
{
#pragma scop
  for (int k = 0; k < n; k++)
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++)
        paths[i][j] = paths[i][k] + paths[k][j] < paths[i][j] ? paths[i][k] + paths[k][j] : paths[i][j];
#pragma endscop
}

int main(void)
{
  int (*paths)[N] = ds_alloc(sizeof(int) * N * N);

  /* Directed graph with nonnegative weights 1..50; about 6 in 7 ordered pairs have an edge. */
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      if (i == j)
        paths[i][j] = 0;
      else if ((i * j + i + 3 * j) % 7 == 0)
        paths[i][j] = NO_EDGE;
      else
        paths[i][j] = (7 * i + 13 * j) % 50 + 1;
    }

  kernel_floyd_warshall(N, paths);

  ds_dump_int("paths", &paths[0][0], (size_t)N * N);
  free(paths);
  return 0;
}
