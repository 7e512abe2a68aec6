/* What NVRTC looked at during a compile: the record the wrappers (observe_got.c) note each probe
 * into while a compile is observed — in first-seen order, indexed by path, each path's first
 * answer kept and a later different one noted as a change during the compile. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/error.h"
#include "compile/observe/observe.h"
#include "compile/observe/observe_note.h"

/* Which compile a probe belongs to is which thread made it: the thread that called
 * nvrtcCompileProgram (`mine`), or a thread NVRTC started from it (observe_proc.c gives it its
 * creator's `mine` and number). The host program's own compiles through the same NVRTC run on
 * its threads, which observe nothing. Compiles on different threads run side by side: nothing
 * is held across a compile. `live` lists the compiles being observed, under `note_lock`, which
 * also guards their records (NVRTC's own threads may note into one) and is held only briefly. */
static __thread gpujit__observed *mine;
static __thread uint64_t mine_id;
static __thread bool started_by_nvrtc;
static gpujit__observed *live;
static uint64_t live_ids;
static unsigned live_count; /* read without the lock as a first test */
static pthread_mutex_t note_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t at_fork_once = PTHREAD_ONCE_INIT;

/* A child of fork has one thread, the forking one: no other compile goes on in it, and a lock a
 * vanished thread held would never be let go. */
static void at_fork_child(void)
{
  pthread_mutex_init(&note_lock, NULL);
  live = NULL;
  __atomic_store_n(&live_count, 0, __ATOMIC_RELAXED);
  mine = NULL;
  mine_id = 0;
}

static void at_fork_register(void) { pthread_atfork(NULL, NULL, at_fork_child); }

/* ---- the record: items in first-seen order, an open-addressing index by path ---- */

struct gpujit__observed_index {
  size_t *slots; /* item number + 1; 0 is empty */
  size_t cap;
};

