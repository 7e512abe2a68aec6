/* A module's cache key: what it is built from, hashed, plus the files its entry dumps. */
#ifndef GPUJIT_MODULE_KEY_H
#define GPUJIT_MODULE_KEY_H

#include <cjson/cJSON.h>

#include "cache/key.h"
#include "gpujit/module.h"

/** A file that went into the key and is dumped with the entry. */
typedef struct gpujit__keyfile {
  char *path;     /* absolute, as the line table names it */
  char *rel;      /* relative to the base dir (or absolute when outside it) */
  const char *data;
  size_t size;
  char *owned;    /* when data was read here */
} gpujit__keyfile;

typedef struct gpujit__keyinfo {
  gpujit__keyfile *files; /* sources first, then user headers */
  size_t count, cap, sources;
  cJSON *inputs;          /* readable key inputs for the metadata */
} gpujit__keyinfo;

void gpujit__keyinfo_free(gpujit__keyinfo *k);

/**
 * Compute a module's key: schema, gpujit and toolkit identity, canonical options, arch and
 * output, name expressions, every source and every user header it includes (transitively).
 * Paths under `base` (may be NULL) enter relative to it.
 */
int gpujit__module_key(gpujit__key *out, gpujit__keyinfo *info, const char *base,
                       const gpujit_source *sources, const char *const *abs_paths, size_t count,
                       const gpujit_module_options *opts, const char *arch, gpujit_output_kind output);

#endif
