/* Shared helpers for the tune dataset programs: size-preset default, allocation,
 * and output dumps that expose every bit of the results.
 *
 * Each program prints, for each output array, one line of its results
 *     NAME: n=COUNT sum=SUM
 * and one line on standard error
 *     NAME: fnv=HASH
 * where HASH is FNV-1a over the array's bytes, so two runs print the same lines only
 * if their results are bitwise equal. The results (standard output) are what a user
 * reads: a sum added in another order may differ in its last printed digit there; the
 * bits (standard error) are for tests that ask for them. With -DDUMP_ARRAYS every
 * element is printed too.
 */
#ifndef TUNE_DATASET_COMMON_H
#define TUNE_DATASET_COMMON_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !defined(MINI_DATASET) && !defined(SMALL_DATASET) && !defined(MEDIUM_DATASET) && \
    !defined(LARGE_DATASET) && !defined(EXTRALARGE_DATASET)
#define LARGE_DATASET
#endif

/* Kernel timer for benchmarks: a driver inserts `double ds_t0 = ds_now();` before a
 * region and `ds_report(ds_t0);` after it; the program itself never calls them. */
#include <time.h>

static inline double ds_now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline void ds_report(double t0)
{
  fprintf(stderr, "ds-kernel-seconds: %.9f\n", ds_now() - t0);
}

#ifndef DATA_TYPE
#define DATA_TYPE double
#endif

static inline void *ds_alloc(size_t bytes)
{
  void *p = calloc(1, bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, "out of memory allocating %zu bytes\n", bytes);
    exit(1);
  }
  return p;
}

static inline unsigned long long ds_fnv1a(const void *data, size_t bytes)
{
  const unsigned char *p = (const unsigned char *)data;
  unsigned long long h = 1469598103934665603ULL;
  for (size_t i = 0; i < bytes; i++) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  return h;
}

static inline void ds_dump_double(const char *name, const double *a, size_t n)
{
  double sum = 0.0;
  for (size_t i = 0; i < n; i++)
    sum += a[i];
  printf("%s: n=%zu sum=%.10e\n", name, n, sum);
  fprintf(stderr, "%s: fnv=%016llx\n", name, ds_fnv1a(a, n * sizeof(double)));
#ifdef DUMP_ARRAYS
  for (size_t i = 0; i < n; i++)
    printf("%s[%zu] = %.17g\n", name, i, a[i]);
#endif
}

static inline void ds_dump_float(const char *name, const float *a, size_t n)
{
  double sum = 0.0;
  for (size_t i = 0; i < n; i++)
    sum += a[i];
  printf("%s: n=%zu sum=%.6e\n", name, n, sum);
  fprintf(stderr, "%s: fnv=%016llx\n", name, ds_fnv1a(a, n * sizeof(float)));
#ifdef DUMP_ARRAYS
  for (size_t i = 0; i < n; i++)
    printf("%s[%zu] = %.9g\n", name, i, (double)a[i]);
#endif
}

static inline void ds_dump_int(const char *name, const int *a, size_t n)
{
  long long sum = 0;
  for (size_t i = 0; i < n; i++)
    sum += a[i];
  printf("%s: n=%zu sum=%lld\n", name, n, sum);
  fprintf(stderr, "%s: fnv=%016llx\n", name, ds_fnv1a(a, n * sizeof(int)));
#ifdef DUMP_ARRAYS
  for (size_t i = 0; i < n; i++)
    printf("%s[%zu] = %d\n", name, i, a[i]);
#endif
}

#endif
