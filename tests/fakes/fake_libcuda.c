/* A stand-in libcuda.so.1 for tests on machines without a GPU: one device of the compute
 * capability in $FAKE_CUDA_CC (default 90); every cuInit is logged to $FAKE_CUDA_LOG, so a test
 * can tell whether a command started the driver. Everything else fails as unsupported. */
#include <stdio.h>
#include <stdlib.h>

#define NOT_SUPPORTED 801

int cuInit(unsigned flags);
int cuInit(unsigned flags)
{
  const char *log = getenv("FAKE_CUDA_LOG");
  FILE *f = log ? fopen(log, "a") : NULL;
  (void)flags;
  if (f) {
    fputs("cuInit\n", f);
    fclose(f);
  }
  return 0;
}

int cuDriverGetVersion(int *v);
int cuDriverGetVersion(int *v)
{
  *v = 13000;
  return 0;
}

int cuDeviceGetCount(int *n);
int cuDeviceGetCount(int *n)
{
  *n = 1;
  return 0;
}

int cuDeviceGet(int *dev, int ordinal);
int cuDeviceGet(int *dev, int ordinal)
{
  *dev = ordinal;
  return ordinal == 0 ? 0 : 101; /* CUDA_ERROR_INVALID_DEVICE */
}

int cuDeviceGetAttribute(int *v, int attr, int dev);
int cuDeviceGetAttribute(int *v, int attr, int dev)
{
  const char *cc = getenv("FAKE_CUDA_CC");
  int n = cc ? atoi(cc) : 90;
  (void)dev;
  if (attr == 75) /* CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR */
    *v = n / 10;
  else if (attr == 76) /* ..._MINOR */
    *v = n % 10;
  else
    return NOT_SUPPORTED;
  return 0;
}

int cuGetErrorString(int r, const char **s);
int cuGetErrorString(int r, const char **s)
{
  *s = r ? "fake driver: not supported" : "no error";
  return 0;
}

int cuGetErrorName(int r, const char **s);
int cuGetErrorName(int r, const char **s)
{
  *s = r ? "CUDA_ERROR_NOT_SUPPORTED" : "CUDA_SUCCESS";
  return 0;
}

#define STUB(name)        \
  int name(void);         \
  int name(void) { return NOT_SUPPORTED; }
STUB(cuDeviceGetName)
STUB(cuDeviceTotalMem_v2)
STUB(cuDevicePrimaryCtxRetain)
STUB(cuDevicePrimaryCtxRelease_v2)
STUB(cuCtxSetCurrent)
STUB(cuCtxSynchronize)
STUB(cuMemGetInfo_v2)
STUB(cuModuleLoadData)
STUB(cuModuleUnload)
STUB(cuModuleGetFunction)
STUB(cuModuleGetGlobal_v2)
STUB(cuFuncGetAttribute)
STUB(cuFuncSetAttribute)
STUB(cuLaunchKernel)
STUB(cuMemAlloc_v2)
STUB(cuMemFree_v2)
STUB(cuMemcpyHtoDAsync_v2)
STUB(cuMemcpyDtoHAsync_v2)
STUB(cuMemcpyDtoDAsync_v2)
STUB(cuMemsetD32Async)
STUB(cuMemsetD8Async)
STUB(cuEventCreate)
STUB(cuEventDestroy_v2)
STUB(cuEventRecord)
STUB(cuEventSynchronize)
STUB(cuEventElapsedTime_v2)
STUB(cuStreamCreate)
STUB(cuStreamDestroy_v2)
STUB(cuStreamSynchronize)
STUB(cuStreamBeginCapture_v2)
STUB(cuStreamEndCapture)
STUB(cuGraphInstantiateWithFlags)
STUB(cuGraphLaunch)
STUB(cuGraphExecDestroy)
STUB(cuGraphDestroy)
STUB(cuCtxGetCurrent)
STUB(cuCtxGetDevice)
STUB(cuCtxPushCurrent_v2)
STUB(cuCtxPopCurrent_v2)
STUB(cuDevicePrimaryCtxGetState)
STUB(cuPointerGetAttribute)
