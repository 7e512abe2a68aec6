/* Steps and the schedule (steps.c): where a profiled process's steps begin, which of them are
 * recorded (torch.profiler.schedule's numbers and meaning), and CUPTI attached for exactly those. */
#ifndef GPUJIT_INJECT_STEPS_H
#define GPUJIT_INJECT_STEPS_H

#include <stdbool.h>

#include "inject/record.h"

/** Where a boundary came from (a step record's "src"). */
typedef enum gji_step_src { GJI_STEP_API, GJI_STEP_TORCH, GJI_STEP_NVTX, GJI_STEP_KERNEL } gji_step_src;

/** An in-process session begins (gpujit_inject_inproc_start): step 0 now, the schedule read again. */
GJI_HIDDEN void gji_steps_begin(void);

/* Nothing else: steps.c gives the subscriber (cupti.c) its hooks from a constructor, and the
 * program reaches it through the exported gpujit_inject_step. */

#endif
