/* The NVRTC stage: one-time initialisation, compiling one program, diagnostics. */
#ifndef GPUJIT_COMPILE_NVRTC_NVRTC_H
#define GPUJIT_COMPILE_NVRTC_NVRTC_H

#include <stdbool.h>

#include "base/buf.h"
#include "compile/observe/observe.h"
#include "gpujit/module.h"

/** How many NVRTC compiles this process ran (tests check that hits run none). */
extern unsigned long gpujit__nvrtc_compiles;
/** Once per process: load NVRTC's supported arch list. */
int gpujit__nvrtc_init(void);
/** Whether NVRTC supports numeric arch `arch` (e.g. 90); call gpujit__nvrtc_init() first. */
bool gpujit__nvrtc_arch_supported(int arch);
/** NVRTC's version (loads NVRTC). */
int gpujit__nvrtc_version(int *major, int *minor);
/** Translate an nvrtcResult (passed as int) into a gpujit code with a message, in one place. */
int gpujit__nvrtc_error(int result, const char *what);

/** One NVRTC compile's results. */
typedef struct gpujit__nvrtc_result {
  gpujit__buf image; /* cubin, PTX or LTO-IR */
  gpujit__buf log;
  gpujit__strvec lowered; /* parallel to the name expressions */
  gpujit__observed observed; /* what NVRTC looked at (compile/observe/observe.h) */
} gpujit__nvrtc_result;

/** The in-memory header a prelude is pre-included as. */
#define GPUJIT__PRELUDE_HEADER "gpujit-prelude.h"

/** One NVRTC compile. */
typedef struct gpujit__nvrtc_request {
  const char *source;
  const char *program_name; /* the source's absolute path */
  const gpujit__strvec *flags;
  const char *const *name_exprs;
  size_t name_exprs_count;
  gpujit_output_kind output;
  const char *prelude; /* pre-included as GPUJIT__PRELUDE_HEADER, or NULL */
  struct gpujit__pch *pch; /* precompiled header request and outcome; NULL: off */
} gpujit__nvrtc_request;

int gpujit__nvrtc_compile(gpujit__nvrtc_result *out, const gpujit__nvrtc_request *req);
void gpujit__nvrtc_result_free(gpujit__nvrtc_result *r);

/** Find the first diagnostic in an NVRTC log as "file:line:col: message". */
void gpujit__first_diagnostic(char *out, size_t size, const char *log);

#endif
