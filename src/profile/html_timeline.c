/* The timeline of the HTML page: what the trace (trace.c) draws — compiles, their stages, loads
 * and NVTX ranges per host thread, kernels, copies and memsets per device and stream — as
 * compact rows the page's script draws, names kept once, and a track of more events than a
 * page can draw merged into blocks. */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "base/buf.h"
#include "base/demangle.h"
#include "base/error.h"
#include "profile/html_timeline.h"

enum { C_COMPILE, C_NESTED, C_STAGE, C_LOAD, C_KERNEL, C_COPY, C_MEMSET, C_NVTX };

typedef struct track {
  bool gpu;
  int pid;       /* host: the process; gpu: the device */
  uint32_t tid;  /* host: the thread; gpu: the stream */
  uint64_t first; /* host: when its process started */
} track;

typedef struct event {
  uint32_t track, count; /* count: events merged into it (1: itself) */
  uint64_t s, e;
  int32_t name, detail;
  uint8_t cat;
} event;

typedef struct names {
  char **v; /* a name to demangle starts with '\1' */
  size_t n, cap;
  int32_t *slot; /* open addressing: index + 1, 0 empty */
  size_t nslots;
} names;

typedef struct timeline {
  const gpujit_profile *p;
  track *tracks;
  size_t ntracks, tcap;
  event *ev;
  size_t nev, ecap;
  names nm;
  bool oom;
  size_t last; /* the track found last: kernels come in runs of one stream */
} timeline;

static int32_t intern(timeline *t, const char *s)
{
  names *n = &t->nm;
  uint64_t h;
  if (t->oom)
    return -1;
  if (2 * (n->n + 1) > n->nslots) { /* grow and rehash */
    size_t ns = n->nslots ? 2 * n->nslots : 1024;
    int32_t *slot = calloc(ns, sizeof(*slot));
    if (!slot)
      return t->oom = true, -1;
    for (size_t i = 0; i < n->n; i++) {
      size_t k = XXH3_64bits(n->v[i], strlen(n->v[i])) & (ns - 1);
      while (slot[k])
        k = (k + 1) & (ns - 1);
      slot[k] = (int32_t)i + 1;
    }
    free(n->slot);
    n->slot = slot, n->nslots = ns;
  }
  h = XXH3_64bits(s, strlen(s));
  for (size_t k = h & (n->nslots - 1);; k = (k + 1) & (n->nslots - 1)) {
    if (!n->slot[k]) {
      char *copy = gpujit__strdup(s);
      char **g = n->n == n->cap ? realloc(n->v, (n->cap = n->cap ? 2 * n->cap : 256) * sizeof(*g)) : n->v;
      if (!copy || !g) {
        free(copy);
        if (g)
          n->v = g;
        return t->oom = true, -1;
      }
      n->v = g;
      n->v[n->n] = copy;
      n->slot[k] = (int32_t)(++n->n);
      return (int32_t)n->n - 1;
    }
    if (!strcmp(n->v[n->slot[k] - 1], s))
      return n->slot[k] - 1;
  }
}

static uint32_t track_of(timeline *t, bool gpu, int pid, uint32_t tid)
{
  track *g;
  if (t->last < t->ntracks && t->tracks[t->last].gpu == gpu && t->tracks[t->last].pid == pid &&
      t->tracks[t->last].tid == tid)
    return (uint32_t)t->last;
  for (size_t i = 0; i < t->ntracks; i++)
    if (t->tracks[i].gpu == gpu && t->tracks[i].pid == pid && t->tracks[i].tid == tid)
      return (uint32_t)(t->last = i);
  if (t->ntracks == t->tcap) {
    if (!(g = realloc(t->tracks, (t->tcap = t->tcap ? 2 * t->tcap : 16) * sizeof(*g))))
      return t->oom = true, 0;
    t->tracks = g;
  }
  t->tracks[t->ntracks] = (track){gpu, pid, tid, UINT64_MAX};
  if (!gpu)
    for (size_t i = 0; i < t->p->procs.n; i++)
      if (t->p->procs.v[i].pid == pid && t->p->procs.v[i].t0 < t->tracks[t->ntracks].first)
        t->tracks[t->ntracks].first = t->p->procs.v[i].t0;
  return (uint32_t)(t->last = t->ntracks++);
}

