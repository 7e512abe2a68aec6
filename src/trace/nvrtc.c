/* NVRTC's own phases in gpujit's traces: per-compile trace files, phase times, merging. */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/fs.h"
#include "trace/nvrtc.h"
#include "trace/sink.h"

bool gpujit__trace_wants_nvrtc(const gpujit_trace *t) { return t && t->nvrtc_phases; }

int gpujit__trace_nvrtc_path(gpujit_trace *t, char *out, size_t size)
{
  static unsigned untraced;
  const char *dir = t ? t->tmp_dir : getenv("TMPDIR");
  unsigned n;
  if (t) {
    pthread_mutex_lock(&t->lock);
    n = t->nvrtc_counter++;
    pthread_mutex_unlock(&t->lock);
  } else {
    n = __atomic_fetch_add(&untraced, 1, __ATOMIC_RELAXED);
    if (!dir || !*dir)
      dir = "/tmp";
    /* NVRTC aborts the whole process when its trace directory is missing. */
    if (!gpujit__is_dir(dir))
      return gpujit__error(GPUJIT_EINVAL, "temp directory '%s' does not exist", dir);
  }
  /* pid, thread and a counter make the name unique; NVRTC refuses existing files. */
  if ((size_t)snprintf(out, size, "%s/gpujit-nvrtc-%lld-%lld-%u-%p", dir, (long long)getpid(),
                       (long long)gpujit__thread_tid(), n, (void *)t) >= size)
    return gpujit__error(GPUJIT_EINVAL, "trace temp path too long");
  return 0;
}

static int phase_index(const char *name)
{
  if (strcmp(name, "CUDA C++ Front-End") == 0)
    return 0;
  if (strcmp(name, "NVVM Module Linker") == 0 || strcmp(name, "NVVM Optimizer") == 0)
    return 1;
  if (strcmp(name, "NVVM CodeGen") == 0)
    return 2;
  if (strcmp(name, "Total PTXAS Time") == 0)
    return 3;
  return -1;
}

/* One NVRTC trace file's text, kept until the trace is read or written. */
typedef struct nvrtc_pending {
  char *json;
  size_t len;
  double start, end;
  int64_t tid;
} nvrtc_pending;

static void pending_free(void *payload)
{
  nvrtc_pending *p = payload;
  free(p->json);
  free(p);
}

/* Under the lock: turn one NVRTC trace (JSON text) into events on the compiling thread's track. */
static void parse_nvrtc(gpujit_trace *t, void *payload)
{
  const nvrtc_pending *p = payload;
  cJSON *root = cJSON_ParseWithLength(p->json, p->len), *events, *e;
  size_t dropped = 0, nworkers = 0;
  double workers[16][2]; /* NVRTC tid → track */
  events = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "traceEvents") : root;
  if (!cJSON_IsArray(events)) {
    gpujit__log(GPUJIT_LOG_WARN, "an NVRTC trace is not in the expected format; its phases are skipped");
    cJSON_Delete(root);
    return;
  }
  cJSON_ArrayForEach(e, events) {
    cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
    cJSON *ts = cJSON_GetObjectItemCaseSensitive(e, "ts");
    cJSON *dur = cJSON_GetObjectItemCaseSensitive(e, "dur");
    cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
    cJSON *etid = cJSON_GetObjectItemCaseSensitive(e, "tid");
    int64_t track = p->tid;
    double s, d;
    uint64_t id;
    /* NVRTC's first event may be {}: drop empty and non-complete events. */
    if (!cJSON_IsString(name) || !cJSON_IsNumber(ts) || !cJSON_IsNumber(dur) || !cJSON_IsString(ph) ||
        strcmp(ph->valuestring, "X") != 0) {
      dropped++;
      continue;
    }
    s = p->start + ts->valuedouble;
    d = dur->valuedouble < 0 ? 0 : dur->valuedouble;
    if (s > p->end)
      s = p->end;
    if (s + d > p->end)
      d = p->end - s;
    /* NVRTC's own worker threads (tid != 0 in its file) get tracks of their own, so their
     * events nest there instead of being clipped against the compiling thread's. */
    if (cJSON_IsNumber(etid) && etid->valuedouble != 0) {
      char tname[96];
      size_t k;
      for (k = 0; k < nworkers && workers[k][0] != etid->valuedouble; k++)
        ;
      if (k == nworkers && nworkers < 16) {
        int64_t vt;
        snprintf(tname, sizeof(tname), "NVRTC thread %.0f (of %lld)", etid->valuedouble, (long long)p->tid);
        if (gpujit__trace_named_track(t, tname, &vt) == 0) {
          workers[nworkers][0] = etid->valuedouble;
          workers[nworkers++][1] = (double)vt;
        }
      }
      if (k < nworkers)
        track = (int64_t)workers[k][1];
    }
    if (!(id = gpujit__trace_push_event(t, 'X', "nvrtc", name->valuestring, s, d, track)))
      break;
    {
      cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
      if (cJSON_IsObject(args))
        t->events[id - 1].args = cJSON_Duplicate(args, 1);
    }
  }
  if (dropped)
    gpujit__log(GPUJIT_LOG_DEBUG, "dropped %zu empty NVRTC trace events", dropped);
  cJSON_Delete(root);
}

