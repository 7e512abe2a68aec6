/* A stand-in libcuda.so.1 whose launches cost next to nothing, for bench/step_storm without a GPU
 * (bench/bench_step_cost.c, test_step_cost): what gpujit's injection adds to each launch and each
 * step is then most of what is measured. As the driver does, cuInit calls InitializeInjection of
 * the library $CUDA_INJECTION64_PATH names; a launch goes through a CUPTI's callbacks and writes its
 * kernel record where a CUPTI (tests/profile/fake_cupti.c) has told this driver of itself. Each
 * launch is counted (fake_launch_count), and so are the calls a tool would see. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))
#define LAUNCH_CBID 307 /* CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel */

typedef void (*launch_hook)(uint32_t cbid, uint32_t corr, void *f);
typedef int (*kernel_hook)(uint32_t corr, const char *name, uint32_t device, uint64_t start, uint64_t end,
                           uint64_t graph_node);

static char module_tag, function_tag;
static uint64_t launches, corr;
static launch_hook on_launch;
static kernel_hook on_kernel;

API int cuInit(unsigned flags);
int cuInit(unsigned flags)
{
  static int done;
  const char *inj = getenv("CUDA_INJECTION64_PATH");
  void *h;
  (void)flags;
  if (done++ || !inj || !*inj || !(h = dlopen(inj, RTLD_NOW | RTLD_LOCAL)))
    return 0;
  {
    int (*init)(void) = (int (*)(void))dlsym(h, "InitializeInjection");
    if (init)
      init();
  }
  return 0;
}

API int cuDriverGetVersion(int *v);
int cuDriverGetVersion(int *v)
{
  *v = 13000;
  return 0;
}

API int cuDeviceGet(int *dev, int ordinal);
int cuDeviceGet(int *dev, int ordinal)
{
  *dev = ordinal;
  return ordinal == 0 ? 0 : 101; /* CUDA_ERROR_INVALID_DEVICE */
}

API int cuDeviceGetAttribute(int *v, int attr, int dev);
int cuDeviceGetAttribute(int *v, int attr, int dev)
{
  (void)dev;
  *v = attr == 75 ? 9 : 0; /* compute capability 9.0 */
  return 0;
}

API int cuDevicePrimaryCtxRetain(void **ctx, int dev);
int cuDevicePrimaryCtxRetain(void **ctx, int dev)
{
  *ctx = (void *)(uintptr_t)(0x1000 + dev);
  return 0;
}

API int cuCtxSetCurrent(void *ctx);
int cuCtxSetCurrent(void *ctx)
{
  (void)ctx;
  return 0;
}

API int cuModuleLoadData(void **module, const void *image);
int cuModuleLoadData(void **module, const void *image)
{
  (void)image;
  *module = &module_tag;
  return 0;
}

API int cuModuleGetFunction(void **f, void *module, const char *name);
int cuModuleGetFunction(void **f, void *module, const char *name)
{
  (void)module, (void)name;
  *f = &function_tag;
  return 0;
}

API int cuFuncGetModule(void **module, void *f);
int cuFuncGetModule(void **module, void *f)
{
  (void)f;
  *module = &module_tag;
  return 0;
}

API int cuFuncGetName(const char **name, void *f);
int cuFuncGetName(const char **name, void *f)
{
  (void)f;
  *name = "gj_empty";
  return 0;
}

API int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       unsigned shared, void *stream, void **params, void **extra);
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned shared, void *stream, void **params, void **extra)
{
  launch_hook l = __atomic_load_n(&on_launch, __ATOMIC_ACQUIRE);
  (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)stream, (void)params, (void)extra;
  launches++;
  if (l) { /* a CUPTI is attached: its callbacks, then the kernel's record (1 us long) */
    uint32_t c = (uint32_t)++corr;
    kernel_hook k = __atomic_load_n(&on_kernel, __ATOMIC_ACQUIRE);
    l(LAUNCH_CBID, c, f);
    if (k)
      k(c, "gj_empty", 0, launches * 2000, launches * 2000 + 1000, 0);
  }
  return 0;
}

API int cuCtxSynchronize(void);
int cuCtxSynchronize(void) { return 0; }

/* NVRTC asks the driver for its private tables: there are none here (NVRTC compiles on). */
API int cuGetExportTable(const void **table, const void *id);
int cuGetExportTable(const void **table, const void *id)
{
  (void)id;
  *table = NULL;
  return 500; /* CUDA_ERROR_NOT_FOUND */
}

API int cuGetErrorString(int r, const char **s);
int cuGetErrorString(int r, const char **s)
{
  *s = r ? "fake driver: not supported" : "no error";
  return 0;
}

/** A CUPTI tells the driver of itself (NULLs: it went): its launch callbacks and kernel records. */
API void fake_cuda_tool(launch_hook launch, kernel_hook kernel);
void fake_cuda_tool(launch_hook launch, kernel_hook kernel)
{
  __atomic_store_n(&on_kernel, kernel, __ATOMIC_RELEASE);
  __atomic_store_n(&on_launch, launch, __ATOMIC_RELEASE);
}

/** The launches made so far. */
API uint64_t fake_launch_count(void);
uint64_t fake_launch_count(void) { return launches; }
