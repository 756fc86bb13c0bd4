/* machine_bench.c: memory bandwidth and peak floating-point throughput of this machine,
 * for `tune machine` (profiling/src/machine.rs builds and runs it).
 *
 *   machine_bench ARRAY_BYTES REPETITIONS THREADS [MIN_SECONDS]
 *
 * prints one JSON object on stdout (errors go to stderr, exit status 1 or 2).
 *
 * Bandwidth (GB/s = 1e9 bytes/s, best of REPETITIONS), STREAM convention: every
 * array element read or written counts 8 bytes once; write-allocate traffic (the read
 * of a destination line before it is overwritten) is not counted.
 *   load   s += a[i]            8 bytes per element
 *   store  a[i] = x             8 bytes per element
 *   copy   b[i] = a[i]         16 bytes per element
 *   triad  a[i] = b[i] + s*c[i] 24 bytes per element
 * Ordinary (cacheable) stores are used throughout, never non-temporal ones, like
 * likwid-bench's stream/copy/store kernels without the _mem suffix.  Each array holds
 * ARRAY_BYTES (the caller makes it several times the last-level cache), is first
 * touched in parallel with the same static schedule as the kernels, and the kernels run
 * under `omp parallel for schedule(static)` with THREADS threads.  Arrays are aligned
 * to 2 MiB and advised for transparent huge pages.  Every kernel invocation (one sweep
 * over its arrays) is timed on its own and the fastest of the REPETITIONS counts.  The
 * load sum and array elements written by the stores feed a checksum that is printed, so
 * no kernel can be optimized away.
 *
 * Peak (GFLOP/s = 1e9 flop/s, best of min(REPETITIONS, 5)): every thread runs
 * independent multiply-add chains on registers (no memory traffic), enough chains to
 * cover the FMA latency of current cores on two pipes; one FMA counts 2 flops per lane.
 *   scalar      12 scalar double chains x = x*m + a (contracted to FMA where the
 *               target has it, else mul + add; 2 flops either way)
 *   avx2_fma    12 chains of _mm256_fmadd_pd (4 lanes), when the CPU has AVX2 and FMA
 *   avx512_fma  16 chains of _mm512_fmadd_pd (8 lanes), when the CPU has AVX-512F
 * The vector kernels are compiled for their instruction sets with target attributes and
 * chosen at run time with __builtin_cpu_supports, so the program builds and runs on
 * machines without them (the field is then null).  Each timed run lasts at least
 * MIN_SECONDS (default 0.2); the rate is the flops of all threads over the wall time
 * from a barrier before the first thread starts to a barrier after the last one ends.
 */
#define _GNU_SOURCE
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#define TUNE_X86 1
#include <immintrin.h>
#else
#define TUNE_X86 0
#endif

/* Keep the compiler from turning the copy and store loops into memcpy/memset calls:
 * the C library switches to non-temporal stores for large sizes, which is a different
 * measurement. */
#if defined(__clang__)
#define TUNE_NO_LIBCALLS __attribute__((no_builtin("memcpy", "memset", "memmove")))
#elif defined(__GNUC__)
#define TUNE_NO_LIBCALLS __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define TUNE_NO_LIBCALLS
#endif

#define NOINLINE __attribute__((noinline))

static volatile double sink; /* results that must be computed */

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ------------------------------------------------------------------ bandwidth */

/* Elements are processed in blocks of BLOCK so that the load kernel can keep BLOCK
 * independent partial sums (no reassociation needed to vectorize it) and every
 * kernel splits the arrays the same way. */
#define BLOCK 32

/* Arrays for DRAM (`huge` 0) as a program's posix_memalign gives them: no huge-page
 * advice, so the pages are what the system's transparent huge page policy gives every
 * program (with the policy `madvise`, 4 KiB pages, as likwid-bench's arrays get them).
 * Advised 2 MiB pages read 16-27% more DRAM bandwidth on a Zen 4 VM (the prefetchers
 * cross no 4 KiB boundary), a roof the programs measured against it do not reach.
 * Arrays that stay in a cache (`huge` 1) are advised 2 MiB pages: on 4 KiB pages placed
 * anywhere in memory, a physically indexed L2 holds them with set conflicts that vary
 * from run to run (Zen 4's L2 triad read 54, 73 or 116 GB/s), and the roof of the
 * level is what it holds without them. */
