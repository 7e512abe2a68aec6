/* A module's cache keys: the request key (what the build is asked) and the entry key (that and
 * the content of every dependency the compile had). */
#ifndef GPUJIT_MODULE_KEY_H
#define GPUJIT_MODULE_KEY_H

#include <cjson/cJSON.h>

#include "cache/records/deps.h"
#include "cache/store/key.h"
#include "gpujit/module.h"

/**
 * The request key: schema, gpujit and toolkit identity, arch and output, canonical options, name
 * expressions, include directories and sources (paths under `base` relative to it). Reads no
 * file. With `inputs`, each field is also added to it in readable form (for the metadata).
 */
int gpujit__module_key(gpujit__key *out, cJSON *inputs, const char *base, const gpujit_source *sources,
                       const char *const *abs_paths, size_t count, const gpujit_module_options *opts,
                       const char *arch, gpujit_output_kind output);

/** The entry key: the request key with every dependency's path and content (or absence). */
int gpujit__module_entry_key(gpujit__key *out, const gpujit__key *request, const gpujit__deps *deps,
                             const gpujit__deps *shared);

#endif
