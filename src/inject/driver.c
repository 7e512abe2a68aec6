/*
 * The driver and CUPTI functions the injection library wraps, however the program reaches them:
 * linked directly (these exports come first), through dlsym (dlsym.c), or through the driver's
 * cuGetProcAddress (the CUDA runtime, PyTorch, XLA resolve the driver so).
 *   - Module loads (cuModuleLoad*, cuLibraryLoad*, cuLinkComplete) are recorded here while this
 *     library's CUPTI subscriber does not record them (CUPTI taken by Nsight Systems or Compute,
 *     or by the program first, or not loadable): the report keeps its module rows either way.
 *   - The program taking CUPTI (cuptiSubscribe, cuptiActivityRegisterCallbacks, enabling an
 *     activity kind) finds gpujit stepping aside first (gji_cupti_yield): PyTorch's profiler
 *     under `gpujit profile` records what it would without it.
 * No CUDA header: the functions are forwarded as the program called them, with the driver's
 * handles as pointers and its results as ints.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "inject/protocol.h"
#include "inject/image.h"
#include "inject/cupti.h"
#include "inject/driver.h"
#include "inject/kregions.h"
#include "inject/resolve.h"

#define CU_NOT_INITIALIZED 3 /* what a call gets when there is no driver to forward it to */
#define CUPTI_NOT_INITIALIZED 15

typedef int (*load_data_fn)(void **, const void *);
typedef int (*load_data_ex_fn)(void **, const void *, unsigned, void *, void **);
typedef int (*load_file_fn)(void **, const char *);
typedef int (*lib_data_fn)(void **, const void *, void *, void **, unsigned, void *, void **, unsigned);
typedef int (*lib_file_fn)(void **, const char *, void *, void **, unsigned, void *, void **, unsigned);
typedef int (*link_complete_fn)(void *, void **, size_t *);
typedef int (*gpa_fn)(const char *, void **, int, uint64_t);
typedef int (*gpa2_fn)(const char *, void **, int, uint64_t, int *);

enum { LOAD, LOAD_DATA, LOAD_DATA_EX, LOAD_FATBIN, LIB_DATA, LIB_FILE, LINK_COMPLETE, GPA, GPA2, N_DRIVER };
static const char *const names[N_DRIVER] = {"cuModuleLoad",          "cuModuleLoadData",  "cuModuleLoadDataEx",
                                            "cuModuleLoadFatBinary", "cuLibraryLoadData", "cuLibraryLoadFromFile",
                                            "cuLinkComplete",        "cuGetProcAddress",  "cuGetProcAddress_v2"};
/* The driver's own functions, seen when the program resolved them (one driver per process). */
static void *real[N_DRIVER];

static int index_of(const char *name)
{
  for (int i = 0; i < N_DRIVER; i++)
    if (!strcmp(name, names[i]))
      return i;
  return -1;
}

static void *real_of(int i)
{
  return __atomic_load_n(&real[i], __ATOMIC_ACQUIRE);
}

/* A load's record, when CUPTI's callbacks do not write it. */
static void loaded(const char *api, uint64_t t0, int result, const void *image, const char *file, void *module)
{
  gji_line l;
  gji_begin(&l, GPUJIT_KIND(LOAD));
  gji_str(&l, "api", api);
  gji_str(&l, "seen", "wrapper");
  gji_u64(&l, "t0", t0);
  gji_u64(&l, "t1", gji_now());
  gji_i64(&l, "result", result);
  if (file)
    gji_file_fields(&l, file);
  else if (result == 0)
    gji_image_fields(&l, image);
  if (module && result == 0)
    gji_hex(&l, "module", (uint64_t)(uintptr_t)module);
  gji_end(&l);
  if (module && result == 0) /* kernel regions: a buffer bound where the module declares them */
    gji_kregions_loaded((uint64_t)(uintptr_t)module, !strncmp(api, "cuLibrary", 9), file ? NULL : image, false);
}

static bool recording(void)
{
  return gji_active() && !gji_cupti_records_loads();
}

/* The wrappers: each calls the driver's function with the program's arguments. */
static int w_load(void **m, const char *file)
{
  load_file_fn f = (load_file_fn)real_of(LOAD);
  uint64_t t0 = gji_now();
  int r = f ? f(m, file) : CU_NOT_INITIALIZED;
  if (recording())
    loaded("cuModuleLoad", t0, r, NULL, file, m ? *m : NULL);
  return r;
}

