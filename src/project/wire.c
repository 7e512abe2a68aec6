/* Frames, options and modules between a project build and its workers (project/wire.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/error.h"
#include "cache/store/handle.h"
#include "compile/toolkit/nvrtc_opts.h"
#include "base/fs.h"
#include "module/build.h"
#include "module/lean.h"
#include "module/module.h"
#include "project/wire.h"

#define FRAME_MAX ((size_t)1 << 31) /* a module image is far below 2 GiB */

/* ---- frames: [u32 type][u32 length][payload] ---------------------------------------------- */

static int write_all(int fd, const void *data, size_t len)
{
  const char *p = data;
  while (len) {
    ssize_t n = send(fd, p, len, MSG_NOSIGNAL); /* a dead worker is an error, not a SIGPIPE */
    if (n < 0 && errno == ENOTSOCK)
      n = write(fd, p, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return gpujit__error(GPUJIT_EIO, "writing to a worker pipe: %s", strerror(errno));
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

int gpujit__frame_write(int fd, uint32_t type, const void *data, size_t len)
{
  uint32_t head[2] = {type, (uint32_t)len};
  int err;
  if (len >= FRAME_MAX)
    return gpujit__error(GPUJIT_EINVAL, "frame of %zu bytes is too large", len);
  if ((err = write_all(fd, head, sizeof(head))) < 0)
    return err;
  return len ? write_all(fd, data, len) : 0;
}

int gpujit__frame_fill(gpujit__frame_reader *r, int fd)
{
  for (;;) {
    ssize_t n;
    if (gpujit__buf_reserve(&r->in, 65536) < 0)
      return GPUJIT_ENOMEM;
    n = read(fd, r->in.data + r->in.len, 65536);
    if (n > 0) {
      r->in.len += (size_t)n;
      continue;
    }
    if (n == 0)
      return 0;
    if (errno == EINTR)
      continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK)
      return 1;
    return gpujit__error(GPUJIT_EIO, "reading a worker pipe: %s", strerror(errno));
  }
}

int gpujit__frame_take(gpujit__frame_reader *r, uint32_t *type, gpujit__buf *out)
{
  uint32_t head[2];
  if (r->in.len < sizeof(head))
    return 0;
  memcpy(head, r->in.data, sizeof(head));
  if (r->in.len < sizeof(head) + head[1])
    return 0;
  *type = head[0];
  out->len = 0;
  if (gpujit__buf_put(out, r->in.data + sizeof(head), head[1]) < 0)
    return GPUJIT_ENOMEM;
  if (out->data)
    out->data[out->len] = '\0';
  memmove(r->in.data, r->in.data + sizeof(head) + head[1], r->in.len - sizeof(head) - head[1]);
  r->in.len -= sizeof(head) + head[1];
  return 1;
}

static int read_all(int fd, void *data, size_t len)
{
  char *p = data;
  size_t got = 0;
  while (got < len) {
    ssize_t n = read(fd, p + got, len - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return gpujit__error(GPUJIT_EIO, "reading a pipe: %s", strerror(errno));
    if (n == 0)
      return got ? gpujit__error(GPUJIT_EPARSE, "pipe closed inside a frame") : 0;
    got += (size_t)n;
  }
  return 1;
}

int gpujit__frame_read(int fd, uint32_t *type, gpujit__buf *out)
{
  uint32_t head[2];
  int r = read_all(fd, head, sizeof(head));
  if (r <= 0)
    return r;
  *type = head[0];
  out->len = 0;
  if (gpujit__buf_reserve(out, head[1]) < 0)
    return GPUJIT_ENOMEM;
  if (head[1] && (r = read_all(fd, out->data, head[1])) <= 0)
    return r < 0 ? r : gpujit__error(GPUJIT_EPARSE, "pipe closed inside a frame");
  out->len = head[1];
  out->data[out->len] = '\0';
  return 1;
}

/* ---- options ------------------------------------------------------------------------------ */

static const struct {
  const char *name;
  size_t list, count;
} lists[] = {
  {"include_dirs", offsetof(gpujit_module_options, include_dirs), offsetof(gpujit_module_options, include_dirs_count)},
  {"defines", offsetof(gpujit_module_options, defines), offsetof(gpujit_module_options, defines_count)},
  {"undefines", offsetof(gpujit_module_options, undefines), offsetof(gpujit_module_options, undefines_count)},
  {"name_expressions", offsetof(gpujit_module_options, name_expressions),
   offsetof(gpujit_module_options, name_expressions_count)},
  {"nvrtc_options", offsetof(gpujit_module_options, nvrtc_options), offsetof(gpujit_module_options, nvrtc_options_count)},
};

static const struct {
  const char *name;
  size_t off;
} strings[] = {
  {"arch", offsetof(gpujit_module_options, arch)},
  {"std", offsetof(gpujit_module_options, std)},
  {"ofast_compile", offsetof(gpujit_module_options, ofast_compile)},
  {"prelude", offsetof(gpujit_module_options, prelude)},
}, ints[] = {
  {"lineinfo", offsetof(gpujit_module_options, lineinfo)},
  {"line_directives", offsetof(gpujit_module_options, line_directives)},
  {"device_debug", offsetof(gpujit_module_options, device_debug)},
  {"fast_math", offsetof(gpujit_module_options, fast_math)},
  {"maxrregcount", offsetof(gpujit_module_options, maxrregcount)},
  {"output", offsetof(gpujit_module_options, output)},
  {"pch", offsetof(gpujit_module_options, pch)},
  {"lean", offsetof(gpujit_module_options, lean)},
};

#define FIELD(o, off, type) (*(type *)((char *)(o) + (off)))

cJSON *gpujit__options_to_json(const gpujit_module_options *o)
{
  cJSON *j = cJSON_CreateObject();
  if (!j)
    return NULL;
  for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++) {
    const char *v = FIELD(o, strings[i].off, const char *);
    if (v)
      cJSON_AddStringToObject(j, strings[i].name, v);
  }
  for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
    cJSON_AddNumberToObject(j, ints[i].name, (double)FIELD(o, ints[i].off, int));
  for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
    const char *const *items = FIELD(o, lists[i].list, const char *const *);
    size_t n = FIELD(o, lists[i].count, size_t);
    cJSON *arr;
    if (!n)
      continue;
    arr = cJSON_AddArrayToObject(j, lists[i].name);
    for (size_t k = 0; k < n; k++)
      cJSON_AddItemToArray(arr, cJSON_CreateString(items[k]));
  }
  return j;
}

/* A failed parse keeps nothing: the holder is freed and `err` passed on. */
static int fail(gpujit__options_holder *h, int err)
{
  gpujit__options_holder_free(h);
  return err;
}

int gpujit__options_from_json(gpujit__options_holder *h, const cJSON *j, const char *what)
{
  static const gpujit_module_options init = GPUJIT_MODULE_OPTIONS_INIT;
  const cJSON *f;
  memset(h, 0, sizeof(*h));
  h->o = init;
  if (!j)
    return 0;
  if (!cJSON_IsObject(j))
    return gpujit__error(GPUJIT_EPARSE, "%s: \"options\" must be an object", what);
  cJSON_ArrayForEach(f, j) {
    bool known = false;
    for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
      if (!strcmp(f->string, strings[i].name)) {
        if (!cJSON_IsString(f))
          return fail(h, gpujit__error(GPUJIT_EPARSE, "%s: option \"%s\" must be a string", what, f->string));
        FIELD(&h->o, strings[i].off, const char *) = f->valuestring;
        known = true;
      }
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
      if (!strcmp(f->string, ints[i].name)) {
        if (cJSON_IsBool(f))
          FIELD(&h->o, ints[i].off, int) = cJSON_IsTrue(f);
        else if (cJSON_IsNumber(f) && f->valuedouble >= -2147483648.0 && f->valuedouble <= 2147483647.0 &&
                 f->valuedouble == (double)(int)f->valuedouble)
          FIELD(&h->o, ints[i].off, int) = (int)f->valuedouble;
        else
          return fail(h, gpujit__error(GPUJIT_EPARSE, "%s: option \"%s\" must be an integer or a boolean", what,
                                       f->string));
        known = true;
      }
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++)
      if (!strcmp(f->string, lists[i].name)) {
        const cJSON *it;
        size_t n = 0;
        if (!cJSON_IsArray(f))
          return fail(h, gpujit__error(GPUJIT_EPARSE, "%s: option \"%s\" must be an array of strings", what, f->string));
        free(h->lists[i]); /* a field given twice: the last one counts */
        if (!(h->lists[i] = calloc((size_t)cJSON_GetArraySize(f) + 1, sizeof(char *))))
          return fail(h, gpujit__error(GPUJIT_ENOMEM, "out of memory"));
        cJSON_ArrayForEach(it, f) {
          if (!cJSON_IsString(it))
            return fail(h, gpujit__error(GPUJIT_EPARSE, "%s: option \"%s\" must be an array of strings", what,
                                         f->string));
          h->lists[i][n++] = it->valuestring;
        }
        FIELD(&h->o, lists[i].list, const char **) = h->lists[i];
        FIELD(&h->o, lists[i].count, size_t) = n;
        known = true;
      }
    if (!known)
      return fail(h, gpujit__error(GPUJIT_EPARSE, "%s: unknown option \"%s\"", what, f->string));
  }
  return 0;
}

