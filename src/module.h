/* The module object shared by the build pipeline, the cache and the runner. */
#ifndef GPUJIT_MODULE_INTERNAL_H
#define GPUJIT_MODULE_INTERNAL_H

#include "gpujit/module.h"
#include "internal.h"

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
  gpujit_cache_status cache_status;
  char cache_key[33];
};

gpujit_module *gpujit__module_new(void);

#endif
