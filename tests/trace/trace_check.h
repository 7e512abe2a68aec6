/* Checks a Trace Event Format file the way Perfetto's JSON importer reads it. */
#ifndef GPUJIT_TRACE_CHECK_H
#define GPUJIT_TRACE_CHECK_H

#include <cjson/cJSON.h>

#include "helpers.h"

typedef struct tc_event {
  double ts, dur, tid;
  const char *name;
} tc_event;

static int tc_cmp(const void *pa, const void *pb)
{
  const tc_event *a = pa, *b = pb;
  if (a->tid != b->tid)
    return a->tid < b->tid ? -1 : 1;
  if (a->ts != b->ts)
    return a->ts < b->ts ? -1 : 1;
  return a->dur > b->dur ? -1 : (a->dur < b->dur);
}

/* Perfetto's JSON importer reads pid and tid as unsigned 32-bit numbers: a larger one, a negative
 * or a fraction is taken as absent and the event lands on the process's own track. */
static inline void tc_id(const cJSON *id, const char *what, const char *event)
{
  double v = id->valuedouble;
  if (v < 0 || v > 4294967295.0 || v != (double)(long long)v)
    fail_msg("%s %.17g of '%s' is no unsigned 32-bit number: Perfetto would drop it", what, v, event);
}

/*
 * Object form with traceEvents, displayTimeUnit and otherData; every event has name/ph/pid/tid,
 * each an unsigned 32-bit number; complete events have numeric ts/dur >= 0 and nest on each
 * track; B/E events balance on each track; no tid 0 outside the process metadata; every track
 * used has exactly one thread_name, and no two tracks share one; no empty events. Returns the
 * parsed root.
 */
static inline cJSON *tc_check(const char *json, size_t *out_tracks)
{
  cJSON *root = cJSON_Parse(json), *events, *e;
  tc_event *xs;
  size_t n = 0, named = 0, tracks = 0, nopen = 0;
  double named_tids[256], named_pids[256], open_tids[256];
  const char *named_names[256];
  int open_depth[256];
  assert_non_null(root);
  assert_true(cJSON_IsObject(root));
  events = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
  assert_true(cJSON_IsArray(events));
  assert_string_equal(cJSON_GetObjectItemCaseSensitive(root, "displayTimeUnit")->valuestring, "ms");
  assert_true(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(root, "otherData")));
  xs = calloc((size_t)cJSON_GetArraySize(events) + 1, sizeof(*xs));
  cJSON_ArrayForEach(e, events) {
    cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph"), *name = cJSON_GetObjectItemCaseSensitive(e, "name");
    cJSON *tid = cJSON_GetObjectItemCaseSensitive(e, "tid"), *pid = cJSON_GetObjectItemCaseSensitive(e, "pid");
    assert_non_null(e->child); /* no empty events */
    assert_true(cJSON_IsString(ph));
    assert_true(cJSON_IsString(name));
    assert_true(cJSON_IsNumber(pid));
    assert_true(cJSON_IsNumber(tid));
    tc_id(pid, "pid", name->valuestring);
    tc_id(tid, "tid", name->valuestring);
    if (!strcmp(ph->valuestring, "M")) {
      cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
      const char *tn = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(args, "name"));
      assert_non_null(tn);
      if (!strcmp(name->valuestring, "thread_name")) {
        assert_true(tid->valuedouble != 0);
        assert_true(named < 256);
        for (size_t k = 0; k < named; k++) {
          if (named_pids[k] != pid->valuedouble)
            continue;
          if (named_tids[k] == tid->valuedouble)
            fail_msg("track %.0f is named twice ('%s', '%s')", tid->valuedouble, named_names[k], tn);
          if (!strcmp(named_names[k], tn))
            fail_msg("tracks %.0f and %.0f are both named '%s'", named_tids[k], tid->valuedouble, tn);
        }
        named_names[named] = tn;
        named_pids[named] = pid->valuedouble;
        named_tids[named++] = tid->valuedouble;
      }
      continue;
    }
    assert_true(tid->valuedouble != 0);
    if (!strcmp(ph->valuestring, "B") || !strcmp(ph->valuestring, "E")) {
      size_t k = 0;
      while (k < nopen && open_tids[k] != tid->valuedouble)
        k++;
      if (k == nopen) {
        assert_true(nopen < 256);
        open_tids[nopen] = tid->valuedouble;
        open_depth[nopen++] = 0;
      }
      open_depth[k] += ph->valuestring[0] == 'B' ? 1 : -1;
      if (open_depth[k] < 0)
        fail_msg("'%s' ends a span never begun on track %.0f", name->valuestring, tid->valuedouble);
    }
    assert_true(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(e, "ts")));
    if (!strcmp(ph->valuestring, "X")) {
      cJSON *dur = cJSON_GetObjectItemCaseSensitive(e, "dur");
      assert_true(cJSON_IsNumber(dur));
      assert_true(dur->valuedouble >= 0);
      xs[n].ts = cJSON_GetObjectItemCaseSensitive(e, "ts")->valuedouble;
      xs[n].dur = dur->valuedouble;
      xs[n].tid = tid->valuedouble;
      xs[n].name = name->valuestring;
      n++;
    }
  }
  for (size_t k = 0; k < nopen; k++)
    if (open_depth[k] != 0)
      fail_msg("track %.0f leaves %d span(s) open", open_tids[k], open_depth[k]);
  qsort(xs, n, sizeof(*xs), tc_cmp);
  {
    tc_event *stack[512];
    size_t depth = 0;
    for (size_t i = 0; i < n; i++) {
      bool found = false;
      if (i == 0 || xs[i].tid != xs[i - 1].tid) {
        depth = 0;
        tracks++;
        for (size_t k = 0; k < named; k++)
          found |= named_tids[k] == xs[i].tid;
        if (!found)
          fail_msg("track %.0f has no thread_name", xs[i].tid);
      }
      while (depth && stack[depth - 1]->ts + stack[depth - 1]->dur <= xs[i].ts)
        depth--;
      if (depth && xs[i].ts + xs[i].dur > stack[depth - 1]->ts + stack[depth - 1]->dur + 1e-3)
        fail_msg("'%s' [%f +%f] partially overlaps '%s' [%f +%f]", xs[i].name, xs[i].ts, xs[i].dur,
                 stack[depth - 1]->name, stack[depth - 1]->ts, stack[depth - 1]->dur);
      assert_true(depth < 512);
      stack[depth++] = &xs[i];
    }
  }
  free(xs);
  if (out_tracks)
    *out_tracks = tracks;
  return root;
}

/** The first complete event whose name starts with `prefix`, or NULL. */
static inline cJSON *tc_find(cJSON *root, const char *prefix)
{
  cJSON *e;
  cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(root, "traceEvents")) {
    cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
    if (cJSON_IsString(name) && strncmp(name->valuestring, prefix, strlen(prefix)) == 0)
      return e;
  }
  return NULL;
}

static inline double tc_num(cJSON *e, const char *key)
{
  return cJSON_GetObjectItemCaseSensitive(e, key)->valuedouble;
}

#endif