void gpujit__options_holder_free(gpujit__options_holder *h)
{
  for (size_t i = 0; i < sizeof(h->lists) / sizeof(h->lists[0]); i++)
    free(h->lists[i]);
  memset(h, 0, sizeof(*h));
}

cJSON *gpujit__options_merge(const cJSON *base, const cJSON *over)
{
  cJSON *out = base ? cJSON_Duplicate(base, 1) : cJSON_CreateObject();
  const cJSON *f;
  if (!out || !cJSON_IsObject(over))
    return out;
  cJSON_ArrayForEach(f, over) {
    cJSON *copy = cJSON_Duplicate(f, 1);
    cJSON_DeleteItemFromObjectCaseSensitive(out, f->string);
    if (!copy || !cJSON_IsObject(out) || !cJSON_AddItemToObject(out, f->string, copy))
      cJSON_Delete(copy); /* out of memory, or a base that is not an object: its fields are not kept */
  }
  return out;
}

/* ---- modules ------------------------------------------------------------------------------ */

static void add_strings(cJSON *j, const char *name, const gpujit__strvec *v)
{
  cJSON *arr = cJSON_AddArrayToObject(j, name);
  for (size_t i = 0; i < v->count; i++)
    cJSON_AddItemToArray(arr, cJSON_CreateString(v->items[i]));
}

