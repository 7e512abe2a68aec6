/* NVRTC's functions wrapped per loaded copy (nvrtc.c), for the exported dlsym. */
#ifndef GPUJIT_INJECT_NVRTC_H
#define GPUJIT_INJECT_NVRTC_H

#include "inject/record.h"

/** The wrapper of NVRTC's function `name` for the copy of NVRTC holding `real`, or NULL when
 *  `name` is not one this library watches. */
GJI_HIDDEN void *gji_nvrtc_wrap(const char *name, void *real);

#endif
