/* A build's dependencies for the cache: the toolkit's headers apart from the user's; and whether
 * a build may be cached at all. */
#define _GNU_SOURCE
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fs.h"
#include "base/hash.h"
#include "compile/includes/directives.h"
#include "compile/toolkit/nvrtc_opts.h"
#include "compile/pch/pch.h"
#include "compile/toolkit/toolkit.h"
#include "module/deps.h"

bool gpujit__in_toolkit(const char *path)
{
  char inc[PATH_MAX];
  snprintf(inc, sizeof(inc), "%s/include", gpujit__cuda_root());
  gpujit__normpath(inc);
  return gpujit__path_under(path, inc) != NULL;
}

int64_t gpujit__deps_coarse_clock(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static const char *options_use(const gpujit_module_options *o, const char *const *names, size_t n);

static int64_t stat_ns(struct timespec t) { return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec; }

static bool same_file(const gpujit__probe *p, const struct stat *st)
{
  return S_ISREG(st->st_mode) && (uint64_t)st->st_dev == p->dev && (uint64_t)st->st_ino == p->ino &&
         (uint64_t)st->st_size == p->size && stat_ns(st->st_mtim) == p->mtime_ns &&
         stat_ns(st->st_ctim) == p->ctime_ns;
}

/* A file probe as a record: it must be the file NVRTC saw (identity, size, times), not modified
 * since the compile started, and the same after its content was read for the hash. */
static int add_read(gpujit__observed_deps *out, const gpujit__probe *p, const char *base, int64_t start, bool source,
                    char *why, size_t n)
{
  gpujit__read_file *f;
  struct stat before, after;
  bool tk = gpujit__in_toolkit(p->path);
  int err;
  /* a source's text is in the request key: NVRTC only learns that it is a file */
  if (!source && (p->mtime_ns >= p->seen_ns || p->ctime_ns >= p->seen_ns)) {
    snprintf(why, n, "%s was modified while it was being compiled (too new to stand for its content)", p->path);
    return 0;
  }
  if (!(f = gpujit__grow(out->files, &out->cap, out->count, sizeof(*f), 16)))
    return GPUJIT_ENOMEM;
  out->files = f;
  f = &out->files[out->count];
  memset(f, 0, sizeof(*f));
  /* the file as opened (its fstat) is the one NVRTC saw, and still is once read: a stat before
   * the open would add a system call a header to a miss (610 for CUB) and prove no more */
  err = gpujit__file_read_stat(&f->data, p->path, &before);
  if (err == 0 && !same_file(p, &before)) {
    gpujit__buf_free(&f->data);
    snprintf(why, n, "%s changed during the compile", p->path);
    return 0;
  }
  if (err < 0 || stat(p->path, &after) != 0 || !same_file(p, &after)) {
    gpujit__buf_free(&f->data);
    if (err == GPUJIT_ENOMEM)
      return err;
    gpujit_error_clear();
    snprintf(why, n, "%s changed while it was read for the record", p->path);
    return 0;
  }
  if (!(f->path = gpujit__strdup(p->path))) {
    gpujit__buf_free(&f->data);
    return GPUJIT_ENOMEM;
  }
  f->toolkit = tk;
  out->count++;
  if ((err = gpujit__deps_add_file_at(tk ? &out->shared : &out->deps, p->path, tk ? NULL : base,
                                      f->data.data ? f->data.data : "", f->data.len, start, &after)) == 0 &&
      !tk)
    out->deps.items[out->deps.count - 1].programs = p->programs; /* the shared group's are every program's */
  return err;
}

/* A library NVRTC mapped (its builtins): one file of the shared group, by content, never copied
 * with the entry and never read for __FILE__ (a binary's strings are not the module's text). */
static int add_library(gpujit__observed_deps *out, const gpujit__probe *p, int64_t start, char *why, size_t n)
{
  gpujit__buf data = {0};
  struct stat after;
  gpujit__dep *e;
  char known[33];
  int err;
  /* the file the toolkit id hashed, unchanged since (its stamp, which the id trusts): not read
   * and hashed again — the builtins' 4.4 MB were most of what a miss added to a small compile */
  if (stat(p->path, &after) == 0 && same_file(p, &after) && gpujit__toolkit_known_hash(p->path, &after, known)) {
    if (!(e = gpujit__deps_push(&out->shared, p->path, NULL)))
      return GPUJIT_ENOMEM;
    memcpy(e->hash, known, sizeof(known));
    e->size = (uint64_t)after.st_size;
    e->dev_now = (uint64_t)after.st_dev;
    e->ino_now = (uint64_t)after.st_ino;
    gpujit__deps_set_stat(e, &after, start);
    return 0;
  }
  if ((err = gpujit__file_read(&data, p->path)) < 0 || stat(p->path, &after) != 0 || !same_file(p, &after)) {
    gpujit__buf_free(&data);
    if (err == GPUJIT_ENOMEM)
      return err;
    gpujit_error_clear();
    snprintf(why, n, "%s, which NVRTC mapped, changed while it was read for the record", p->path);
    return 0;
  }
  /* hashed and stamped as gpujit__deps_add_file() does a header's, but never searched for a
   * `#pragma once`: a library is not #included, and lexing its megabytes (4.4 MB of NVRTC 13's
   * builtins, which hold no "once") was most of what a miss added to a small compile */
  if (!(e = gpujit__deps_push(&out->shared, p->path, NULL))) {
    gpujit__buf_free(&data);
    return GPUJIT_ENOMEM;
  }
  gpujit__hash_hex(e->hash, data.data ? data.data : "", data.len);
  e->size = data.len;
  if (stat(p->path, &after) == 0) {
    e->dev_now = (uint64_t)after.st_dev;
    e->ino_now = (uint64_t)after.st_ino;
    if ((uint64_t)after.st_size == data.len)
      gpujit__deps_set_stat(e, &after, start);
  }
  gpujit__buf_free(&data);
  return 0;
}

static int by_env_name(const void *a, const void *b)
{
  return strcmp((*(const gpujit__env_read *const *)a)->name, (*(const gpujit__env_read *const *)b)->name);
}

/* The variables NVRTC read, in name order (the record is the same whatever order they were read
 * in), as records of the entry's own: they hold for this build, not for the toolkit's group. */
static int add_env(gpujit__observed_deps *out, const gpujit__observed *o)
{
  const gpujit__env_read **v = malloc((o->env_count + 1) * sizeof(*v));
  int err = 0;
  if (!v)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  for (size_t i = 0; i < o->env_count; i++)
    v[i] = &o->env[i];
  qsort(v, o->env_count, sizeof(*v), by_env_name);
  for (size_t i = 0; err == 0 && i < o->env_count; i++)
    err = gpujit__deps_add_env(&out->deps, v[i]->name, v[i]->value);
  free(v);
  return err;
}

/* The shortest leading part of `path` (whole components) that does not exist, into `buf`: while
 * it stays absent, so does every path through it — one record for the hundreds of lookups a
 * <cuda/std/...> include makes in a directory that has no cuda/ (the kernel cannot walk through a
 * missing component, whatever follows it, ".." included). `path` itself when no shorter one is. */
/* What the absent probes of one record share: the process's id as NVRTC's temporary names hold
 * it, and for shallowest_absent() a directory seen to exist and one seen missing. */
typedef struct absent_walk {
  char pid[32], known[PATH_MAX], gone[PATH_MAX];
} absent_walk;

static const char *shallowest_absent(const char *path, char *buf, size_t size, char *known, char *gone)
{
  size_t n = strlen(path), k = strlen(known), g = strlen(gone);
  struct stat st;
  buf[0] = '\0';
  if (n >= size)
    return path;
  /* the probes come in path order: under a directory last seen missing, the same answer; the
   * leading directories last found standing (a search path's, for each of its hundreds of
   * probes) are not stat'ed again */
  if (g && !strncmp(path, gone, g) && path[g] == '/') {
    memcpy(buf, gone, g + 1);
    return buf;
  }
  memcpy(buf, path, n + 1);
  if (!k || strncmp(path, known, k) != 0 || path[k] != '/')
    known[k = 0] = '\0';
  for (char *c = buf + k + 1; (c = strchr(c, '/')) != NULL; c++) {
    *c = '\0';
    if (buf[0] && stat(buf, &st) != 0 && errno == ENOENT) {
      memcpy(gone, buf, (size_t)(c - buf) + 1);
      return buf;
    }
    if (buf[0])
      memcpy(known, buf, (size_t)(c - buf) + 1);
    *c = '/';
  }
  buf[0] = '\0';
  return path;
}

static int by_probe_path(const void *a, const void *b)
{
  return strcmp((*(const gpujit__probe *const *)a)->path, (*(const gpujit__probe *const *)b)->path);
}

/* A name NVRTC checks before making a temporary file of its own (EDG's "edg<N>_<pid>" in the
 * temporary directory): this process's id is in it, so no other process would look for it, and
 * recording it would give every process's build another record. */
static bool own_temporary(const char *path, const char *pid)
{
  const char *tmp = getenv("TMPDIR"), *name = strrchr(path, '/');
  size_t dir;
  if (!tmp || !*tmp)
    tmp = "/tmp";
  if (!name)
    return false;
  dir = (size_t)(name - path);
  return ((dir == strlen(tmp) && strncmp(path, tmp, dir) == 0) || (dir == 4 && strncmp(path, "/tmp", 4) == 0)) &&
         strstr(name, pid) != NULL;
}

/* A path NVRTC found missing, as a record: the directory that vouches for it and the name. */
static int add_absent_probe(gpujit__deps *d, const char *path, const char *base, absent_walk *w, char *why, size_t n)
{
  char rel[PATH_MAX];
  struct stat st;
  if (own_temporary(path, w->pid))
    return 0;
  /* a directory on the way that is missing: so is the path, not stat'ed again */
  if ((!strchr(path, '/') || shallowest_absent(path, rel, sizeof(rel), w->known, w->gone) == path) &&
      (stat(path, &st) == 0 || (errno != ENOENT && errno != ENOTDIR))) {
    snprintf(why, n, "%s appeared during the compile", path);
    return 0;
  }
  /* a name NVRTC looked for in its working directory: the directory is "." */
  if (!strchr(path, '/') && snprintf(rel, sizeof(rel), "./%s", path) < (int)sizeof(rel))
    path = rel;
  else if (strchr(path, '/') && rel[0])
    path = rel;
  return gpujit__deps_add_absent(d, path, base);
}

/* Which files' identities can matter, numbered across the user's and the toolkit's records. */
static int identities(gpujit__observed_deps *out, const gpujit__observed *o, const char *const *sources, size_t count,
                      bool spread)
{
  /* A macro that names `once` may carry `#pragma once` into any file that expands it: then every
   * file's identity can matter, as every file's did before identities were told apart. */
  if (spread || out->deps.once_macro || out->shared.once_macro) {
    gpujit__deps_all_once(&out->deps);
    gpujit__deps_all_once(&out->shared);
  }
  /* A source NVRTC was given as text and only looked up by name is no file it includes: its
   * identity is nothing to `#pragma once` (the sources of an LTO module are separate programs). */
  for (size_t i = 0; i < o->count; i++) {
    const gpujit__probe *p = &o->items[i];
    for (size_t k = 0; p->kind == GPUJIT__PROBE_FILE && !p->read && k < count; k++)
      for (size_t x = 0; !strcmp(sources[k], p->path) && x < out->deps.count; x++)
        if (!strcmp(out->deps.items[x].path, p->path))
          out->deps.items[x].once = false;
  }
  return gpujit__deps_identities(&out->deps, &out->shared);
}

int gpujit__module_deps_observed(gpujit__observed_deps *out, const gpujit__observed *o, const char *base,
                                 int64_t start, const char *const *sources, size_t count, bool spread, char *why,
                                 size_t why_size)
{
  const gpujit__probe **order = malloc((o->count + 1) * sizeof(*order));
  absent_walk walk = {.known = "", .gone = ""};
  int err = 0;
  memset(out, 0, sizeof(*out));
  snprintf(walk.pid, sizeof(walk.pid), "_%ld", (long)getpid()); /* once, not once a probe */
  why[0] = '\0';
  if (!order)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  /* in path order: the record, and so the entry's key, is the same whatever order NVRTC probed in
   * (a compile that used a PCH probes less and inherits the rest) */
  for (size_t i = 0; i < o->count; i++)
    order[i] = &o->items[i];
  qsort(order, o->count, sizeof(*order), by_probe_path);
  for (size_t i = 0; err == 0 && !why[0] && i < o->count; i++) {
    const gpujit__probe *p = order[i];
    const char *path = p->path;
    struct stat st;
    const char *pch = gpujit__pch_dir_if_made();
    bool tk = gpujit__in_toolkit(path);
    if (pch && (gpujit__path_under(path, pch) || strcmp(path, pch) == 0))
      continue; /* this process's own PCHs: their makers' probes are merged in (compile/pch/pch.c) */
    bool source = false;
    if (p->written)
      continue; /* NVRTC's own output */
    if (p->listed) {
      snprintf(why, why_size, "NVRTC listed the directory %s, whose entries no record can replay", path);
      break;
    }
    for (size_t k = 0; k < count && !source; k++)
      source = !p->read && strcmp(sources[k], path) == 0;
    switch (p->kind) {
    case GPUJIT__PROBE_FILE:
      err = p->library ? add_library(out, p, start, why, why_size) : add_read(out, p, base, start, source, why, why_size);
      break;
    case GPUJIT__PROBE_ERROR:
      if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && p->err != EACCES && p->err != EPERM) {
        snprintf(why, why_size, "%s appeared during the compile", path);
        break;
      }
      err = gpujit__deps_add_error(&out->deps, path, base, p->err);
      break;
    case GPUJIT__PROBE_ABSENT:
      err = add_absent_probe(tk ? &out->shared : &out->deps, path, tk ? NULL : base, &walk, why, why_size);
      break;
    case GPUJIT__PROBE_OTHER:
      if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
        snprintf(why, why_size, "%s became a file during the compile", path);
        break;
      }
      err = gpujit__deps_add_nofile(tk ? &out->shared : &out->deps, path, tk ? NULL : base);
      break;
    }
  }
  free(order);
  if (err == 0 && !why[0])
    err = add_env(out, o);
  return err == 0 ? identities(out, o, sources, count, spread) : err;
}

