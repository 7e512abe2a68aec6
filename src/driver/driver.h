/* The CUDA driver, loaded at run time with dlopen: gpujit never links libcuda. Types and
 * constants come from the toolkit's cuda.h; entry points from the table below. */
#ifndef GPUJIT_DRIVER_DRIVER_H
#define GPUJIT_DRIVER_DRIVER_H

#include <cuda.h>

/* Every driver entry point gpujit uses. cuda.h maps some names to versioned symbols
 * (cuMemAlloc → cuMemAlloc_v2): the table stringizes after expansion, so dlsym gets those. */
#define GPUJIT__DRIVER_FUNCS(X)                                                           \
  X(cuInit) X(cuDriverGetVersion) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetAttribute) \
  X(cuDeviceGetName) X(cuDeviceTotalMem) X(cuGetErrorString) X(cuGetErrorName)             \
  X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent)              \
  X(cuCtxSynchronize) X(cuMemGetInfo) X(cuModuleLoadData) X(cuModuleUnload)                \
  X(cuModuleGetFunction) X(cuModuleGetGlobal) X(cuFuncGetAttribute) X(cuFuncSetAttribute) X(cuLaunchKernel) X(cuMemAlloc)           \
  X(cuMemFree) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) X(cuMemcpyDtoDAsync)              \
  X(cuMemsetD32Async) X(cuMemsetD8Async) X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord) \
  X(cuEventSynchronize) X(cuEventElapsedTime) X(cuStreamCreate) X(cuStreamDestroy)         \
  X(cuStreamSynchronize) X(cuStreamBeginCapture) X(cuStreamEndCapture)                     \
  X(cuGraphInstantiate) X(cuGraphLaunch) X(cuGraphExecDestroy) X(cuGraphDestroy)           \
  X(cuCtxGetCurrent) X(cuCtxGetDevice) X(cuCtxPushCurrent) X(cuCtxPopCurrent)              \
  X(cuDevicePrimaryCtxGetState) X(cuPointerGetAttribute)

typedef struct gpujit__driver {
#define GPUJIT__FIELD(name) __typeof__(name) *name;
  GPUJIT__DRIVER_FUNCS(GPUJIT__FIELD)
#undef GPUJIT__FIELD
} gpujit__driver;

/** Load libcuda.so.1 and cuInit once; GPUJIT_ENODRIVER / GPUJIT_ENODEVICE with the reason. */
int gpujit__driver_get(const gpujit__driver **out);
/** Translate a CUresult, in exactly one place. */
int gpujit__cuda_error(CUresult r, const char *what);
/** A driver call's result as gpujit's error: CU(d->cuCtxSynchronize(), "synchronize") is 0 or the
 *  negative code, the thread's last error saying `what` failed and why. */
#define CU(call, what) gpujit__cuda_error((call), (what))

/** GPU arch of device $GPUJIT_DEVICE (default 0) through the driver, e.g. "sm_90";
 *  GPUJIT_ENODRIVER / GPUJIT_ENODEVICE otherwise. Starts the driver (cuInit). */
int gpujit__driver_arch(char *out, size_t size);

#endif
