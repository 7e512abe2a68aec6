/* The analysis object's insides, shared with the comparison of two analyses (diff.c). */
#ifndef GPUJIT_TRACE_ANALYZE_H
#define GPUJIT_TRACE_ANALYZE_H

#include "trace/compile_profile.h"

struct gpujit_trace_analysis {
  gpujit__rows tables[GPUJIT_TRACE_TABLE_COUNT];
  gpujit__profile *modules; /* every module build of every trace added, in order */
  size_t nmodules, capmodules;
  char **files; /* the traces added (module profiles borrow these names) */
  size_t files_count, files_cap;
  size_t events;
};

#endif
