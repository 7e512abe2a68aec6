/*
 * A scan's storage: freeing it, and keeping it — the include scans a long-lived process made,
 * kept for the next build of the same sources (gpujit__includes_memo_enable): the build
 * server's workers, where the edit loop scans the same 600 CUB headers before every compile
 * (~15 ms).
 *
 * A scan reads only the directive lines of its sources (those whose first non-blank character
 * is '#', and those the preprocessor reads as directives: directives.c) and the prelude, so an
 * edit elsewhere leaves it as it was. A kept scan is used again
 * when those lines, the sources' paths, the options the scan reads and the working directory
 * are the same, and on disk nothing it depends on moved: every file it read has the device,
 * inode, size, mtime and ctime it had (ctime changes with every write, and no user can set it
 * back), every path that had to be absent still is, and every path it found not to be a file
 * still is not. A scan whose files changed within a second of it is not kept (a write in the
 * same clock tick could keep the stamp), nor one that needs the compile's own record.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "base/error.h"
#include "compile/includes/directives.h"
#include "compile/includes/includes.h"
#include "compile/includes/scan.h"
#include "compile/toolkit/toolkit.h"

#define RACE_NS 1000000000LL

typedef struct stamp {
  dev_t dev;
  ino_t ino;
  off_t size;
  struct timespec mtime, ctime;
} stamp;

typedef struct memo {
  XXH128_hash_t key;
  gpujit__includes *inc; /* the scan as made; handed out as copies */
  stamp *stamps;         /* of inc->files, in order */
  uint64_t used;
} memo;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static memo *memos;
static size_t capacity, hits;
static uint64_t tick;

/* Safe at fork: a child forked by another thread while `lock` was held would wait on it for
 * ever. It is taken across fork() (held only briefly: a lookup, a copy), so the child's copy of
 * the memo is whole, and let go on both sides. */
static void fork_prepare(void) { pthread_mutex_lock(&lock); }
static void fork_release(void) { pthread_mutex_unlock(&lock); }
__attribute__((constructor)) static void fork_safe(void) { pthread_atfork(fork_prepare, fork_release, fork_release); }

void gpujit__includes_memo_enable(size_t entries)
{
  pthread_mutex_lock(&lock);
  if (!memos && entries && (memos = calloc(entries, sizeof(*memos))))
    capacity = entries;
  pthread_mutex_unlock(&lock);
}

size_t gpujit__includes_memo_hits(void)
{
  size_t n;
  pthread_mutex_lock(&lock);
  n = hits;
  pthread_mutex_unlock(&lock);
  return n;
}

static void put_str(XXH3_state_t *st, const char *s)
{
  s = s ? s : "";
  XXH3_128bits_update(st, s, strlen(s) + 1);
}

static void put_list(XXH3_state_t *st, const char *const *v, size_t n)
{
  XXH3_128bits_update(st, &n, sizeof(n));
  for (size_t i = 0; i < n; i++)
    put_str(st, v[i]);
}

/* Everything the scan reads but the files: see the comment at the top. */
static XXH128_hash_t key_of(const gpujit_source *sources, const char *const *abs_paths, size_t count,
                            const gpujit_module_options *o)
{
  XXH3_state_t *st = XXH3_createState();
  char cwd[PATH_MAX];
  gpujit__buf lines = {0};
  XXH128_hash_t h = {0, 0};
  if (!st)
    return h;
  XXH3_128bits_reset(st);
  put_str(st, getcwd(cwd, sizeof(cwd)) ? cwd : "");
  put_str(st, gpujit__cuda_root());
  put_list(st, o->include_dirs, o->include_dirs_count);
  put_list(st, o->nvrtc_options, o->nvrtc_options_count);
  put_list(st, o->defines, o->defines_count);
  put_str(st, o->prelude);
  XXH3_128bits_update(st, &count, sizeof(count));
  for (size_t s = 0; s < count; s++) {
    const char *p = sources[s].data, *end = p + sources[s].size;
    put_str(st, abs_paths[s]);
    while (p && p < end) {
      const char *eol = memchr(p, '\n', (size_t)(end - p)), *q = p;
      if (!eol)
        eol = end;
      while (q < eol && (*q == ' ' || *q == '\t'))
        q++;
      if (q < eol && *q == '#')
        XXH3_128bits_update(st, p, (size_t)(eol - p) + 1); /* the line with its end */
      else
        XXH3_128bits_update(st, "\n", 1); /* where the directives stand does not matter, their order does */
      p = eol + 1;
    }
    XXH3_128bits_update(st, "\0", 1);
    /* and as the preprocessor reads them (a directive behind a comment or a continuation) */
    if (gpujit__directive_lines(&lines, sources[s].data ? sources[s].data : "", sources[s].size, NULL) < 0) {
      h.low64 = h.high64 = 0; /* no key: nothing is kept or taken */
      goto done;
    }
    XXH3_128bits_update(st, lines.data, lines.len + 1);
  }
  h = XXH3_128bits_digest(st);
done:
  XXH3_freeState(st);
  gpujit__buf_free(&lines);
  return h;
}

