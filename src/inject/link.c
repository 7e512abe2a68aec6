/*
 * nvJitLink links and libNVVM compiles (Numba's), as NVRTC's compiles are recorded: per loaded
 * copy of the library, a record per nvJitLinkComplete (inputs, options, wall time, result, the
 * linked cubin's size and hash) and per nvvmCompileProgram (options, wall time, result, the PTX's
 * size and hash, a failure's first error line). nvJitLink's headers name versioned symbols
 * (__nvJitLinkCreate_13_0): both spellings are watched.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inject/protocol.h"
#include "inject/link.h"
#include "inject/resolve.h"
#include "inject/record.h"

typedef struct link_lib {
  gji_lib lib; /* first: the slot of gji_lib_slot */
  int (*create)(void **, uint32_t, const char **);
  int (*add_data)(void *, int, const void *, size_t, const char *);
  int (*add_file)(void *, int, const char *);
  int (*complete)(void *);
  int (*destroy)(void **);
  int (*cubin_size)(void *, size_t *);
  int (*cubin)(void *, void *);
  /* libNVVM */
  int (*nvvm_compile)(void *, int, const char **);
  int (*nvvm_size)(void *, size_t *);
  int (*nvvm_result)(void *, char *);
  int (*nvvm_log_size)(void *, size_t *);
  int (*nvvm_log)(void *, char *);
} link_lib;

