#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double tune_bench_total;
static int tune_bench_registered;
double tune_bench_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
static void tune_bench_print(void) {
  fprintf(stderr, "tune-bench-seconds: %.9f\n", tune_bench_total);
}
void tune_bench_add(double t0) {
  tune_bench_total += tune_bench_now() - t0;
  if (!tune_bench_registered) {
    tune_bench_registered = 1;
    atexit(tune_bench_print);
  }
}