bool gpujit__names_once(const gpujit_module_options *o, const gpujit_source *sources, size_t count)
{
  static const char *const once[] = {"once"};
  bool defines = false;
  for (size_t i = 0; i < count && !defines; i++)
    gpujit__deps_scan_once(sources[i].data, sources[i].size, &defines);
  return defines || options_use(o, once, 1) != NULL;
}

void gpujit__observed_deps_free(gpujit__observed_deps *d)
{
  for (size_t i = 0; i < d->count; i++) {
    free(d->files[i].path);
    gpujit__buf_free(&d->files[i].data);
  }
  free(d->files);
  gpujit__deps_free(&d->deps);
  gpujit__deps_free(&d->shared);
  memset(d, 0, sizeof(*d));
}

/* gpujit__inc_ident_char(), inlined: a call a byte was most of the lexing below */
static inline bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* Whether an identifier of [p, end) is exactly `want` (length n). */
static bool ident_is(const char *p, const char *end, const char *want, size_t n)
{
  for (const char *at = p; at && at + n <= end; at++) {
    if (!(at = memmem(at, (size_t)(end - at), want, n)))
      break;
    if ((at == p || !gpujit__inc_ident_char(at[-1])) && (at + n == end || !gpujit__inc_ident_char(at[n])))
      return true;
  }
  return false;
}