static int w_load_data(void **m, const void *image)
{
  load_data_fn f = (load_data_fn)real_of(LOAD_DATA);
  uint64_t t0 = gji_now();
  int r = f ? f(m, image) : CU_NOT_INITIALIZED;
  if (recording())
    loaded("cuModuleLoadData", t0, r, image, NULL, m ? *m : NULL);
  return r;
}

static int w_load_data_ex(void **m, const void *image, unsigned n, void *opts, void **vals)
{
  load_data_ex_fn f = (load_data_ex_fn)real_of(LOAD_DATA_EX);
  uint64_t t0 = gji_now();
  int r = f ? f(m, image, n, opts, vals) : CU_NOT_INITIALIZED;
  if (recording())
    loaded("cuModuleLoadDataEx", t0, r, image, NULL, m ? *m : NULL);
  return r;
}

static int w_load_fatbin(void **m, const void *image)
{
  load_data_fn f = (load_data_fn)real_of(LOAD_FATBIN);
  uint64_t t0 = gji_now();
  int r = f ? f(m, image) : CU_NOT_INITIALIZED;
  if (recording())
    loaded("cuModuleLoadFatBinary", t0, r, image, NULL, m ? *m : NULL);
  return r;
}

static int w_lib_data(void **lib, const void *code, void *jo, void **jv, unsigned nj, void *lo, void **lv, unsigned nl)
{
  lib_data_fn f = (lib_data_fn)real_of(LIB_DATA);
  uint64_t t0 = gji_now();
  int r = f ? f(lib, code, jo, jv, nj, lo, lv, nl) : CU_NOT_INITIALIZED;
  if (recording())
    loaded("cuLibraryLoadData", t0, r, code, NULL, lib ? *lib : NULL);
  return r;
}

static int w_lib_file(void **lib, const char *file, void *jo, void **jv, unsigned nj, void *lo, void **lv, unsigned nl)
{
  lib_file_fn f = (lib_file_fn)real_of(LIB_FILE);
  uint64_t t0 = gji_now();
  int r = f ? f(lib, file, jo, jv, nj, lo, lv, nl) : CU_NOT_INITIALIZED;
  if (recording())
    loaded("cuLibraryLoadFromFile", t0, r, NULL, file, lib ? *lib : NULL);
  return r;
}

static int w_link_complete(void *state, void **cubin, size_t *size)
{
  link_complete_fn f = (link_complete_fn)real_of(LINK_COMPLETE);
  uint64_t t0 = gji_now();
  int r = f ? f(state, cubin, size) : CU_NOT_INITIALIZED;
  if (recording()) {
    gji_line l;
    gji_begin(&l, GPUJIT_KIND(LOAD));
    gji_str(&l, "api", "cuLinkComplete");
    gji_str(&l, "seen", "wrapper");
    gji_u64(&l, "t0", t0);
    gji_u64(&l, "t1", gji_now());
    gji_i64(&l, "result", r);
    if (r == 0 && cubin && size)
      gji_linked_fields(&l, *cubin, *size);
    gji_end(&l);
  }
  return r;
}

/* What cuGetProcAddress gave back for `symbol`, wrapped when it is watched. */
static void proc_address(const char *symbol, void **pfn, int version)
{
  int i;
  void *w;
  if (!symbol || !pfn || !*pfn)
    return;
  if (!strcmp(symbol, "cuGetProcAddress")) /* asked by its base name: the v2 ABI from CUDA 12.0 */
    i = version >= 12000 ? GPA2 : GPA;
  else if ((i = index_of(symbol)) < 0)
    return;
  if ((w = gji_driver_wrap(names[i], *pfn)))
    *pfn = w;
}

static int w_gpa(const char *symbol, void **pfn, int version, uint64_t flags)
{
  gpa_fn f = (gpa_fn)real_of(GPA);
  int r = f ? f(symbol, pfn, version, flags) : CU_NOT_INITIALIZED;
  if (r == 0)
    proc_address(symbol, pfn, version);
  return r;
}

