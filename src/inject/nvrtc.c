/*
 * NVRTC compiles as the program makes them: nvrtcCreateProgram, nvrtcCompileProgram and
 * nvrtcDestroyProgram wrapped for each loaded copy of NVRTC (inject/resolve.h). A compile record
 * holds the program's name, the hash of its source, its options, header count, wall time,
 * result, the first error line of a failure's log and the sizes and hashes of its PTX, CUBIN and
 * LTO-IR (the hashes tie a module load to the compile that made its image). With the profile's
 * flags, -lineinfo and --fdevice-time-trace are added to compiles that lack them.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <nvrtc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inject/protocol.h"
#include "inject/nvrtc.h"
#include "inject/resolve.h"
#include "inject/record.h"

typedef struct nvrtc_lib {
  gji_lib lib; /* first: the slot of gji_lib_slot */
  nvrtcResult (*create)(nvrtcProgram *, const char *, const char *, int, const char *const *, const char *const *);
  nvrtcResult (*compile)(nvrtcProgram, int, const char *const *);
  nvrtcResult (*destroy)(nvrtcProgram *);
  nvrtcResult (*ptx_size)(nvrtcProgram, size_t *);
  nvrtcResult (*ptx)(nvrtcProgram, char *);
  nvrtcResult (*cubin_size)(nvrtcProgram, size_t *);
  nvrtcResult (*cubin)(nvrtcProgram, char *);
  nvrtcResult (*lto_size)(nvrtcProgram, size_t *);
  nvrtcResult (*lto)(nvrtcProgram, char *);
  nvrtcResult (*log_size)(nvrtcProgram, size_t *);
  nvrtcResult (*log)(nvrtcProgram, char *);
  nvrtcResult (*version)(int *, int *);
} nvrtc_lib;