/*
 * NVRTC's top-level phase durations without parsing the whole file: NVRTC writes each event's
 * keys in order (args, dur, name, ph, pid, tid, ts), so the "dur" nearest before a phase's
 * name belongs to it. Returns false when that layout is not found.
 */
static bool scan_phases(const char *json, size_t len, double phase_ms[4])
{
  static const char *const names[] = {"\"name\":\"CUDA C++ Front-End\"", "\"name\":\"NVVM Module Linker\"",
                                      "\"name\":\"NVVM Optimizer\"", "\"name\":\"NVVM CodeGen\"",
                                      "\"name\":\"Total PTXAS Time\"", "\"name\":\"LibNVVM\""};
  static const int index[] = {0, 1, 1, 2, 3, 4};
  double found[5] = {0, 0, 0, 0, 0};
  for (size_t k = 0; k < 6; k++) {
    const char *p = json, *end = json + len;
    size_t n = strlen(names[k]);
    while ((p = memmem(p, (size_t)(end - p), names[k], n)) != NULL) {
      const char *q = p, *lo = p - json > 64 ? p - 64 : json;
      while (q > lo && strncmp(q, "\"dur\":", 6) != 0)
        q--;
      if (strncmp(q, "\"dur\":", 6) != 0)
        return false;
      found[index[k]] += strtod(q + 6, NULL) / 1e3;
      p += n;
    }
  }
  /* The optimizer is LibNVVM less its codegen: NVRTC does not always write LibNVVM's
   * sub-phases, nor do they cover all of it (seen on the H100 machine). */
  if (found[4] > found[2])
    found[1] = found[4] - found[2];
  for (int i = 0; i < 4; i++)
    phase_ms[i] += found[i];
  return true;
}

int gpujit__nvrtc_trace_take(gpujit__buf *out, const char *base)
{
  char path[4096];
  int err;
  snprintf(path, sizeof(path), "%s.json", base);
  if ((err = gpujit__file_read(out, path)) < 0) {
    gpujit__log(GPUJIT_LOG_DEBUG, "no NVRTC trace at %s", path);
    unlink(base); /* in case a future NVRTC stops appending the suffix */
    return err;
  }
  unlink(path);
  return 0;
}

void gpujit__trace_merge_nvrtc(gpujit_trace *t, const char *base, double start_us, double end_us,
                               double phase_ms[4])
{
  gpujit__buf buf = {0};
  if (gpujit__nvrtc_trace_take(&buf, base) < 0) {
    gpujit__buf_free(&buf);
    gpujit_error_clear();
    return;
  }
  gpujit__trace_merge_nvrtc_text(t, &buf, start_us, end_us, phase_ms);
}

