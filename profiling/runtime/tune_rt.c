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
 *   TUNE_RT_REPORT         file that receives a JSON report at exit
 *
 * The runtime never writes to the program's stdout or stderr except for a one-line
 * message when saving fails.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define TUNE_RT_MAX_SLOTS 4096
#define TUNE_RT_KEEP 64 /* per-version times kept for the first versions */

struct tune_rt_slot {
  const char *name;
  long invocations;
  double total, min, max;
  double started, save_at_start;
  long kept;
  double times[TUNE_RT_KEEP];
};

static struct tune_rt_slot tune_rt_slots[TUNE_RT_MAX_SLOTS];
static int tune_rt_nslots;
static int tune_rt_ready;
static const char *tune_rt_data;
static long tune_rt_versions = 1;
static double tune_rt_save_seconds;
static FILE *tune_rt_saved_log; /* one JSON object per saved file, in memory */
static char *tune_rt_saved_buf;
static size_t tune_rt_saved_len;
static int tune_rt_failed;

static double tune_rt_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void tune_rt_json_string(FILE *f, const char *s)
{
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      fputc('\\', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

static void tune_rt_report(void)
{
  const char *path = getenv("TUNE_RT_REPORT");
  if (!path)
    return;
  FILE *f = fopen(path, "w");
  if (!f)
    return;
  fprintf(f, "{\"slots\":[");
  for (int i = 0; i < tune_rt_nslots; i++) {
    struct tune_rt_slot *s = &tune_rt_slots[i];
    fprintf(f, "%s{\"slot\":%d,\"name\":", i ? "," : "", i);
    tune_rt_json_string(f, s->name ? s->name : "");
    fprintf(f, ",\"invocations\":%ld,\"total_s\":%.9e,\"min_s\":%.9e,\"max_s\":%.9e,\"times_s\":[",
            s->invocations, s->total, s->invocations ? s->min : 0.0, s->max);
    for (long k = 0; k < s->kept; k++)
      fprintf(f, "%s%.9e", k ? "," : "", s->times[k]);
    fprintf(f, "]}");
  }
  fprintf(f, "],\"save_s\":%.9e,\"save_failed\":%s,\"saved\":[", tune_rt_save_seconds,
          tune_rt_failed ? "true" : "false");
  if (tune_rt_saved_log) {
    fflush(tune_rt_saved_log);
    if (tune_rt_saved_len)
      fwrite(tune_rt_saved_buf, 1, tune_rt_saved_len, f);
  }
  fprintf(f, "]}\n");
  fclose(f);
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
  tune_rt_saved_log = open_memstream(&tune_rt_saved_buf, &tune_rt_saved_len);
  atexit(tune_rt_report);
}

long tune_rt_enter(int slot, const char *name)
{
  tune_rt_init();
  if (slot < 0 || slot >= TUNE_RT_MAX_SLOTS)
    return 0;
  if (slot >= tune_rt_nslots)
    tune_rt_nslots = slot + 1;
  tune_rt_slots[slot].name = name;
  return tune_rt_slots[slot].invocations++;
}

int tune_rt_saving(long version)
{
  return tune_rt_data != NULL && !tune_rt_failed && (tune_rt_versions < 0 || version < tune_rt_versions);
}

void tune_rt_start(int slot)
{
  if (slot < 0 || slot >= TUNE_RT_MAX_SLOTS)
    return;
  tune_rt_slots[slot].save_at_start = tune_rt_save_seconds;
  tune_rt_slots[slot].started = tune_rt_now();
}

void tune_rt_stop(int slot, long version)
{
  double end = tune_rt_now();
  if (slot < 0 || slot >= TUNE_RT_MAX_SLOTS)
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

void tune_rt_save(const char *array, const char *tag, long version, int output, const void *data,
                  const char *descr, unsigned long elem_size, int ndim, const long *shape)
{
  double t0 = tune_rt_now();
  char dir[4096], path[4096], header[512];
  unsigned long count = 1;
  int len;

  tune_rt_init();
  if (!tune_rt_data)
    return;
  if (snprintf(dir, sizeof dir, "%s/%s", tune_rt_data, array) >= (int)sizeof dir)
    goto fail;
  if (snprintf(path, sizeof path, "%s/%s_%ld%s.npy", dir, tag, version, output ? ".out" : "") >=
      (int)sizeof path)
    goto fail;
  if (tune_rt_mkdirs(dir) != 0)
    goto fail;

  /* NPY 1.0: magic, version, little-endian u16 header length, then a Python dict
   * literal padded with spaces and a newline so the data starts 64-byte aligned. */
  len = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (int d = 0; d < ndim; d++) {
    count *= (unsigned long)shape[d];
    len += snprintf(header + len, sizeof header - (size_t)len, "%ld%s", shape[d],
                    (ndim == 1 || d + 1 < ndim) ? "," : "");
    if (d + 1 < ndim)
      len += snprintf(header + len, sizeof header - (size_t)len, " ");
  }
  len += snprintf(header + len, sizeof header - (size_t)len, "), }");
  {
    int total = 10 + len + 1;
    int pad = (64 - total % 64) % 64;
    if (len + pad + 1 >= (int)sizeof header)
      goto fail;
    memset(header + len, ' ', (size_t)pad);
    len += pad;
    header[len++] = '\n';
  }
  {
    FILE *f = fopen(path, "wb");
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
    if (!f)
      goto fail;
    pre[8] = (unsigned char)(len & 0xff);
    pre[9] = (unsigned char)((len >> 8) & 0xff);
    int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(header, 1, (size_t)len, f) == (size_t)len &&
             (count == 0 || fwrite(data, elem_size, count, f) == count);
    if (fclose(f) != 0 || !ok)
      goto fail;
  }
  if (tune_rt_saved_log) {
    fprintf(tune_rt_saved_log, "%s{\"array\":", tune_rt_saved_len ? "," : "");
    tune_rt_json_string(tune_rt_saved_log, array);
    fprintf(tune_rt_saved_log, ",\"tag\":");
    tune_rt_json_string(tune_rt_saved_log, tag);
    fprintf(tune_rt_saved_log, ",\"version\":%ld,\"output\":%s,\"descr\":\"%s\",\"shape\":[", version,
            output ? "true" : "false", descr);
    for (int d = 0; d < ndim; d++)
      fprintf(tune_rt_saved_log, "%s%ld", d ? "," : "", shape[d]);
    fprintf(tune_rt_saved_log, "],\"bytes\":%lu}", count * elem_size);
    fflush(tune_rt_saved_log);
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