static uint64_t path_hash(const char *s)
{
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static int index_grow(gpujit__observed *o)
{
  struct gpujit__observed_index *ix = o->index;
  size_t cap = ix && ix->cap ? ix->cap * 2 : 256, *slots;
  if (!ix && !(ix = o->index = calloc(1, sizeof(*ix))))
    return GPUJIT_ENOMEM;
  if (!(slots = calloc(cap, sizeof(*slots))))
    return GPUJIT_ENOMEM;
  for (size_t i = 0; i < o->count; i++) {
    size_t at = path_hash(o->items[i].path) & (cap - 1);
    while (slots[at])
      at = (at + 1) & (cap - 1);
    slots[at] = i + 1;
  }
  free(ix->slots);
  ix->slots = slots;
  ix->cap = cap;
  return 0;
}

/* The item for `path`, or NULL; `*slot` is where a new one goes. */
static gpujit__probe *index_find(gpujit__observed *o, const char *path, size_t **slot)
{
  struct gpujit__observed_index *ix = o->index;
  size_t at = path_hash(path) & (ix->cap - 1);
  while (ix->slots[at]) {
    gpujit__probe *p = &o->items[ix->slots[at] - 1];
    if (strcmp(p->path, path) == 0)
      return p;
    at = (at + 1) & (ix->cap - 1);
  }
  *slot = &ix->slots[at];
  return NULL;
}

/* What was seen is no record; the first reason stands. */
static void set_why(gpujit__observed *o, const char *fmt, ...) GPUJIT__PRINTF(2, 3);
static void set_why(gpujit__observed *o, const char *fmt, ...)
{
  va_list ap;
  if (o->why[0])
    return; /* the first reason stands */
  va_start(ap, fmt);
  vsnprintf(o->why, sizeof(o->why), fmt, ap);
  va_end(ap);
}

static const char *kind_name(gpujit__probe_kind k)
{
  return k == GPUJIT__PROBE_FILE     ? "a file"
         : k == GPUJIT__PROBE_ABSENT ? "absent"
         : k == GPUJIT__PROBE_ERROR  ? "unreadable"
                                     : "no regular file";
}

/* The record the calling thread's probe goes into (with `note_lock` held), or NULL: not a
 * compile gpujit observes. A thread NVRTC started for a compile that has ended, or for one it
 * cannot tell, may probe for any compile now going on: each is told its record is unsure. */
static gpujit__observed *target(void)
{
  if (!started_by_nvrtc)
    return mine;
  if (!mine || !live) /* started for the host program's own compile, or nothing is observed now */
    return NULL;
  for (gpujit__observed *o = live; o; o = o->live_next)
    if (o == mine && o->live_id == mine_id)
      return o;
  for (gpujit__observed *o = live; o; o = o->live_next) {
    o->reads_lost = true;
    set_why(o, "a thread NVRTC started for another compile read files during this one: whose they are cannot be told");
  }
  return NULL;
}

bool gpujit__observe_active(void)
{
  return mine && (!started_by_nvrtc || __atomic_load_n(&live_count, __ATOMIC_RELAXED));
}

void gpujit__observe_thread_started(gpujit__observed *creator, uint64_t id)
{
  mine = creator;
  mine_id = id;
  started_by_nvrtc = true;
}

void gpujit__observe_thread_creator(gpujit__observed **creator, uint64_t *id)
{
  *creator = mine;
  *id = mine_id;
}

/* Add a probe (or check it against the first look at the same path). */
static void add(gpujit__observed *o, const gpujit__probe *p, const char *path)
{
  gpujit__probe *seen, *n;
  size_t *slot = NULL;
  if ((!o->index || (o->count + 1) * 2 > o->index->cap) && index_grow(o) < 0) {
    o->reads_lost = true;
    set_why(o, "out of memory while observing the compile");
    return;
  }
  if ((seen = index_find(o, path, &slot))) {
    seen->written |= p->written;
    seen->programs |= p->programs;
    if (seen->written)
      return;
    if (seen->kind != p->kind || (p->kind == GPUJIT__PROBE_ERROR && seen->err != p->err))
      set_why(o, "%s changed during the compile (%s, then %s)", path, kind_name(seen->kind), kind_name(p->kind));
    else if (p->kind == GPUJIT__PROBE_FILE &&
             (seen->ino != p->ino || seen->dev != p->dev || seen->size != p->size || seen->mtime_ns != p->mtime_ns ||
              seen->ctime_ns != p->ctime_ns))
      set_why(o, "%s changed during the compile", path);
    seen->read |= p->read;
    seen->listed |= p->listed;
    return;
  }
  if (!(n = gpujit__grow(o->items, &o->cap, o->count, sizeof(*o->items), 64)) ||
      !(n[o->count].path = gpujit__strdup(path))) {
    if (n)
      o->items = n;
    gpujit_error_clear();
    o->reads_lost = true;
    set_why(o, "out of memory while observing the compile");
    return;
  }
  o->items = n;
  {
    char *copy = n[o->count].path;
    n[o->count] = *p;
    n[o->count].path = copy;
    if (!p->seen_ns) {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME_COARSE, &ts);
      n[o->count].seen_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    }
  }
  *slot = ++o->count;
}

static void fill_stat(gpujit__probe *p, const struct stat *st)
{
  p->kind = S_ISREG(st->st_mode) ? GPUJIT__PROBE_FILE : GPUJIT__PROBE_OTHER;
  p->dev = (uint64_t)st->st_dev;
  p->ino = (uint64_t)st->st_ino;
  p->size = (uint64_t)st->st_size;
  p->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
  p->ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
}

/* A path NVRTC named relative to a directory descriptor, made relative to the working
 * directory's view: absolute through /proc, or NULL when that cannot be said. */