/* Which of `names` an identifier of [p, end) is a piece of — a leading part (three characters or
 * more, shorter than the name) of a name starting "__", or a trailing part of a name ending "__" —
 * as bits of `hit`, in one pass over the text's identifiers: searching for each piece apart took
 * some thirty passes over every pasting header (CUB's ~1 MB of them: most of what the cacheable
 * check added to a miss), each stopping at every "__T" and "__D" of CUB's macros. */
static void paste_pieces(const char *p, const char *end, const char *const *names, size_t n, bool *hit)
{
  size_t len[8];
  bool lead[8], trail[8];
  for (size_t k = 0; k < n; k++) {
    len[k] = strlen(names[k]);
    lead[k] = !strncmp(names[k], "__", 2);
    trail[k] = len[k] >= 2 && !strcmp(names[k] + len[k] - 2, "__");
  }
  while (p < end) {
    const char *s = p;
    if (!ident_char(*p)) {
      p++;
      continue;
    }
    while (p < end && ident_char(*p))
      p++;
    size_t cut = (size_t)(p - s);
    for (size_t k = 0; cut >= 3 && (s[0] == '_' || p[-1] == '_') && k < n; k++) /* a piece starts or ends "__" */
      hit[k] = hit[k] || (cut < len[k] && ((lead[k] && s[1] == '_' && !memcmp(names[k], s, cut)) ||
                                           (trail[k] && p[-2] == '_' && !memcmp(names[k] + len[k] - cut, s, cut))));
  }
}

