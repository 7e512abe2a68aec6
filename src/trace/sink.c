/* The trace sink: thread-safe span/instant/counter recording and Trace Event Format output. */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/fs.h"
#include "base/output.h"
#include "trace/sink.h"

static _Thread_local int64_t own_tid; /* this thread's, once asked */

int64_t gpujit__thread_tid(void)
{
  if (!own_tid)
    own_tid = (int64_t)syscall(SYS_gettid);
  return own_tid;
}

/* Safe at fork: every trace's lock is taken across fork() (each is held only while events are
 * added or written out), so a child forked by another thread while one was held neither waits on
 * it for ever nor sees its events half added; let go on both sides. The child's one thread is a
 * new thread id. */
static pthread_mutex_t traces_lock = PTHREAD_MUTEX_INITIALIZER;
static gpujit_trace *traces; /* the live traces, linked through fork_next */

static void fork_prepare(void)
{
  pthread_mutex_lock(&traces_lock);
  for (gpujit_trace *t = traces; t; t = t->fork_next)
    pthread_mutex_lock(&t->lock);
}

static void fork_parent(void)
{
  for (gpujit_trace *t = traces; t; t = t->fork_next)
    pthread_mutex_unlock(&t->lock);
  pthread_mutex_unlock(&traces_lock);
}

static void fork_child(void)
{
  fork_parent();
  own_tid = 0;
}

__attribute__((constructor)) static void fork_safe(void) { pthread_atfork(fork_prepare, fork_parent, fork_child); }

double gpujit_trace_now_us(void) { return gpujit__now_us(); }

int gpujit_trace_options_init(gpujit_trace_options *opts, unsigned int version)
{
  static const gpujit_trace_options init = GPUJIT_TRACE_OPTIONS_INIT;
  if (!opts)
    return gpujit__error(GPUJIT_EINVAL, "options: NULL");
  if (version != GPUJIT_TRACE_OPTIONS_VERSION)
    return gpujit__error(GPUJIT_EVERSION, "trace options version %u is not supported", version);
  *opts = init;
  return 0;
}

