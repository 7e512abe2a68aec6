/* The injection library's CUPTI subscriber (cupti.c), as the driver wrappers see it. */
#ifndef GPUJIT_INJECT_CUPTI_H
#define GPUJIT_INJECT_CUPTI_H

#include <stdbool.h>

#include "inject/record.h"

/** Whether this library's CUPTI subscriber records module loads. */
GJI_HIDDEN bool gji_cupti_records_loads(void);
/** The program is taking CUPTI (through `api`): flush what was recorded, disable this library's
 *  activity kinds, unsubscribe, and say so once. */
GJI_HIDDEN void gji_cupti_yield(const char *api);

#endif
