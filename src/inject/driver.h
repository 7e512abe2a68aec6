/* The driver's functions the injection library wraps (driver.c): module loads when CUPTI does
 * not record them, the ones by which a program takes CUPTI, and cuGetProcAddress. */
#ifndef GPUJIT_INJECT_DRIVER_H
#define GPUJIT_INJECT_DRIVER_H

#include <stdbool.h>

#include "inject/record.h"

/** The wrapper of the driver's function `name` (the real one is `real`), or NULL when `name` is
 *  none that driver.c wraps. */
GJI_HIDDEN void *gji_driver_wrap(const char *name, void *real);
/** Whether driver.c wraps `name`. */
GJI_HIDDEN bool gji_driver_watched(const char *name);

#endif
