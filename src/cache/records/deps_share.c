/* The checks of many dependency records (cache/records/deps.h): records in memory or a group's
 * binary form where it lies, shared in chunks between the caller's thread and a crew of helpers
 * (base/crew.c, as many as cache/records/check_threads.c says), and the checks' entry points —
 * a lookup's, a view's, and a check begun ahead of its lookup. Each record is checked by
 * deps_check.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/crew.h"
#include "base/error.h"
#include "cache/records/check_threads.h"
#include "cache/records/deps.h"
#include "cache/records/deps_check.h"

/* A toolkit group's hundreds of stats cost 1-2 us each of kernel path work and do not wait on
 * each other. The caller's thread checks from the first chunk on; the check's helpers
 * (base/crew.c) take the chunks that are left. Once none is left the caller joins them: no
 * thread of the check outlives it (a helper that starts late finds nothing to take and ends). */
#define CHUNK 16
#define PER_THREAD 64  /* records per thread worth a helper */
#define MAX_THREADS GPUJIT__CREW_MAX /* numbers of the threads in a timeline */

enum { UNSETTLED, HELD, NOT_EXACT }; /* a view's chunk, as its checker found it */

typedef struct job {
  gpujit__task task;           /* what the helpers run */
  gpujit__crew crew;           /* the helpers, until joined */
  size_t count, chunks;
  gpujit__dep **order;         /* the records (gpujit__deps_verify) */
  gpujit__deps_view view;      /* or the view's (gpujit__deps_verify_view) */
  gpujit__buf keep;            /* the view's bytes */
  size_t next;                 /* atomic: the first chunk not yet taken */
  int stop;                    /* atomic: the outcome is known (or the check is dropped) */
  bool timeline;               /* measuring ("8v"): when each thread began and what it checked */
  bool ahead;                  /* begun ahead of its lookup, on helpers alone (cache/records/head_start.c) */
  int64_t t0, began[MAX_THREADS];
  unsigned did[MAX_THREADS];
  unsigned char *state;        /* atomic, per chunk of a view */
  uint32_t *dir_len;           /* atomic, per record: its directory's length + 2 (1: none), 0 unknown */
  pthread_mutex_t lock;        /* the rest (records in memory) */
  int err;
  bool refresh, moved;
  char why[PATH_MAX + 96];
} job;

/* Once its helpers are joined. */
static void job_free(job *j)
{
  gpujit__buf_free(&j->keep);
  pthread_mutex_destroy(&j->lock);
  free(j);
}

static const char *path_at(const job *j, size_t i)
{
  return j->order ? j->order[i]->path : gpujit__deps_view_path(&j->view, i);
}

/* Record i's directory length (GPUJIT__NO_DIR: none), worked out once for all threads: every record is
 * stat'ed through it, and those about a chunk's bounds are compared with their neighbours. */
static size_t dir_len(const job *j, size_t i)
{
  uint32_t v = __atomic_load_n(&j->dir_len[i], __ATOMIC_RELAXED);
  if (!v) {
    const char *p = path_at(j, i), *slash = strrchr(p, '/');
    v = slash ? (uint32_t)(slash - p) + 2 : 1;
    __atomic_store_n(&j->dir_len[i], v, __ATOMIC_RELAXED); /* any thread writes the same */
  }
  return v == 1 ? GPUJIT__NO_DIR : v - 2;
}

static bool same_dir_at(const job *j, size_t a, size_t b)
{
  size_t n = dir_len(j, a);
  return n != GPUJIT__NO_DIR && n == dir_len(j, b) && memcmp(path_at(j, a), path_at(j, b), n) == 0;
}

/* Where chunk `c` begins: at the first record of a directory among its CHUNK, where one is, so
 * that a directory is opened by one thread, not by each that takes a piece of it. Every thread
 * works the bounds out alike: the chunks divide the records between them. */
static size_t chunk_start(const job *j, size_t c)
{
  size_t at = c * CHUNK, end = at + CHUNK < j->count ? at + CHUNK : j->count;
  if (c == 0 || at >= j->count)
    return at < j->count ? at : j->count;
  for (size_t i = at; i < end; i++)
    if (!same_dir_at(j, i - 1, i))
      return i;
  return at;
}

/* Whether the non-file record `i` of a view is vouched for by a file under it: a file D/.../f
 * found by stat (which the view's check requires of every file) proves D a directory, no regular
 * file — so D need not be stat'ed too. The records are in path order: the files under D follow it
 * closely (NVRTC passed over cuda/, cuda/std/, ... on its way to the headers in them). */
static bool file_under(const job *j, size_t i)
{
  const char *dir = path_at(j, i);
  size_t len = strlen(dir);
  for (size_t k = i + 1; k < j->count && k <= i + 8; k++) {
    const char *p = path_at(j, k);
    if (strncmp(p, dir, len) != 0 || p[len] != '/')
      return false; /* past the paths under it */
    if (gpujit__deps_view_kind(&j->view, k) == 'f')
      return true;
  }
  return false;
}