static int w_gpa2(const char *symbol, void **pfn, int version, uint64_t flags, int *status)
{
  gpa2_fn f = (gpa2_fn)real_of(GPA2);
  int r = f ? f(symbol, pfn, version, flags, status) : CU_NOT_INITIALIZED;
  if (r == 0)
    proc_address(symbol, pfn, version);
  return r;
}

static void *const wrappers_by_index[N_DRIVER] = {(void *)w_load,          (void *)w_load_data, (void *)w_load_data_ex,
                                                  (void *)w_load_fatbin,   (void *)w_lib_data,  (void *)w_lib_file,
                                                  (void *)w_link_complete, (void *)w_gpa,       (void *)w_gpa2};

/* The CUPTI functions by which a program takes CUPTI: gpujit steps aside, then the call goes on.
 * Resolved through dlsym, the first copy seen is the one forwarded to. */
enum { SUB, SUB2, REGISTER, ENABLE, ENABLE_CTX, ENABLE_DUMP, N_CUPTI };
static const char *const cupti_names[N_CUPTI] = {
    "cuptiSubscribe",      "cuptiSubscribe_v2",          "cuptiActivityRegisterCallbacks",
    "cuptiActivityEnable", "cuptiActivityEnableContext", "cuptiActivityEnableAndDump"};
static void *cupti_real[N_CUPTI];

static void *take(int i)
{
  gji_cupti_yield(cupti_names[i]);
  return __atomic_load_n(&cupti_real[i], __ATOMIC_ACQUIRE);
}

#define CALL(i, type, args) (take(i) ? ((type)cupti_real[i])args : CUPTI_NOT_INITIALIZED)
static int c_sub(void **s, void *cb, void *ud)
{
  return CALL(SUB, int (*)(void **, void *, void *), (s, cb, ud));
}
static int c_sub2(void **s, void *cb, void *ud, void *p)
{
  return CALL(SUB2, int (*)(void **, void *, void *, void *), (s, cb, ud, p));
}
static int c_register(void *req, void *done)
{
  return CALL(REGISTER, int (*)(void *, void *), (req, done));
}
static int c_enable(int kind)
{
  return CALL(ENABLE, int (*)(int), (kind));
}
static int c_enable_ctx(void *ctx, int kind)
{
  return CALL(ENABLE_CTX, int (*)(void *, int), (ctx, kind));
}
static int c_enable_dump(int kind)
{
  return CALL(ENABLE_DUMP, int (*)(int), (kind));
}
#undef CALL
static void *const cupti_wrappers[N_CUPTI] = {(void *)c_sub,    (void *)c_sub2,       (void *)c_register,
                                              (void *)c_enable, (void *)c_enable_ctx, (void *)c_enable_dump};

static int cupti_index(const char *name)
{
  for (int i = 0; i < N_CUPTI; i++)
    if (!strcmp(name, cupti_names[i]))
      return i;
  return -1;
}

/* Whether another tool owns the driver's injection hook in this process (Nsight Compute or
 * Systems: their interceptors resolve the driver through the same calls, and a wrapper between
 * them and the driver could call back into them). The driver is then left alone entirely. */
static pthread_once_t tool_once = PTHREAD_ONCE_INIT;
static bool tool_owns_driver;

static void find_tool(void)
{
  char mine[PATH_MAX], theirs[PATH_MAX];
  Dl_info self;
  const char *path = getenv(GPUJIT_ENV(CUDA_INJECTION));
  if (!path || !*path)
    return;
  tool_owns_driver = !(dladdr((void *)find_tool, &self) && self.dli_fname && realpath(path, theirs) &&
                       realpath(self.dli_fname, mine) && !strcmp(theirs, mine));
  if (tool_owns_driver)
    gji_note("driver-tool",
             "another tool owns the CUDA driver's injection hook (%s): module loads are not "
             "recorded; compiles are",
             path);
}

static bool driver_left_alone(void)
{
  pthread_once(&tool_once, find_tool);
  return tool_owns_driver;
}

bool gji_driver_watched(const char *name)
{
  if (driver_left_alone())
    return false;
  if (!strncmp(name, "cupti", 5))
    return cupti_index(name) >= 0;
  return !strncmp(name, "cu", 2) && index_of(name) >= 0;
}

