/* Traces read back into a trace: a file appended to (gpujit_trace_load) and a project worker's
 * trace merged onto its track. Every id they bring is made to fit in 32 bits on the way in. */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/fs.h"
#include "trace/sink.h"

/* Set, not replace: an event without "pid" or "tid" gets them. */
static int set_ids(cJSON *e, int64_t pid, int64_t tid)
{
  if (!e)
    return GPUJIT_ENOMEM;
  cJSON_DeleteItemFromObjectCaseSensitive(e, "pid");
  cJSON_DeleteItemFromObjectCaseSensitive(e, "tid");
  return cJSON_AddNumberToObject(e, "pid", (double)pid) && cJSON_AddNumberToObject(e, "tid", (double)tid)
             ? 0
             : GPUJIT_ENOMEM;
}

static bool fits(const cJSON *id)
{
  return !id || (cJSON_IsNumber(id) && id->valuedouble >= 0 && id->valuedouble <= (double)GPUJIT__TRACE_MAX_ID &&
                 id->valuedouble == floor(id->valuedouble));
}

/* Loaded ids moved to tracks of this trace. */
typedef struct id_map {
  double *from;
  int64_t *to;
  size_t n, cap, cap_to;
} id_map;

/* Under the lock: an event of a loaded trace whose pid or tid Perfetto could not read (over 32
 * bits; an earlier gpujit wrote tracks from 2^40) moves to a virtual track of this process
 * (`*to`); its thread_name names that track instead (`*to` < 0: drop the event). */
static int fit_ids(gpujit_trace *t, id_map *map, const cJSON *e, int64_t *to)
{
  const cJSON *pid = cJSON_GetObjectItemCaseSensitive(e, "pid"), *tid = cJSON_GetObjectItemCaseSensitive(e, "tid");
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
  double old = cJSON_IsNumber(tid) ? tid->valuedouble : 0;
  size_t k;
  int err;
  *to = 0;
  if (cJSON_IsString(name) && cJSON_IsNumber(pid) && pid->valuedouble == (double)t->pid && fits(tid)) {
    /* this process's own names: they are its tracks' (written once, with its own) */
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
    const char *tn = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(args, "name"));
    if (!strcmp(name->valuestring, "process_name") || (!strcmp(name->valuestring, "thread_name") && !tn))
      *to = -1;
    else if (!strcmp(name->valuestring, "thread_name")) {
      if ((err = gpujit__trace_ensure_track(t, (int64_t)tid->valuedouble, tn)) < 0)
        return gpujit__error(err, "out of memory");
      *to = -1;
    }
    if (*to < 0)
      return 0;
  }
  if (fits(pid) && fits(tid))
    return 0;
  for (k = 0; k < map->n && map->from[k] != old; k++)
    ;
  if (k == map->n) {
    char track[64];
    double *f = gpujit__grow(map->from, &map->cap, map->n, sizeof(*f), 8);
    int64_t *g = f ? gpujit__grow(map->to, &map->cap_to, map->n, sizeof(*g), 8) : NULL;
    if (f)
      map->from = f;
    if (!g)
      return gpujit__error(GPUJIT_ENOMEM, "out of memory");
    map->to = g;
    t->next_virtual_tid++;
    snprintf(track, sizeof(track), "loaded track %.0f", old);
    map->from[k] = old;
    map->to[k] = t->next_virtual_tid - 1;
    map->n++;
    if ((err = gpujit__trace_ensure_track(t, map->to[k], track)) < 0)
      return gpujit__error(err, "out of memory");
  }
  *to = map->to[k];
  if (cJSON_IsString(name) && !strcmp(name->valuestring, "thread_name")) {
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(e, "args");
    const char *tn = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(args, "name"));
    if (tn && (err = gpujit__trace_ensure_track(t, *to, tn)) < 0)
      return gpujit__error(err, "out of memory");
    *to = -1;
  }
  return 0;
}

int gpujit_trace_load(gpujit_trace *t, const char *path)
{
  gpujit__buf buf = {0};
  id_map map = {0};
  cJSON *root = NULL, *events, *e;
  int err;
  if (!t || !path)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_trace_load: NULL argument");
  if ((err = gpujit__file_read(&buf, path)) < 0)
    return err;
  root = cJSON_ParseWithLength(buf.data, buf.len);
  if (!root) {
    err = gpujit__error(GPUJIT_EPARSE, "%s: not valid JSON", path);
    goto done;
  }
  events = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "traceEvents") : root;
  if (!cJSON_IsArray(events)) {
    err = gpujit__error(GPUJIT_EPARSE, "%s: no traceEvents array", path);
    goto done;
  }
  pthread_mutex_lock(&t->lock);
  cJSON_ArrayForEach(e, events) {
    uint64_t id;
    int64_t to = 0;
    if (!cJSON_IsObject(e) || !e->child)
      continue;
    if ((err = fit_ids(t, &map, e, &to)) < 0)
      break;
    if (to < 0) /* a thread_name now carried by the track it was moved to */
      continue;
    if (!(id = gpujit__trace_push_event(t, 0, NULL, NULL, 0, 0, 0))) {
      err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
      break;
    }
    t->events[id - 1].args = cJSON_Duplicate(e, 1);
    if (to > 0 && set_ids(t->events[id - 1].args, t->pid, to) < 0) {
      err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
      break;
    }
  }
  pthread_mutex_unlock(&t->lock);
done:
  free(map.from);
  free(map.to);
  cJSON_Delete(root);
  gpujit__buf_free(&buf);
  return err;
}

int gpujit__trace_merge_process(gpujit_trace *t, const char *json, size_t len, int64_t pid, int64_t track,
                                const char *thread_prefix)
{
  cJSON *root = cJSON_ParseWithLength(json, len), *events, *e;
  int err = 0;
  if (!root)
    return gpujit__error(GPUJIT_EPARSE, "a worker's trace is not valid JSON");
  events = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
  pthread_mutex_lock(&t->lock);
  cJSON_ArrayForEach(e, events) {
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph"), *tid = cJSON_GetObjectItemCaseSensitive(e, "tid");
    int64_t to = track;
    uint64_t id;
    if (!cJSON_IsString(ph) || !strcmp(ph->valuestring, "M"))
      continue; /* names come from this trace's tracks */
    /* thread ids are whole numbers far below 2^53; anything else is not a worker's thread */
    if (cJSON_IsNumber(tid) && fabs(tid->valuedouble) < 9007199254740992.0 &&
        (int64_t)tid->valuedouble != pid) { /* another thread of the worker */
      char name[160];
      snprintf(name, sizeof(name), "%s thread %lld", thread_prefix, (long long)tid->valuedouble);
      if (gpujit__trace_named_track(t, name, &to) < 0) {
        err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
        break;
      }
    }
    if (!(id = gpujit__trace_push_event(t, 0, NULL, NULL, 0, 0, 0))) {
      err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
      break;
    }
    t->events[id - 1].args = cJSON_Duplicate(e, 1);
    if (set_ids(t->events[id - 1].args, t->pid, to) < 0) {
      err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
      break;
    }
  }
  pthread_mutex_unlock(&t->lock);
  cJSON_Delete(root);
  return err;
}