static void add(timeline *t, uint32_t tr, uint64_t s, uint64_t e, int32_t name, int32_t detail, int cat)
{
  event *g;
  if (t->oom || !s)
    return;
  if (t->nev == t->ecap) {
    if (!(g = realloc(t->ev, (t->ecap = t->ecap ? 2 * t->ecap : 1024) * sizeof(*g)))) {
      t->oom = true;
      return;
    }
    t->ev = g;
  }
  t->ev[t->nev++] = (event){tr, 1, s, e > s ? e : s, name, detail, (uint8_t)cat};
}

static int32_t internf(timeline *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int32_t internf(timeline *t, const char *fmt, ...)
{
  char text[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  return intern(t, text);
}

static void compiles(timeline *t)
{
  const gpujit_profile *p = t->p;
  for (size_t i = 0; i < p->compiles.n; i++) {
    const pf_compile *c = &p->compiles.v[i];
    const char *name = c->name ? c->name : "";
    bool prefixed = !strncmp(name, c->kind, strlen(c->kind));
    uint32_t tr = track_of(t, false, c->pid, c->tid);
    int32_t n = internf(t, "%s%s%s", prefixed ? "" : c->kind, prefixed ? "" : " ", name);
    int32_t d = internf(t, "%s%s%s%s%s%s", c->parent >= 0 ? "inside " : "",
                        c->parent >= 0 ? p->compiles.v[c->parent].name : "", c->parent >= 0 ? "; " : "",
                        c->module >= 0 ? "its module: " : "not loaded", c->module >= 0 ? p->rows[c->module].name : "",
                        c->result ? "; FAILED" : c->unit && !strcmp(c->cache, "hit") ? "; a cache hit" : "");
    add(t, tr, c->t0, c->t1, n, d, c->parent >= 0 ? C_NESTED : C_COMPILE);
    for (int k = 0; k < c->nstages; k++)
      if (c->stages[k].known)
        add(t, tr, c->stages[k].t0, c->stages[k].t1, intern(t, c->stages[k].name), internf(t, "a stage of %s", name),
            C_STAGE);
  }
}

static void loads_and_ranges(timeline *t)
{
  const gpujit_profile *p = t->p;
  for (size_t i = 0; i < p->loads.n; i++) {
    const pf_load *l = &p->loads.v[i];
    add(t, track_of(t, false, l->pid, l->tid), l->t0, l->t1,
        internf(t, "load %s", l->module >= 0 ? p->rows[l->module].name : l->api),
        internf(t, "%s%s%s%s", l->api, l->image[0] ? ", " : "", l->image, l->result ? ", FAILED" : ""), C_LOAD);
  }
  for (size_t i = 0; i < p->nvtx.n; i++) {
    const pf_nvtx *r = &p->nvtx.v[i];
    add(t, track_of(t, false, r->pid, r->thread ? r->thread : (uint32_t)r->pid), r->s, r->e, intern(t, r->name), -1,
        C_NVTX);
  }
}

typedef struct handle_row {
  int pid;
  uint64_t handle;
  int row;
  size_t order;
} handle_row;

static int by_handle(const void *a, const void *b)
{
  const handle_row *x = a, *y = b;
  if (x->pid != y->pid)
    return x->pid < y->pid ? -1 : 1;
  if (x->handle != y->handle)
    return x->handle < y->handle ? -1 : 1;
  return x->order < y->order ? -1 : x->order > y->order;
}

static void gpu(timeline *t)
{
  const gpujit_profile *p = t->p;
  handle_row *h = p->loads.n ? calloc(p->loads.n, sizeof(*h)) : NULL;
  size_t nh = 0;
  for (size_t i = 0; h && i < p->loads.n; i++)
    if (p->loads.v[i].result == 0)
      h[nh] = (handle_row){p->loads.v[i].pid, p->loads.v[i].handle, p->loads.v[i].module, i}, nh++;
  if (nh)
    qsort(h, nh, sizeof(*h), by_handle);
  for (size_t i = 0; i < p->ops.n && !t->oom; i++) {
    const pf_op *o = &p->ops.v[i];
    uint32_t tr = track_of(t, true, (int)o->device, o->stream);
    if (o->kind == 'k') {
      int row = -1;
      size_t lo = 0, hi = nh; /* the last load of this handle in this process: as the trace ties it */
      while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (h[mid].pid < o->pid || (h[mid].pid == o->pid && h[mid].handle <= o->handle))
          lo = mid + 1;
        else
          hi = mid;
      }
      if (o->handle && lo > 0 && h[lo - 1].pid == o->pid && h[lo - 1].handle == o->handle)
        row = h[lo - 1].row;
      add(t, tr, o->s, o->e, internf(t, "\1%s", o->name ? o->name : ""),
          internf(t, "module %s, process %d", row >= 0 ? p->rows[row].name : "not known", o->pid), C_KERNEL);
    } else {
      add(t, tr, o->s, o->e, internf(t, o->kind == 'c' ? "copy %s" : "memset%s", o->kind == 'c' ? o->name : ""),
          internf(t, "%llu bytes, process %d", (unsigned long long)o->bytes, o->pid), o->kind == 'c' ? C_COPY : C_MEMSET);
    }
  }
  free(h);
}

/* Host tracks first, by when their process started, the main thread first; then devices and
 * streams in order. */
static int track_order(const track *a, const track *b)
{
  if (a->gpu != b->gpu)
    return a->gpu ? 1 : -1;
  if (!a->gpu && a->first != b->first)
    return a->first < b->first ? -1 : 1;
  if (a->pid != b->pid)
    return a->pid < b->pid ? -1 : 1;
  if (!a->gpu && ((int)a->tid == a->pid) != ((int)b->tid == b->pid))
    return (int)a->tid == a->pid ? -1 : 1;
  return a->tid < b->tid ? -1 : a->tid > b->tid;
}

static int by_track_time(const void *a, const void *b)
{
  const event *x = a, *y = b;
  if (x->track != y->track)
    return x->track < y->track ? -1 : 1;
  if (x->s != y->s)
    return x->s < y->s ? -1 : 1;
  return x->e > y->e ? -1 : x->e < y->e; /* the longer first: a compile before its stages */
}

/* Tracks of more than GPUJIT__HTML_TRACK_EVENTS events: neighbours of one kind within the
 * track's length over that count become one block, no longer than that. @return the events
 * merged away. */
static uint64_t merge(timeline *t)
{
  size_t out = 0, i = 0;
  uint64_t merged = 0;
  while (i < t->nev) {
    size_t end = i;
    uint64_t first, last = 0, res;
    while (end < t->nev && t->ev[end].track == t->ev[i].track)
      last = t->ev[end].e > last ? t->ev[end].e : last, end++;
    first = t->ev[i].s;
    res = end - i > GPUJIT__HTML_TRACK_EVENTS ? (last - first) / GPUJIT__HTML_TRACK_EVENTS : 0;
    for (size_t k = i; k < end; k++) {
      event *b = out ? &t->ev[out - 1] : NULL;
      if (res && b && b->track == t->ev[k].track && b->cat == t->ev[k].cat && t->ev[k].s <= b->e + res &&
          t->ev[k].e - b->s < res) { /* a block no longer than `res`: the track keeps its shape */
        b->e = t->ev[k].e > b->e ? t->ev[k].e : b->e;
        b->count++;
        merged++;
        continue;
      }
      t->ev[out++] = t->ev[k];
    }
    i = end;
  }
  t->nev = out;
  return merged;
}

static cJSON *track_names(const timeline *t)
{
  cJSON *a = cJSON_CreateArray();
  for (size_t i = 0; a && i < t->ntracks; i++) {
    const track *k = &t->tracks[i];
    char group[300], name[64];
    const char *cmd = "";
    if (k->gpu) {
      snprintf(group, sizeof(group), "GPU %d", k->pid);
      snprintf(name, sizeof(name), "stream %u", k->tid);
    } else {
      for (size_t j = 0; j < t->p->procs.n; j++)
        if (t->p->procs.v[j].pid == k->pid && t->p->procs.v[j].cmd && !t->p->procs.v[j].adapter)
          cmd = t->p->procs.v[j].cmd;
      snprintf(group, sizeof(group), "process %d%s%.250s", k->pid, *cmd ? ": " : "", cmd);
      snprintf(name, sizeof(name), (int)k->tid == k->pid ? "main thread %u" : "thread %u", k->tid);
    }
    cJSON *row = cJSON_CreateArray();
    cJSON_AddItemToArray(row, cJSON_CreateString(group));
    cJSON_AddItemToArray(row, cJSON_CreateString(name));
    cJSON_AddItemToArray(a, row);
  }
  return a;
}

static char *emit(timeline *t, uint64_t base, uint64_t merged)
{
  gpujit__buf b = {0};
  cJSON *tracks = track_names(t), *nm = cJSON_CreateArray();
  char *tt = NULL, *nt = NULL, *out = NULL;
  uint64_t end = base;
  for (size_t i = 0; i < t->nev; i++) {
    event *e = &t->ev[i];
    if (e->count > 1) { /* a block: what it holds, by its first event's name */
      char shown[600];
      const char *s = e->name >= 0 ? t->nm.v[e->name] : "";
      if (s[0] == '\1')
        gpujit__kernel_name(s + 1, shown, sizeof(shown)), s = shown;
      e->detail = internf(t, "%u events merged, the first: %s", e->count, s);
      e->name = internf(t, "%u %s", e->count, e->cat == C_KERNEL ? "kernels" : e->cat == C_COPY ? "copies"
                                             : e->cat == C_MEMSET ? "memsets" : "events");
    }
    end = e->e > end ? e->e : end;
  }
  for (size_t i = 0; nm && i < t->nm.n; i++) {
    char shown[1024];
    const char *s = t->nm.v[i];
    if (s[0] == '\1')
      gpujit__kernel_name(s + 1, shown, sizeof(shown)), s = shown;
    cJSON_AddItemToArray(nm, cJSON_CreateString(s));
  }
  if (tracks && nm) {
    tt = cJSON_PrintUnformatted(tracks);
    nt = cJSON_PrintUnformatted(nm);
  }
  if (tt && nt && !t->oom) {
    gpujit__buf_printf(&b, "{\"tracks\":%s,\"names\":%s,\"events\":[", tt, nt);
    for (size_t i = 0; i < t->nev; i++) {
      const event *e = &t->ev[i];
      gpujit__buf_printf(&b, "%s[%u,%.3f,%.3f,%d,%u,%d]", i ? "," : "", e->track, (double)(e->s - base) / 1e3,
                         (double)(e->e - e->s) / 1e3, e->name, e->cat, e->detail);
    }
    gpujit__buf_printf(&b, "],\"end_us\":%.3f,\"merged\":%llu,\"zero_ns\":\"%llu\"}", (double)(end - base) / 1e3,
                       (unsigned long long)merged, (unsigned long long)base);
    if (gpujit__buf_put(&b, "", 1) == 0)
      out = b.data, b.data = NULL;
  }
  gpujit__buf_free(&b);
  free(tt), free(nt);
  cJSON_Delete(tracks), cJSON_Delete(nm);
  return out;
}

int gpujit__profile_html_timeline(const gpujit_profile *p, char **out)
{
  timeline t = {.p = p, .last = SIZE_MAX};
  uint64_t base = UINT64_MAX, merged;
  uint32_t *order = NULL;
  *out = NULL;
  compiles(&t);
  loads_and_ranges(&t);
  gpu(&t);
  for (size_t i = 0; i < t.nev; i++)
    base = t.ev[i].s < base ? t.ev[i].s : base;
  for (size_t i = 0; i < p->procs.n; i++) /* as the trace's zero: its times and these agree */
    base = p->procs.v[i].t0 && p->procs.v[i].t0 < base ? p->procs.v[i].t0 : base;
  if (base == UINT64_MAX)
    base = 0;
  /* tracks in their drawing order, events renumbered to it */
  if (!t.oom && t.ntracks) {
    track *sorted = malloc(t.ntracks * sizeof(*sorted));
    order = malloc(t.ntracks * sizeof(*order));
    if (!sorted || !order)
      t.oom = true;
    for (size_t i = 0; !t.oom && i < t.ntracks; i++) { /* insertion: a few hundred tracks at most */
      size_t k = i;
      sorted[i] = t.tracks[i];
      while (k > 0 && track_order(&sorted[k - 1], &t.tracks[i]) > 0)
        sorted[k] = sorted[k - 1], k--;
      sorted[k] = t.tracks[i];
    }
    for (size_t i = 0; !t.oom && i < t.ntracks; i++)
      for (size_t k = 0; k < t.ntracks; k++)
        if (sorted[k].gpu == t.tracks[i].gpu && sorted[k].pid == t.tracks[i].pid && sorted[k].tid == t.tracks[i].tid)
          order[i] = (uint32_t)k;
    for (size_t i = 0; !t.oom && i < t.nev; i++)
      t.ev[i].track = order[t.ev[i].track];
    if (!t.oom)
      free(t.tracks), t.tracks = sorted;
    else
      free(sorted);
  }
  if (!t.oom && t.nev)
    qsort(t.ev, t.nev, sizeof(*t.ev), by_track_time);
  merged = t.oom ? 0 : merge(&t);
  if (!t.oom)
    *out = emit(&t, base, merged);
  for (size_t i = 0; i < t.nm.n; i++)
    free(t.nm.v[i]);
  free(t.nm.v), free(t.nm.slot), free(t.tracks), free(t.ev), free(order);
  return *out ? 0 : gpujit__error(GPUJIT_ENOMEM, "out of memory");
}
