/* In-process sessions: the program's loaded objects rebound to this library's wrappers (rebind.c). */
#ifndef GPUJIT_INJECT_REBIND_H
#define GPUJIT_INJECT_REBIND_H

#include <stddef.h>

#include "inject/record.h"

/** Rebind every loaded object now (and each loaded later, at its next dlsym): GOT slots of the
 *  watched functions and of dlsym, and words of writable data holding a watched function's real
 *  address. @return how many real functions were looked for by value (0: none of NVRTC, libNVVM,
 *  the driver, CUPTI loaded yet). */
GJI_HIDDEN size_t gji_rebind_start(void);
/** What was rebound so far: words by value, GOT slots. */
GJI_HIDDEN void gji_rebind_counts(size_t *values, size_t *slots);
/** Put back every slot and word that still holds its wrapper. */
GJI_HIDDEN void gji_rebind_stop(void);

#endif
