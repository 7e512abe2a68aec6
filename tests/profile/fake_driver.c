/* A stand-in CUDA driver for the profile tests on machines without a GPU: module loads succeed
 * (each gives a new handle) and cuGetProcAddress gives them out as the CUDA runtime asks for them.
 * The profiled target loads its images through it: dlsym, cuGetProcAddress, a direct call, and a
 * library loaded RTLD_LOCAL (profile_loader). */
#include <stdint.h>
#include <string.h>

#define API __attribute__((visibility("default")))

static char handles[256];
static unsigned next_handle;

static int give(void **out)
{
  *out = &handles[__atomic_fetch_add(&next_handle, 1, __ATOMIC_RELAXED) % sizeof(handles)];
  return 0;
}

/* The driver's entry points are its own: cuGetProcAddress hands these out, never what a symbol
 * look-up would find first (a preloaded library's export). */
static int load_file(void **m, const char *file)
{
  return file ? give(m) : 1;
}
static int load_data(void **m, const void *image)
{
  return image ? give(m) : 1;
}
static int load_data_ex(void **m, const void *image, unsigned n, void *o, void **v)
{
  (void)n, (void)o, (void)v;
  return image ? give(m) : 1;
}
static int library_load_data(void **l, const void *c, void *jo, void **jv, unsigned nj, void *lo, void **lv,
                             unsigned nl)
{
  (void)jo, (void)jv, (void)nj, (void)lo, (void)lv, (void)nl;
  return c ? give(l) : 1;
}
static int proc_address(const char *s, void **p, int version, uint64_t flags, int *status);

API int cuInit(unsigned flags);
int cuInit(unsigned flags)
{
  return (int)flags;
}

API int cuModuleLoad(void **m, const char *file);
int cuModuleLoad(void **m, const char *file)
{
  return load_file(m, file);
}

API int cuModuleLoadData(void **m, const void *image);
int cuModuleLoadData(void **m, const void *image)
{
  return load_data(m, image);
}

API int cuModuleLoadDataEx(void **m, const void *image, unsigned n, void *o, void **v);
int cuModuleLoadDataEx(void **m, const void *image, unsigned n, void *o, void **v)
{
  return load_data_ex(m, image, n, o, v);
}

API int cuLibraryLoadData(void **l, const void *c, void *jo, void **jv, unsigned nj, void *lo, void **lv, unsigned nl);
int cuLibraryLoadData(void **l, const void *c, void *jo, void **jv, unsigned nj, void *lo, void **lv, unsigned nl)
{
  return library_load_data(l, c, jo, jv, nj, lo, lv, nl);
}

API int cuGetProcAddress_v2(const char *s, void **p, int version, uint64_t flags, int *status);
int cuGetProcAddress_v2(const char *s, void **p, int version, uint64_t flags, int *status)
{
  return proc_address(s, p, version, flags, status);
}

static int proc_address(const char *s, void **p, int version, uint64_t flags, int *status)
{
  (void)version, (void)flags;
  *p = !strcmp(s, "cuModuleLoad")         ? (void *)load_file
       : !strcmp(s, "cuModuleLoadData")   ? (void *)load_data
       : !strcmp(s, "cuModuleLoadDataEx") ? (void *)load_data_ex
       : !strcmp(s, "cuLibraryLoadData")  ? (void *)library_load_data
       : !strcmp(s, "cuGetProcAddress")   ? (void *)proc_address
                                          : NULL;
  if (status)
    *status = *p ? 0 : 1;
  return *p ? 0 : 500; /* CUDA_ERROR_NOT_FOUND */
}
