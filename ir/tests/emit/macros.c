#define N 40
#define M (N)
#define STEP 3
double a[N][M], b[N][M];

void kernel(void) {
  int i, j;
#pragma scop
  /* A nest no recipe changes: kept as written. */
  for (i = 0; i < N; i++)
    for (j = 0; j < M; j++)
      b[i][j] = a[i][j] * 2.0;
  // The nest the test tiles.
  for (i = 0; i < N - 1; i++)
    for (j = STEP; j < M; j++)
      a[i][j] = b[i + 1][j - STEP] + 40;
#pragma endscop
}