/* Check chunk `c` of a view: HELD or NOT_EXACT. */
static int view_chunk(job *j, size_t c, gpujit__dir_cursor *cur)
{
  size_t end = chunk_start(j, c + 1);
  for (size_t at = chunk_start(j, c); at < end; at++) {
    gpujit__deps_rec r;
    gpujit__deps_view_rec(&j->view, at, &r);
    if (r.kind == 'n' && file_under(j, at))
      continue;
    cur->next = at + 1 < end ? path_at(j, at + 1) : NULL;
    if (gpujit__deps_check_rec(&r, dir_len(j, at), cur) != 0)
      return NOT_EXACT;
  }
  return HELD;
}

/* Take chunks and check them until none is left or the outcome is known; `k`: the thread (0 the
 * caller, from 1 the helpers). */
static void job_work(job *j, int k)
{
  gpujit__dir_cursor cur = {.fd = -1};
  char why[sizeof(j->why)] = "";
  for (;;) {
    bool refresh = false, moved = false;
    int err = 0;
    size_t c, at, end;
    if (__atomic_load_n(&j->stop, __ATOMIC_RELAXED) ||
        (c = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED)) >= j->chunks)
      break;
    if (j->timeline && k < MAX_THREADS)
      __atomic_add_fetch(&j->did[k], 1, __ATOMIC_RELAXED);
    if (!j->order) {
      int st = view_chunk(j, c, &cur);
      if (st == NOT_EXACT)
        __atomic_store_n(&j->stop, 1, __ATOMIC_RELAXED);
      __atomic_store_n(&j->state[c], (unsigned char)st, __ATOMIC_RELEASE);
      continue;
    }
    end = chunk_start(j, c + 1);
    for (at = chunk_start(j, c); at < end && err == 0 && !__atomic_load_n(&j->stop, __ATOMIC_RELAXED); at++) {
      cur.next = at + 1 < end ? j->order[at + 1]->path : NULL;
      err = gpujit__deps_verify_one(j->order[at], dir_len(j, at), &cur, &refresh, &moved, why, sizeof(why));
    }
    if (err)
      __atomic_store_n(&j->stop, 1, __ATOMIC_RELAXED);
    pthread_mutex_lock(&j->lock);
    j->refresh |= refresh;
    j->moved |= moved;
    if (err && !j->err) {
      j->err = err;
      memcpy(j->why, why, sizeof(why));
    }
    pthread_mutex_unlock(&j->lock);
  }
  if (cur.fd >= 0)
    close(cur.fd);
}

static void job_run(gpujit__task *t, int k)
{
  job *j = (job *)t;
  k = k < MAX_THREADS ? k : MAX_THREADS - 1;
  if (j->timeline)
    __atomic_store_n(&j->began[k], gpujit__now_ns() - j->t0, __ATOMIC_RELAXED);
  job_work(j, k);
}

/* A job of `count` records (`order`, or `view` lying in `bytes`, which it takes), begun on
 * `helpers` (SIZE_MAX: as many as its size is worth, the caller's thread being one more; fewer
 * where threads cannot be started). NULL: out of memory. */
static job *job_new(size_t count, gpujit__dep **order, const gpujit__deps_view *view, gpujit__buf *bytes,
                    size_t helpers)
{
  size_t chunks = (count + CHUNK - 1) / CHUNK, threads = count / PER_THREAD + 1;
  gpujit__check_threads how;
  job *j = calloc(1, sizeof(*j) + count * sizeof(uint32_t) + (view ? chunks : 0));
  if (!j)
    return NULL;
  j->count = count;
  j->chunks = chunks;
  j->order = order;
  if (view) {
    j->view = *view;
    j->keep = *bytes; /* a helper still in a chunk reads them: freed with the job */
    memset(bytes, 0, sizeof(*bytes));
  }
  j->dir_len = (uint32_t *)(j + 1);
  j->state = (unsigned char *)(j->dir_len + count);
  j->task.run = job_run;
  pthread_mutex_init(&j->lock, NULL);
  if (threads > (how = gpujit__check_threads_get()).threads)
    threads = how.threads;
  if (helpers > threads - 1)
    helpers = threads - 1;
  if ((j->timeline = how.timeline))
    j->t0 = gpujit__now_ns();
  if (helpers > 0)
    gpujit__crew_start(&j->crew, &j->task, (int)helpers, how.place);
  return j;
}

/* The caller's share: chunks taken until none is left (or the outcome is known); then the
 * helpers, out of work, are joined — every chunk taken is checked. */
static void job_join(job *j)
{
  job_work(j, 0);
  gpujit__crew_join(&j->crew);
}

/* Measuring (GPUJIT_BENCH_CHECK=v), through the library's log at the info level: the check's
 * time on the caller's thread, each thread's start and the chunks it took. */