int gpujit_trace_create(gpujit_trace **out, const gpujit_trace_options *opts)
{
  gpujit_trace_options defaults = GPUJIT_TRACE_OPTIONS_INIT;
  gpujit_trace *t;
  const char *tmp;

  if (!out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_trace_create: NULL out");
  *out = NULL;
  if (!opts)
    opts = &defaults;
  if (opts->version != GPUJIT_TRACE_OPTIONS_VERSION)
    return gpujit__error(GPUJIT_EVERSION, "trace options version %u is not supported", opts->version);
  tmp = opts->tmp_dir ? opts->tmp_dir : getenv("TMPDIR");
  if (!tmp || !*tmp)
    tmp = "/tmp";
  /* NVRTC aborts the whole process when its trace directory is missing: check it here. */
  if (!gpujit__is_dir(tmp))
    return gpujit__error(GPUJIT_EINVAL, "trace temp directory '%s' does not exist", tmp);
  if (!(t = calloc(1, sizeof(*t))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  pthread_mutex_init(&t->lock, NULL);
  t->pid = (int64_t)getpid();
  t->next_virtual_tid = GPUJIT__TRACE_VIRTUAL_TID;
  t->nvrtc_phases = opts->nvrtc_phases;
  t->process_name = gpujit__strdup(opts->process_name ? opts->process_name : "gpujit");
  t->tmp_dir = gpujit__strdup(tmp);
  t->meta = cJSON_CreateObject();
  if (!t->process_name || !t->tmp_dir || !t->meta) {
    gpujit_trace_free(t);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  cJSON_AddStringToObject(t->meta, "producer", "gpujit " GPUJIT_VERSION_STRING);
  pthread_mutex_lock(&traces_lock);
  if ((t->fork_next = traces) != NULL)
    traces->fork_prev = t;
  traces = t;
  t->fork_listed = true;
  pthread_mutex_unlock(&traces_lock);
  *out = t;
  return 0;
}

static void event_free(trace_event *e)
{
  free(e->name);
  free(e->cat);
  cJSON_Delete(e->args);
}

void gpujit_trace_free(gpujit_trace *t)
{
  if (!t)
    return;
  if (t->fork_listed) {
    pthread_mutex_lock(&traces_lock);
    if (t->fork_prev)
      t->fork_prev->fork_next = t->fork_next;
    else
      traces = t->fork_next;
    if (t->fork_next)
      t->fork_next->fork_prev = t->fork_prev;
    pthread_mutex_unlock(&traces_lock);
  }
  for (size_t i = 0; i < t->count; i++)
    event_free(&t->events[i]);
  for (size_t i = 0; i < t->tracks_count; i++)
    free(t->tracks[i].name);
  for (size_t i = 0; i < t->npending; i++)
    t->pending[i].release(t->pending[i].payload);
  free(t->pending);
  free(t->events);
  free(t->tracks);
  free(t->process_name);
  free(t->tmp_dir);
  cJSON_Delete(t->meta);
  pthread_mutex_destroy(&t->lock);
  free(t);
}

/* Under the lock: make sure `tid` has a named track. */
void gpujit__trace_defer(gpujit_trace *t, gpujit__trace_expand_fn expand, void (*release)(void *),
                         void *payload)
{
  bool kept = false;
  pthread_mutex_lock(&t->lock);
  trace_pending *p = gpujit__grow(t->pending, &t->cappending, t->npending, sizeof(*p), 8);
  if (p) {
    t->pending = p;
    t->pending[t->npending++] = (trace_pending){expand, release, payload};
    kept = true;
  }
  pthread_mutex_unlock(&t->lock);
  if (!kept)
    release(payload);
}

/* Under the lock: expand everything deferred since the last flush, in order. */
static void flush_pending(gpujit_trace *t)
{
  for (size_t i = 0; i < t->npending; i++) {
    t->pending[i].expand(t, t->pending[i].payload);
    t->pending[i].release(t->pending[i].payload);
  }
  t->npending = 0;
}

int gpujit__trace_ensure_track(gpujit_trace *t, int64_t tid, const char *name)
{
  char auto_name[64];
  for (size_t i = 0; i < t->tracks_count; i++)
    if (t->tracks[i].tid == tid) {
      if (name) {
        char *copy = gpujit__strdup(name);
        if (!copy)
          return GPUJIT_ENOMEM;
        free(t->tracks[i].name);
        t->tracks[i].name = copy;
      }
      return 0;
    }
  {
    trace_track *p = gpujit__grow(t->tracks, &t->tracks_cap, t->tracks_count, sizeof(*p), 8);
    if (!p)
      return GPUJIT_ENOMEM;
    t->tracks = p;
  }
  if (!name) {
    if (tid == t->pid)
      snprintf(auto_name, sizeof(auto_name), "main");
    else
      snprintf(auto_name, sizeof(auto_name), "worker %zu", ++t->workers);
    name = auto_name;
  }
  if (!(t->tracks[t->tracks_count].name = gpujit__strdup(name)))
    return GPUJIT_ENOMEM;
  t->tracks[t->tracks_count++].tid = tid;
  return 0;
}

int gpujit__trace_named_track(gpujit_trace *t, const char *name, int64_t *out_tid)
{
  for (size_t i = 0; i < t->tracks_count; i++)
    if (t->tracks[i].tid >= GPUJIT__TRACE_VIRTUAL_TID && strcmp(t->tracks[i].name, name) == 0) {
      *out_tid = t->tracks[i].tid;
      return 0;
    }
  *out_tid = t->next_virtual_tid++;
  return gpujit__trace_ensure_track(t, *out_tid, name);
}

/* Under the lock: append an event; returns its 1-based id or 0 on failure. */
uint64_t gpujit__trace_push_event(gpujit_trace *t, char ph, const char *cat, const char *name, double ts,
                           double dur, int64_t tid)
{
  trace_event *e = gpujit__grow(t->events, &t->cap, t->count, sizeof(*e), 256);
  if (!e)
    return 0;
  t->events = e;
  if (ph && gpujit__trace_ensure_track(t, tid, NULL) < 0)
    return 0;
  e = &t->events[t->count];
  memset(e, 0, sizeof(*e));
  e->ph = ph;
  e->ts = ts;
  e->dur = dur;
  e->tid = tid;
  e->name = gpujit__strdup(name ? name : "");
  e->cat = gpujit__strdup(cat ? cat : "gpujit");
  if (!e->name || !e->cat) {
    event_free(e);
    return 0;
  }
  return ++t->count;
}

int gpujit_trace_span_begin(gpujit_trace *t, uint64_t *out_id, const char *category, const char *name)
{
  uint64_t id;
  double now;
  if (out_id)
    *out_id = 0;
  if (!t)
    return 0;
  if (!name)
    return gpujit__error(GPUJIT_EINVAL, "trace span: NULL name");
  now = gpujit__now_us();
  pthread_mutex_lock(&t->lock);
  id = gpujit__trace_push_event(t, 'X', category, name, now, 0, gpujit__thread_tid());
  if (id)
    t->events[id - 1].open = true;
  pthread_mutex_unlock(&t->lock);
  if (!id)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  if (out_id)
    *out_id = id;
  return 0;
}

int gpujit_trace_span_end(gpujit_trace *t, uint64_t id)
{
  double now = gpujit__now_us();
  int err = 0;
  if (!t || !id)
    return 0;
  pthread_mutex_lock(&t->lock);
  if (id > t->count || !t->events[id - 1].open) {
    err = gpujit__error(GPUJIT_EINVAL, "trace span %llu is not open", (unsigned long long)id);
  } else {
    t->events[id - 1].dur = now - t->events[id - 1].ts;
    t->events[id - 1].open = false;
  }
  pthread_mutex_unlock(&t->lock);
  return err;
}

static int span_arg(gpujit_trace *t, uint64_t id, const char *key, cJSON *value)
{
  int err = 0;
  if (!t || !id) {
    cJSON_Delete(value);
    return 0;
  }
  if (!value || !key) {
    cJSON_Delete(value);
    return gpujit__error(key ? GPUJIT_ENOMEM : GPUJIT_EINVAL, "trace argument: %s",
                         key ? "out of memory" : "NULL key");
  }
  pthread_mutex_lock(&t->lock);
  if (id > t->count || !t->events[id - 1].ph) {
    cJSON_Delete(value);
    err = gpujit__error(GPUJIT_EINVAL, "trace event %llu does not exist", (unsigned long long)id);
  } else {
    trace_event *e = &t->events[id - 1];
    if (!e->args)
      e->args = cJSON_CreateObject();
    if (!e->args) {
      cJSON_Delete(value);
      err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
    } else if (cJSON_GetObjectItemCaseSensitive(e->args, key)) {
      cJSON_ReplaceItemInObjectCaseSensitive(e->args, key, value);
    } else {
      cJSON_AddItemToObject(e->args, key, value);
    }
  }
  pthread_mutex_unlock(&t->lock);
  return err;
}

int gpujit_trace_span_arg_str(gpujit_trace *t, uint64_t id, const char *key, const char *value)
{
  return t ? span_arg(t, id, key, cJSON_CreateString(value ? value : "")) : 0;
}

int gpujit_trace_span_arg_num(gpujit_trace *t, uint64_t id, const char *key, double value)
{
  return t ? span_arg(t, id, key, cJSON_CreateNumber(value)) : 0;
}

int gpujit_trace_track(gpujit_trace *t, int64_t *out_tid, const char *name)
{
  int err;
  if (!t || !out_tid || !name)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_trace_track: NULL argument");
  pthread_mutex_lock(&t->lock);
  *out_tid = t->next_virtual_tid++;
  err = gpujit__trace_ensure_track(t, *out_tid, name);
  pthread_mutex_unlock(&t->lock);
  return err < 0 ? gpujit__error(err, "out of memory") : 0;
}

int gpujit_trace_complete(gpujit_trace *t, uint64_t *out_id, int64_t tid, const char *category,
                          const char *name, double ts_us, double dur_us)
{
  uint64_t id;
  if (out_id)
    *out_id = 0;
  if (!t)
    return 0;
  if (!name || dur_us < 0)
    return gpujit__error(GPUJIT_EINVAL, "trace event: %s", name ? "negative duration" : "NULL name");
  if (tid < 0 || tid > GPUJIT__TRACE_MAX_ID)
    return gpujit__error(GPUJIT_EINVAL, "trace event %s: track id %lld does not fit in 32 bits", name, (long long)tid);
  pthread_mutex_lock(&t->lock);
  id = gpujit__trace_push_event(t, 'X', category, name, ts_us, dur_us, tid ? tid : gpujit__thread_tid());
  pthread_mutex_unlock(&t->lock);
  if (!id)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  if (out_id)
    *out_id = id;
  return 0;
}

int gpujit_trace_instant(gpujit_trace *t, const char *category, const char *name)
{
  uint64_t id;
  if (!t)
    return 0;
  pthread_mutex_lock(&t->lock);
  id = gpujit__trace_push_event(t, 'i', category, name, gpujit__now_us(), 0, gpujit__thread_tid());
  pthread_mutex_unlock(&t->lock);
  return id ? 0 : gpujit__error(GPUJIT_ENOMEM, "out of memory");
}

int gpujit_trace_counter(gpujit_trace *t, const char *name, const char *series, double value)
{
  uint64_t id;
  if (!t)
    return 0;
  if (!name || !series)
    return gpujit__error(GPUJIT_EINVAL, "trace counter: NULL name");
  pthread_mutex_lock(&t->lock);
  id = gpujit__trace_push_event(t, 'C', "counter", name, gpujit__now_us(), 0, gpujit__thread_tid());
  pthread_mutex_unlock(&t->lock);
  if (!id)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  return span_arg(t, id, series, cJSON_CreateNumber(value));
}

int gpujit_trace_thread_name(gpujit_trace *t, const char *name)
{
  int err;
  if (!t)
    return 0;
  if (!name)
    return gpujit__error(GPUJIT_EINVAL, "thread name: NULL");
  pthread_mutex_lock(&t->lock);
  err = gpujit__trace_ensure_track(t, gpujit__thread_tid(), name);
  pthread_mutex_unlock(&t->lock);
  return err < 0 ? gpujit__error(err, "out of memory") : 0;
}

int gpujit_trace_set_meta(gpujit_trace *t, const char *key, const char *value)
{
  cJSON *v;
  if (!t)
    return 0;
  if (!key || !value)
    return gpujit__error(GPUJIT_EINVAL, "trace metadata: NULL key or value");
  if (!(v = cJSON_CreateString(value)))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  pthread_mutex_lock(&t->lock);
  if (cJSON_GetObjectItemCaseSensitive(t->meta, key))
    cJSON_ReplaceItemInObjectCaseSensitive(t->meta, key, v);
  else
    cJSON_AddItemToObject(t->meta, key, v);
  pthread_mutex_unlock(&t->lock);
  return 0;
}

size_t gpujit_trace_event_count(gpujit_trace *t)
{
  size_t n;
  if (!t)
    return 0;
  pthread_mutex_lock(&t->lock);
  flush_pending(t);
  n = t->count;
  pthread_mutex_unlock(&t->lock);
  return n;
}

/* ---- output ------------------------------------------------------------------------------- */

static int cmp_events(const void *a, const void *b)
{
  const trace_event *x = *(trace_event *const *)a, *y = *(trace_event *const *)b;
  if (x->tid != y->tid)
    return x->tid < y->tid ? -1 : 1;
  if (x->ts != y->ts)
    return x->ts < y->ts ? -1 : 1;
  if (x->dur != y->dur)
    return x->dur > y->dur ? -1 : 1; /* the enclosing span first */
  return x < y ? -1 : (x > y);
}

/*
 * Complete events on one track must nest. Spans opened and closed in order nest by
 * construction; events merged from elsewhere (NVRTC) are clipped to their parent's end.
 */
static void fix_nesting(trace_event **sorted, size_t n)
{
  trace_event *stack[256];
  size_t depth = 0;
  int64_t tid = 0;
  for (size_t i = 0; i < n; i++) {
    trace_event *e = sorted[i];
    if (e->ph != 'X')
      continue;
    if (depth && e->tid != tid)
      depth = 0;
    tid = e->tid;
    while (depth && stack[depth - 1]->ts + stack[depth - 1]->dur <= e->ts)
      depth--;
    if (depth) {
      double end = stack[depth - 1]->ts + stack[depth - 1]->dur;
      if (e->ts + e->dur > end)
        e->dur = end - e->ts;
    }
    if (depth < sizeof(stack) / sizeof(stack[0]))
      stack[depth++] = e;
  }
}

static cJSON *meta_event(const char *what, int64_t pid, int64_t tid, const char *name)
{
  cJSON *m = cJSON_CreateObject(), *args = cJSON_CreateObject();
  cJSON_AddStringToObject(m, "name", what);
  cJSON_AddStringToObject(m, "ph", "M");
  cJSON_AddNumberToObject(m, "pid", (double)pid);
  cJSON_AddNumberToObject(m, "tid", (double)tid);
  cJSON_AddStringToObject(args, "name", name);
  cJSON_AddItemToObject(m, "args", args);
  return m;
}

int gpujit_trace_to_json(char **out, size_t *out_len, gpujit_trace *t)
{
  cJSON *root = NULL, *arr;
  trace_event **sorted = NULL;
  double now = gpujit__now_us();
  char *text;
  int err = 0;

  if (!out || !t)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_trace_to_json: NULL argument");
  *out = NULL;
  pthread_mutex_lock(&t->lock);
  flush_pending(t);
  if (t->count && !(sorted = malloc(t->count * sizeof(*sorted)))) {
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < t->count; i++) {
    sorted[i] = &t->events[i];
    if (sorted[i]->open) /* never ended: close at write time so the file stays valid */
      sorted[i]->dur = now - sorted[i]->ts;
  }
  if (t->count) /* qsort takes no NULL base, even for nothing */
    qsort(sorted, t->count, sizeof(*sorted), cmp_events);
  fix_nesting(sorted, t->count);

  root = cJSON_CreateObject();
  arr = cJSON_AddArrayToObject(root, "traceEvents");
  cJSON_AddItemToArray(arr, meta_event("process_name", t->pid, 0, t->process_name));
  for (size_t i = 0; i < t->tracks_count; i++)
    cJSON_AddItemToArray(arr, meta_event("thread_name", t->pid, t->tracks[i].tid, t->tracks[i].name));
  for (size_t i = 0; i < t->count; i++) {
    trace_event *e = sorted[i];
    cJSON *j;
    char ph[2] = {e->ph, 0};
    if (!e->ph) {
      cJSON_AddItemToArray(arr, cJSON_Duplicate(e->args, 1));
      continue;
    }
    j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "name", e->name);
    cJSON_AddStringToObject(j, "cat", e->cat);
    cJSON_AddStringToObject(j, "ph", ph);
    /* Three decimals: nanosecond resolution in µs; keeps nesting exact after rounding. */
    {
      char num[48];
      snprintf(num, sizeof(num), "%.3f", e->ts);
      cJSON_AddRawToObject(j, "ts", num);
      if (e->ph == 'X') {
        snprintf(num, sizeof(num), "%.3f", e->dur);
        cJSON_AddRawToObject(j, "dur", num);
      }
    }
    if (e->ph == 'i')
      cJSON_AddStringToObject(j, "s", "t");
    cJSON_AddNumberToObject(j, "pid", (double)t->pid);
    cJSON_AddNumberToObject(j, "tid", (double)e->tid);
    if (e->args)
      cJSON_AddItemToObject(j, "args", cJSON_Duplicate(e->args, 1));
    cJSON_AddItemToArray(arr, j);
  }
  cJSON_AddStringToObject(root, "displayTimeUnit", "ms");
  cJSON_AddItemToObject(root, "otherData", cJSON_Duplicate(t->meta, 1));
done:
  pthread_mutex_unlock(&t->lock);
  free(sorted);
  if (err < 0)
    return err;
  text = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  if (!text)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  *out = text;
  if (out_len)
    *out_len = strlen(text);
  return 0;
}

int gpujit_trace_write(gpujit_trace *t, const char *path)
{
  char *json;
  size_t len;
  int err;
  if (!path)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_trace_write: NULL path");
  if ((err = gpujit_trace_to_json(&json, &len, t)) < 0)
    return err;
  err = gpujit__output_write(path, json, len);
  free(json);
  return err;
}