static nvrtc_lib libs[GJI_SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
__attribute__((constructor)) static void fork_safe_lock(void) { gji_fork_safe(&lock); }

/* Live programs: what their creation said, for the compile record. */
typedef struct prog_rec {
  nvrtcProgram p;
  char name[256];
  char src[33];
  int headers;
} prog_rec;
#define MAX_PROGS 4096
static prog_rec progs[MAX_PROGS];
static unsigned long long compiles;

static void nvrtc_fill(void *slot)
{
  nvrtc_lib *L = slot;
#define R(f, n) *(void **)&L->f = gji_sym_in(L->lib.path, n, "")
  R(create, "nvrtcCreateProgram");
  R(compile, "nvrtcCompileProgram");
  R(destroy, "nvrtcDestroyProgram");
  R(ptx_size, "nvrtcGetPTXSize");
  R(ptx, "nvrtcGetPTX");
  R(cubin_size, "nvrtcGetCUBINSize");
  R(cubin, "nvrtcGetCUBIN");
  R(lto_size, "nvrtcGetLTOIRSize");
  R(lto, "nvrtcGetLTOIR");
  R(log_size, "nvrtcGetProgramLogSize");
  R(log, "nvrtcGetProgramLog");
  R(version, "nvrtcVersion");
#undef R
}

/* The slot of the NVRTC that holds `real` (made on first sight). */
static nvrtc_lib *slot_of(void *real, int *index)
{
  nvrtc_lib *L = gji_lib_slot(real, "", libs, sizeof(libs[0]), GJI_SLOTS, &lock, nvrtc_fill, index);
  if (!L && *index == GJI_SLOTS)
    gji_note("nvrtc-slots", "more than %d copies of NVRTC loaded: the others' compiles are not recorded", GJI_SLOTS);
  return L;
}

static prog_rec *find(nvrtcProgram p, bool take)
{
  size_t h = ((uintptr_t)p >> 4) % MAX_PROGS;
  for (size_t i = 0; i < MAX_PROGS; i++) {
    prog_rec *e = &progs[(h + i) % MAX_PROGS];
    if (e->p == p || (take && !e->p))
      return e;
  }
  return NULL;
}

static nvrtcResult do_create(nvrtc_lib *L, nvrtcProgram *out, const char *src, const char *name, int nh,
                             const char *const *headers, const char *const *names)
{
  nvrtcResult r = L->create(out, src, name, nh, headers, names);
  if (r == NVRTC_SUCCESS && out && gji_active()) {
    prog_rec *e;
    pthread_mutex_lock(&lock);
    if ((e = find(*out, true)) != NULL) {
      e->p = *out;
      snprintf(e->name, sizeof(e->name), "%s", name ? name : "default_program");
      gji_hash(e->src, src ? src : "", src ? strlen(src) : 0);
      e->headers = nh;
    }
    pthread_mutex_unlock(&lock);
    if (!e)
      gji_lost(1);
  }
  return r;
}

/* An output's size and hash into the record (nothing when the compile made none). */
static void output(gji_line *l, const char *what, nvrtcProgram p, nvrtcResult (*size)(nvrtcProgram, size_t *),
                   nvrtcResult (*get)(nvrtcProgram, char *))
{
  size_t n = 0;
  char *data, h[33], key[32];
  if (!size || !get || size(p, &n) != NVRTC_SUCCESS || n == 0 || !(data = malloc(n)))
    return;
  if (get(p, data) == NVRTC_SUCCESS) {
    size_t len = n;
    if (!strcmp(what, "ptx")) /* PTX's size counts its NUL; the driver loads the text */
      len = strnlen(data, n);
    if (len == 0) {
      free(data);
      return;
    }
    gji_hash(h, data, len);
    snprintf(key, sizeof(key), "%s_bytes", what);
    gji_u64(l, key, len);
    snprintf(key, sizeof(key), "%s_hash", what);
    gji_str(l, key, h);
  }
  free(data);
}

/* The first line of a failure's log that says error, else its first line. */
static void first_error(gji_line *l, nvrtc_lib *L, nvrtcProgram p)
{
  size_t n = 0;
  char *log;
  if (!L->log_size || !L->log || L->log_size(p, &n) != NVRTC_SUCCESS || n == 0 || !(log = malloc(n + 1)))
    return;
  if (L->log(p, log) == NVRTC_SUCCESS) {
    char *line = log, *err = strstr(log, "error");
    log[n] = '\0';
    if (err) {
      while (err > log && err[-1] != '\n')
        err--;
      line = err;
    }
    gji_strn(l, "log", line, strcspn(line, "\n"));
  }
  free(log);
}

static bool has_option(int n, const char *const *o, const char *a, const char *b)
{
  for (int i = 0; i < n; i++)
    if (o[i] && (!strncmp(o[i], a, strlen(a)) || (b && !strncmp(o[i], b, strlen(b)))))
      return true;
  return false;
}

static nvrtcResult do_compile(nvrtc_lib *L, int slot, nvrtcProgram p, int n, const char *const *opts)
{
  const char *extra[2], **all = NULL;
  char trace[4300] = "";
  int added = 0, major = 0, minor = 0;
  uint64_t t0, t1;
  nvrtcResult r;
  prog_rec meta = {0}, *e;
  gji_line l;
  if (!gji_active())
    return L->compile(p, n, opts);
  if (gji_flag(GPUJIT_FLAG_LINEINFO) && !has_option(n, opts, "-lineinfo", "--generate-line-info"))
    extra[added++] = "-lineinfo";
  if (gji_flag(GPUJIT_FLAG_NVRTC_TRACE) && !has_option(n, opts, "--fdevice-time-trace", "-fdevice-time-trace")) {
    unsigned long long k = __atomic_add_fetch(&compiles, 1, __ATOMIC_RELAXED);
    snprintf(trace, sizeof(trace), "--fdevice-time-trace=%s/nvrtc-%d-%llu", gji_dir(), (int)getpid(), k);
    extra[added++] = trace;
  }
  if (added && (all = malloc(sizeof(*all) * (size_t)(n + added)))) {
    for (int i = 0; i < n; i++)
      all[i] = opts[i];
    for (int i = 0; i < added; i++)
      all[n + i] = extra[i];
  }
  t0 = gji_now();
  r = L->compile(p, all ? n + added : n, all ? all : opts);
  t1 = gji_now();
  pthread_mutex_lock(&lock);
  if ((e = find(p, false)) != NULL)
    meta = *e;
  pthread_mutex_unlock(&lock);
  gji_begin(&l, GPUJIT_KIND(NVRTC));
  gji_u64(&l, "lib", (uint64_t)slot);
  gji_str(&l, "lib_path", L->lib.path);
  if (L->version && L->version(&major, &minor) == NVRTC_SUCCESS)
    gji_i64(&l, "version", major * 1000 + minor * 10);
  gji_str(&l, "name", meta.p ? meta.name : "?");
  gji_str(&l, "src_hash", meta.p ? meta.src : "");
  gji_i64(&l, "headers", meta.p ? meta.headers : -1);
  gji_strs(&l, "options", opts, n);
  if (all) {
    gji_strs(&l, "added", extra, added);
    if (trace[0]) { /* NVRTC writes the file name it is given with ".json" added */
      char file[4400];
      snprintf(file, sizeof(file), "%s.json", trace + strlen("--fdevice-time-trace="));
      gji_str(&l, "nvrtc_trace", file);
    }
  }
  gji_u64(&l, "t0", t0);
  gji_u64(&l, "t1", t1);
  gji_i64(&l, "result", r);
  if (r == NVRTC_SUCCESS) {
    output(&l, "ptx", p, L->ptx_size, L->ptx);
    output(&l, "cubin", p, L->cubin_size, L->cubin);
    output(&l, "ltoir", p, L->lto_size, L->lto);
  } else {
    first_error(&l, L, p);
  }
  gji_end(&l);
  free(all);
  return r;
}

static nvrtcResult do_destroy(nvrtc_lib *L, nvrtcProgram *p)
{
  if (p && *p) {
    prog_rec *e;
    pthread_mutex_lock(&lock);
    if ((e = find(*p, false)) != NULL)
      memset(e, 0, sizeof(*e));
    pthread_mutex_unlock(&lock);
  }
  return L->destroy(p);
}

/* One set of wrappers per slot: the slot is in the function, so each copy of NVRTC gets back its
 * own programs. */
#define SLOT(i)                                                                                                        \
  static nvrtcResult create_##i(nvrtcProgram *o, const char *s, const char *n, int nh, const char *const *h,           \
                                const char *const *in)                                                                 \
  {                                                                                                                    \
    return do_create(&libs[i], o, s, n, nh, h, in);                                                                    \
  }                                                                                                                    \
  static nvrtcResult compile_##i(nvrtcProgram p, int n, const char *const *o)                                          \
  {                                                                                                                    \
    return do_compile(&libs[i], i, p, n, o);                                                                           \
  }                                                                                                                    \
  static nvrtcResult destroy_##i(nvrtcProgram *p)                                                                      \
  {                                                                                                                    \
    return do_destroy(&libs[i], p);                                                                                    \
  }
