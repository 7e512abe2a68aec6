/* The lean path of a build: the lean pass on PTX, then the toolkit's ptxas. */
#ifndef GPUJIT_MODULE_LEAN_H
#define GPUJIT_MODULE_LEAN_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "module/module.h"

/** A traced build's profile (m->profile; none: nothing) counts `ms` as compile phase `phase`. */
void gpujit__profile_phase(gpujit_module *m, const char *phase, double ms);

/** Whether a build with these options and this output takes the lean path. */
bool gpujit__lean_applies(const gpujit_module_options *opts, gpujit_output_kind output);
/** Where the lean path would apply but the toolkit has no ptxas: a warning once per cache and
 *  toolkit (remembered as a note in the cache; once per process without a cache), else under -v. */
void gpujit__lean_warn_no_ptxas(const gpujit_module_options *opts, gpujit_output_kind output);

/**
 * Run the lean pass on `ptx` (m->lowered set: name-expression variables stay) and make m->image:
 * the lean PTX itself for PTX output, else a cubin from the toolkit's ptxas, whose -v lines
 * are appended to `log`. `headers` holds the text of each user header the compile read, as
 * NVRTC was seen to read them (NULL: not known, so every unreferenced variable is kept as
 * possibly the user's). Fills m->lean.
 * @return 0, or ptxas's error (its output in gpujit_error_log()), GPUJIT_EIO, GPUJIT_ENOMEM.
 */
int gpujit__lean_assemble(gpujit_module *m, const gpujit__buf *ptx, const gpujit_source *sources, size_t count,
                          const gpujit__buf *headers, size_t nheaders, const gpujit_module_options *opts,
                          gpujit__buf *log);

/** What the lean path did, as recorded with a cache entry or sent by a worker; NULL when it did
 *  not apply. */
cJSON *gpujit__lean_json(const gpujit_module *m);
/** Read it back (anything absent or malformed reads as zero). */
void gpujit__lean_from_json(gpujit_module *m, const cJSON *j);

#endif