static double *alloc_array(size_t bytes, int huge) {
    void *p = NULL;
    size_t align = huge ? (size_t)2 << 20 : 4096;
    if (posix_memalign(&p, align, bytes) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    if (huge)
        madvise(p, bytes, MADV_HUGEPAGE); /* advice only; failure is harmless */
#endif
    return (double *)p;
}

static NOINLINE TUNE_NO_LIBCALLS void init_arrays(double *restrict a, double *restrict b,
                                                  double *restrict c, long nblk) {
#pragma omp parallel for schedule(static)
    for (long k = 0; k < nblk; k++)
        for (long j = 0; j < BLOCK; j++) {
            long i = k * BLOCK + j;
            a[i] = 1.0;
            b[i] = 2.0;
            c[i] = 0.5 + (double)(i & 7);
        }
}

static NOINLINE TUNE_NO_LIBCALLS void k_store(double *restrict a, double x, long nblk) {
#pragma omp parallel for schedule(static)
    for (long k = 0; k < nblk; k++) {
        double *restrict p = a + k * BLOCK;
        for (int j = 0; j < BLOCK; j++)
            p[j] = x;
    }
}

static NOINLINE TUNE_NO_LIBCALLS void k_copy(double *restrict b, const double *restrict a,
                                             long nblk) {
#pragma omp parallel for schedule(static)
    for (long k = 0; k < nblk; k++) {
        const double *restrict p = a + k * BLOCK;
        double *restrict q = b + k * BLOCK;
        for (int j = 0; j < BLOCK; j++)
            q[j] = p[j];
    }
}

/* The load and triad kernels, run INNER times inside one parallel region (each thread
 * keeps its own slice, so in cache mode the data stays in its cache and no fork or
 * barrier is timed between repetitions); the DRAM measurement runs them once. */
/* The load kernel keeps LOAD_SUMS independent partial sums: with 64-byte vectors, 32
 * sums are only 4 vector adds in flight, too few to cover the add latency on two load
 * ports, and the L1 load bandwidth read low (0.54-0.59 of likwid-bench's load_avx512);
 * 64 sums (8 zmm accumulators) reach it. */
#if defined(__AVX512F__)
#define LOAD_SUMS (2 * BLOCK)
#else
#define LOAD_SUMS BLOCK
#endif

static NOINLINE double k_load_rep(const double *restrict a, long nblk, long inner) {
    double total = 0.0;
#pragma omp parallel reduction(+ : total)
    {
        /* The blocks of `schedule(static)` (as libgomp splits them, so that each thread
         * reads what it touched in the other kernels), LOAD_SUMS elements a step and a
         * last block of BLOCK where the count is odd. */
        long nt = omp_get_num_threads(), t = omp_get_thread_num();
        long q = nblk / nt, rem = nblk % nt;
        long b0 = t * q + (t < rem ? t : rem), b1 = b0 + q + (t < rem);
        const long per = LOAD_SUMS / BLOCK;
        double acc[LOAD_SUMS];
        for (int j = 0; j < LOAD_SUMS; j++)
            acc[j] = 0.0;
        for (long r = 0; r < inner; r++) {
            long k = b0;
            for (; k + per <= b1; k += per) {
                const double *p = a + k * BLOCK;
                for (int j = 0; j < LOAD_SUMS; j++)
                    acc[j] += p[j];
            }
            for (; k < b1; k++) {
                const double *p = a + k * BLOCK;
                for (int j = 0; j < BLOCK; j++)
                    acc[j] += p[j];
            }
        }
        double s = 0.0;
        for (int j = 0; j < LOAD_SUMS; j++)
            s += acc[j];
        total += s;
    }
    return total;
}

/* Read and write one array in place, `p[j] = s * p[j] + t` (16 bytes per element: the
 * line is read and written back, no write-allocate): the traffic of a nest that updates
 * what it reads (gemver's A += u1 v1' + u2 v2'), which moves more bytes per second
 * between a level and L1 than either loads alone or the triad's three streams (Zen 4's
 * L2: 1.6x). With s = 1 and t = 0 from volatile variables the values never change. */
static volatile double update_s = 1.0, update_t = 0.0;

static NOINLINE TUNE_NO_LIBCALLS void k_update_rep(double *restrict a, long nblk, long inner) {
    double s = update_s, t = update_t;
#pragma omp parallel
    for (long r = 0; r < inner; r++) {
#pragma omp for schedule(static) nowait
        for (long k = 0; k < nblk; k++) {
            double *restrict p = a + k * BLOCK;
            for (int j = 0; j < BLOCK; j++)
                p[j] = s * p[j] + t;
        }
    }
}

static NOINLINE TUNE_NO_LIBCALLS void k_triad_rep(double *restrict a, const double *restrict b,
                                                  const double *restrict c, long nblk,
                                                  long inner) {
#pragma omp parallel
    for (long r = 0; r < inner; r++) {
        /* a different scalar each time: no repetition is redundant */
        double s = 0.5 + 1e-9 * (double)r;
#pragma omp for schedule(static) nowait
        for (long k = 0; k < nblk; k++) {
            double *restrict p = a + k * BLOCK;
            const double *restrict q = b + k * BLOCK;
            const double *restrict t = c + k * BLOCK;
            for (int j = 0; j < BLOCK; j++)
                p[j] = q[j] + s * t[j];
        }
    }
}

/* ------------------------------------------------------------------ peak flops */

/* All chains start near 1 and stay there: x -> x*M + A has its fixed point at
 * A/(1-M) = 1, so no overflow, underflow or denormals whatever the count. */
#define FM 0.999999
#define FA 0.000001

#define CHAINS_SCALAR 12
static NOINLINE double k_scalar(long iters) {
    double m = FM, a = FA;
    double x0 = 1.0, x1 = 1.01, x2 = 1.02, x3 = 1.03, x4 = 1.04, x5 = 1.05;
    double x6 = 1.06, x7 = 1.07, x8 = 1.08, x9 = 1.09, x10 = 1.10, x11 = 1.11;
    for (long it = 0; it < iters; it++) {
        x0 = x0 * m + a;
        x1 = x1 * m + a;
        x2 = x2 * m + a;
        x3 = x3 * m + a;
        x4 = x4 * m + a;
        x5 = x5 * m + a;
        x6 = x6 * m + a;
        x7 = x7 * m + a;
        x8 = x8 * m + a;
        x9 = x9 * m + a;
        x10 = x10 * m + a;
        x11 = x11 * m + a;
#if TUNE_X86
        /* An empty statement that claims to read and write every chain in its own
         * register: the chains stay scalar (no SLP vectorization) and live. */
        __asm__ volatile(""
                         : "+x"(x0), "+x"(x1), "+x"(x2), "+x"(x3), "+x"(x4), "+x"(x5),
                           "+x"(x6), "+x"(x7), "+x"(x8), "+x"(x9), "+x"(x10), "+x"(x11));
#elif defined(__aarch64__) && defined(__GNUC__)
        __asm__ volatile(""
                         : "+w"(x0), "+w"(x1), "+w"(x2), "+w"(x3), "+w"(x4), "+w"(x5),
                           "+w"(x6), "+w"(x7), "+w"(x8), "+w"(x9), "+w"(x10), "+w"(x11));
#endif
    }
    return x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8 + x9 + x10 + x11;
}

#if TUNE_X86
#define CHAINS_AVX2 12
__attribute__((target("avx2,fma"))) static NOINLINE double k_avx2(long iters) {
    __m256d m = _mm256_set1_pd(FM), a = _mm256_set1_pd(FA);
    __m256d x0 = _mm256_set1_pd(1.00), x1 = _mm256_set1_pd(1.01);
    __m256d x2 = _mm256_set1_pd(1.02), x3 = _mm256_set1_pd(1.03);
    __m256d x4 = _mm256_set1_pd(1.04), x5 = _mm256_set1_pd(1.05);
    __m256d x6 = _mm256_set1_pd(1.06), x7 = _mm256_set1_pd(1.07);
    __m256d x8 = _mm256_set1_pd(1.08), x9 = _mm256_set1_pd(1.09);
    __m256d x10 = _mm256_set1_pd(1.10), x11 = _mm256_set1_pd(1.11);
    for (long it = 0; it < iters; it++) {
        x0 = _mm256_fmadd_pd(x0, m, a);
        x1 = _mm256_fmadd_pd(x1, m, a);
        x2 = _mm256_fmadd_pd(x2, m, a);
        x3 = _mm256_fmadd_pd(x3, m, a);
        x4 = _mm256_fmadd_pd(x4, m, a);
        x5 = _mm256_fmadd_pd(x5, m, a);
        x6 = _mm256_fmadd_pd(x6, m, a);
        x7 = _mm256_fmadd_pd(x7, m, a);
        x8 = _mm256_fmadd_pd(x8, m, a);
        x9 = _mm256_fmadd_pd(x9, m, a);
        x10 = _mm256_fmadd_pd(x10, m, a);
        x11 = _mm256_fmadd_pd(x11, m, a);
    }
    __m256d s = _mm256_add_pd(_mm256_add_pd(_mm256_add_pd(x0, x1), _mm256_add_pd(x2, x3)),
                              _mm256_add_pd(_mm256_add_pd(x4, x5), _mm256_add_pd(x6, x7)));
    s = _mm256_add_pd(s, _mm256_add_pd(_mm256_add_pd(x8, x9), _mm256_add_pd(x10, x11)));
    double out[4];
    _mm256_storeu_pd(out, s);
    return out[0] + out[1] + out[2] + out[3];
}

#define CHAINS_AVX512 16
__attribute__((target("avx512f"))) static NOINLINE double k_avx512(long iters) {
    __m512d m = _mm512_set1_pd(FM), a = _mm512_set1_pd(FA);
    __m512d x0 = _mm512_set1_pd(1.00), x1 = _mm512_set1_pd(1.01);
    __m512d x2 = _mm512_set1_pd(1.02), x3 = _mm512_set1_pd(1.03);
    __m512d x4 = _mm512_set1_pd(1.04), x5 = _mm512_set1_pd(1.05);
    __m512d x6 = _mm512_set1_pd(1.06), x7 = _mm512_set1_pd(1.07);
    __m512d x8 = _mm512_set1_pd(1.08), x9 = _mm512_set1_pd(1.09);
    __m512d x10 = _mm512_set1_pd(1.10), x11 = _mm512_set1_pd(1.11);
    __m512d x12 = _mm512_set1_pd(1.12), x13 = _mm512_set1_pd(1.13);
    __m512d x14 = _mm512_set1_pd(1.14), x15 = _mm512_set1_pd(1.15);
    for (long it = 0; it < iters; it++) {
        x0 = _mm512_fmadd_pd(x0, m, a);
        x1 = _mm512_fmadd_pd(x1, m, a);
        x2 = _mm512_fmadd_pd(x2, m, a);
        x3 = _mm512_fmadd_pd(x3, m, a);
        x4 = _mm512_fmadd_pd(x4, m, a);
        x5 = _mm512_fmadd_pd(x5, m, a);
        x6 = _mm512_fmadd_pd(x6, m, a);
        x7 = _mm512_fmadd_pd(x7, m, a);
        x8 = _mm512_fmadd_pd(x8, m, a);
        x9 = _mm512_fmadd_pd(x9, m, a);
        x10 = _mm512_fmadd_pd(x10, m, a);
        x11 = _mm512_fmadd_pd(x11, m, a);
        x12 = _mm512_fmadd_pd(x12, m, a);
        x13 = _mm512_fmadd_pd(x13, m, a);
        x14 = _mm512_fmadd_pd(x14, m, a);
        x15 = _mm512_fmadd_pd(x15, m, a);
    }
    __m512d s0 = _mm512_add_pd(_mm512_add_pd(x0, x1), _mm512_add_pd(x2, x3));
    __m512d s1 = _mm512_add_pd(_mm512_add_pd(x4, x5), _mm512_add_pd(x6, x7));
    __m512d s2 = _mm512_add_pd(_mm512_add_pd(x8, x9), _mm512_add_pd(x10, x11));
    __m512d s3 = _mm512_add_pd(_mm512_add_pd(x12, x13), _mm512_add_pd(x14, x15));
    return _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(s0, s1), _mm512_add_pd(s2, s3)));
}
#endif