static const char *at_path(int dirfd, const char *path, char *buf, size_t size)
{
  char link[64];
  ssize_t n;
  if (!path)
    return NULL;
  if (dirfd == AT_FDCWD || path[0] == '/')
    return path;
  snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
  if ((n = readlink(link, buf, size - 1)) <= 0 || buf[0] != '/')
    return NULL;
  buf[n] = '\0';
  if ((size_t)n + 1 + strlen(path) + 1 > size)
    return NULL;
  buf[n] = '/';
  strcpy(buf + n + 1, path);
  return buf;
}

/* What a failed call means for the path: absent, or (errno kept in `err`) an answer that cannot
 * be replayed as a dependency. */
static void note_failure(gpujit__observed *o, const char *path, int err, const char *fn)
{
  gpujit__probe p = {.kind = GPUJIT__PROBE_ABSENT};
  if (err == ENOENT || err == ENOTDIR)
    add(o, &p, path);
  else if (gpujit__observe_err_replayable(err)) {
    p.kind = GPUJIT__PROBE_ERROR;
    p.err = err;
    add(o, &p, path);
  } else /* the moment's state (out of descriptors, an I/O error): no answer to replay */
    set_why(o, "NVRTC's %s(%s) failed: %s", fn, path, strerror(err));
}

bool gpujit__observe_err_replayable(int err)
{
  return err == EACCES || err == EPERM || err == ELOOP || err == ENAMETOOLONG || err == ENODEV || err == EOVERFLOW;
}

/* Note what NVRTC's call named `fn` found at `path` (relative to `dirfd`) in the compile being
 * observed, if any: probe `p`, or (NULL) the failure `err`, or a symbolic link looked at itself. */
static void note_at(const char *fn, int dirfd, const char *path, const gpujit__probe *p, int err)
{
  gpujit__observed *o;
  char buf[PATH_MAX];
  pthread_mutex_lock(&note_lock);
  if ((o = target()) != NULL) {
    const char *at = at_path(dirfd, path, buf, sizeof(buf));
    if (!at) {
      o->reads_lost = true;
      set_why(o, "NVRTC's %s named %s relative to a directory gpujit cannot name", fn, path ? path : "(null)");
    } else if (p)
      add(o, p, at);
    else if (err)
      note_failure(o, at, err, fn);
    else
      set_why(o, "NVRTC looked at the symbolic link %s itself (%s)", at, fn);
  }
  pthread_mutex_unlock(&note_lock);
}

/* A probe whose answer is `st` (follow: stat, not lstat), or a failure with `err`. */
void gpujit__observe_note_stat(const char *fn, int dirfd, const char *path, const struct stat *st, int err, bool nofollow)
{
  gpujit__probe p = {0};
  bool found = !err && !(nofollow && S_ISLNK(st->st_mode)); /* a link itself is no answer to replay */
  if (!gpujit__observe_active())
    return;
  if (found)
    fill_stat(&p, st);
  note_at(fn, dirfd, path, found ? &p : NULL, err);
}

/* A probe of `path` answered by calling stat ourselves (access, opendir, and the like). */
void gpujit__observe_note_path(const char *fn, int dirfd, const char *path, int err)
{
  struct stat st;
  char buf[PATH_MAX];
  const char *at;
  if (!gpujit__observe_active())
    return;
  at = at_path(dirfd, path, buf, sizeof(buf));
  if (err == 0 && at && stat(at, &st) != 0)
    err = errno;
  gpujit__observe_note_stat(fn, dirfd, path, &st, err, false);
}

/* An open: for reading, a dependency with its identity; for writing, NVRTC's own output. */
void gpujit__observe_note_open(const char *fn, int dirfd, const char *path, int fd, int err, bool writes)
{
  struct stat st;
  if (!gpujit__observe_active())
    return;
  if (writes) {
    gpujit__probe p = {.written = true};
    note_at(fn, dirfd, path, &p, 0);
    return;
  }
  if (fd >= 0 && fstat(fd, &st) != 0)
    err = errno;
  if (fd >= 0 && !err) {
    gpujit__probe p = {0};
    fill_stat(&p, &st);
    p.read = true;
    note_at(fn, dirfd, path, &p, 0);
    return;
  }
  gpujit__observe_note_stat(fn, dirfd, path, &st, err, false);
}