/* Whether the text holds "##": '#' found by memchr (memmem's two-byte search took longer than
 * searching for a whole name). */
static bool pastes(const char *p, size_t size)
{
  const char *end = p + size, *at = p;
  while (at + 1 < end && (at = memchr(at, '#', (size_t)(end - at - 1))) != NULL)
    if (*++at == '#')
      return true;
  return false;
}

/* Which of `names` (at most 8, each at most 32 long) the text holds as whole identifiers, as bits
 * of `found`, in one memchr pass on a byte every name holds other than '_' (which most identifiers
 * hold): 'T' for the time macros, one pass over CUB's 6 MB instead of a memmem search per name.
 * false where the names share no such byte. */
static bool whole_names(const char *p, const char *end, const char *const *names, size_t n, bool *found)
{
  size_t len[8], at[8][32], many[8] = {0};
  char c = 0;
  for (const char *q = names[0]; n && *q && !c; q++) {
    bool all = *q != '_';
    for (size_t k = 1; all && k < n; k++)
      all = strchr(names[k], *q) != NULL;
    c = all ? *q : 0;
  }
  for (size_t k = 0; c && k < n; k++) { /* where the byte stands in each name */
    for (len[k] = 0; names[k][len[k]] && len[k] < 32; len[k]++)
      if (names[k][len[k]] == c)
        at[k][many[k]++] = len[k];
    c = names[k][len[k]] ? 0 : c; /* a longer name: searched for by itself */
  }
  if (!c)
    return false;
  for (const char *x = p; x < end && (x = memchr(x, c, (size_t)(end - x))) != NULL; x++)
    for (size_t k = 0; k < n; k++)
      for (size_t j = 0; j < many[k] && !found[k]; j++) {
        const char *s = x - at[k][j];
        found[k] = (size_t)(x - p) >= at[k][j] && (size_t)(end - s) >= len[k] && s[0] == names[k][0] &&
                   s[len[k] - 1] == names[k][len[k] - 1] && !memcmp(s, names[k], len[k]) &&
                   (s == p || !ident_char(s[-1])) && (s + len[k] == end || !ident_char(s[len[k]]));
      }
  return true;
}