static bool same_stamp(const stamp *a, const struct stat *st)
{
  return st->st_dev == a->dev && st->st_ino == a->ino && st->st_size == a->size &&
         st->st_mtim.tv_sec == a->mtime.tv_sec && st->st_mtim.tv_nsec == a->mtime.tv_nsec &&
         st->st_ctim.tv_sec == a->ctime.tv_sec && st->st_ctim.tv_nsec == a->ctime.tv_nsec;
}

/* Whether nothing the scan depends on moved on disk. */
static bool still_holds(const memo *m)
{
  const gpujit__includes *inc = m->inc;
  struct stat st;
  for (size_t i = 0; i < inc->nfiles; i++)
    if (stat(inc->files[i].path, &st) != 0 || !same_stamp(&m->stamps[i], &st))
      return false;
  for (size_t i = 0; i < inc->absent.count; i++)
    if (stat(inc->absent.items[i], &st) == 0)
      return false;
  for (size_t i = 0; i < inc->not_files.count; i++)
    if (stat(inc->not_files.items[i], &st) == 0 && S_ISREG(st.st_mode))
      return false;
  return true;
}

static int copy_vec(gpujit__strvec *to, const gpujit__strvec *from, gpujit__strset *set)
{
  int err = 0;
  for (size_t i = 0; err == 0 && i < from->count; i++)
    if ((err = gpujit__strvec_push(to, from->items[i])) == 0 && set)
      err = gpujit__strset_put(set, to->items[to->count - 1], 0);
  return err;
}

/* A scan of its own for the caller, with its sources: the kept one is never handed out. */
static gpujit__includes *copy_of(const gpujit__includes *src, const gpujit_source *sources, const char *prelude)
{
  gpujit__includes *inc = calloc(1, sizeof(*inc));
  int err = 0;
  if (!inc || !(inc->source_paths = calloc(src->nsources, sizeof(char *))) ||
      !(inc->files = calloc(src->nfiles ? src->nfiles : 1, sizeof(*inc->files)))) {
    gpujit__includes_free(inc);
    return NULL;
  }
  inc->sources = sources;
  inc->nsources = src->nsources;
  inc->prelude = prelude;
  inc->capfiles = src->nfiles ? src->nfiles : 1;
  for (size_t i = 0; err == 0 && i < src->nsources; i++)
    err = (inc->source_paths[i] = gpujit__strdup(src->source_paths[i])) ? 0 : GPUJIT_ENOMEM;
  for (size_t i = 0; err == 0 && i < src->nfiles; i++) {
    gpujit__inc_file *f = &inc->files[inc->nfiles];
    if (!(f->path = gpujit__strdup(src->files[i].path)) ||
        gpujit__buf_put(&f->data, src->files[i].data.data ? src->files[i].data.data : "", src->files[i].data.len) < 0) {
      free(f->path);
      gpujit__buf_free(&f->data);
      err = GPUJIT_ENOMEM;
      break;
    }
    err = gpujit__strset_put(&inc->byname, f->path, inc->nfiles++);
  }
  if (err == 0)
    err = copy_vec(&inc->before, &src->before, NULL);
  if (err == 0)
    err = copy_vec(&inc->after, &src->after, NULL);
  if (err == 0)
    err = copy_vec(&inc->absent, &src->absent, &inc->absent_set);
  if (err == 0)
    err = copy_vec(&inc->resolved, &src->resolved, &inc->resolved_set);
  if (err == 0)
    err = copy_vec(&inc->macro_names, &src->macro_names, NULL);
  if (err == 0)
    err = copy_vec(&inc->macro_values, &src->macro_values, NULL);
  if (err == 0)
    err = copy_vec(&inc->not_files, &src->not_files, NULL);
  if (err == 0)
    err = copy_vec(&inc->pre_includes, &src->pre_includes, NULL);
  if (err < 0) {
    gpujit__includes_free(inc);
    return NULL;
  }
  return inc;
}

