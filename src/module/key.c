/* A module's cache key: what it is built from (options, toolkit, arch, sources, the user headers
 * an include scan finds), hashed as labelled fields, and the readable inputs for its metadata. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "base/error.h"
#include "base/fs.h"
#include "cache/store.h"
#include "compile/toolkit.h"
#include "module/key.h"
#include "module/module.h"

void gpujit__keyinfo_free(gpujit__keyinfo *k)
{
  for (size_t i = 0; i < k->count; i++) {
    free(k->files[i].path);
    free(k->files[i].rel);
    free(k->files[i].owned);
  }
  free(k->files);
  cJSON_Delete(k->inputs);
  memset(k, 0, sizeof(*k));
}

static const char *relative(const char *path, const char *base)
{
  size_t n = base ? strlen(base) : 0;
  if (n && strncmp(path, base, n) == 0 && path[n] == '/')
    return path + n + 1;
  return path;
}

static bool under(const char *path, const char *dir)
{
  size_t n = strlen(dir);
  return strncmp(path, dir, n) == 0 && path[n] == '/';
}

typedef struct scan_ctx {
  gpujit__keyinfo *info;
  gpujit__hasher *st;
  gpujit__strvec dirs;   /* -I dirs (absolute) then the source's dir */
  gpujit__strvec system; /* toolkit include dirs: covered by the toolkit identity */
  const char *base;
  cJSON *headers;
} scan_ctx;

static int add_file(gpujit__keyinfo *info, const char *abs, const char *base, const char *data,
                    size_t size, char *owned)
{
  gpujit__keyfile *f = gpujit__grow(info->files, &info->cap, info->count, sizeof(*f), 16);
  if (!f)
    return GPUJIT_ENOMEM;
  info->files = f;
  f = &info->files[info->count];
  f->path = gpujit__strdup(abs);
  f->rel = gpujit__strdup(relative(abs, base));
  f->data = data;
  f->size = size;
  f->owned = owned;
  if (!f->path || !f->rel)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  info->count++;
  return 0;
}

static bool known(const gpujit__keyinfo *info, const char *abs)
{
  for (size_t i = 0; i < info->count; i++)
    if (strcmp(info->files[i].path, abs) == 0)
      return true;
  return false;
}

static bool is_file(const char *p)
{
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int scan(scan_ctx *c, const char *file, const char *data, size_t size, int depth);

/* Resolve one #include and recurse into user headers. */
static int include(scan_ctx *c, const char *from, const char *name, bool quoted, int depth)
{
  char cand[PATH_MAX];
  char *dir = NULL, *abs = NULL;
  gpujit__buf buf = {0};
  bool found = false;
  int err = 0;

  if (name[0] == '/') {
    snprintf(cand, sizeof(cand), "%s", name);
    found = is_file(cand);
  }
  if (!found && quoted) {
    dir = gpujit__dirname(from);
    snprintf(cand, sizeof(cand), "%s/%s", dir, name);
    found = is_file(cand);
  }
  for (size_t i = 0; !found && i < c->dirs.count; i++) {
    snprintf(cand, sizeof(cand), "%s/%s", c->dirs.items[i], name);
    found = is_file(cand);
  }
  for (size_t i = 0; !found && i < c->system.count; i++) {
    snprintf(cand, sizeof(cand), "%s/%s", c->system.items[i], name);
    if (is_file(cand))
      goto done; /* a toolkit header: the toolkit identity covers it */
  }
  if (!found) {
    /* Recorded so that creating the header later changes the key. */
    char label[PATH_MAX + 32];
    snprintf(label, sizeof(label), "missing %s from %s", name, relative(from, c->base));
    gpujit__hasher_str(c->st, "missing-header", label);
    cJSON_AddItemToArray(c->headers, cJSON_CreateString(label));
    goto done;
  }
  if (!(abs = gpujit__abspath(cand))) {
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < c->system.count; i++)
    if (under(abs, c->system.items[i]))
      goto done;
  if (known(c->info, abs))
    goto done;
  if ((err = gpujit__file_read(&buf, abs)) < 0)
    goto done;
  gpujit__hasher_str(c->st, "header-path", relative(abs, c->base));
  gpujit__hasher_field(c->st, "header", buf.data, buf.len);
  cJSON_AddItemToArray(c->headers, cJSON_CreateString(relative(abs, c->base)));
  if ((err = add_file(c->info, abs, c->base, buf.data, buf.len, buf.data)) < 0)
    goto done;
  err = scan(c, abs, buf.data, buf.len, depth + 1);
  buf.data = NULL; /* owned by the keyinfo now */
done:
  gpujit__buf_free(&buf);
  free(dir);
  free(abs);
  return err;
}

/*
 * A line-based scan for #include: every directive counts, whatever #if surrounds it (an
 * over-approximation: more headers in the key can only cause extra misses, never stale hits).
 */
static int scan(scan_ctx *c, const char *file, const char *data, size_t size, int depth)
{
  const char *p = data, *end = data + size;
  int err;
  if (depth > 64)
    return 0;
  while (p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p)), *q = p;
    if (!eol)
      eol = end;
    while (q < eol && (*q == ' ' || *q == '\t'))
      q++;
    if (q < eol && *q == '#') {
      q++;
      while (q < eol && (*q == ' ' || *q == '\t'))
        q++;
      if (eol - q > 7 && strncmp(q, "include", 7) == 0) {
        char close, name[PATH_MAX];
        const char *s, *e;
        q += 7;
        if (eol - q > 5 && strncmp(q, "_next", 5) == 0)
          q += 5;
        while (q < eol && (*q == ' ' || *q == '\t'))
          q++;
        close = q < eol && *q == '"' ? '"' : q < eol && *q == '<' ? '>' : 0;
        if (!close) {
          /* A computed include cannot be followed: record it so the key says so. */
          gpujit__hasher_field(c->st, "computed-include", q, (size_t)(eol - q));
        } else {
          s = q + 1;
          e = memchr(s, close, (size_t)(eol - s));
          if (e && (size_t)(e - s) < sizeof(name)) {
            memcpy(name, s, (size_t)(e - s));
            name[e - s] = '\0';
            if ((err = include(c, file, name, close == '"', depth)) < 0)
              return err;
          }
        }
      }
    }
    p = eol + 1;
  }
  return 0;
}

