/* A prediction of what a compile will read besides its sources, found the way NVRTC looks headers
 * up: for planning (a source's include block and its PCH), refusing a FIFO where NVRTC would wait,
 * and the build server's kept scans — never a cache record: what a compile read is observed
 * (compile/observe), not predicted. A line-based scan: every #include counts whatever #if
 * surrounds it (an over-approximation: a prediction too wide costs a plan, never a wrong build).
 * Lookups that fail everywhere are dropped: a compile that succeeded only reached such an
 * #include in an inactive #if branch. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fs.h"
#include "base/strset.h"
#include "compile/includes/directives.h"
#include "compile/includes/includes.h"
#include "compile/toolkit/nvrtc_opts.h"
#include "compile/includes/scan.h"
#include "compile/toolkit/toolkit.h"

#define MAX_DEPTH 200

static bool is_file(const char *p)
{
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* A candidate that is a FIFO, device or socket: NVRTC opens it and waits (a FIFO no one writes,
 * a device that never ends). The first is kept for the build to refuse. */
static void refuse_special(gpujit__includes *inc, const char *p)
{
  struct stat st;
  if (inc->refused[0] || stat(p, &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
    return;
  snprintf(inc->refused, sizeof(inc->refused), "%s: is %s, where NVRTC would read a header (it would wait on it); "
           "gpujit reads regular files only",
           p, S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISSOCK(st.st_mode) ? "a socket" : "a device");
}

/* `path` (absolute) as the kernel resolves it: ".." is the parent of the directory reached so
 * far, which a symlink makes another directory than the lexical one ("link/../x.h" is beside
 * link's target). A prefix ending in ".." is resolved on disk; the rest is normalised. A prefix
 * that does not resolve (a component is missing) is left as it is: no file lies behind it. */
static void physical(char *path, size_t size)
{
  char head[PATH_MAX], real[PATH_MAX];
  const char *last = NULL;
  for (const char *p = strstr(path, "/.."); p; p = strstr(p + 1, "/.."))
    if (p[3] == '/' || p[3] == '\0')
      last = p + 3;
  if (!last) {
    gpujit__normpath(path);
    return;
  }
  snprintf(head, sizeof(head), "%.*s", (int)(last - path), path);
  if (!realpath(head, real))
    return;
  snprintf(head, sizeof(head), "%s%s", real, last);
  snprintf(path, size, "%s", head);
  gpujit__normpath(path);
}

static void join(char *out, size_t size, const char *dir, const char *name)
{
  if (name[0] == '/')
    snprintf(out, size, "%s", name);
  else
    snprintf(out, size, "%s/%s", dir, name);
  physical(out, size);
}

/* `dir`/`name` was looked up and not found: record the shallowest missing component, since
 * nothing can appear below a missing directory without the directory appearing first. */
static int add_absent(gpujit__includes *inc, const char *dir, const char *name)
{
  char full[PATH_MAX], probe[PATH_MAX];
  const char *rest;
  struct stat st;
  size_t at;
  join(full, sizeof(full), dir, name);
  if (stat(full, &st) == 0) { /* it exists (a directory, say): passed over, and must stay no file */
    return gpujit__strvec_push(&inc->not_files, full);
  }
  rest = gpujit__path_under(full, dir);
  at = rest ? (size_t)(rest - full) : 1;
  for (;;) {
    const char *slash = strchr(full + at, '/');
    size_t n = slash ? (size_t)(slash - full) : strlen(full);
    memcpy(probe, full, n);
    probe[n] = '\0';
    if (!slash || stat(probe, &st) != 0)
      break;
    at = n + 1;
  }
  if (gpujit__strset_find(&inc->absent_set, probe, NULL))
    return 0;
  if (gpujit__strvec_push(&inc->absent, probe) < 0)
    return GPUJIT_ENOMEM;
  return gpujit__strset_put(&inc->absent_set, inc->absent.items[inc->absent.count - 1], 0);
}

/* The directories searched for source `s`, in order, behind an optional includer directory. */
static size_t candidates(const gpujit__includes *inc, size_t s, const char *includer_dir, char srcdir[PATH_MAX],
                         const char **out, size_t max)
{
  size_t n = 0;
  const char *slash = strrchr(inc->source_paths[s], '/');
  snprintf(srcdir, PATH_MAX, "%.*s", (int)(slash ? slash - inc->source_paths[s] : 0),
           inc->source_paths[s]);
  if (includer_dir && n < max)
    out[n++] = includer_dir;
  for (size_t i = 0; i < inc->before.count && n < max; i++)
    out[n++] = inc->before.items[i];
  if (n < max)
    out[n++] = srcdir;
  for (size_t i = 0; i < inc->after.count && n < max; i++)
    out[n++] = inc->after.items[i];
  return n;
}

static int scan_file(gpujit__includes *inc, size_t s, size_t idx, int depth);
static int scan_text(gpujit__includes *inc, size_t s, const char *path, const char *data, size_t size, int depth);

static int add_file(gpujit__includes *inc, size_t s, const char *path, int depth, bool scan)
{
  gpujit__inc_file *f;
  size_t idx;
  int err;
  for (size_t i = 0; i < inc->nsources; i++)
    if (strcmp(inc->source_paths[i], path) == 0)
      return 0;
  if (gpujit__strset_find(&inc->byname, path, NULL))
    return 0;
  if (!(f = gpujit__grow(inc->files, &inc->capfiles, inc->nfiles, sizeof(*f), 64)))
    return GPUJIT_ENOMEM;
  inc->files = f;
  f = &inc->files[inc->nfiles];
  memset(f, 0, sizeof(*f));
  if (!(f->path = gpujit__strdup(path)))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  if ((err = gpujit__inc_file_load(f, path)) < 0) {
    gpujit__buf_free(&f->data);
    gpujit__buf_free(&f->directives);
    free(f->path);
    return err;
  }
  idx = inc->nfiles++;
  if ((err = gpujit__strset_put(&inc->byname, f->path, idx)) < 0)
    return err;
  if (!scan)
    return 0;
  return scan_file(inc, s, idx, depth + 1);
}

/* The search of `name` through list[first..n): the first file found is added and scanned, the
 * candidates before it recorded absent (a kept scan holds only while they stay so). */
static int search(gpujit__includes *inc, size_t s, const char *const *list, size_t first, size_t n, const char *name,
                  int depth)
{
  char cand[PATH_MAX];
  size_t k;
  int err;
  for (k = first; k < n; k++) {
    join(cand, sizeof(cand), list[k], name);
    if (is_file(cand))
      break;
    refuse_special(inc, cand);
  }
  if (k == n) { /* only reachable in an inactive #if branch of a compile that succeeded */
    for (k = first; k < n; k++) { /* a scan kept for later holds only while none of them appears */
      join(cand, sizeof(cand), list[k], name);
      if ((err = gpujit__strvec_push(&inc->not_files, cand)) < 0)
        return err;
    }
    return 0;
  }
  for (size_t j = first; j < k; j++)
    if ((err = add_absent(inc, list[j], name)) < 0)
      return err;
  return add_file(inc, s, cand, depth, true);
}

/* One lookup of `name` from `includer`: NVRTC's order; failed candidates before the hit are
 * recorded absent. `next` (#include_next): the search resumes after the directory the
 * includer was found in. Which one that was is not kept, so every directory of the search
 * path the includer lies under is taken as a start (and, for a source, the first one too, as
 * for a plain #include): the union can only add dependencies. */
int gpujit__inc_lookup(gpujit__includes *inc, size_t s, const char *includer, const char *name, bool quoted,
                       bool next, int depth)
{
  char dir[PATH_MAX], key[PATH_MAX * 2 + 32], cand[PATH_MAX], srcdir[PATH_MAX];
  const char *list[256];
  size_t n, starts = 0;
  int err;
  snprintf(dir, sizeof(dir), "%s", includer);
  if (strrchr(dir, '/'))
    *strrchr(dir, '/') = '\0';
  snprintf(key, sizeof(key), "%zu|%d|%s|%s", s, next, quoted || next ? includer : "", name);
  if (gpujit__strset_find(&inc->resolved_set, key, NULL))
    return 0;
  if ((err = gpujit__strvec_push(&inc->resolved, key)) < 0 ||
      (err = gpujit__strset_put(&inc->resolved_set, inc->resolved.items[inc->resolved.count - 1], 0)) < 0)
    return err;
  if (name[0] == '/') {
    if (is_file(name)) {
      snprintf(cand, sizeof(cand), "%s", name);
      physical(cand, sizeof(cand));
      return add_file(inc, s, cand, depth, true);
    }
    return gpujit__strvec_push(&inc->not_files, name);
  }
  if (!next) {
    n = candidates(inc, s, quoted ? dir : NULL, srcdir, list, sizeof(list) / sizeof(list[0]));
    return search(inc, s, list, 0, n, name, depth);
  }
  n = candidates(inc, s, NULL, srcdir, list, sizeof(list) / sizeof(list[0]));
  for (size_t k = 0; k < n; k++)
    if (gpujit__path_under(includer, list[k])) {
      starts++;
      if ((err = search(inc, s, list, k + 1, n, name, depth)) < 0)
        return err;
    }
  for (size_t i = 0; i < inc->nsources; i++)
    if (strcmp(inc->source_paths[i], includer) == 0)
      starts = 0;
  return starts ? 0 : search(inc, s, list, 0, n, name, depth);
}

/* `#include MACRO`: follow what MACRO names, or leave it pending until more #defines are seen. */
int gpujit__inc_computed(gpujit__includes *inc, size_t s, const char *includer, const char *macro, bool next,
                            int depth, bool *resolved)
{
  gpujit__strvec vals = {0};
  int n = gpujit__inc_macro_names(inc, macro, &vals, 0), err = 0;
  *resolved = n > 0;
  for (size_t i = 0; err == 0 && n > 0 && i < vals.count; i++) {
    char name[PATH_MAX];
    bool quoted;
    const char *v = vals.items[i];
    if (gpujit__inc_header_name(v, v + strlen(v), name, sizeof(name), &quoted))
      err = gpujit__inc_lookup(inc, s, includer, name, quoted, next, depth);
  }
  gpujit__strvec_free(&vals);
  return n < 0 ? GPUJIT_ENOMEM : err;
}

int gpujit__inc_add_pending(gpujit__includes *inc, size_t s, const char *includer, const char *macro, bool next)
{
  gpujit__inc_pending *p = gpujit__grow(inc->pend, &inc->cappend, inc->npend, sizeof(*p), 8);
  if (!p)
    return GPUJIT_ENOMEM;
  inc->pend = p;
  p = &inc->pend[inc->npend];
  p->includer = gpujit__strdup(includer);
  p->name = gpujit__strdup(macro);
  p->source = s;
  p->next = next;
  if (!p->includer || !p->name)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  inc->npend++;
  return 0;
}

/* One reading of a file's text: its #define and #include lines, line by line. */
static int scan_lines(gpujit__includes *inc, size_t s, const char *path, const char *data, size_t size, int depth)
{
  const char *p = data, *end = data + size;
  int err;
  if (depth > MAX_DEPTH)
    return 0;
  while (p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p)), *q;
    if (!eol)
      eol = end;
    q = gpujit__inc_skip_ws(p, eol);
    if (q < eol && *q == '#') {
      q = gpujit__inc_skip_ws(q + 1, eol);
      if (eol - q > 6 && strncmp(q, "define", 6) == 0 && (q[6] == ' ' || q[6] == '\t')) {
        if ((err = gpujit__inc_note_define(inc, q + 6, eol)) < 0)
          return err;
      } else if (eol - q > 7 && strncmp(q, "include", 7) == 0) {
        char name[PATH_MAX];
        bool quoted, next = eol - q > 12 && strncmp(q + 7, "_next", 5) == 0;
        q = gpujit__inc_skip_ws(q + (next ? 12 : 7), eol);
        if (next && !inc->needs_trace) {
          /* Where #include_next resumes depends on where its includer was found. */
          inc->needs_trace = true;
          snprintf(inc->why, sizeof(inc->why), "#include_next in %s", path);
        }
        if (gpujit__inc_header_name(q, eol, name, sizeof(name), &quoted)) {
          if ((err = gpujit__inc_lookup(inc, s, path, name, quoted, next, depth)) < 0)
            return err;
        } else if (q < eol && gpujit__inc_ident_start(*q)) {
          char macro[256];
          bool resolved;
          gpujit__inc_ident(q, eol, macro, sizeof(macro));
          if ((err = gpujit__inc_computed(inc, s, path, macro, next, depth, &resolved)) < 0)
            return err;
          if (!resolved && (err = gpujit__inc_add_pending(inc, s, path, macro, next)) < 0)
            return err;
        }
      }
    }
    p = eol + 1;
  }
  return 0;
}

