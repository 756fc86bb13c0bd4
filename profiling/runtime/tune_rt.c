/* tune runtime: linked into every program that tune builds with instrumentation.
 *
 * Generated glue calls it around each region and nest invocation:
 *   tune_rt_enter   counts the invocation and returns its version number,
 *   tune_rt_saving  says whether this version's data is saved,
 *   tune_rt_save    writes one array or scalar as a NumPy .npy file,
 *   tune_rt_start / tune_rt_stop time the invocation (time spent saving excluded).
 *
 * Environment (set by tune):
 *   TUNE_RT_DATA           directory for saved data (no saving when unset)
 *   TUNE_RT_SAVE_VERSIONS  how many versions per nest/region to save (default 1)
 *   TUNE_RT_SAVE_PLAN      "slot:version,slot:version": the one version those slots save
 *                          (chosen by tune from an earlier run's cumulative times); other
 *                          slots follow TUNE_RT_SAVE_VERSIONS
 *   TUNE_RT_REPORT         file that receives a JSON report at exit
 *
 * The runtime never writes to the program's stdout or stderr except for a one-line
 * message when saving fails.
 *
 * Only the program's main thread records: a nest or region that threads of the
 * program's own parallel region run (a function called from inside it) counts those
 * calls apart ("concurrent" in the report) and is neither timed nor saved by them, so
 * the records stay whole and tune can tell that the program runs it in parallel.
 *
 * While the program runs, the runtime takes no memory from the program's heap: it
 * writes files through its own buffer over a file descriptor (struct tune_rt_out, not
 * stdio, which allocates a buffer per FILE), keeps its log of saved files in pages of its
 * own (mmap), and gathers rows in mapped memory. A program that writes past the end of
 * one of its blocks can leave the heap so that the next allocation aborts ("corrupted
 * top size"); its own runs never make that allocation, and neither may ours.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define TUNE_RT_MAX_SLOTS 4096
#define TUNE_RT_KEEP 64 /* per-version times kept for the first versions */
#define TUNE_RT_MARKS 128 /* cumulative-time marks per slot (stride doubles when full) */

struct tune_rt_slot {
  const char *name;
  long invocations;
  double total, min, max;
  double started, save_at_start;
  long kept;
  double times[TUNE_RT_KEEP];
  /* (invocations done, cumulative time) every mark_stride invocations: where in the
     sequence of versions the time was spent, in bounded memory */
  long mark_stride;
  int nmarks;
  long mark_v[TUNE_RT_MARKS];
  double mark_t[TUNE_RT_MARKS];
  long concurrent; /* calls from threads other than the main one (atomic) */
};

static struct tune_rt_slot tune_rt_slots[TUNE_RT_MAX_SLOTS];
static int tune_rt_nslots;
static int tune_rt_ready;
static const char *tune_rt_data;
static long tune_rt_versions = 1;
static long tune_rt_plan_slots[TUNE_RT_MAX_SLOTS];
static long *tune_rt_plan; /* per slot: the one version to save, or -1 (NULL: no plan) */
static double tune_rt_save_seconds;
static int tune_rt_failed;

/* Output without the program's heap: to a file descriptor through a fixed buffer
 * (fd >= 0), or into mapped pages that grow (fd < 0, mem). */
struct tune_rt_out {
  int fd, failed;
  size_t len, cap;
  char *mem;
  char buf[8192];
};

static struct tune_rt_out tune_rt_saved_log = {-1, 0, 0, 0, NULL, {0}}; /* one JSON object per saved file */

static int tune_rt_out_open(struct tune_rt_out *o, const char *path)
{
  o->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  o->failed = o->fd < 0;
  o->len = 0;
  o->cap = sizeof o->buf;
  o->mem = NULL;
  return o->fd < 0 ? -1 : 0;
}

static void tune_rt_out_raw(struct tune_rt_out *o, const char *p, size_t n)
{
  while (n > 0 && !o->failed) {
    ssize_t k = write(o->fd, p, n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0) {
      o->failed = 1;
      return;
    }
    p += k;
    n -= (size_t)k;
  }
}

static void tune_rt_out_write(struct tune_rt_out *o, const void *data, size_t n)
{
  const char *p = data;
  if (o->failed || n == 0)
    return;
  if (o->fd < 0) {
    if (o->len + n > o->cap) {
      size_t cap = o->cap ? o->cap : 65536;
      while (cap < o->len + n)
        cap *= 2;
      void *m = o->mem ? mremap(o->mem, o->cap, cap, MREMAP_MAYMOVE)
                       : mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (m == MAP_FAILED) {
        o->failed = 1;
        return;
      }
      o->mem = m;
      o->cap = cap;
    }
    memcpy(o->mem + o->len, p, n);
    o->len += n;
    return;
  }
  if (o->len + n > sizeof o->buf) {
    tune_rt_out_raw(o, o->buf, o->len);
    o->len = 0;
  }
  if (n >= sizeof o->buf)
    tune_rt_out_raw(o, p, n);
  else {
    memcpy(o->buf + o->len, p, n);
    o->len += n;
  }
}