/* The first of `names` (at most 8) [p, p+size) uses: as a whole identifier; and where the text
 * pastes tokens (##), as a piece a paste could make it of (paste_pieces()). */
static const char *uses_any(const char *p, size_t size, const char *const *names, size_t n)
{
  const char *end = p + size;
  bool piece[8] = {false}, whole[8] = {false}, one_pass = p && whole_names(p, end, names, n, whole);
  if (p && pastes(p, size))
    paste_pieces(p, end, names, n, piece);
  for (size_t k = 0; p && k < n; k++)
    if (piece[k] || (one_pass ? whole[k] : ident_is(p, end, names[k], strlen(names[k]))))
      return names[k];
  return NULL;
}

static const char *const own_path_names[] = {"__FILE__", "__BASE_FILE__", "__FILE_NAME__", "source_location",
                                             "__builtin_FILE", "__builtin_FILE_NAME"};
#define OWN_PATH_NAMES own_path_names, sizeof(own_path_names) / sizeof(own_path_names[0])
static const char *const time_names[] = {"__TIME__", "__DATE__", "__TIMESTAMP__"};
#define TIME_NAMES time_names, sizeof(time_names) / sizeof(time_names[0])

/* One of `names` in a define, a raw NVRTC option or the prelude. */
static const char *options_use(const gpujit_module_options *o, const char *const *names, size_t n)
{
  const char *macro = NULL;
  for (size_t i = 0; !macro && i < o->defines_count; i++)
    macro = uses_any(o->defines[i], strlen(o->defines[i]), names, n);
  for (size_t i = 0; !macro && i < o->nvrtc_options_count; i++)
    macro = uses_any(o->nvrtc_options[i], strlen(o->nvrtc_options[i]), names, n);
  return macro || !o->prelude ? macro : uses_any(o->prelude, strlen(o->prelude), names, n);
}

