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
  char *miss_reason; /* the lookup's, when it missed */
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

/** A build server that takes a project's misses in place of worker processes of its own
 *  (server/ fills it in; project/ stays below server/). */
typedef struct gpujit__project_via {
  /** How many jobs it takes at once (asked once, when the build has misses): so many of the
   *  build's slots go to it, the rest start workers of their own. @return > 0; 0: none runs;
   *  < 0: it cannot take this build's jobs (`why` says). */
  int (*slots)(void *ctx, char *why, size_t why_size);
  /** A connection for one job. @return its fd (the server's pid into *pid), or < 0 with the
   *  error set: the rest of the build then uses worker processes of its own. */
  int (*connect)(void *ctx, int *pid);
  /** The request frame's text that carries `job` (taken), or NULL. */
  char *(*request)(void *ctx, cJSON *job);
  void *ctx;
  size_t served; /* out: modules the server built (failures included) */
  char lost[512]; /* out: why it stopped taking jobs mid-build ("" : it never did) */
} gpujit__project_via;

/** gpujit_project_build() with the misses sent to `via`; whatever the server does not take
 *  (none runs, another version, lost mid-job: the job is sent again) is built as without it. */
int gpujit__project_build_via(gpujit_project *p, const gpujit_project_options *o, gpujit__project_via *via);

#endif
