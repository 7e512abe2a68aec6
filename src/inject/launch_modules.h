/* Which module each launch's kernel came from, by CUPTI correlation id (launch_modules.c). A launch costs
 * one lock-free look-up of its function and one store into a table indexed by correlation id;
 * the driver is asked once per distinct function. A kernel record finds its launch there, or,
 * where the table has moved on, by its kernel's name when exactly one module launched a kernel
 * of that name — never by the order of launches. */
#ifndef GPUJIT_INJECT_LAUNCH_MODULES_H
#define GPUJIT_INJECT_LAUNCH_MODULES_H

#include <stdbool.h>
#include <stdint.h>

#include "inject/record.h"

/** Correlation ids the table holds: the launches in flight between a launch's callback and its
 *  kernel's record (CUPTI's buffers hold about 20,000 records each). */
#define GJI_SPAN_SLOTS (1u << 19)
/** Distinct modules launched from (past it, launches count as of no module). */
#define GJI_SPAN_MODULES (1u << 16)

/** How a function's module (handle) and name are found, once per function: false when they cannot
 *  be. `*name` may be left NULL; it need only live during the call. */
typedef bool (*gji_span_resolver)(uint64_t fn, uint64_t *module, const char **name);

/** The resolver launches use (cupti.c: the driver's; tests: their own). Set before launches. */
GJI_HIDDEN void gji_span_set_resolver(gji_span_resolver r);
/** A launch of function `fn` with correlation id `corr`. No lock and no system call once `fn` was
 *  seen: one atomic load and one store. */
GJI_HIDDEN void gji_span_launch(uint32_t corr, uint64_t fn);
/** A module or library is being unloaded: each function's module is asked again (a handle may come
 *  back for another module). */
GJI_HIDDEN void gji_span_unload(void);
/** The module of launch `corr`, whose kernel is `name` (NULL: a launch no callback saw, as a graph's
 *  node: never by name). False when the table no longer holds `corr` and the name does not say. */
GJI_HIDDEN bool gji_span_module(uint32_t corr, const char *name, uint64_t *module);
/** Functions whose module could not be found, and modules past GJI_SPAN_MODULES (for a note). */
GJI_HIDDEN uint64_t gji_span_unresolved(void);

#endif