static int cmp_macro(const void *a, const void *b)
{
  const char *x = *(const char *const *)a, *y = *(const char *const *)b;
  size_t nx = strcspn(x, "=("), ny = strcspn(y, "=(");
  int c = strncmp(x, y, nx < ny ? nx : ny);
  return c ? c : (nx > ny) - (nx < ny);
}

/* Stable sort by macro name: reordering different macros hits, redefinition order counts. */
static void sorted_macros(gpujit__hasher *st, cJSON *inputs, const char *label, const char *const *items, size_t n)
{
  const char **copy = malloc((n + 1) * sizeof(*copy));
  cJSON *arr = cJSON_AddArrayToObject(inputs, label);
  if (!copy)
    return;
  for (size_t i = 0; i < n; i++)
    copy[i] = items[i];
  for (size_t i = 1; i < n; i++) /* insertion sort: stable */
    for (size_t j = i; j > 0 && cmp_macro(&copy[j - 1], &copy[j]) > 0; j--) {
      const char *t = copy[j];
      copy[j] = copy[j - 1];
      copy[j - 1] = t;
    }
  for (size_t i = 0; i < n; i++) {
    gpujit__hasher_str(st, label, copy[i]);
    cJSON_AddItemToArray(arr, cJSON_CreateString(copy[i]));
  }
  free(copy);
}