/* The reading of `path` may have missed a directive: the compile says what it opened. */
static void not_certain(gpujit__includes *inc, const char *path)
{
  if (inc->needs_trace)
    return;
  inc->needs_trace = true;
  snprintf(inc->why, sizeof(inc->why), "the directive scan is not certain of %s", path);
}

/* A text both as written and as the preprocessor reads its directives (comments, continuations,
 * "%:" and trigraphs: directives.c): a directive either reading finds is followed, so a comment
 * misread can only add dependencies. */
static int scan_text(gpujit__includes *inc, size_t s, const char *path, const char *data, size_t size, int depth)
{
  gpujit__buf lines = {0};
  bool unsure;
  int err;
  if ((err = scan_lines(inc, s, path, data, size, depth)) < 0 ||
      (err = gpujit__directive_lines(&lines, data, size, &unsure)) < 0 ||
      (err = scan_lines(inc, s, path, lines.data, lines.len, depth)) < 0) {
    gpujit__buf_free(&lines);
    return err;
  }
  gpujit__buf_free(&lines);
  if (unsure)
    not_certain(inc, path);
  return 0;
}

int gpujit__inc_readings(gpujit__includes *inc, size_t i, const char *data[2], size_t size[2])
{
  gpujit__inc_file *f = &inc->files[i];
  int err;
  if (!f->has_directives) {
    bool unsure;
    if ((err = gpujit__directive_lines(&f->directives, f->data.data ? f->data.data : "", f->data.len, &unsure)) < 0)
      return err;
    f->has_directives = true;
    if (unsure)
      not_certain(inc, f->path);
  }
  data[0] = f->data.data ? f->data.data : "";
  size[0] = f->data.len;
  data[1] = f->directives.data;
  size[1] = f->directives.len;
  return 0;
}