bool gpujit__observe_refuse(int dirfd, const char *path)
{
  struct stat st;
  gpujit__observed *o;
  bool refuse;
  if (!gpujit__observe_active() || !path || fstatat(dirfd, path, &st, 0) != 0)
    return false;
  refuse = S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISBLK(st.st_mode) ||
           (S_ISCHR(st.st_mode) && strncmp(path, "/dev/", 5) != 0);
  if (!refuse)
    return false;
  pthread_mutex_lock(&note_lock);
  if ((o = target()) != NULL && !o->refused[0])
    snprintf(o->refused, sizeof(o->refused),
             "%s: is %s, where NVRTC would read a header (it would wait on it); gpujit reads regular files only", path,
             S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISSOCK(st.st_mode) ? "a socket" : "a device");
  pthread_mutex_unlock(&note_lock);
  return true;
}

/* A listing is kept as a probe marked listed: whether it can be a dependency depends on whose
 * directory it is (NVRTC lists gpujit's own PCH directory), which the record's maker decides. */
void gpujit__observe_note_listed(const char *path)
{
  gpujit__observed *o;
  struct stat st;
  if (!gpujit__observe_active())
    return;
  pthread_mutex_lock(&note_lock);
  if ((o = target()) != NULL && path && stat(path, &st) == 0) {
    gpujit__probe p = {.listed = true};
    fill_stat(&p, &st);
    add(o, &p, path);
  }
  pthread_mutex_unlock(&note_lock);
}

/* A call that reads the file system in a way no probe can replay. */
void gpujit__observe_note_unobservable(const char *what, bool reads_lost)
{
  gpujit__observed *o;
  if (!gpujit__observe_active())
    return;
  pthread_mutex_lock(&note_lock);
  if ((o = target()) != NULL) {
    o->reads_lost |= reads_lost;
    set_why(o, "NVRTC %s during the compile", what);
  }
  pthread_mutex_unlock(&note_lock);
}

/* ---- observed compiles ---- */

void gpujit__observe_begin(gpujit__observed *o)
{
  pthread_once(&at_fork_once, at_fork_register);
  pthread_mutex_lock(&note_lock);
  o->live_id = ++live_ids;
  o->live_next = live;
  live = o;
  __atomic_add_fetch(&live_count, 1, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&note_lock);
  mine = o;
  mine_id = o->live_id;
  started_by_nvrtc = false;
}

void gpujit__observe_end(gpujit__observed *o)
{
  pthread_mutex_lock(&note_lock);
  for (gpujit__observed **at = &live; *at; at = &(*at)->live_next)
    if (*at == o) {
      *at = o->live_next;
      __atomic_sub_fetch(&live_count, 1, __ATOMIC_RELAXED);
      break;
    }
  o->live_next = NULL;
  pthread_mutex_unlock(&note_lock);
  if (mine == o)
    mine = NULL, mine_id = 0;
}

/* ---- what NVRTC read of the environment ---- */

bool gpujit__observe_env_ignored(const char *name) { return strcmp(name, "PWD") == 0; }

void gpujit__observed_env_add(gpujit__observed *o, const char *name, const char *value, bool strict)
{
  gpujit__env_read *n;
  for (size_t i = 0; i < o->env_count; i++)
    if (strcmp(o->env[i].name, name) == 0) {
      const char *was = o->env[i].value;
      if (strict && ((was == NULL) != (value == NULL) || (was && strcmp(was, value) != 0)))
        set_why(o, "the environment variable %s that NVRTC reads changed during the compile", name);
      return;
    }
  if (!(n = gpujit__grow(o->env, &o->env_cap, o->env_count, sizeof(*o->env), 16)) ||
      !(n[o->env_count].name = gpujit__strdup(name)) ||
      (n[o->env_count].value = NULL, value && !(n[o->env_count].value = gpujit__strdup(value)))) {
    if (n) {
      o->env = n;
      if (n[o->env_count].name) {
        free(n[o->env_count].name);
        n[o->env_count].name = NULL;
      }
    }
    gpujit_error_clear();
    set_why(o, "out of memory while observing the compile");
    return;
  }
  o->env = n;
  o->env_count++;
}

