/* The project object: its modules, their options as JSON, their results (project/project.c). */
#ifndef GPUJIT_PROJECT_PROJECT_H
#define GPUJIT_PROJECT_PROJECT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "gpujit/project.h"

typedef struct gpujit__project_module {
  char *name;
  char **files;
  size_t files_count;
  cJSON *options; /* project/wire.h's form */
  char *output;
  /* one build's state */
  gpujit_project_result r;
  char *message, *log, *pch_reason;
  gpujit_module *module;
  double expected_ms;
  uint64_t block; /* the include block and options: modules sharing it share a PCH */
  bool has_block;
} gpujit__project_module;

struct gpujit_project {
  gpujit__project_module *mods;
  size_t count, cap;
  gpujit_project_summary summary;
};

/** Forget the results of an earlier build. */
void gpujit__project_reset(gpujit_project *p);

/** Set a module's final state from a built module (taken) or an error. */
void gpujit__project_finish(gpujit_project *p, size_t i, gpujit_project_status status, gpujit_module *m, int error,
                            const char *message, const char *log, bool keep);

#endif