int gpujit__module_key(gpujit__key *out, gpujit__keyinfo *info, const char *base,
                       const gpujit_source *sources, const char *const *abs_paths, size_t count,
                       const gpujit_module_options *o, const char *arch, gpujit_output_kind output)
{
  gpujit__hasher *st = gpujit__hasher_new();
  scan_ctx c = {0};
  cJSON *in, *arr;
  char num[64];
  int err = 0;

  memset(info, 0, sizeof(*info));
  if (!st || !(info->inputs = cJSON_CreateObject())) {
    gpujit__hasher_free(st);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  in = info->inputs;
  snprintf(num, sizeof(num), "%d", GPUJIT_CACHE_SCHEMA);
  gpujit__hasher_str(st, "schema", num);
  gpujit__hasher_str(st, "gpujit", GPUJIT_VERSION_STRING);
  gpujit__hasher_str(st, "toolkit", gpujit__toolkit_id());
  gpujit__hasher_str(st, "arch", arch);
  gpujit__hasher_str(st, "output", gpujit_output_kind_name(output));
  cJSON_AddNumberToObject(in, "schema", GPUJIT_CACHE_SCHEMA);
  cJSON_AddStringToObject(in, "gpujit", GPUJIT_VERSION_STRING);
  cJSON_AddStringToObject(in, "toolkit", gpujit__toolkit_id());
  cJSON_AddStringToObject(in, "arch", arch);
  cJSON_AddStringToObject(in, "output", gpujit_output_kind_name(output));
#define FLAG(label, value)                                   \
  do {                                                       \
    snprintf(num, sizeof(num), "%d", (int)(value));          \
    gpujit__hasher_str(st, label, num);                               \
    cJSON_AddNumberToObject(in, label, (double)(value));     \
  } while (0)
  FLAG("lineinfo", o->lineinfo != 0);
  FLAG("line_directives", o->line_directives != 0);
  FLAG("device_debug", o->device_debug != 0);
  FLAG("fast_math", o->fast_math != 0);
  FLAG("maxrregcount", o->maxrregcount);
#undef FLAG
  gpujit__hasher_str(st, "std", o->std);
  gpujit__hasher_str(st, "ofast_compile", o->ofast_compile);
  gpujit__hasher_str(st, "prelude", o->prelude);
  cJSON_AddStringToObject(in, "std", o->std ? o->std : "");
  cJSON_AddStringToObject(in, "ofast_compile", o->ofast_compile ? o->ofast_compile : "");
  if (o->prelude)
    cJSON_AddStringToObject(in, "prelude", o->prelude);
  sorted_macros(st, in, "defines", o->defines, o->defines_count);
  sorted_macros(st, in, "undefines", o->undefines, o->undefines_count);
  arr = cJSON_AddArrayToObject(in, "name_expressions");
  for (size_t i = 0; i < o->name_expressions_count; i++) {
    gpujit__hasher_str(st, "name_expression", o->name_expressions[i]);
    cJSON_AddItemToArray(arr, cJSON_CreateString(o->name_expressions[i]));
  }
  arr = cJSON_AddArrayToObject(in, "nvrtc_options");
  for (size_t i = 0; i < o->nvrtc_options_count; i++) {
    if (strncmp(o->nvrtc_options[i], "--fdevice-time-trace", 20) == 0)
      continue; /* only affects the trace */
    gpujit__hasher_str(st, "nvrtc_option", o->nvrtc_options[i]);
    cJSON_AddItemToArray(arr, cJSON_CreateString(o->nvrtc_options[i]));
  }

  c.info = info;
  c.st = st;
  c.base = base;
  arr = cJSON_AddArrayToObject(in, "include_dirs");
  for (size_t i = 0; i < o->include_dirs_count && err == 0; i++) {
    char *abs = gpujit__abspath(o->include_dirs[i]);
    if (!abs) {
      err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
      break;
    }
    gpujit__hasher_str(st, "include_dir", relative(abs, c.base));
    cJSON_AddItemToArray(arr, cJSON_CreateString(relative(abs, c.base)));
    err = gpujit__strvec_push(&c.dirs, abs);
    free(abs);
  }
  if (err == 0)
    err = gpujit__strvec_pushf(&c.system, "%s/include/cccl", gpujit__cuda_root());
  if (err == 0)
    err = gpujit__strvec_pushf(&c.system, "%s/include", gpujit__cuda_root());
  arr = cJSON_AddArrayToObject(in, "sources");
  c.headers = cJSON_AddArrayToObject(in, "headers");
  for (size_t i = 0; i < count && err == 0; i++) {
    gpujit__hasher_str(st, "source-path", relative(abs_paths[i], c.base));
    gpujit__hasher_field(st, "source", sources[i].data, sources[i].size);
    cJSON_AddItemToArray(arr, cJSON_CreateString(relative(abs_paths[i], c.base)));
    err = add_file(info, abs_paths[i], c.base, sources[i].data, sources[i].size, NULL);
  }
  info->sources = info->count;
  for (size_t i = 0; i < count && err == 0; i++) {
    /* The source's own directory is searched after -I dirs, as gpujit__nvrtc_flags orders it. */
    char *dir = gpujit__dirname(abs_paths[i]);
    if (!dir || (err = gpujit__strvec_push(&c.dirs, dir)) < 0) {
      free(dir);
      err = err ? err : gpujit__error(GPUJIT_ENOMEM, "out of memory");
      break;
    }
    free(dir);
    err = scan(&c, abs_paths[i], sources[i].data, sources[i].size, 0);
    free(c.dirs.items[--c.dirs.count]);
  }
  gpujit__strvec_free(&c.dirs);
  gpujit__strvec_free(&c.system);
  if (err == 0) {
    gpujit__hasher_digest(st, out);
  } else {
    gpujit__keyinfo_free(info);
  }
  gpujit__hasher_free(st);
  return err;
}
