/* The CUDA driver, loaded at run time with dlopen: gpujit never links libcuda. */
#ifndef GPUJIT_DRIVER_H
#define GPUJIT_DRIVER_H

#include <stddef.h>
#include <stdint.h>

/* Minimal driver ABI types (from the CUDA driver API; values are stable ABI). */
typedef int gpujit__CUresult;
typedef int gpujit__CUdevice;

#define GPUJIT__CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define GPUJIT__CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76

/* X(name, return, params) — every driver entry point gpujit uses. */
#define GPUJIT__DRIVER_FUNCS(X)                                                            \
  X(cuInit, (unsigned int flags))                                                          \
  X(cuDriverGetVersion, (int *version))                                                    \
  X(cuDeviceGetCount, (int *count))                                                        \
  X(cuDeviceGet, (gpujit__CUdevice * dev, int ordinal))                                    \
  X(cuDeviceGetAttribute, (int *value, int attrib, gpujit__CUdevice dev))                  \
  X(cuDeviceGetName, (char *name, int len, gpujit__CUdevice dev))                          \
  X(cuGetErrorString, (gpujit__CUresult err, const char **str))                            \
  X(cuGetErrorName, (gpujit__CUresult err, const char **str))

typedef struct gpujit__driver {
#define GPUJIT__FIELD(name, params) gpujit__CUresult(*name) params;
  GPUJIT__DRIVER_FUNCS(GPUJIT__FIELD)
#undef GPUJIT__FIELD
} gpujit__driver;

/** Load libcuda.so.1 and cuInit once; GPUJIT_ENODRIVER with the reason when it can't. */
int gpujit__driver_get(const gpujit__driver **out);
/** Translate a CUresult, in exactly one place. */
int gpujit__cuda_error(gpujit__CUresult r, const char *what);

#endif