static int get_strings(gpujit__strvec *v, const cJSON *j, const char *name)
{
  const cJSON *it, *arr = cJSON_GetObjectItemCaseSensitive(j, name);
  int err;
  cJSON_ArrayForEach(it, arr)
    if (cJSON_IsString(it) && (err = gpujit__strvec_push(v, it->valuestring)) < 0)
      return err;
  return 0;
}

static double num(const cJSON *j, const char *name)
{
  const cJSON *n = cJSON_GetObjectItemCaseSensitive(j, name);
  return cJSON_IsNumber(n) ? n->valuedouble : 0;
}

/* A number that is absent (0) or a whole value in 0..max. */
static bool enum_ok(const cJSON *j, const char *name, int max)
{
  double v = num(j, name);
  return v >= 0 && v <= max && v == (double)(int)v;
}

static const char *str(const cJSON *j, const char *name)
{
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, name);
  return cJSON_IsString(s) ? s->valuestring : "";
}

#define TIMINGS(X) X(read_ms) X(hash_ms) X(lookup_ms) X(compile_ms) X(link_ms) X(store_ms) X(total_ms) \
  X(saved_ms) X(front_end_ms) X(optimizer_ms) X(codegen_ms) X(ptxas_ms)

cJSON *gpujit__job_json(long id, const char *const *files, size_t count, cJSON *options, const gpujit_cache *cache,
                        bool trace, bool pch_more)
{
  cJSON *job = cJSON_CreateObject(), *arr;
  cJSON_AddNumberToObject(job, "id", (double)id);
  arr = cJSON_AddArrayToObject(job, "files");
  for (size_t k = 0; k < count; k++)
    cJSON_AddItemToArray(arr, cJSON_CreateString(files[k]));
  cJSON_AddItemToObject(job, "options", options);
  if (cache) {
    cJSON_AddStringToObject(job, "cache_dir", cache->dir);
    if (cache->base)
      cJSON_AddStringToObject(job, "base_dir", cache->base);
  }
  cJSON_AddBoolToObject(job, "trace", trace);
  cJSON_AddBoolToObject(job, "pch_more", pch_more);
  return job;
}

static int absolute(cJSON *item)
{
  char *abs = cJSON_IsString(item) ? gpujit__abspath(item->valuestring) : NULL;
  int err = abs && cJSON_SetValuestring(item, abs) ? 0 : gpujit__error(GPUJIT_ENOMEM, "out of memory");
  free(abs);
  return err;
}

/* Raw NVRTC options with their paths made absolute here: the worker has another directory. */
static int absolute_nvrtc_options(cJSON *opts)
{
  cJSON *arr = cJSON_GetObjectItemCaseSensitive(opts, "nvrtc_options"), *it, *fresh;
  gpujit__strvec raw = {0}, given = {0};
  int err = 0;
  if (!cJSON_IsArray(arr))
    return 0;
  cJSON_ArrayForEach(it, arr)
    if (err == 0 && cJSON_IsString(it))
      err = gpujit__strvec_push(&raw, it->valuestring);
  if (err == 0)
    err = gpujit__nvrtc_opts_given(&given, (const char *const *)raw.items, raw.count);
  if (err == 0 && !(fresh = cJSON_CreateStringArray((const char *const *)given.items, (int)given.count)))
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
  if (err == 0)
    cJSON_ReplaceItemInObjectCaseSensitive(opts, "nvrtc_options", fresh);
  gpujit__strvec_free(&raw);
  gpujit__strvec_free(&given);
  return err;
}

