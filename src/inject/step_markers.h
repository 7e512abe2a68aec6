/* The NVTX calls that begin a range or make a mark, and their text (step_markers.c). */
#ifndef GPUJIT_INJECT_STEP_MARKERS_H
#define GPUJIT_INJECT_STEP_MARKERS_H

#include "inject/record.h"

/** The ASCII message of NVTX callback `id`'s parameters, or NULL (another call, or not ASCII). */
GJI_HIDDEN const char *gji_nvtx_message(unsigned id, const void *params);
/** The NVTX callback ids that begin a range or make a mark. */
GJI_HIDDEN extern const unsigned gji_nvtx_begin_ids[];
GJI_HIDDEN extern const unsigned gji_nvtx_begin_count;

#endif