SLOT(0)
SLOT(1)
SLOT(2)
SLOT(3)
static void *const creates[GJI_SLOTS] = {(void *)create_0, (void *)create_1, (void *)create_2, (void *)create_3};
static void *const compiles_fn[GJI_SLOTS] = {(void *)compile_0, (void *)compile_1, (void *)compile_2,
                                             (void *)compile_3};
static void *const destroys[GJI_SLOTS] = {(void *)destroy_0, (void *)destroy_1, (void *)destroy_2, (void *)destroy_3};

void *gji_nvrtc_wrap(const char *name, void *real)
{
  int i = -1;
  void *const *table = !strcmp(name, "nvrtcCreateProgram")    ? creates
                       : !strcmp(name, "nvrtcCompileProgram") ? compiles_fn
                       : !strcmp(name, "nvrtcDestroyProgram") ? destroys
                                                              : NULL;
  if (!table || !slot_of(real, &i) || i < 0)
    return NULL;
  return table[i];
}

/* The program linked NVRTC itself: these definitions come first (LD_PRELOAD). */
#define DIRECT(fn, wrapped_name, args, call)                                                                           \
  __attribute__((visibility("default"))) nvrtcResult fn args                                                           \
  {                                                                                                                    \
    void *real = gji_next_for(__builtin_return_address(0), #fn), *w;                                                   \
    if (!real)                                                                                                         \
      return NVRTC_ERROR_INTERNAL_ERROR;                                                                               \
    w = gji_nvrtc_wrap(#fn, real);                                                                                     \
    return ((nvrtcResult(*) args)(w ? w : real))call;                                                                  \
  }
DIRECT(nvrtcCreateProgram, create,
       (nvrtcProgram * prog, const char *src, const char *name, int numHeaders, const char *const *headers,
        const char *const *includeNames),
       (prog, src, name, numHeaders, headers, includeNames))
DIRECT(nvrtcCompileProgram, compile, (nvrtcProgram prog, int numOptions, const char *const *options),
       (prog, numOptions, options))
DIRECT(nvrtcDestroyProgram, destroy, (nvrtcProgram * prog), (prog))