int gpujit__job_portable(cJSON *job, gpujit_cache *cache)
{
  cJSON *opts = cJSON_GetObjectItemCaseSensitive(job, "options"), *it;
  const cJSON *arch = cJSON_GetObjectItemCaseSensitive(opts, "arch");
  char resolved[32];
  int err = 0;
  cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(job, "files"))
    if (err == 0)
      err = absolute(it);
  cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(opts, "include_dirs"))
    if (err == 0)
      err = absolute(it);
  if (err == 0)
    err = absolute_nvrtc_options(opts);
  if (err == 0 && (err = gpujit__resolve_arch(resolved, sizeof(resolved), cJSON_GetStringValue(arch), cache)) == 0) {
    cJSON_DeleteItemFromObjectCaseSensitive(opts, "arch");
    if (!cJSON_AddStringToObject(opts, "arch", resolved))
      err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  return err;
}

cJSON *gpujit__module_to_json(const gpujit_module *m)
{
  cJSON *j = cJSON_CreateObject(), *t;
  if (!j)
    return NULL;
  cJSON_AddStringToObject(j, "name", m->name ? m->name : "");
  cJSON_AddStringToObject(j, "arch", m->arch);
  cJSON_AddNumberToObject(j, "output", m->output);
  add_strings(j, "kernels", &m->kernels);
  add_strings(j, "name_exprs", &m->name_exprs);
  add_strings(j, "lowered", &m->lowered);
  add_strings(j, "sources", &m->sources);
  cJSON_AddStringToObject(j, "log", m->log ? m->log : "");
  t = cJSON_AddObjectToObject(j, "timings");
#define PUT(f) cJSON_AddNumberToObject(t, #f, m->timings.f);
  TIMINGS(PUT)
#undef PUT
  for (int i = 0; i < 4; i++) {
    char k[16];
    snprintf(k, sizeof(k), "phase%d", i);
    cJSON_AddNumberToObject(t, k, m->phase_ms[i]);
  }
  cJSON_AddNumberToObject(j, "cache_status", m->cache_status);
  cJSON_AddStringToObject(j, "cache_key", m->cache_key);
  cJSON_AddNumberToObject(j, "pch", m->pch);
  cJSON_AddStringToObject(j, "pch_reason", m->pch_reason);
  cJSON_AddNumberToObject(j, "pch_bytes", m->pch_bytes);
  if ((t = gpujit__lean_json(m)))
    cJSON_AddItemToObject(j, "lean", t);
  return j;
}

int gpujit__module_from_json(gpujit_module **out, const cJSON *j, gpujit__buf *image)
{
  gpujit_module *m = gpujit__module_new();
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "timings");
  int err = 0;
  if (!m)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  m->name = gpujit__strdup(str(j, "name"));
  m->log = gpujit__strdup(str(j, "log"));
  snprintf(m->arch, sizeof(m->arch), "%s", str(j, "arch"));
  snprintf(m->cache_key, sizeof(m->cache_key), "%s", str(j, "cache_key"));
  snprintf(m->pch_reason, sizeof(m->pch_reason), "%s", str(j, "pch_reason"));
  /* a worker's enums, checked: a value out of range would index tables later */
  if (!enum_ok(j, "output", GPUJIT_OUTPUT_LTOIR) || !enum_ok(j, "cache_status", GPUJIT_CACHE_MISS) ||
      !enum_ok(j, "pch", GPUJIT_PCH_STATUS_REFUSED)) {
    gpujit_module_free(m);
    return gpujit__error(GPUJIT_EPARSE, "a worker's result names an unknown output kind, cache status or PCH status");
  }
  m->output = (gpujit_output_kind)num(j, "output");
  m->cache_status = (gpujit_cache_status)num(j, "cache_status");
  m->pch = (gpujit_pch_status)num(j, "pch");
  m->pch_bytes = num(j, "pch_bytes");
  gpujit__lean_from_json(m, cJSON_GetObjectItemCaseSensitive(j, "lean"));
#define GET(f) m->timings.f = num(t, #f);
  TIMINGS(GET)
#undef GET
  for (int i = 0; i < 4; i++) {
    char k[16];
    snprintf(k, sizeof(k), "phase%d", i);
    m->phase_ms[i] = num(t, k);
  }
  if (!m->name || !m->log || (err = get_strings(&m->kernels, j, "kernels")) < 0 ||
      (err = get_strings(&m->name_exprs, j, "name_exprs")) < 0 || (err = get_strings(&m->lowered, j, "lowered")) < 0 ||
      (err = get_strings(&m->sources, j, "sources")) < 0) {
    gpujit_module_free(m);
    return err < 0 ? err : gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  m->image = *image;
  memset(image, 0, sizeof(*image));
  *out = m;
  return 0;
}
