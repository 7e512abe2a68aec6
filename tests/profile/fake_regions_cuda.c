/* A stand-in libcuda.so.1 for test_kregions_inject.c: "device" memory is the host's, so the
 * injection library's kernel-regions path — the state found with cuModuleGetGlobal, the buffer
 * allocated and bound, read back and emptied — runs without a GPU. A module whose image begins
 * with "regions" declares gpujit_regions (56 bytes, layout 3, as gpujit/regions.cuh); the program
 * (kregions_target.c) writes events into the bound buffer as the device would. fake_ctx_destroy()
 * ends the one context: pointers of it then have no context, pushing it fails. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))
#define CU_ERROR_INVALID_VALUE 1
#define CU_ERROR_INVALID_CONTEXT 201
#define CU_ERROR_NOT_FOUND 500
#define CU_POINTER_ATTRIBUTE_CONTEXT 1
#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16

typedef struct fake_state {
  uint32_t abi, scope;
  uint64_t *events, capacity, *counters, *slots, reserved; /* counters: chunks claimed, events lost */
  uint32_t nslots, chunk;
} fake_state;

static fake_state state = {3, 0, NULL, 0, NULL, NULL, 0, 0, 0};
static char ctx_object, handles[16];
static unsigned next_handle;
static int ctx_alive = 1;
static unsigned allocations, copies;

API fake_state *fake_regions_state(void);
fake_state *fake_regions_state(void) { return &state; }
API void fake_ctx_destroy(void);
void fake_ctx_destroy(void) { ctx_alive = 0; }
API unsigned fake_allocations(void);
unsigned fake_allocations(void) { return allocations; }

API int cuModuleLoadData(void **m, const void *image);
int cuModuleLoadData(void **m, const void *image)
{
  if (!image)
    return CU_ERROR_INVALID_VALUE;
  /* a handle whose first byte says whether the module declares regions */
  *m = &handles[next_handle++ % sizeof(handles)];
  *(char *)*m = !strncmp(image, "regions", 7);
  return 0;
}

API int cuModuleGetGlobal_v2(uintptr_t *p, size_t *n, const char *m, const char *name);
int cuModuleGetGlobal_v2(uintptr_t *p, size_t *n, const char *m, const char *name)
{
  if (!m || !*m || strcmp(name, "gpujit_regions"))
    return CU_ERROR_NOT_FOUND;
  *p = (uintptr_t)&state, *n = sizeof(state);
  return 0;
}

API int cuCtxGetCurrent(void **c);
int cuCtxGetCurrent(void **c)
{
  *c = ctx_alive ? &ctx_object : NULL;
  return 0;
}
API int cuCtxPushCurrent_v2(void *c);
int cuCtxPushCurrent_v2(void *c) { return c == &ctx_object && ctx_alive ? 0 : CU_ERROR_INVALID_CONTEXT; }
API int cuCtxPopCurrent_v2(void **c);
int cuCtxPopCurrent_v2(void **c)
{
  if (c)
    *c = &ctx_object;
  return 0;
}
API int cuCtxSynchronize(void);
int cuCtxSynchronize(void) { return ctx_alive ? 0 : CU_ERROR_INVALID_CONTEXT; }
API int cuCtxGetDevice(int *d);
int cuCtxGetDevice(int *d)
{
  *d = 0;
  return 0;
}
API int cuDeviceGetAttribute(int *v, int attr, int dev);
int cuDeviceGetAttribute(int *v, int attr, int dev)
{
  (void)dev;
  *v = attr == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT ? 2 : 0; /* 2 SMs: 256 warp slots */
  return 0;
}
API int cuMemAlloc_v2(uintptr_t *p, size_t n);
int cuMemAlloc_v2(uintptr_t *p, size_t n)
{
  void *m = calloc(1, n ? n : 1);
  if (!m)
    return 2;
  allocations++;
  *p = (uintptr_t)m;
  return 0;
}
API int cuMemFree_v2(uintptr_t p);
int cuMemFree_v2(uintptr_t p)
{
  free((void *)p);
  return 0;
}
API int cuMemcpyHtoD_v2(uintptr_t dst, const void *src, size_t n);
int cuMemcpyHtoD_v2(uintptr_t dst, const void *src, size_t n)
{
  memcpy((void *)dst, src, n);
  return 0;
}
API int cuMemcpyDtoH_v2(void *dst, uintptr_t src, size_t n);
int cuMemcpyDtoH_v2(void *dst, uintptr_t src, size_t n)
{
  copies++;
  memcpy(dst, (const void *)src, n);
  return 0;
}
API int cuMemsetD32_v2(uintptr_t dst, unsigned v, size_t n);
int cuMemsetD32_v2(uintptr_t dst, unsigned v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    ((uint32_t *)dst)[i] = v;
  return 0;
}
/* Only the context of a pointer is known (a string literal's range is not: names are read byte by
 * byte, as the library does where the driver cannot say). */
API int cuPointerGetAttribute(void *out, int attr, uintptr_t p);
int cuPointerGetAttribute(void *out, int attr, uintptr_t p)
{
  (void)p;
  if (attr != CU_POINTER_ATTRIBUTE_CONTEXT || !ctx_alive)
    return CU_ERROR_INVALID_VALUE;
  *(void **)out = &ctx_object;
  return 0;
}