static void tune_rt_out_printf(struct tune_rt_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tune_rt_out_printf(struct tune_rt_out *o, const char *fmt, ...)
{
  char text[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  if (n < 0 || n >= (int)sizeof text) {
    o->failed = 1;
    return;
  }
  tune_rt_out_write(o, text, (size_t)n);
}

/* Flushes and closes a file; 0 when everything was written. */
static int tune_rt_out_close(struct tune_rt_out *o)
{
  if (o->fd < 0)
    return -1;
  tune_rt_out_raw(o, o->buf, o->len);
  o->len = 0;
  if (close(o->fd) != 0)
    o->failed = 1;
  o->fd = -1;
  return o->failed ? -1 : 0;
}

/* 1 on the process's main thread, 2 on any other (0: not asked yet). */
static __thread int tune_rt_thread;

static int tune_rt_on_main(void)
{
  if (!tune_rt_thread)
    tune_rt_thread = (long)syscall(SYS_gettid) == (long)getpid() ? 1 : 2;
  return tune_rt_thread == 1;
}

static double tune_rt_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void tune_rt_json_string(struct tune_rt_out *f, const char *s)
{
  tune_rt_out_write(f, "\"", 1);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      tune_rt_out_write(f, "\\", 1);
    tune_rt_out_write(f, s, 1);
  }
  tune_rt_out_write(f, "\"", 1);
}

static void tune_rt_report(void)
{
  const char *path = getenv("TUNE_RT_REPORT");
  if (!path)
    return;
  static struct tune_rt_out out;
  struct tune_rt_out *f = &out;
  if (tune_rt_out_open(f, path) != 0)
    return;
  tune_rt_out_printf(f, "{\"slots\":[");
  for (int i = 0; i < tune_rt_nslots; i++) {
    struct tune_rt_slot *s = &tune_rt_slots[i];
    tune_rt_out_printf(f, "%s{\"slot\":%d,\"name\":", i ? "," : "", i);
    tune_rt_json_string(f, s->name ? s->name : "");
    tune_rt_out_printf(f, ",\"invocations\":%ld,\"total_s\":%.9e,\"min_s\":%.9e,\"max_s\":%.9e,\"times_s\":[",
                       s->invocations, s->total, s->invocations ? s->min : 0.0, s->max);
    for (long k = 0; k < s->kept; k++)
      tune_rt_out_printf(f, "%s%.9e", k ? "," : "", s->times[k]);
    tune_rt_out_printf(f, "],\"marks\":[");
    for (int k = 0; k < s->nmarks; k++)
      tune_rt_out_printf(f, "%s[%ld,%.9e]", k ? "," : "", s->mark_v[k], s->mark_t[k]);
    tune_rt_out_printf(f, "],\"concurrent\":%ld}", __atomic_load_n(&s->concurrent, __ATOMIC_RELAXED));
  }
  tune_rt_out_printf(f, "],\"save_s\":%.9e,\"save_failed\":%s,\"saved\":[", tune_rt_save_seconds,
                     tune_rt_failed || tune_rt_saved_log.failed ? "true" : "false");
  if (tune_rt_saved_log.len)
    tune_rt_out_write(f, tune_rt_saved_log.mem, tune_rt_saved_log.len);
  tune_rt_out_printf(f, "]}\n");
  tune_rt_out_close(f);
}

static void tune_rt_init(void)
{
  if (tune_rt_ready)
    return;
  tune_rt_ready = 1;
  tune_rt_data = getenv("TUNE_RT_DATA");
  const char *v = getenv("TUNE_RT_SAVE_VERSIONS");
  if (v)
    tune_rt_versions = atol(v);
  const char *plan = getenv("TUNE_RT_SAVE_PLAN");
  if (plan && *plan) {
    tune_rt_plan = tune_rt_plan_slots;
    {
      for (int i = 0; i < TUNE_RT_MAX_SLOTS; i++)
        tune_rt_plan[i] = -1;
      const char *p = plan;
      while (*p) {
        char *end;
        long slot = strtol(p, &end, 10);
        if (end == p || *end != ':')
          break;
        p = end + 1;
        long version = strtol(p, &end, 10);
        if (end == p)
          break;
        if (slot >= 0 && slot < TUNE_RT_MAX_SLOTS && version >= 0)
          tune_rt_plan[slot] = version;
        p = *end == ',' ? end + 1 : end;
      }
    }
  }
  atexit(tune_rt_report);
}

long tune_rt_enter(int slot, const char *name)
{
  if (slot < 0 || slot >= TUNE_RT_MAX_SLOTS)
    return 0;
  if (!tune_rt_on_main()) {
    /* version -1: not saved, not timed; the slot is in the report all the same */
    __atomic_fetch_add(&tune_rt_slots[slot].concurrent, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&tune_rt_slots[slot].name, name, __ATOMIC_RELAXED);
    int n = __atomic_load_n(&tune_rt_nslots, __ATOMIC_RELAXED);
    while (slot >= n && !__atomic_compare_exchange_n(&tune_rt_nslots, &n, slot + 1, 0,
                                                    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
      ;
    return -1;
  }
  tune_rt_init();
  if (slot >= tune_rt_nslots)
    tune_rt_nslots = slot + 1;
  tune_rt_slots[slot].name = name;
  return tune_rt_slots[slot].invocations++;
}

int tune_rt_saving(int slot, long version)
{
  if (version < 0 || tune_rt_data == NULL || tune_rt_failed)
    return 0;
  if (tune_rt_plan && slot >= 0 && slot < TUNE_RT_MAX_SLOTS && tune_rt_plan[slot] >= 0)
    return version == tune_rt_plan[slot];
  return tune_rt_versions < 0 || version < tune_rt_versions;
}

void tune_rt_start(int slot)
{
  if (slot < 0 || slot >= TUNE_RT_MAX_SLOTS || !tune_rt_on_main())
    return;
  tune_rt_slots[slot].save_at_start = tune_rt_save_seconds;
  tune_rt_slots[slot].started = tune_rt_now();
}

void tune_rt_stop(int slot, long version)
{
  double end = tune_rt_now();
  if (slot < 0 || slot >= TUNE_RT_MAX_SLOTS || version < 0)
    return;
  struct tune_rt_slot *s = &tune_rt_slots[slot];
  double t = end - s->started - (tune_rt_save_seconds - s->save_at_start);
  if (t < 0)
    t = 0;
  s->total += t;
  if (version == 0 || t < s->min)
    s->min = t;
  if (t > s->max)
    s->max = t;
  if (version < TUNE_RT_KEEP && version == s->kept)
    s->times[s->kept++] = t;
  long done = version + 1;
  if (s->mark_stride == 0)
    s->mark_stride = 1;
  if (done % s->mark_stride == 0) {
    if (s->nmarks == TUNE_RT_MARKS) {
      /* keep the marks at multiples of twice the stride */
      int k = 0;
      for (int m = 1; m < TUNE_RT_MARKS; m += 2, k++) {
        s->mark_v[k] = s->mark_v[m];
        s->mark_t[k] = s->mark_t[m];
      }
      s->nmarks = k;
      s->mark_stride *= 2;
    }
    if (done % s->mark_stride == 0) {
      s->mark_v[s->nmarks] = done;
      s->mark_t[s->nmarks] = s->total;
      s->nmarks++;
    }
  }
}

static int tune_rt_mkdirs(const char *path)
{
  char buf[4096];
  size_t n = strlen(path);
  if (n >= sizeof buf)
    return -1;
  memcpy(buf, path, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (buf[i] == '/' || buf[i] == '\0') {
      char c = buf[i];
      buf[i] = '\0';
      if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return -1;
      buf[i] = c;
    }
  }
  return 0;
}

/* Writes an NPY 1.0 file: magic, version, little-endian u16 header length, a Python
 * dict literal padded with spaces and a newline so the data starts 64-byte aligned,
 * then the raw C-order data. Returns 0 on success. */
static int tune_rt_write_npy(const char *path, const void *data, const char *descr, unsigned long elem_size,
                             int ndim, const long *shape)
{
  char header[512];
  unsigned long count = 1;
  int len = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (int d = 0; d < ndim; d++) {
    count *= (unsigned long)shape[d];
    len += snprintf(header + len, sizeof header - (size_t)len, "%ld%s", shape[d],
                    (ndim == 1 || d + 1 < ndim) ? "," : "");
    if (d + 1 < ndim)
      len += snprintf(header + len, sizeof header - (size_t)len, " ");
  }
  len += snprintf(header + len, sizeof header - (size_t)len, "), }");
  int total = 10 + len + 1;
  int pad = (64 - total % 64) % 64;
  if (len + pad + 1 >= (int)sizeof header)
    return -1;
  memset(header + len, ' ', (size_t)pad);
  len += pad;
  header[len++] = '\n';
  static struct tune_rt_out out;
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
  if (tune_rt_out_open(&out, path) != 0)
    return -1;
  pre[8] = (unsigned char)(len & 0xff);
  pre[9] = (unsigned char)((len >> 8) & 0xff);
  tune_rt_out_write(&out, pre, 10);
  tune_rt_out_write(&out, header, (size_t)len);
  tune_rt_out_write(&out, data, count * elem_size);
  return tune_rt_out_close(&out);
}

void tune_rt_save(const char *array, const char *tag, long version, int output, const void *data,
                  const char *descr, unsigned long elem_size, int ndim, const long *shape)
{
  double t0 = tune_rt_now();
  char dir[4096], path[4096];
  unsigned long count = 1;

  tune_rt_init();
  /* A pointer that points nowhere yet has nothing to save (the data set lacks it). */
  if (!tune_rt_data || !data)
    return;
  if (snprintf(dir, sizeof dir, "%s/%s", tune_rt_data, array) >= (int)sizeof dir)
    goto fail;
  if (snprintf(path, sizeof path, "%s/%s_%ld%s.npy", dir, tag, version, output ? ".out" : "") >=
      (int)sizeof path)
    goto fail;
  if (tune_rt_mkdirs(dir) != 0)
    goto fail;

  if (tune_rt_write_npy(path, data, descr, elem_size, ndim, shape) != 0)
    goto fail;
  for (int d = 0; d < ndim; d++)
    count *= (unsigned long)shape[d];
  {
    struct tune_rt_out *log = &tune_rt_saved_log;
    tune_rt_out_printf(log, "%s{\"array\":", log->len ? "," : "");
    tune_rt_json_string(log, array);
    tune_rt_out_printf(log, ",\"tag\":");
    tune_rt_json_string(log, tag);
    tune_rt_out_printf(log, ",\"version\":%ld,\"output\":%s,\"descr\":\"%s\",\"shape\":[", version,
                       output ? "true" : "false", descr);
    for (int d = 0; d < ndim; d++)
      tune_rt_out_printf(log, "%s%ld", d ? "," : "", shape[d]);
    tune_rt_out_printf(log, "],\"bytes\":%lu}", count * elem_size);
  }
  tune_rt_save_seconds += tune_rt_now() - t0;
  return;
fail:
  if (!tune_rt_failed)
    fprintf(stderr, "tune: cannot save %s for %s version %ld under %s: %s\n", array, tag, version,
            tune_rt_data, strerror(errno));
  tune_rt_failed = 1;
  tune_rt_save_seconds += tune_rt_now() - t0;
}

/* A pointer to rows (`float **w`, rows allocated one by one) of shape[0] rows of
 * shape[1] elements: gathered into one block and saved as a 2-d array. */
void tune_rt_save_rows(const char *array, const char *tag, long version, int output, const void *rows,
                       const char *descr, unsigned long elem_size, const long *shape)
{
  unsigned long n = shape[0] > 0 ? (unsigned long)shape[0] : 0;
  unsigned long len = (shape[1] > 0 ? (unsigned long)shape[1] : 0) * elem_size;
  char *block;

  tune_rt_init();
  if (!tune_rt_data || !rows)
    return;
  size_t mapped = n * len + 1;
  block = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (block == MAP_FAILED) {
    if (!tune_rt_failed)
      fprintf(stderr, "tune: cannot save %s for %s version %ld: out of memory\n", array, tag, version);
    tune_rt_failed = 1;
    return;
  }
  for (unsigned long r = 0; r < n; r++)
    memcpy(block + r * len, ((char *const *)rows)[r], len);
  tune_rt_save(array, tag, version, output, block, descr, elem_size, 2, shape);
  munmap(block, mapped);
}

/* ---------------------------------------------------------------------------------
 * Cutouts: one nest run alone on data restored from .npy files.
 *
 * A generated cutout program calls, in order:
 *   tune_co_init(argc, argv)            options as key=value arguments (see below)
 *   tune_co_load(name, descr, size, &p) every input: arrays and scalars of the nest
 *   a = tune_co_alloc(tune_co_bytes(name)); tune_co_place(name, a)
 *                                       every array: its own block from the allocator
 *   a = tune_co_rows(name)              a pointer to rows: a table of its rows' starts
 *   while (tune_co_next()) {
 *     long k = tune_co_batch(); ...reset written scalars...; tune_co_start(); NEST(...);
 *     while (--k > 0) { compiler barrier; ...reset...; NEST(...); }
 *     tune_co_stop();
 *   }
 *   tune_co_output(name, descr, size, p, is_array) for every output (is_array 2: the
 *                                       rows of an input, from its block)
 *   tune_co_finish()                    writes the JSON report
 *
 * Options: data=DIR tag=nestK version=V out=DIR report=FILE warmup=N reps=N
 *          max_reps=N target_ci=X max_time=S flush=BYTES counters=a,b,c kill_after=S
 * kill_after: stop repeating once a timed run took longer (the variant is clearly
 * slower than the best so far; the report says "killed"). A run is not waited for past
 * that bound: from TUNE_CO_CUT_MIN seconds up, a timer (SIGALRM) armed at its start
 * cuts it there, records the time so far as its sample, writes the report with "cut"
 * and exits without outputs. Timed runs are armed, and, with long_run=S, warmup runs
 * when kill_after >= S without counters (such a warmup run over kill_after would become
 * the first timed run and kill the variant: the cut says the same, sooner).
 * short_total=S (with target_ci): runs so short that max_reps of them time less than S
 * seconds are repeated until S seconds of them were timed (at most TUNE_CO_MAX_SAMPLES),
 * unless the interval is tight first: a nest of microseconds gets thousands of runs in
 * one process, each still on restored inputs. The interval is checked every n/16 runs.
 * They stop sooner where their wall time, restores included, would pass
 * TUNE_CO_SHORT_WALL x S (1 s for S = 20 ms), though never below max_reps.
 * long_run=S (with target_ci): runs of S seconds and more are long. A long warmup run
 * warms itself: it becomes the first timed run and the rest of the warmup is skipped
 * (without counters, whose first run it did not count). Long runs may stop from the
 * third timed run, before reps, once the Student t 95% interval of their mean is within
 * target_ci (each such run averages many iterations; the median's order-statistics
 * interval needs five runs and more to say anything).
 * slower_than=B: stop once the Student t 95% interval of the mean of two or more timed
 * runs lies wholly above B seconds (the best median so far): the variant is clearly
 * slower, and the report says "killed".
 * long_reps=N (with long_run): long runs stop after N timed runs. A baseline's interval of
 * the median is its min..max until its eighth run: runs four to seven widen it and settle
 * nothing (three long runs against three are apart with p = 0.05 one-sided).
 * beat=X (with long_run): long runs stop after three timed runs not all shorter than X
 * seconds (the lower end of the baseline's interval): their median's interval, min..max
 * until the eighth run, cannot then fall below X, and the report says "futile".
 * faster_than=B: stop once three or more timed runs were all shorter than B seconds (the
 * lower end of the 95% interval of the best median so far): the variant is clearly
 * faster, more runs would not change that, and the report says "faster". Like kill_after
 * and slower_than it is meant for runs of milliseconds and more.
 * batch=S (with target_ci): a nest whose first timed run took less than S/2 seconds is
 * timed in batches: one sample is k consecutive calls (k = S over that run, so a sample
 * lasts about S) and records their mean, so a nest of nanoseconds is timed far above the
 * clock's resolution and the timer's own cost. Consecutive calls do not restore the
 * inputs, so batching needs a nest that leaves its own outputs unchanged when run again:
 * after the first timed run the buffers are copied, the nest runs once more untimed
 * without a restore, and only if every buffer is then bit for bit the same are the
 * samples batched (the single-run sample is dropped and the counters reset). A nest that
 * updates in place (a += ...) keeps single runs on restored inputs. The report gives k
 * as "batch" (1: not batched).
 * Before every repetition (warmup included) all loaded inputs are restored from their
 * pristine copies and, with flush>0, a buffer of that many bytes is written and read to
 * evict the caches -- both outside the timed region.
 * ------------------------------------------------------------------------------- */
#include <linux/perf_event.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TUNE_CO_MAX_BUFS 256
#define TUNE_CO_MAX_SAMPLES 100000
/* Short runs stop once their wall time (restores of the inputs included) would pass this
 * many times short_total: a nest of microseconds over a large array restores all of it
 * before every run, and ten thousand restores of 32 MB take seconds. */
#define TUNE_CO_SHORT_WALL 50.0
#define TUNE_CO_MAX_COUNTERS 16
/* Batching's states: not decided yet, the untimed re-run under way, decided. */
#define TUNE_CO_BATCH_UNDECIDED 0
#define TUNE_CO_BATCH_CHECKING 1
#define TUNE_CO_BATCH_DECIDED 2
/* At most this many calls in one sample. */
#define TUNE_CO_MAX_BATCH 100000000L

struct tune_co_buf {
  const char *name;
  void *work, *pristine;
  size_t bytes;
  int ndim;
  long shape[8];
};

struct tune_co_counter {
  char name[32];
  const char *kind;
  int fd;
  char reason[96];
  unsigned long long total;
};

static struct {
  const char *data, *tag, *out, *report;
  long version;
  long warmup, reps, max_reps;
  double target_ci, max_time, kill_after, short_total, long_run, slower_than, faster_than, beat;
  long long_reps;
  /* Batching (batch=S): the state, calls per sample, the copies of the buffers the
   * re-run is compared with, and whether the coming run is the untimed re-run. */
  double batch_s;
  int batch_state;
  long batch;
  unsigned char *batch_copy[TUNE_CO_MAX_BUFS];
  int untimed;
  double sum; /* of the timed samples */
  int killed, faster, futile;
  int cut; /* the run in progress was cut at kill_after (SIGALRM) */
  size_t flush_bytes;
  unsigned char *flush_buf;
  struct tune_co_buf bufs[TUNE_CO_MAX_BUFS];
  int nbufs;
  double samples[TUNE_CO_MAX_SAMPLES];
  long nsamples, done_warmup, runs;
  double first; /* the process's first run of the nest (cold: caches, threads, pages) */
  double t_start, t_begin;
  struct tune_co_counter counters[TUNE_CO_MAX_COUNTERS];
  int ncounters;
  volatile double sink;
} tune_co;

static void tune_co_die(const char *what, const char *name)
{
  fprintf(stderr, "tune cutout: %s%s%s\n", what, name ? ": " : "", name ? name : "");
  exit(3);
}

static const char *tune_co_arg(int argc, char **argv, const char *key, const char *dflt)
{
  size_t n = strlen(key);
  for (int i = 1; i < argc; i++)
    if (strncmp(argv[i], key, n) == 0 && argv[i][n] == '=')
      return argv[i] + n + 1;
  return dflt;
}

struct tune_co_event {
  const char *name, *kind;
  unsigned type;
  unsigned long long config;
};

static const struct tune_co_event tune_co_events[] = {
    {"cycles", "hardware", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"instructions", "hardware", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    {"cache-references", "hardware", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES},
    {"cache-misses", "hardware", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
    {"branches", "hardware", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"branch-misses", "hardware", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
    {"task-clock", "software", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
    {"page-faults", "software", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    {"context-switches", "software", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
};

static void tune_co_open_counter(const char *name)
{
  if (tune_co.ncounters >= TUNE_CO_MAX_COUNTERS)
    return;
  struct tune_co_counter *c = &tune_co.counters[tune_co.ncounters++];
  snprintf(c->name, sizeof c->name, "%s", name);
  c->fd = -1;
  c->kind = "unknown";
  const struct tune_co_event *ev = NULL;
  for (size_t i = 0; i < sizeof tune_co_events / sizeof tune_co_events[0]; i++)
    if (strcmp(tune_co_events[i].name, name) == 0)
      ev = &tune_co_events[i];
  if (!ev) {
    snprintf(c->reason, sizeof c->reason, "unknown event");
    return;
  }
  c->kind = ev->kind;
  struct perf_event_attr attr;
  memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = ev->type;
  attr.config = ev->config;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
  if (fd < 0) {
    snprintf(c->reason, sizeof c->reason, "perf_event_open: %s", strerror(errno));
    return;
  }
  c->fd = (int)fd;
}

/* Runs cut below this bound are not worth a timer's two system calls per run. */
#define TUNE_CO_CUT_MIN 0.01

/* Arms SIGALRM `seconds` from now (rounded up to the microsecond); 0 disarms it. */
static void tune_co_alarm(double seconds)
{
  struct itimerval at;
  memset(&at, 0, sizeof at);
  if (seconds > 0) {
    long us = (long)(seconds * 1e6) + 1;
    at.it_value.tv_sec = (time_t)(us / 1000000);
    at.it_value.tv_usec = (suseconds_t)(us % 1000000);
  }
  setitimer(ITIMER_REAL, &at, NULL);
}

/* Records one timed sample (seconds per call). */
static void tune_co_add_sample(double t)
{
  if (tune_co.nsamples < TUNE_CO_MAX_SAMPLES) {
    tune_co.samples[tune_co.nsamples++] = t;
    tune_co.sum += t;
  }
}

void tune_co_finish(void);

/* SIGALRM: the run in progress passed kill_after. Its time so far is its sample (a lower
 * bound), the report says killed and cut, and the process ends without outputs. */
static void tune_co_on_alarm(int sig)
{
  (void)sig;
  double t = tune_rt_now() - tune_co.t_start;
  if (tune_co.runs == 0)
    tune_co.first = t;
  int timed = tune_co.done_warmup >= tune_co.warmup;
  tune_co_add_sample(timed ? t / (double)tune_co.batch : t);
  tune_co.killed = 1;
  tune_co.cut = 1;
  tune_co_finish();
  _exit(0);
}

void tune_co_init(int argc, char **argv)
{
  tune_co.data = tune_co_arg(argc, argv, "data", ".");
  tune_co.tag = tune_co_arg(argc, argv, "tag", "nest0");
  tune_co.out = tune_co_arg(argc, argv, "out", NULL);
  tune_co.report = tune_co_arg(argc, argv, "report", NULL);
  tune_co.version = atol(tune_co_arg(argc, argv, "version", "0"));
  tune_co.warmup = atol(tune_co_arg(argc, argv, "warmup", "1"));
  tune_co.reps = atol(tune_co_arg(argc, argv, "reps", "5"));
  tune_co.max_reps = atol(tune_co_arg(argc, argv, "max_reps", "0"));
  tune_co.target_ci = atof(tune_co_arg(argc, argv, "target_ci", "0"));
  tune_co.max_time = atof(tune_co_arg(argc, argv, "max_time", "0"));
  tune_co.kill_after = atof(tune_co_arg(argc, argv, "kill_after", "0"));
  tune_co.short_total = atof(tune_co_arg(argc, argv, "short_total", "0"));
  tune_co.long_run = atof(tune_co_arg(argc, argv, "long_run", "0"));
  tune_co.slower_than = atof(tune_co_arg(argc, argv, "slower_than", "0"));
  tune_co.faster_than = atof(tune_co_arg(argc, argv, "faster_than", "0"));
  tune_co.beat = atof(tune_co_arg(argc, argv, "beat", "0"));
  tune_co.long_reps = atol(tune_co_arg(argc, argv, "long_reps", "0"));
  tune_co.batch_s = atof(tune_co_arg(argc, argv, "batch", "0"));
  tune_co.batch = 1;
  if (tune_co.kill_after >= TUNE_CO_CUT_MIN) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = tune_co_on_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
  }
  if (!(tune_co.batch_s > 0 && tune_co.target_ci > 0))
    tune_co.batch_state = TUNE_CO_BATCH_DECIDED;
  tune_co.flush_bytes = (size_t)atol(tune_co_arg(argc, argv, "flush", "0"));
  if (tune_co.reps < 1)
    tune_co.reps = 1;
  if (tune_co.max_reps < tune_co.reps)
    tune_co.max_reps = tune_co.reps;
  if (tune_co.max_reps > TUNE_CO_MAX_SAMPLES)
    tune_co.max_reps = TUNE_CO_MAX_SAMPLES;
  if (tune_co.flush_bytes) {
    tune_co.flush_buf = malloc(tune_co.flush_bytes);
    if (!tune_co.flush_buf)
      tune_co_die("cannot allocate the flush buffer", NULL);
    memset(tune_co.flush_buf, 1, tune_co.flush_bytes);
  }
  const char *list = tune_co_arg(argc, argv, "counters", "");
  char name[32];
  while (*list) {
    size_t n = strcspn(list, ",");
    if (n > 0 && n < sizeof name) {
      memcpy(name, list, n);
      name[n] = '\0';
      tune_co_open_counter(name);
    }
    list += n;
    if (*list == ',')
      list++;
  }
  tune_co.t_begin = tune_rt_now();
}

/* Reads one of our .npy files: checks the dtype, returns the data and the shape. */
static void *tune_co_read_npy(const char *path, const char *descr, size_t elem, size_t *bytes, int *ndim, long *shape)
{
  FILE *f = fopen(path, "rb");
  unsigned char pre[10];
  char header[4096];
  if (!f)
    tune_co_die("cannot open input", path);
  if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0 || pre[6] != 1)
    tune_co_die("not an NPY 1.0 file", path);
  size_t hlen = (size_t)pre[8] | ((size_t)pre[9] << 8);
  if (hlen >= sizeof header || fread(header, 1, hlen, f) != hlen)
    tune_co_die("bad NPY header", path);
  header[hlen] = '\0';
  char want[64];
  snprintf(want, sizeof want, "'descr': '%s'", descr);
  if (!strstr(header, want))
    tune_co_die("unexpected dtype in", path);
  const char *sh = strstr(header, "'shape': (");
  if (!sh)
    tune_co_die("no shape in", path);
  sh += 10;
  size_t count = 1;
  *ndim = 0;
  while (*sh && *sh != ')') {
    char *end;
    long v = strtol(sh, &end, 10);
    if (end == sh) {
      sh++;
      continue;
    }
    if (*ndim < 8)
      shape[(*ndim)++] = v;
    count *= (size_t)v;
    sh = end;
  }
  *bytes = count * elem;
  void *p = NULL;
  if (posix_memalign(&p, 64, *bytes ? *bytes : 64) != 0)
    tune_co_die("out of memory loading", path);
  if (*bytes && fread(p, 1, *bytes, f) != *bytes)
    tune_co_die("truncated data in", path);
  fclose(f);
  return p;
}

void tune_co_load(const char *name, const char *descr, unsigned long elem_size, void **out)
{
  char path[4096];
  if (tune_co.nbufs >= TUNE_CO_MAX_BUFS)
    tune_co_die("too many inputs", name);
  snprintf(path, sizeof path, "%s/%s/%s_%ld.npy", tune_co.data, name, tune_co.tag, tune_co.version);
  struct tune_co_buf *b = &tune_co.bufs[tune_co.nbufs++];
  b->name = name;
  b->pristine = tune_co_read_npy(path, descr, elem_size, &b->bytes, &b->ndim, b->shape);
  if (posix_memalign(&b->work, 64, b->bytes ? b->bytes : 64) != 0)
    tune_co_die("out of memory for", name);
  memcpy(b->work, b->pristine, b->bytes);
  *out = b->work;
}

static struct tune_co_buf *tune_co_buf_named(const char *name)
{
  for (int i = 0; i < tune_co.nbufs; i++)
    if (strcmp(tune_co.bufs[i].name, name) == 0)
      return &tune_co.bufs[i];
  tune_co_die("no such input", name);
  return 0;
}

/* Bytes to allocate for a loaded input: its size rounded up to a multiple of 64 (as
 * aligned_alloc wants), at least 64. */
unsigned long tune_co_bytes(const char *name)
{
  size_t n = tune_co_buf_named(name)->bytes;
  return n ? (n + 63) / 64 * 64 : 64;
}

/* A 64-byte aligned block from the allocator. Called from the generated main (declared
 * there with the malloc attribute, so the compiler still knows the blocks apart) rather
 * than aligned_alloc itself, which <stdlib.h> does not declare under the user's
 * -std=c89/c99: undeclared, it would return an int and truncate the pointer. */
void *tune_co_alloc(unsigned long bytes)
{
  return aligned_alloc(64, bytes);
}

/* The cutout's own block for a loaded input (from the allocator in the generated main,
 * so that the compiler knows the arrays apart): the data moves there and every later
 * restore writes there. */
void tune_co_place(const char *name, void *block)
{
  struct tune_co_buf *b = tune_co_buf_named(name);
  if (!block)
    tune_co_die("out of memory for", name);
  memcpy(block, b->work, b->bytes);
  free(b->work);
  b->work = block;
}

/* A table of the starts of an input's rows (shape[0] of them) in its block: the nest
 * takes a pointer to rows (`float **w`) as the program has it. */
void *tune_co_rows(const char *name)
{
  struct tune_co_buf *b = tune_co_buf_named(name);
  size_t n = b->ndim > 0 && b->shape[0] > 0 ? (size_t)b->shape[0] : 0;
  size_t len = n ? b->bytes / n : 0;
  char **table = malloc((n ? n : 1) * sizeof *table);
  if (!table)
    tune_co_die("out of memory for the rows of", name);
  for (size_t r = 0; r < n; r++)
    table[r] = (char *)b->work + r * len;
  return table;
}

static int tune_co_cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* sqrt by Newton's method: the runtime links without libm. */
static double tune_co_sqrt(double x)
{
  if (x <= 0)
    return 0;
  double root = x > 1 ? x : 1.0;
  for (int it = 0; it < 60; it++)
    root = 0.5 * (root + x / root);
  return root;
}

static double tune_co_median_ci(double *rel_half_width)
{
  long n = tune_co.nsamples;
  double *s = malloc((size_t)n * sizeof(double));
  if (!s)
    return 0;
  memcpy(s, tune_co.samples, (size_t)n * sizeof(double));
  qsort(s, (size_t)n, sizeof(double), tune_co_cmp_double);
  double median = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
  /* Distribution-free 95% interval of the median: order statistics n/2 -+ 0.98 sqrt(n). */
  double half = 0.98 * tune_co_sqrt((double)n), lo_f = n / 2.0 - half, hi_f = n / 2.0 + half;
  long lo = lo_f > 0 ? (long)lo_f : 0;
  long hi = (long)hi_f + (hi_f > (double)(long)hi_f ? 1 : 0);
  if (hi > n - 1)
    hi = n - 1;
  *rel_half_width = median > 0 ? (s[hi] - s[lo]) / 2.0 / median : 0;
  free(s);
  return median;
}

/* The 0.975 quantile of Student's t with df degrees of freedom. */
static double tune_co_t975(long df)
{
  static const double t[30] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                               2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                               2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                               2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  if (df < 1)
    return 1e300;
  return df <= 30 ? t[df - 1] : 1.960 + 2.4 / (double)df;
}

/* The mean of the timed samples and the half-width of its Student t 95% interval. */
static double tune_co_mean_ci(double *half_width)
{
  long n = tune_co.nsamples;
  double mean = n > 0 ? tune_co.sum / (double)n : 0, ss = 0;
  for (long i = 0; i < n; i++)
    ss += (tune_co.samples[i] - mean) * (tune_co.samples[i] - mean);
  *half_width = n > 1 ? tune_co_t975(n - 1) * tune_co_sqrt(ss / (double)(n - 1) / (double)n) : 1e300;
  return mean;
}

/* The longest timed run so far. */
static double tune_co_longest(void)
{
  double longest = 0;
  for (long i = 0; i < tune_co.nsamples; i++)
    if (tune_co.samples[i] > longest)
      longest = tune_co.samples[i];
  return longest;
}

/* After the first timed run: copies the buffers and asks for the untimed re-run without
 * a restore, where the run was short enough to batch. Returns 1 when it did. */
static int tune_co_batch_begin(void)
{
  double t = tune_co.samples[0];
  if (!(t < tune_co.batch_s / 2)) {
    tune_co.batch_state = TUNE_CO_BATCH_DECIDED;
    return 0;
  }
  for (int i = 0; i < tune_co.nbufs; i++) {
    tune_co.batch_copy[i] = malloc(tune_co.bufs[i].bytes ? tune_co.bufs[i].bytes : 1);
    if (!tune_co.batch_copy[i]) {
      for (int j = 0; j < i; j++)
        free(tune_co.batch_copy[j]);
      tune_co.batch_state = TUNE_CO_BATCH_DECIDED;
      return 0;
    }
    memcpy(tune_co.batch_copy[i], tune_co.bufs[i].work, tune_co.bufs[i].bytes);
  }
  tune_co.batch_state = TUNE_CO_BATCH_CHECKING;
  tune_co.untimed = 1;
  return 1;
}

/* After the untimed re-run: batches when it left every buffer as it was. */
static void tune_co_batch_end(void)
{
  int same = 1;
  for (int i = 0; i < tune_co.nbufs; i++) {
    if (memcmp(tune_co.batch_copy[i], tune_co.bufs[i].work, tune_co.bufs[i].bytes) != 0)
      same = 0;
    free(tune_co.batch_copy[i]);
  }
  tune_co.batch_state = TUNE_CO_BATCH_DECIDED;
  if (!same)
    return;
  double t = tune_co.samples[0] > 1e-9 ? tune_co.samples[0] : 1e-9;
  double k = tune_co.batch_s / t + 1;
  tune_co.batch = k >= (double)TUNE_CO_MAX_BATCH ? TUNE_CO_MAX_BATCH : (long)k;
  if (tune_co.batch < 2)
    tune_co.batch = 2;
  /* The single run's sample is of another kind: the batches start afresh. */
  tune_co.nsamples = 0;
  tune_co.sum = 0;
  for (int i = 0; i < tune_co.ncounters; i++)
    if (tune_co.counters[i].fd >= 0)
      ioctl(tune_co.counters[i].fd, PERF_EVENT_IOC_RESET, 0);
}

long tune_co_batch(void)
{
  return tune_co.untimed || tune_co.done_warmup < tune_co.warmup ? 1 : tune_co.batch;
}

int tune_co_next(void)
{
  if (tune_co.done_warmup >= tune_co.warmup) {
    if (tune_co.batch_state == TUNE_CO_BATCH_CHECKING)
      tune_co_batch_end();
    else if (tune_co.batch_state == TUNE_CO_BATCH_UNDECIDED && tune_co.nsamples == 1 && tune_co_batch_begin())
      return 1; /* the re-run, on the first run's outputs */
  }
  if (tune_co.done_warmup >= tune_co.warmup) {
    long n = tune_co.nsamples;
    long cap = tune_co.max_reps;
    /* Short runs: as many as time short_total seconds in all, and as many as fit in
     * TUNE_CO_SHORT_WALL times that of wall time, restores included. */
    if (tune_co.target_ci > 0 && tune_co.short_total > 0 && n > 0) {
      double mean = tune_co.sum / (double)n * (double)tune_co.batch; /* of a sample */
      if (mean > 0 && mean * (double)cap < tune_co.short_total) {
        double want = tune_co.short_total / mean;
        double wall = (tune_rt_now() - tune_co.t_begin) / (double)tune_co.runs;
        double afford = wall > 0 ? TUNE_CO_SHORT_WALL * tune_co.short_total / wall : want;
        if (afford < want)
          want = afford;
        cap = want >= (double)TUNE_CO_MAX_SAMPLES ? TUNE_CO_MAX_SAMPLES : (long)want;
        if (cap < tune_co.max_reps)
          cap = tune_co.max_reps;
      }
    }
    if (n >= cap)
      return 0;
    if (n > 0 && tune_co.kill_after > 0 && tune_co.samples[n - 1] > tune_co.kill_after) {
      tune_co.killed = 1;
      return 0;
    }
    if (n >= 2 && tune_co.slower_than > 0) {
      double half = 0, mean = tune_co_mean_ci(&half);
      if (mean - half > tune_co.slower_than) {
        tune_co.killed = 1;
        return 0;
      }
    }
    if (n >= 3 && tune_co.faster_than > 0) {
      if (tune_co_longest() < tune_co.faster_than) {
        tune_co.faster = 1;
        return 0;
      }
    }
    int long_runs = n > 0 && tune_co.long_run > 0 && tune_co.sum / (double)n >= tune_co.long_run;
    if (long_runs && tune_co.long_reps > 0 && n >= tune_co.long_reps)
      return 0;
    if (long_runs && n == 3 && tune_co.beat > 0 && tune_co_longest() >= tune_co.beat) {
      tune_co.futile = 1;
      return 0;
    }
    if (long_runs && n >= 3 && n < tune_co.reps && tune_co.target_ci > 0) {
      double half = 0, mean = tune_co_mean_ci(&half);
      if (mean > 0 && half / mean <= tune_co.target_ci)
        return 0;
    }
    if (n >= tune_co.reps) {
      if (tune_co.target_ci <= 0)
        return 0;
      if (tune_co.max_time > 0 && tune_rt_now() - tune_co.t_begin > tune_co.max_time)
        return 0;
      long step = n / 16 > 1 ? n / 16 : 1;
      if ((n - tune_co.reps) % step == 0) {
        double rel = 0;
        tune_co_median_ci(&rel);
        if (rel <= tune_co.target_ci)
          return 0;
      }
    }
  }
  for (int i = 0; i < tune_co.nbufs; i++)
    memcpy(tune_co.bufs[i].work, tune_co.bufs[i].pristine, tune_co.bufs[i].bytes);
  if (tune_co.flush_buf) {
    double acc = 0;
    for (size_t i = 0; i < tune_co.flush_bytes; i += 64) {
      tune_co.flush_buf[i] += 1;
      acc += tune_co.flush_buf[i];
    }
    tune_co.sink = acc;
  }
  return 1;
}

void tune_co_start(void)
{
  int timed = tune_co.done_warmup >= tune_co.warmup && !tune_co.untimed;
  if (timed)
    for (int i = 0; i < tune_co.ncounters; i++)
      if (tune_co.counters[i].fd >= 0)
        ioctl(tune_co.counters[i].fd, PERF_EVENT_IOC_ENABLE, 0);
  tune_co.t_start = tune_rt_now();
  /* The bound this run is cut at (see kill_after), armed after the clock started so
   * that a cut run's time is never under it. */
  double bound = 0;
  if (timed)
    bound = tune_co.kill_after * (double)tune_co.batch;
  else if (!tune_co.untimed && tune_co.long_run > 0 && tune_co.ncounters == 0 &&
           tune_co.kill_after >= tune_co.long_run)
    bound = tune_co.kill_after;
  if (bound >= TUNE_CO_CUT_MIN)
    tune_co_alarm(bound);
}

void tune_co_stop(void)
{
  double t = tune_rt_now() - tune_co.t_start;
  if (tune_co.kill_after >= TUNE_CO_CUT_MIN)
    tune_co_alarm(0);
  if (tune_co.untimed) {
    tune_co.untimed = 0;
    tune_co.runs++;
    return;
  }
  if (tune_co.runs++ == 0)
    tune_co.first = t;
  if (tune_co.done_warmup < tune_co.warmup) {
    tune_co.done_warmup++;
    if (!(tune_co.long_run > 0 && t >= tune_co.long_run && tune_co.ncounters == 0))
      return;
    /* A long run warms itself: it is the first timed run, the rest of the warmup goes. */
    tune_co.warmup = tune_co.done_warmup;
  }
  for (int i = 0; i < tune_co.ncounters; i++)
    if (tune_co.counters[i].fd >= 0)
      ioctl(tune_co.counters[i].fd, PERF_EVENT_IOC_DISABLE, 0);
  tune_co_add_sample(t / (double)tune_co.batch);
}

void tune_co_output(const char *name, const char *descr, unsigned long elem_size, const void *data, int is_array)
{
  char path[4096];
  long shape[8];
  int ndim = 0;
  if (!tune_co.out)
    return;
  for (int i = 0; i < tune_co.nbufs; i++)
    if (strcmp(tune_co.bufs[i].name, name) == 0) {
      ndim = tune_co.bufs[i].ndim;
      memcpy(shape, tune_co.bufs[i].shape, sizeof shape);
      if (is_array == 2)
        data = tune_co.bufs[i].work;
    }
  if (!is_array)
    ndim = 0;
  snprintf(path, sizeof path, "%s/%s.npy", tune_co.out, name);
  if (tune_rt_write_npy(path, data, descr, elem_size, ndim, shape) != 0)
    tune_co_die("cannot write output", path);
}

void tune_co_finish(void)
{
  if (!tune_co.report)
    return;
  static struct tune_rt_out out;
  struct tune_rt_out *f = &out;
  if (tune_rt_out_open(f, tune_co.report) != 0)
    tune_co_die("cannot write report", tune_co.report);
  tune_rt_out_printf(f, "{\"warmup\":%ld,\"flush_bytes\":%lu,\"first_s\":%.9e,\"batch\":%ld,\"killed\":%s,\"cut\":%s,\"faster\":%s,\"futile\":%s,\"samples_s\":[",
          tune_co.done_warmup, (unsigned long)tune_co.flush_bytes, tune_co.first, tune_co.batch,
          tune_co.killed ? "true" : "false", tune_co.cut ? "true" : "false", tune_co.faster ? "true" : "false",
          tune_co.futile ? "true" : "false");
  for (long i = 0; i < tune_co.nsamples; i++)
    tune_rt_out_printf(f, "%s%.9e", i ? "," : "", tune_co.samples[i]);
  tune_rt_out_printf(f, "],\"counters\":[");
  for (int i = 0; i < tune_co.ncounters; i++) {
    struct tune_co_counter *c = &tune_co.counters[i];
    unsigned long long v = 0;
    int ok = c->fd >= 0 && read(c->fd, &v, sizeof v) == (ssize_t)sizeof v;
    tune_rt_out_printf(f, "%s{\"name\":\"%s\",\"kind\":\"%s\",\"available\":%s", i ? "," : "", c->name, c->kind,
            ok ? "true" : "false");
    if (ok)
      tune_rt_out_printf(f, ",\"total\":%llu,\"per_rep\":%.6e", v, tune_co.nsamples ? (double)v / (double)tune_co.nsamples / (double)tune_co.batch : 0.0);
    else {
      tune_rt_out_printf(f, ",\"reason\":");
      tune_rt_json_string(f, c->fd >= 0 ? "read failed" : c->reason);
    }
    tune_rt_out_printf(f, "}");
  }
  tune_rt_out_printf(f, "]}\n");
  if (tune_rt_out_close(f) != 0)
    tune_co_die("cannot write report", tune_co.report);
}