void gpujit__trace_merge_nvrtc_text(gpujit_trace *t, gpujit__buf *text, double start_us, double end_us,
                                    double phase_ms[4])
{
  gpujit__buf buf = *text;
  memset(text, 0, sizeof(*text));
  if (phase_ms && !scan_phases(buf.data, buf.len, phase_ms)) {
    /* An unexpected layout: parse now to find the phases (slower, same result). */
    cJSON *root = cJSON_ParseWithLength(buf.data, buf.len), *e;
    cJSON *events = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "traceEvents") : root;
    double nvvm = 0, sub = 0;
    cJSON_ArrayForEach(e, events) {
      cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name"), *dur = cJSON_GetObjectItemCaseSensitive(e, "dur");
      if (!cJSON_IsString(name) || !cJSON_IsNumber(dur))
        continue;
      if (phase_index(name->valuestring) >= 0)
        phase_ms[phase_index(name->valuestring)] += dur->valuedouble / 1e3;
      if (phase_index(name->valuestring) == 1 || phase_index(name->valuestring) == 2)
        sub += dur->valuedouble;
      if (!strcmp(name->valuestring, "LibNVVM"))
        nvvm += dur->valuedouble;
    }
    (void)sub;
    if (nvvm > 0) /* as in scan_phases: LibNVVM less its codegen */
      phase_ms[1] = nvvm / 1e3 - phase_ms[2] > 0 ? nvvm / 1e3 - phase_ms[2] : phase_ms[1];
    cJSON_Delete(root);
  }
  /* Events are made from the text when the trace is read or written, not on the compile path. */
  if (t) {
    nvrtc_pending *p = malloc(sizeof(*p));
    if (!p) {
      gpujit__log(GPUJIT_LOG_WARN, "out of memory: an NVRTC trace's phases are skipped");
    } else {
      *p = (nvrtc_pending){buf.data, buf.len, start_us, end_us, gpujit__thread_tid()};
      buf.data = NULL;
      gpujit__trace_defer(t, parse_nvrtc, pending_free, p);
    }
  }
  gpujit__buf_free(&buf);
}

typedef struct header_ev {
  const char *path;
  double ts, end;
} header_ev;

static int cmp_ts(const void *a, const void *b)
{
  const header_ev *x = a, *y = b;
  if (x->ts != y->ts)
    return x->ts < y->ts ? -1 : 1;
  return (x->end < y->end) - (x->end > y->end); /* the enclosing one first */
}

int gpujit__nvrtc_trace_headers(const char *json, size_t len, gpujit__nvrtc_header_cb cb, void *payload)
{
  cJSON *root = cJSON_ParseWithLength(json, len), *events, *e;
  header_ev *ev = NULL, **stack = NULL;
  size_t n = 0, cap = 0, depth = 0;
  int err = 0;
  events = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "traceEvents") : root;
  if (!cJSON_IsArray(events)) {
    cJSON_Delete(root);
    return gpujit__error(GPUJIT_EPARSE, "an NVRTC trace is not in the expected format");
  }
  cJSON_ArrayForEach(e, events) {
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
    const cJSON *ts = cJSON_GetObjectItemCaseSensitive(e, "ts"), *dur = cJSON_GetObjectItemCaseSensitive(e, "dur");
    const cJSON *detail = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(e, "args"), "detail");
    header_ev *h;
    if (!cJSON_IsString(name) || strcmp(name->valuestring, "Processing Header File") != 0 || !cJSON_IsNumber(ts) ||
        !cJSON_IsNumber(dur) || !cJSON_IsString(detail))
      continue;
    if (!(h = gpujit__grow(ev, &cap, n, sizeof(*h), 64))) {
      err = GPUJIT_ENOMEM;
      goto done;
    }
    ev = h;
    ev[n++] = (header_ev){detail->valuestring, ts->valuedouble, ts->valuedouble + dur->valuedouble};
  }
  if (n && !(stack = calloc(n, sizeof(*stack)))) {
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
    goto done;
  }
  /* Headers nest in time as they nest in the source: the enclosing span is the includer. */
  if (n)
    qsort(ev, n, sizeof(*ev), cmp_ts);
  for (size_t i = 0; i < n && err == 0; i++) {
    while (depth && stack[depth - 1]->end <= ev[i].ts)
      depth--;
    err = cb(ev[i].path, depth ? stack[depth - 1]->path : NULL, payload);
    stack[depth++] = &ev[i];
  }
done:
  free(stack);
  free(ev);
  cJSON_Delete(root);
  return err;
}