typedef double (*flop_kernel)(long);

static double run_kernel_parallel(flop_kernel f, long iters, int threads) {
    double t0 = 0.0, t1 = 0.0, acc = 0.0;
#pragma omp parallel num_threads(threads) reduction(+ : acc)
    {
#pragma omp barrier
#pragma omp master
        t0 = now();
        /* the master's write of t0 happens before every thread passes this barrier */
#pragma omp barrier
        acc += f(iters);
#pragma omp barrier
#pragma omp master
        t1 = now();
    }
    sink = acc;
    return t1 - t0;
}

/* GFLOP/s of kernel f (flops_per_iter per call iteration per thread). */
static double measure_peak(flop_kernel f, double flops_per_iter, int threads, int reps,
                           double min_seconds) {
    /* calibrate on one thread: grow until a run takes a noticeable time */
    long iters = 1000;
    double t = 0.0;
    for (;;) {
        double t0 = now();
        sink = f(iters);
        t = now() - t0;
        if (t >= min_seconds / 8 || iters > (1L << 40))
            break;
        iters *= 4;
    }
    if (t > 0) {
        double scale = 1.1 * min_seconds / t;
        if (scale > 1.0)
            iters = (long)((double)iters * scale);
    }
    double best = 0.0;
    for (int r = 0; r < reps; r++) {
        double el = run_kernel_parallel(f, iters, threads);
        double rate = (double)threads * (double)iters * flops_per_iter / el * 1e-9;
        if (el > 0 && rate > best)
            best = rate;
    }
    return best;
}