static void timeline(job *j)
{
  char line[112 + MAX_THREADS * 24];
  int64_t end = gpujit__now_ns();
  size_t n = (size_t)snprintf(line, sizeof(line), "check of %zu records in %.3f ms (monotonic %lld to %lld ns%s):",
                              j->count, (double)(end - j->t0) / 1e6, (long long)j->t0, (long long)end,
                              j->ahead ? "; begun ahead" : "");
  for (int k = 0; k < MAX_THREADS && n < sizeof(line); k++) {
    int64_t at = __atomic_load_n(&j->began[k], __ATOMIC_RELAXED);
    unsigned did = __atomic_load_n(&j->did[k], __ATOMIC_RELAXED);
    if (k == 0)
      n += (size_t)snprintf(line + n, sizeof(line) - n, " [caller %u]", did);
    else if (at || did)
      n += (size_t)snprintf(line + n, sizeof(line) - n, " [%.3f %u]", (double)at / 1e6, did);
  }
  gpujit__log(GPUJIT_LOG_INFO, "%s", line);
}

int gpujit__deps_verify(gpujit__deps *d, bool *refresh) { return gpujit__deps_verify_why(d, refresh, NULL, 0); }

int gpujit__deps_verify_why(gpujit__deps *d, bool *refresh, char *why, size_t why_size)
{
  bool moved;
  return gpujit__deps_verify_moved(d, refresh, &moved, why, why_size);
}

int gpujit__deps_verify_moved(gpujit__deps *d, bool *refresh, bool *moved_out, char *why, size_t why_size)
{
  gpujit__dep *few[8], **order = d->count > 8 ? malloc(d->count * sizeof(*order)) : few;
  bool sorted = true, moved;
  job *j;
  int err;
  *refresh = false;
  *moved_out = false;
  if (!order)
    return GPUJIT_ENOMEM; /* unverified: not a hit */
  for (size_t i = 0; i < d->count; i++) {
    order[i] = &d->items[i];
    sorted = sorted && (i == 0 || strcmp(d->items[i - 1].path, d->items[i].path) <= 0);
  }
  /* directory order (the outcome does not depend on it); records are written in path order */
  if (!sorted)
    qsort(order, d->count, sizeof(*order), gpujit__deps_by_path);
  if (!(j = job_new(d->count, order, NULL, NULL, SIZE_MAX))) {
    if (order != few)
      free(order);
    return GPUJIT_ENOMEM;
  }
  job_join(j); /* the chunks helpers took are checked (they may update records) before the records go */
  if (j->timeline)
    timeline(j);
  err = j->err;
  *refresh = j->refresh;
  moved = j->moved;
  if (err && why && why_size)
    snprintf(why, why_size, "%s", j->why);
  job_free(j);
  if (order != few)
    free(order);
  if (err == 0 && moved) /* else every identity as recorded: the files are one file as they were */
    if ((err = gpujit__deps_identities_hold(d, NULL)) != 0 && why && why_size)
      snprintf(why, why_size, "headers that were one file (a link) are not now, or the other way round "
                              "(#pragma once sees identity)");
  *moved_out = moved;
  return err;
}

/* A view's job, the caller's share done: HELD by every chunk, or not exactly (GPUJIT_ENOENT). */
static int view_outcome(job *j)
{
  int err = 0;
  job_join(j);
  for (size_t c = 0; c < j->chunks && err == 0; c++)
    if (__atomic_load_n(&j->state[c], __ATOMIC_ACQUIRE) != HELD)
      err = GPUJIT_ENOENT; /* not exactly as recorded, or not checked: stopped because some chunk was not */
  if (j->timeline)
    timeline(j);
  job_free(j);
  return err;
}

int gpujit__deps_verify_view(const gpujit__deps_view *v, gpujit__buf *bytes)
{
  job *j = job_new(v->count, NULL, v, bytes, SIZE_MAX);
  if (!j) {
    gpujit__buf_free(bytes);
    return GPUJIT_ENOMEM;
  }
  return view_outcome(j);
}

gpujit__deps_ahead *gpujit__deps_check_ahead(const gpujit__deps_view *v, gpujit__buf *bytes)
{
  size_t n = gpujit__check_threads_get().threads;
  job *j = n > 1 ? job_new(v->count, NULL, v, bytes, n - 1) : NULL;
  if (!j)
    gpujit__buf_free(bytes);
  else
    j->ahead = true;
  return (gpujit__deps_ahead *)j;
}

int gpujit__deps_ahead_join(gpujit__deps_ahead *a) { return view_outcome((job *)a); }

void gpujit__deps_ahead_print(gpujit__deps_ahead *a, char out[33])
{
  if (gpujit__deps_view_identity_print(&((job *)a)->view, out) < 0) /* the bytes are the job's until joined */
    out[0] = '\0';
}

void gpujit__deps_ahead_drop(gpujit__deps_ahead *a)
{
  job *j = (job *)a;
  if (!j)
    return;
  __atomic_store_n(&j->stop, 1, __ATOMIC_RELAXED); /* the helpers stop at their next chunk */
  gpujit__crew_join(&j->crew);
  job_free(j);
}
