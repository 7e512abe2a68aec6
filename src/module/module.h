/* The module object: what a build produces and the runner loads. */
#ifndef GPUJIT_MODULE_MODULE_H
#define GPUJIT_MODULE_MODULE_H

#include "gpujit/module.h"
#include "base/buf.h"
#include "trace/compile_profile.h"

struct gpujit_module {
  char *name;
  char arch[32];
  gpujit_output_kind output;
  gpujit__buf image;
  gpujit__strvec kernels;
  gpujit__strvec name_exprs;
  gpujit__strvec lowered;
  gpujit__strvec sources; /* absolute paths the line table names */
  char *log;
  gpujit_module_timings timings;
  double phase_ms[4]; /* NVRTC front end, optimizer, codegen, ptxas (traced compiles) */
  gpujit__profile *profile; /* a traced compile's profile, kept by its cache entry; NULL: none */
  gpujit_cache_status cache_status;
  gpujit_pch_status pch;
  char pch_reason[200];
  double pch_bytes; /* the PCH this build made (its file) or used (NVRTC's PCH heap); 0: none */
  gpujit_module_lean lean; /* its note points at lean_note */
  char lean_note[240];
  char cache_key[33];
  char miss_reason[1024]; /* why the cache missed (a miss that compiled), or "" */
  bool uncacheable;       /* cannot be cached (time macros, untrackable options): see gpujit_module_uncacheable */
};

gpujit_module *gpujit__module_new(void);

#endif