void gpujit__includes_free(gpujit__includes *inc)
{
  if (!inc)
    return;
  for (size_t i = 0; i < inc->nsources && inc->source_paths; i++)
    free(inc->source_paths[i]);
  free(inc->source_paths);
  for (size_t i = 0; i < inc->nfiles; i++) {
    free(inc->files[i].path);
    gpujit__buf_free(&inc->files[i].data);
    gpujit__buf_free(&inc->files[i].directives);
  }
  free(inc->files);
  for (size_t i = 0; i < inc->npend; i++) {
    free(inc->pend[i].includer);
    free(inc->pend[i].name);
  }
  free(inc->pend);
  gpujit__strvec_free(&inc->before);
  gpujit__strvec_free(&inc->after);
  gpujit__strvec_free(&inc->absent);
  gpujit__strvec_free(&inc->not_files);
  gpujit__strvec_free(&inc->pre_includes);
  gpujit__strvec_free(&inc->resolved);
  gpujit__strvec_free(&inc->macro_names);
  gpujit__strvec_free(&inc->macro_values);
  gpujit__strset_free(&inc->byname);
  gpujit__strset_free(&inc->absent_set);
  gpujit__strset_free(&inc->resolved_set);
  free(inc);
}

static void drop(memo *m)
{
  gpujit__includes_free(m->inc);
  free(m->stamps);
  memset(m, 0, sizeof(*m));
}

int gpujit__inc_memo_take(gpujit__includes **out, uint64_t key[2], const gpujit_source *sources,
                          const char *const *abs_paths, size_t count, const gpujit_module_options *o)
{
  XXH128_hash_t k;
  int found = 0;
  pthread_mutex_lock(&lock);
  if (!capacity) {
    pthread_mutex_unlock(&lock);
    return 0;
  }
  pthread_mutex_unlock(&lock);
  k = key_of(sources, abs_paths, count, o);
  key[0] = k.low64;
  key[1] = k.high64;
  if (!k.low64 && !k.high64) /* no key could be made */
    return 0;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < capacity && !found; i++) {
    memo *m = &memos[i];
    if (!m->inc || !XXH128_isEqual(m->key, k))
      continue;
    if (!still_holds(m)) {
      drop(m);
      break;
    }
    if ((*out = copy_of(m->inc, sources, o->prelude))) {
      m->used = ++tick;
      hits++;
      found = 1;
    }
  }
  pthread_mutex_unlock(&lock);
  return found;
}

void gpujit__inc_memo_put(gpujit__includes *inc, const uint64_t key[2], int64_t read_start_ns)
{
  stamp *stamps;
  memo *slot = NULL;
  if (!capacity || inc->needs_trace || inc->npend || inc->refused[0] || (!key[0] && !key[1]))
    return;
  if (!(stamps = calloc(inc->nfiles ? inc->nfiles : 1, sizeof(*stamps))))
    return;
  for (size_t i = 0; i < inc->nfiles; i++) {
    struct stat st;
    int64_t m, c;
    if (stat(inc->files[i].path, &st) != 0) {
      free(stamps);
      return;
    }
    m = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    c = (int64_t)st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec;
    if (m + RACE_NS >= read_start_ns || c + RACE_NS >= read_start_ns) { /* too recent to stand for what was read */
      free(stamps);
      return;
    }
    stamps[i] = (stamp){st.st_dev, st.st_ino, st.st_size, st.st_mtim, st.st_ctim};
  }
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < capacity; i++) /* the same key, else a free slot, else the least used */
    if (memos[i].inc && memos[i].key.low64 == key[0] && memos[i].key.high64 == key[1]) {
      slot = &memos[i];
      break;
    }
  for (size_t i = 0; !slot && i < capacity; i++)
    if (!memos[i].inc)
      slot = &memos[i];
  if (!slot) {
    slot = &memos[0];
    for (size_t i = 1; i < capacity; i++)
      if (memos[i].used < slot->used)
        slot = &memos[i];
  }
  {
    gpujit__includes *kept = copy_of(inc, NULL, NULL);
    if (kept) {
      drop(slot);
      slot->key.low64 = key[0];
      slot->key.high64 = key[1];
      slot->inc = kept;
      slot->stamps = stamps;
      slot->used = ++tick;
      stamps = NULL;
    }
  }
  pthread_mutex_unlock(&lock);
  free(stamps);
}