void gpujit__observe_note_env(const char *name, const char *value)
{
  gpujit__observed *o;
  if (!name || !gpujit__observe_active() || gpujit__observe_env_ignored(name))
    return;
  pthread_mutex_lock(&note_lock);
  if ((o = target()) != NULL)
    gpujit__observed_env_add(o, name, value, true);
  pthread_mutex_unlock(&note_lock);
}

/* A library NVRTC mapped, as a file it read. */
void gpujit__observed_library_add(gpujit__observed *o, const char *path)
{
  struct stat st;
  gpujit__probe p = {.read = true, .library = true};
  if (stat(path, &st) != 0) {
    set_why(o, "NVRTC mapped %s, which cannot be stat'ed now", path);
    return;
  }
  fill_stat(&p, &st);
  add(o, &p, path);
}

int gpujit__observed_merge(gpujit__observed *to, const gpujit__observed *from)
{
  for (size_t i = 0; i < from->count; i++)
    if (!from->items[i].written) /* what is no dependency of `from` says nothing of `to` */
      add(to, &from->items[i], from->items[i].path);
  for (size_t i = 0; i < from->env_count; i++)
    gpujit__observed_env_add(to, from->env[i].name, from->env[i].value, true);
  if (from->why[0])
    set_why(to, "%s", from->why);
  to->reads_lost |= from->reads_lost;
  return to->why[0] && strstr(to->why, "out of memory") ? GPUJIT_ENOMEM : 0;
}

void gpujit__observed_forget(gpujit__observed *o, const char *path)
{
  for (size_t i = 0; path && i < o->count; i++)
    if (strcmp(o->items[i].path, path) == 0)
      o->items[i].written = true; /* as NVRTC's own: no dependency */
}

int gpujit__observed_copy(gpujit__observed *to, const gpujit__observed *from)
{
  memset(to, 0, sizeof(*to));
  return gpujit__observed_merge(to, from);
}

bool gpujit__observed_holds(const gpujit__observed *o, char *why, size_t why_size)
{
  for (size_t i = 0; i < o->count; i++) {
    const gpujit__probe *p = &o->items[i];
    struct stat st;
    gpujit__probe now = {0};
    if (p->written)
      continue;
    if (stat(p->path, &st) != 0) {
      now.kind = errno == ENOENT || errno == ENOTDIR ? GPUJIT__PROBE_ABSENT : GPUJIT__PROBE_ERROR;
      now.err = errno;
    } else
      fill_stat(&now, &st);
    if (now.kind != p->kind || (p->kind == GPUJIT__PROBE_ERROR && now.err != p->err) || (p->kind == GPUJIT__PROBE_FILE &&
                                (now.ino != p->ino || now.dev != p->dev || now.size != p->size ||
                                 now.mtime_ns != p->mtime_ns || now.ctime_ns != p->ctime_ns))) {
      snprintf(why, why_size, "%s is %s now", p->path,
               now.kind != p->kind ? kind_name(now.kind) : "another file");
      return false;
    }
  }
  return true;
}

void gpujit__observed_free(gpujit__observed *o)
{
  for (size_t i = 0; i < o->count; i++)
    free(o->items[i].path);
  free(o->items);
  for (size_t i = 0; i < o->env_count; i++) {
    free(o->env[i].name);
    free(o->env[i].value);
  }
  free(o->env);
  o->env = NULL;
  o->env_count = o->env_cap = 0;
  if (o->index)
    free(o->index->slots);
  free(o->index);
  o->items = NULL;
  o->index = NULL;
  o->count = o->cap = 0;
  o->why[0] = '\0';
  o->reads_lost = false;
}
