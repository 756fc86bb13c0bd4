/* 2-D FDTD Yee scheme: leapfrog updates of ex, ey from curl hz and hz from curl (ex, ey), source on row 0 of ey. */
#include "common.h"

#if defined(MINI_DATASET)
#define TMAX 20
#define NX 20
#define NY 30
#elif defined(SMALL_DATASET)
#define TMAX 40
#define NX 60
#define NY 80
#elif defined(MEDIUM_DATASET)
#define TMAX 100
#define NX 200
#define NY 240
#elif defined(LARGE_DATASET)
#define TMAX 500
#define NX 1000
#define NY 1200
#elif defined(EXTRALARGE_DATASET)
#define TMAX 1000
#define NX 2000
#define NY 2600
#endif

static void kernel_fdtd_2d(int tmax, int nx, int ny, DATA_TYPE ex[NX][NY], DATA_TYPE ey[NX][NY],
                           DATA_TYPE hz[NX][NY], DATA_TYPE src[TMAX])
{
#pragma scop
  for (int t = 0; t < tmax; t++) {
    for (int j = 0; j < ny; j++)
      ey[0][j] = src[t];
    for (int i = 1; i < nx; i++)
      for (int j = 0; j < ny; j++)
        ey[i][j] -= 0.5 * (hz[i][j] - hz[i - 1][j]);
    for (int i = 0; i < nx; i++)
      for (int j = 1; j < ny; j++)
        ex[i][j] -= 0.5 * (hz[i][j] - hz[i][j - 1]);
    for (int i = 0; i < nx - 1; i++)
      for (int j = 0; j < ny - 1; j++)
        hz[i][j] -= 0.6 * (ex[i][j + 1] - ex[i][j] + ey[i + 1][j] - ey[i][j]);
  }
#pragma endscop
}

int main(void)
{
  DATA_TYPE (*ex)[NY] = ds_alloc(sizeof(DATA_TYPE) * NX * NY);
  DATA_TYPE (*ey)[NY] = ds_alloc(sizeof(DATA_TYPE) * NX * NY);
  DATA_TYPE (*hz)[NY] = ds_alloc(sizeof(DATA_TYPE) * NX * NY);
  DATA_TYPE *src = ds_alloc(sizeof(DATA_TYPE) * TMAX);

  /* Courant product 0.5 * 0.6 = 0.3 < 0.5 keeps the 2-D leapfrog scheme stable. */
  for (int t = 0; t < TMAX; t++)
    src[t] = sin(0.2 * t);
  for (int i = 0; i < NX; i++)
    for (int j = 0; j < NY; j++) {
      ex[i][j] = (DATA_TYPE)((i * (j + 1)) % 17) / (17.0 * NX);
      ey[i][j] = (DATA_TYPE)((i * (j + 2)) % 19) / (19.0 * NY);
      hz[i][j] = (DATA_TYPE)((i * (j + 3)) % 23) / (23.0 * NX);
    }

  kernel_fdtd_2d(TMAX, NX, NY, ex, ey, hz, src);

  ds_dump_double("ex", &ex[0][0], (size_t)NX * NY);
  ds_dump_double("ey", &ey[0][0], (size_t)NX * NY);
  ds_dump_double("hz", &hz[0][0], (size_t)NX * NY);
  free(ex);
  free(ey);
  free(hz);
  free(src);
  return 0;
}
