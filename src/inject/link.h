/* nvJitLink's and libNVVM's functions wrapped per loaded copy (link.c), for the exported dlsym. */
#ifndef GPUJIT_INJECT_LINK_H
#define GPUJIT_INJECT_LINK_H

#include "inject/record.h"

/** The wrapper of nvJitLink's or libNVVM's function `name` for the copy holding `real`, or NULL
 *  when `name` is not one this library watches. */
GJI_HIDDEN void *gji_link_wrap(const char *name, void *real);

#endif