void *gji_driver_wrap(const char *name, void *fn)
{
  int i = index_of(name);
  void *expected = NULL;
  if (!fn || gji_is_self(fn))
    return NULL; /* this library's own export: it wraps already */
  if (i < 0) {
    if ((i = cupti_index(name)) < 0)
      return NULL;
    /* one copy of CUPTI is forwarded to: another copy's function (PyTorch's CUPTI beside the
     * toolkit's) is left as it is, never sent to the first copy */
    if (!__atomic_compare_exchange_n(&cupti_real[i], &expected, fn, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&
        expected != fn)
      return NULL;
    return cupti_wrappers[i];
  }
  /* the first driver function seen is the one forwarded to (a process has one driver) */
  if (!__atomic_compare_exchange_n(&real[i], &expected, fn, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) &&
      expected != fn && expected != wrappers_by_index[i])
    gji_note("driver-copies", "a second CUDA driver's %s was resolved: its loads go to the first one seen", name);
  return wrappers_by_index[i];
}

/* The program linked the driver or CUPTI directly: these definitions come first (LD_PRELOAD).
 * Each finds the function its caller would have reached, records it, and goes through the wrapper. */
#define EXPORT_LOAD(fn, idx, params, args)                                                                             \
  __attribute__((visibility("default"))) int fn params;                                                                \
  int fn params                                                                                                        \
  {                                                                                                                    \
    void *next = gji_next_for(__builtin_return_address(0), #fn);                                                       \
    if (!next)                                                                                                         \
      return CU_NOT_INITIALIZED;                                                                                       \
    if (driver_left_alone())                                                                                           \
      return ((int(*) params)next)args;                                                                                \
    gji_driver_wrap(#fn, next);                                                                                        \
    return ((int(*) params)wrappers_by_index[idx])args;                                                                \
  }
EXPORT_LOAD(cuModuleLoad, LOAD, (void **m, const char *file), (m, file))
EXPORT_LOAD(cuModuleLoadData, LOAD_DATA, (void **m, const void *image), (m, image))
EXPORT_LOAD(cuModuleLoadDataEx, LOAD_DATA_EX, (void **m, const void *image, unsigned n, void *o, void **v),
            (m, image, n, o, v))
EXPORT_LOAD(cuModuleLoadFatBinary, LOAD_FATBIN, (void **m, const void *image), (m, image))
EXPORT_LOAD(cuLibraryLoadData, LIB_DATA,
            (void **l, const void *c, void *jo, void **jv, unsigned nj, void *lo, void **lv, unsigned nl),
            (l, c, jo, jv, nj, lo, lv, nl))
EXPORT_LOAD(cuLibraryLoadFromFile, LIB_FILE,
            (void **l, const char *f, void *jo, void **jv, unsigned nj, void *lo, void **lv, unsigned nl),
            (l, f, jo, jv, nj, lo, lv, nl))
EXPORT_LOAD(cuLinkComplete, LINK_COMPLETE, (void *s, void **c, size_t *n), (s, c, n))
EXPORT_LOAD(cuGetProcAddress, GPA, (const char *s, void **p, int v, uint64_t f), (s, p, v, f))
EXPORT_LOAD(cuGetProcAddress_v2, GPA2, (const char *s, void **p, int v, uint64_t f, int *st), (s, p, v, f, st))

#define EXPORT_CUPTI(fn, params, args)                                                                                 \
  __attribute__((visibility("default"))) int fn params;                                                                \
  int fn params                                                                                                        \
  {                                                                                                                    \
    void *next = gji_next_for(__builtin_return_address(0), #fn);                                                       \
    if (!next)                                                                                                         \
      return CUPTI_NOT_INITIALIZED;                                                                                    \
    if (!driver_left_alone())                                                                                          \
      gji_cupti_yield(#fn);                                                                                            \
    return ((int(*) params)next)args;                                                                                  \
  }
EXPORT_CUPTI(cuptiSubscribe, (void **s, void *cb, void *ud), (s, cb, ud))
EXPORT_CUPTI(cuptiSubscribe_v2, (void **s, void *cb, void *ud, void *p), (s, cb, ud, p))
EXPORT_CUPTI(cuptiActivityRegisterCallbacks, (void *req, void *done), (req, done))
EXPORT_CUPTI(cuptiActivityEnable, (int kind), (kind))
EXPORT_CUPTI(cuptiActivityEnableContext, (void *ctx, int kind), (ctx, kind))
EXPORT_CUPTI(cuptiActivityEnableAndDump, (int kind), (kind))