/* ------------------------------------------------------------------ main */

static void json_number(const char *name, double v, int last) {
    if (isfinite(v) && v > 0) /* a kernel too fast to time gives null, not inf */
        printf("\"%s\": %.6g%s", name, v, last ? "" : ", ");
    else
        printf("\"%s\": null%s", name, last ? "" : ", ");
}

/* Cache mode (a fifth argument INNER): load, triad and update bandwidth with arrays that
 * stay in a cache, each timed repetition running the kernel INNER times. */
static int cache_mode(long nblk, int reps, int threads, long inner) {
    size_t bytes = (size_t)nblk * BLOCK * sizeof(double);
    double n = (double)nblk * BLOCK * (double)inner;
    double *a = alloc_array(bytes, 1), *b = alloc_array(bytes, 1), *c = alloc_array(bytes, 1);
    if (!a || !b || !c) {
        fprintf(stderr, "machine_bench: cannot allocate 3 x %zu bytes\n", bytes);
        return 1;
    }
    init_arrays(a, b, c, nblk);
    double best_load = 1e30, best_triad = 1e30, best_update = 1e30, check = 0.0;
    check += k_load_rep(a, nblk, 1); /* warm the caches */
    k_triad_rep(a, b, c, nblk, 1);
    k_update_rep(b, nblk, 1);
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        check += k_load_rep(a, nblk, inner);
        double t1 = now();
        k_triad_rep(a, b, c, nblk, inner);
        double t2 = now();
        k_update_rep(b, nblk, inner);
        double t3 = now();
        if (t1 - t0 < best_load) best_load = t1 - t0;
        if (t2 - t1 < best_triad) best_triad = t2 - t1;
        if (t3 - t2 < best_update) best_update = t3 - t2;
    }
    check += b[0];
    check += a[0] + a[nblk * BLOCK - 1];
    sink = check;
    printf("{\"threads\": %d, \"array_bytes\": %zu, \"inner\": %ld, \"bandwidth\": {", threads,
           bytes, inner);
    json_number("load", 8.0 * n / best_load * 1e-9, 0);
    json_number("triad", 24.0 * n / best_triad * 1e-9, 0);
    json_number("update", 16.0 * n / best_update * 1e-9, 1);
    printf("}, \"checksum\": %.17g}\n", check);
    free(a);
    free(b);
    free(c);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 4 || argc > 6) {
        fprintf(stderr, "usage: %s ARRAY_BYTES REPETITIONS THREADS [MIN_SECONDS [INNER]]\n",
                argv[0]);
        return 2;
    }
    long long array_bytes = atoll(argv[1]);
    int reps = atoi(argv[2]);
    int threads = atoi(argv[3]);
    double min_seconds = argc >= 5 ? atof(argv[4]) : 0.2;
    long inner = argc == 6 ? atol(argv[5]) : 0;
    if (array_bytes < (long long)(BLOCK * sizeof(double)) || reps < 1 || threads < 1 ||
        !(min_seconds > 0)) {
        fprintf(stderr, "machine_bench: bad arguments\n");
        return 2;
    }
    omp_set_dynamic(0);
    omp_set_num_threads(threads);

    long nblk = (long)(array_bytes / (long long)(BLOCK * sizeof(double)));
    if (argc == 6) {
        if (inner < 1) {
            fprintf(stderr, "machine_bench: bad arguments\n");
            return 2;
        }
        return cache_mode(nblk, reps, threads, inner);
    }
    size_t bytes = (size_t)nblk * BLOCK * sizeof(double);
    double n = (double)nblk * BLOCK;
    double *a = alloc_array(bytes, 0), *b = alloc_array(bytes, 0), *c = alloc_array(bytes, 0);
    if (!a || !b || !c) {
        fprintf(stderr, "machine_bench: cannot allocate 3 x %zu bytes\n", bytes);
        return 1;
    }
    init_arrays(a, b, c, nblk);

    double best_load = 1e30, best_store = 1e30, best_copy = 1e30, best_triad = 1e30;
    double check = 0.0;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        check += k_load_rep(a, nblk, 1);
        double t1 = now();
        k_store(c, 1.5 + r, nblk); /* not a byte pattern: no memset */
        double t2 = now();
        k_copy(a, b, nblk);
        double t3 = now();
        k_triad_rep(b, c, a, nblk, 1); /* s = 0.5 */
        double t4 = now();
        if (t1 - t0 < best_load) best_load = t1 - t0;
        if (t2 - t1 < best_store) best_store = t2 - t1;
        if (t3 - t2 < best_copy) best_copy = t3 - t2;
        if (t4 - t3 < best_triad) best_triad = t4 - t3;
    }
    /* the stores are real: their results feed the checksum */
    check += a[nblk * BLOCK / 2] + b[nblk * BLOCK - 1] + c[0];
    sink = check;

    int peak_reps = reps < 5 ? reps : 5;
    double scalar = measure_peak(k_scalar, 2.0 * CHAINS_SCALAR, threads, peak_reps, min_seconds);
    double avx2 = 0.0, avx512 = 0.0;
