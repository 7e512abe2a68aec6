/* A stand-in libcuda.so.1 for test_cupti_path.c: which module a function is in and its name, as
 * the injection library asks the driver (cuFuncGetModule, cuFuncGetName; cuKernelGetLibrary,
 * cuKernelGetName for a library's kernel). A function is a fake_fn the test made; each question is
 * counted, so a test can tell the driver was asked once per function, not once per launch. */
#include <stdint.h>

#define API __attribute__((visibility("default")))
#define CU_ERROR_INVALID_HANDLE 400

typedef struct fake_fn {
  void *module; /* a CUmodule, or a CUlibrary when `kernel` */
  const char *name;
  int kernel; /* a CUkernel of a library, not a CUfunction */
} fake_fn;

static uint64_t asked;

API int cuFuncGetModule(void **module, const fake_fn *f);
int cuFuncGetModule(void **module, const fake_fn *f)
{
  __atomic_add_fetch(&asked, 1, __ATOMIC_RELAXED);
  if (!f || f->kernel)
    return CU_ERROR_INVALID_HANDLE;
  *module = f->module;
  return 0;
}

API int cuFuncGetName(const char **name, const fake_fn *f);
int cuFuncGetName(const char **name, const fake_fn *f)
{
  if (!f || f->kernel)
    return CU_ERROR_INVALID_HANDLE;
  *name = f->name;
  return 0;
}

API int cuKernelGetLibrary(void **library, const fake_fn *k);
int cuKernelGetLibrary(void **library, const fake_fn *k)
{
  if (!k || !k->kernel)
    return CU_ERROR_INVALID_HANDLE;
  *library = k->module;
  return 0;
}

API int cuKernelGetName(const char **name, const fake_fn *k);
int cuKernelGetName(const char **name, const fake_fn *k)
{
  if (!k || !k->kernel)
    return CU_ERROR_INVALID_HANDLE;
  *name = k->name;
  return 0;
}

/** How many times a function's module was asked. */
API uint64_t fake_driver_asked(void);
uint64_t fake_driver_asked(void)
{
  return __atomic_load_n(&asked, __ATOMIC_RELAXED);
}