/* File `idx` (its path and buffers stay put while the scan adds files behind it). */
static int scan_file(gpujit__includes *inc, size_t s, size_t idx, int depth)
{
  const char *data[2];
  size_t size[2];
  char *path = inc->files[idx].path;
  int err = gpujit__inc_readings(inc, idx, data, size);
  for (int r = 0; err == 0 && r < 2; r++)
    err = scan_lines(inc, s, path, data[r], size[r], depth);
  return err;
}

static int push_abs(gpujit__strvec *v, const char *dir)
{
  char *abs = gpujit__abspath(dir);
  int err = abs ? gpujit__strvec_push(v, abs) : gpujit__error(GPUJIT_ENOMEM, "out of memory");
  free(abs);
  return err;
}

/* Raw NVRTC options, read as NVRTC reads them (compile/toolkit/nvrtc_opts.c): their -I directories go
 * after the toolkit's, as gpujit__nvrtc_flags orders them; a pre-included header is read before
 * every source; a form the scan cannot follow makes the compile say what it opened. */
static int raw_options(gpujit__includes *inc, const gpujit_module_options *o)
{
  gpujit__nvrtc_opts parsed;
  int err = gpujit__nvrtc_opts_parse(&parsed, (const char *const *)o->nvrtc_options, o->nvrtc_options_count);
  for (size_t i = 0; err == 0 && i < parsed.count; i++) {
    const gpujit__nvrtc_opt *it = &parsed.items[i];
    if (it->unsure || it->role == GPUJIT__OPT_SCAN) {
      inc->needs_trace = true; /* forms the scan does not follow: let the compile say */
      snprintf(inc->why, sizeof(inc->why), "NVRTC option %s", it->given);
    } else if (it->role == GPUJIT__OPT_INCLUDE_DIR) {
      err = gpujit__strvec_push(&inc->after, it->value);
      if (err == 0)
        gpujit__normpath(inc->after.items[inc->after.count - 1]);
    } else if (it->role == GPUJIT__OPT_DEFINE) {
      err = gpujit__inc_note_option_define(inc, it->value);
    } else if (it->role == GPUJIT__OPT_PRE_INCLUDE) {
      err = gpujit__strvec_push(&inc->pre_includes, it->value);
    }
  }
  gpujit__nvrtc_opts_free(&parsed);
  return err;
}