#if TUNE_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        avx2 = measure_peak(k_avx2, 2.0 * 4 * CHAINS_AVX2, threads, peak_reps, min_seconds);
    if (__builtin_cpu_supports("avx512f"))
        avx512 = measure_peak(k_avx512, 2.0 * 8 * CHAINS_AVX512, threads, peak_reps, min_seconds);
#endif

    printf("{\"threads\": %d, \"array_bytes\": %zu, \"repetitions\": %d, ", threads, bytes, reps);
    printf("\"convention\": \"STREAM: bytes explicitly read or written, 8 per double; "
           "load 8, store 8, copy 16, triad 24 bytes per element; no write-allocate "
           "traffic counted; ordinary stores; GB = 1e9 bytes; best of repetitions. "
           "Peak: 2 flops per FMA per lane, all threads over wall time; GFLOP = 1e9\", ");
    printf("\"bandwidth\": {");
    json_number("load", 8.0 * n / best_load * 1e-9, 0);
    json_number("store", 8.0 * n / best_store * 1e-9, 0);
    json_number("copy", 16.0 * n / best_copy * 1e-9, 0);
    json_number("triad", 24.0 * n / best_triad * 1e-9, 1);
    printf("}, \"peak\": {");
    json_number("scalar", scalar, 0);
    json_number("avx2_fma", avx2, 0);
    json_number("avx512_fma", avx512, 1);
    printf("}, \"checksum\": %.17g}\n", check);
    free(a);
    free(b);
    free(c);
    return 0;
}