const char *gpujit__names_own_path(const gpujit_module_options *o, const gpujit_source *sources, size_t count,
                                   const gpujit__observed_deps *d)
{
  const char *m = options_use(o, OWN_PATH_NAMES);
  for (size_t i = 0; !m && i < count; i++)
    m = uses_any(sources[i].data, sources[i].size, OWN_PATH_NAMES);
  /* the toolkit's headers too: a CCCL assert expands __FILE__ to the path of the header it is in */
  for (size_t i = 0; !m && d && i < d->count; i++)
    m = uses_any(d->files[i].data.data, d->files[i].data.len, OWN_PATH_NAMES);
  return m;
}

bool gpujit__module_cacheable(const gpujit_module_options *o, const gpujit_source *sources, const char *const *paths,
                              size_t count, const gpujit__observed_deps *read, char *why, size_t why_size)
{
  gpujit__nvrtc_opts raw;
  const char *macro, *sloppy = getenv("GPUJIT_CACHE_TIME_MACROS");
  bool ok;
  if (gpujit__nvrtc_opts_parse(&raw, (const char *const *)o->nvrtc_options, o->nvrtc_options_count) < 0) {
    gpujit_error_clear();
    snprintf(why, why_size, "its NVRTC options do not parse");
    return false;
  }
  ok = gpujit__nvrtc_opts_cacheable(&raw, why, why_size);
  gpujit__nvrtc_opts_free(&raw);
  if (!ok || (sloppy && strcmp(sloppy, "1") == 0))
    return ok;
  /* Like ccache: a build that expands the time or date would be served with the first one's. */
  for (size_t i = 0; i < count; i++)
    if ((macro = uses_any(sources[i].data, sources[i].size, TIME_NAMES))) {
      snprintf(why, why_size, "%s uses %s (GPUJIT_CACHE_TIME_MACROS=1 caches it anyway)", paths[i], macro);
      return false;
    }
  for (size_t i = 0; read && i < read->count; i++)
    if ((macro = uses_any(read->files[i].data.data, read->files[i].data.len, TIME_NAMES))) {
      snprintf(why, why_size, "%s uses %s (GPUJIT_CACHE_TIME_MACROS=1 caches it anyway)", read->files[i].path, macro);
      return false;
    }
  if ((macro = options_use(o, TIME_NAMES))) {
    snprintf(why, why_size, "an option or the prelude uses %s (GPUJIT_CACHE_TIME_MACROS=1 caches it anyway)", macro);
    return false;
  }
  return true;
}
