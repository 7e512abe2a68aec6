/* NVTX ranges and marks, as CUPTI's marker records report them (nvtx.c), written as "nvtx"
 * records: a range when its end comes (its start is kept until then), a mark at once. */
#ifndef GPUJIT_INJECT_NVTX_H
#define GPUJIT_INJECT_NVTX_H

#include <cupti.h>

#include "inject/record.h"

/** One marker record (CUPTI_ACTIVITY_KIND_MARKER). */
GJI_HIDDEN void gji_nvtx_marker(const CUpti_ActivityMarker2 *m);

#endif