static link_lib libs[GJI_SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
__attribute__((constructor)) static void fork_safe_lock(void) { gji_fork_safe(&lock); }

typedef struct handle {
  void *h;
  int inputs;
  uint64_t input_bytes;
  char opts[1024];
} handle;
#define MAX_HANDLES 1024
static handle handles[MAX_HANDLES];

/* "__nvJitLinkCreate_13_0" -> "nvJitLinkCreate", suffix "_13_0". */
static void base_name(const char *name, char *out, size_t size, char *suffix, size_t ssize)
{
  const char *s = name[0] == '_' && name[1] == '_' ? name + 2 : name;
  const char *u = strchr(s, '_');
  snprintf(out, size, "%.*s", (int)(u ? u - s : (long)strlen(s)), s);
  snprintf(suffix, ssize, "%s", u ? u : "");
}

static void link_fill(void *slot)
{
  link_lib *L = slot;
#define R(f, n) *(void **)&L->f = gji_sym_in(L->lib.path, n, L->lib.suffix)
  R(create, "nvJitLinkCreate");
  R(add_data, "nvJitLinkAddData");
  R(add_file, "nvJitLinkAddFile");
  R(complete, "nvJitLinkComplete");
  R(destroy, "nvJitLinkDestroy");
  R(cubin_size, "nvJitLinkGetLinkedCubinSize");
  R(cubin, "nvJitLinkGetLinkedCubin");
  R(nvvm_compile, "nvvmCompileProgram");
  R(nvvm_size, "nvvmGetCompiledResultSize");
  R(nvvm_result, "nvvmGetCompiledResult");
  R(nvvm_log_size, "nvvmGetProgramLogSize");
  R(nvvm_log, "nvvmGetProgramLog");
#undef R
}

static link_lib *slot_of(void *real, const char *suffix, int *index)
{
  link_lib *L = gji_lib_slot(real, suffix, libs, sizeof(libs[0]), GJI_SLOTS, &lock, link_fill, index);
  if (!L && *index == GJI_SLOTS)
    gji_note("link-slots", "more than %d copies of nvJitLink/libNVVM loaded: the others are not recorded", GJI_SLOTS);
  return L;
}

static handle *find(void *h, bool take)
{
  for (size_t i = 0; i < MAX_HANDLES; i++)
    if (handles[i].h == h || (take && !handles[i].h))
      return &handles[i];
  return NULL;
}

static int do_create(link_lib *L, void **out, uint32_t n, const char **opts)
{
  int r = L->create(out, n, opts);
  if (r == 0 && out && *out && gji_active()) {
    handle *e;
    pthread_mutex_lock(&lock);
    if ((e = find(*out, true)) != NULL) {
      size_t len = 0;
      memset(e, 0, sizeof(*e));
      e->h = *out;
      for (uint32_t i = 0; i < n && opts && opts[i]; i++)
        len += (size_t)snprintf(e->opts + len, len < sizeof(e->opts) ? sizeof(e->opts) - len : 0, "%s%s", i ? " " : "",
                                opts[i]);
    }
    pthread_mutex_unlock(&lock);
  }
  return r;
}

static void count_input(void *h, uint64_t bytes)
{
  handle *e;
  pthread_mutex_lock(&lock);
  if ((e = find(h, false)) != NULL) {
    e->inputs++;
    e->input_bytes += bytes;
  }
  pthread_mutex_unlock(&lock);
}

static int do_add_data(link_lib *L, void *h, int type, const void *data, size_t size, const char *name)
{
  int r = L->add_data(h, type, data, size, name);
  if (r == 0)
    count_input(h, size);
  return r;
}

static int do_add_file(link_lib *L, void *h, int type, const char *file)
{
  int r = L->add_file(h, type, file);
  if (r == 0)
    count_input(h, 0);
  return r;
}

static int do_complete(link_lib *L, int slot, void *h)
{
  uint64_t t0 = gji_now(), t1;
  int r = L->complete(h);
  handle meta = {0}, *e;
  size_t n = 0;
  gji_line l;
  t1 = gji_now();
  if (!gji_active())
    return r;
  pthread_mutex_lock(&lock);
  if ((e = find(h, false)) != NULL)
    meta = *e;
  pthread_mutex_unlock(&lock);
  gji_begin(&l, GPUJIT_KIND(NVJITLINK));
  gji_u64(&l, "lib", (uint64_t)slot);
  gji_str(&l, "lib_path", L->lib.path);
  gji_str(&l, "options", meta.opts);
  gji_i64(&l, "inputs", meta.inputs);
  gji_u64(&l, "input_bytes", meta.input_bytes);
  gji_u64(&l, "t0", t0);
  gji_u64(&l, "t1", t1);
  gji_i64(&l, "result", r);
  if (r == 0 && L->cubin_size && L->cubin && L->cubin_size(h, &n) == 0 && n) {
    void *cubin = malloc(n);
    char hash[33];
    if (cubin && L->cubin(h, cubin) == 0) {
      gji_hash(hash, cubin, n);
      gji_u64(&l, "cubin_bytes", n);
      gji_str(&l, "cubin_hash", hash);
    }
    free(cubin);
  }
  gji_end(&l);
  return r;
}

static int do_destroy(link_lib *L, void **h)
{
  if (h && *h) {
    handle *e;
    pthread_mutex_lock(&lock);
    if ((e = find(*h, false)) != NULL)
      memset(e, 0, sizeof(*e));
    pthread_mutex_unlock(&lock);
  }
  return L->destroy(h);
}

static int do_nvvm(link_lib *L, int slot, void *p, int n, const char **opts)
{
  uint64_t t0 = gji_now(), t1;
  int r = L->nvvm_compile(p, n, opts);
  size_t size = 0;
  gji_line l;
  t1 = gji_now();
  if (!gji_active())
    return r;
  gji_begin(&l, GPUJIT_KIND(NVVM));
  gji_u64(&l, "lib", (uint64_t)slot);
  gji_str(&l, "lib_path", L->lib.path);
  gji_strs(&l, "options", opts, n);
  gji_u64(&l, "t0", t0);
  gji_u64(&l, "t1", t1);
  gji_i64(&l, "result", r);
  if (r == 0 && L->nvvm_size && L->nvvm_result && L->nvvm_size(p, &size) == 0 && size) {
    char *ptx = malloc(size), hash[33];
    if (ptx && L->nvvm_result(p, ptx) == 0) {
      size_t len = strnlen(ptx, size);
      gji_hash(hash, ptx, len);
      gji_u64(&l, "ptx_bytes", len);
      gji_str(&l, "ptx_hash", hash);
    }
    free(ptx);
  } else if (r != 0 && L->nvvm_log_size && L->nvvm_log && L->nvvm_log_size(p, &size) == 0 && size) {
    char *log = malloc(size + 1);
    if (log && L->nvvm_log(p, log) == 0) {
      log[size] = '\0';
      gji_strn(&l, "log", log, strcspn(log, "\n"));
    }
    free(log);
  }
  gji_end(&l);
  return r;
}

#define SLOT(i)                                                                                                        \
  static int create_##i(void **o, uint32_t n, const char **opts)                                                       \
  {                                                                                                                    \
    return do_create(&libs[i], o, n, opts);                                                                            \
  }                                                                                                                    \
  static int add_data_##i(void *h, int t, const void *d, size_t s, const char *n)                                      \
  {                                                                                                                    \
    return do_add_data(&libs[i], h, t, d, s, n);                                                                       \
  }                                                                                                                    \
  static int add_file_##i(void *h, int t, const char *f)                                                               \
  {                                                                                                                    \
    return do_add_file(&libs[i], h, t, f);                                                                             \
  }                                                                                                                    \
  static int complete_##i(void *h)                                                                                     \
  {                                                                                                                    \
    return do_complete(&libs[i], i, h);                                                                                \
  }                                                                                                                    \
  static int destroy_##i(void **h)                                                                                     \
  {                                                                                                                    \
    return do_destroy(&libs[i], h);                                                                                    \
  }                                                                                                                    \
  static int nvvm_##i(void *p, int n, const char **o)                                                                  \
  {                                                                                                                    \
    return do_nvvm(&libs[i], i, p, n, o);                                                                              \
  }
SLOT(0)
SLOT(1)
SLOT(2)
SLOT(3)
#define TABLE(f) static void *const f##_fns[GJI_SLOTS] = {(void *)f##_0, (void *)f##_1, (void *)f##_2, (void *)f##_3}
TABLE(create);
TABLE(add_data);
TABLE(add_file);
TABLE(complete);
TABLE(destroy);
TABLE(nvvm);

void *gji_link_wrap(const char *name, void *real)
{
  char base[64], suffix[16];
  void *const *table;
  int i = -1;
  base_name(name, base, sizeof(base), suffix, sizeof(suffix));
  table = !strcmp(base, "nvJitLinkCreate")      ? create_fns
          : !strcmp(base, "nvJitLinkAddData")   ? add_data_fns
          : !strcmp(base, "nvJitLinkAddFile")   ? add_file_fns
          : !strcmp(base, "nvJitLinkComplete")  ? complete_fns
          : !strcmp(base, "nvJitLinkDestroy")   ? destroy_fns
          : !strcmp(base, "nvvmCompileProgram") ? nvvm_fns
                                                : NULL;
  if (!table || !slot_of(real, suffix, &i) || i < 0)
    return NULL;
  return table[i];
}

/* Programs that link nvJitLink directly call the versioned names its header maps to. */
#define DIRECT(sym, args, call)                                                                                        \
  __attribute__((visibility("default"))) int sym args;                                                                 \
  int sym args                                                                                                         \
  {                                                                                                                    \
    void *real = gji_next_for(__builtin_return_address(0), #sym), *w;                                                  \
    if (!real)                                                                                                         \
      return 1;                                                                                                        \
    w = gji_link_wrap(#sym, real);                                                                                     \
    return ((int(*) args)(w ? w : real))call;                                                                          \
  }
DIRECT(__nvJitLinkCreate_13_0, (void **h, uint32_t n, const char **o), (h, n, o))
DIRECT(__nvJitLinkAddData_13_0, (void *h, int t, const void *d, size_t s, const char *n), (h, t, d, s, n))
DIRECT(__nvJitLinkAddFile_13_0, (void *h, int t, const char *f), (h, t, f))
DIRECT(__nvJitLinkComplete_13_0, (void *h), (h))
DIRECT(__nvJitLinkDestroy_13_0, (void **h), (h))
DIRECT(__nvJitLinkCreate_12_0, (void **h, uint32_t n, const char **o), (h, n, o))
DIRECT(__nvJitLinkAddData_12_0, (void *h, int t, const void *d, size_t s, const char *n), (h, t, d, s, n))
DIRECT(__nvJitLinkAddFile_12_0, (void *h, int t, const char *f), (h, t, f))
DIRECT(__nvJitLinkComplete_12_0, (void *h), (h))
DIRECT(__nvJitLinkDestroy_12_0, (void **h), (h))