static int setup(gpujit__includes *inc, const gpujit_source *sources, const char *const *abs_paths, size_t count,
                 const gpujit_module_options *o)
{
  const char *root = gpujit__cuda_root();
  int err = 0;
  inc->sources = sources;
  inc->nsources = count;
  inc->prelude = o->prelude;
  if (!(inc->source_paths = calloc(count, sizeof(char *))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  for (size_t i = 0; i < count; i++) {
    if (!(inc->source_paths[i] = gpujit__strdup(abs_paths[i])))
      return gpujit__error(GPUJIT_ENOMEM, "out of memory");
    gpujit__normpath(inc->source_paths[i]);
  }
  /* The order gpujit__nvrtc_flags gives NVRTC: -I, the source's directory, the toolkit, then
   * gpujit's own device headers, then whatever -I came through as raw NVRTC options. */
  for (size_t i = 0; err == 0 && i < o->include_dirs_count; i++)
    err = push_abs(&inc->before, o->include_dirs[i]);
  if (err == 0)
    err = gpujit__strvec_pushf(&inc->after, "%s/include/cccl", root);
  if (err == 0)
    err = gpujit__strvec_pushf(&inc->after, "%s/include", root);
  if (err == 0 && gpujit_include_dir()) /* gpujit/regions.cuh, last as gpujit__nvrtc_flags gives it */
    err = gpujit__strvec_pushf(&inc->after, "%s", gpujit_include_dir());
  for (size_t i = 0; err == 0 && i < inc->after.count; i++)
    gpujit__normpath(inc->after.items[i]);
  if (err == 0)
    err = raw_options(inc, o);
  for (size_t i = 0; err == 0 && i < o->defines_count; i++)
    err = gpujit__inc_note_option_define(inc, o->defines[i]);
  return err;
}

int gpujit__includes_scan(gpujit__includes **out, const gpujit_source *sources, const char *const *abs_paths,
                          size_t count, const gpujit_module_options *o)
{
  gpujit__includes *inc;
  uint64_t key[2] = {0, 0};
  struct timespec now;
  int64_t read_start;
  int err;
  bool progress = true;
  *out = NULL;
  if (gpujit__inc_memo_take(out, key, sources, abs_paths, count, o))
    return 0;
  clock_gettime(CLOCK_REALTIME, &now);
  read_start = (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec;
  if (!(inc = calloc(1, sizeof(*inc))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  if ((err = setup(inc, sources, abs_paths, count, o)) < 0)
    goto fail;
  for (size_t s = 0; s < count; s++) {
    for (size_t i = 0; i < inc->pre_includes.count; i++)
      if ((err = add_file(inc, s, inc->pre_includes.items[i], 0, true)) < 0)
        goto fail;
    if (inc->prelude && (err = scan_text(inc, s, inc->source_paths[s], inc->prelude, strlen(inc->prelude), 0)) < 0)
      goto fail;
    if ((err = scan_text(inc, s, inc->source_paths[s], sources[s].data, sources[s].size, 0)) < 0)
      goto fail;
  }
  /* Computed includes whose macro was defined in a file scanned later: retry until no progress. */
  while (progress && inc->npend) {
    progress = false;
    for (size_t i = 0; i < inc->npend; i++) {
      bool resolved;
      gpujit__inc_pending p = inc->pend[i];
      if ((err = gpujit__inc_computed(inc, p.source, p.includer, p.name, p.next, 0, &resolved)) < 0)
        goto fail;
      if (resolved) {
        free(p.includer);
        free(p.name);
        inc->pend[i--] = inc->pend[--inc->npend];
        progress = true;
      }
    }
  }
  if (inc->npend && !inc->needs_trace) {
    inc->needs_trace = true;
    snprintf(inc->why, sizeof(inc->why), "computed #include %s in %s", inc->pend[0].name, inc->pend[0].includer);
  }
  gpujit__inc_memo_put(inc, key, read_start);
  *out = inc;
  return 0;
fail:
  gpujit__includes_free(inc);
  return err;
}

bool gpujit__includes_needs_trace(const gpujit__includes *inc, const char **why)
{
  if (why)
    *why = inc->why;
  return inc->needs_trace;
}

size_t gpujit__includes_count(const gpujit__includes *inc) { return inc ? inc->nfiles : 0; }

const char *gpujit__includes_path(const gpujit__includes *inc, size_t i, const char **data, size_t *size)
{
  if (data)
    *data = inc->files[i].data.data ? inc->files[i].data.data : "";
  if (size)
    *size = inc->files[i].data.len;
  return inc->files[i].path;
}

const char *gpujit__includes_refused(const gpujit__includes *inc) { return inc && inc->refused[0] ? inc->refused : NULL; }
