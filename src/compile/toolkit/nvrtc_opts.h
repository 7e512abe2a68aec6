/* NVRTC's option grammar: raw NVRTC options (-Xnvrtc, Python's options=, a manifest's
 * nvrtc_options) read as NVRTC reads them, so that every option that names a file or directory
 * is made absolute before it reaches NVRTC, the include scan and the cache key, and every option
 * that changes code generation reaches the tool that generates the code. */
#ifndef GPUJIT_COMPILE_TOOLKIT_NVRTC_OPTS_H
#define GPUJIT_COMPILE_TOOLKIT_NVRTC_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"

typedef enum gpujit__opt_role {
  GPUJIT__OPT_PLAIN,       /* enters the key as written */
  GPUJIT__OPT_INCLUDE_DIR, /* --include-path: a directory of the search path */
  GPUJIT__OPT_PRE_INCLUDE, /* --pre-include: a header read before the source */
  GPUJIT__OPT_DEFINE,      /* --define-macro */
  GPUJIT__OPT_PTXAS,       /* changes what NVRTC's own ptxas makes: the lean path stands aside */
  GPUJIT__OPT_PTXAS_MAXREG,/* --maxrregcount: given to the lean path's ptxas as -maxrregcount */
  GPUJIT__OPT_PTXAS_PASS,  /* --ptxas-options: its value given to the lean path's ptxas */
  GPUJIT__OPT_SCAN,        /* changes how headers are looked up: the compile says what it read */
  GPUJIT__OPT_SIDE_FILE,   /* reads or writes a file the cache cannot stand for: not cached */
  GPUJIT__OPT_TRACE,       /* --fdevice-time-trace: only the trace; not in the key */
  GPUJIT__OPT_UNKNOWN      /* not an option this table knows: not cached */
} gpujit__opt_role;

typedef struct gpujit__nvrtc_opt {
  const char *name;  /* the canonical spelling ("--include-path"); for UNKNOWN the element itself */
  gpujit__opt_role role;
  char *value;       /* the value as given (NULL: a flag); an absolute path for INCLUDE_DIR and
                        PRE_INCLUDE when it could be made one */
  bool unsure;       /* a form whose meaning is not certain (blanks inside, an empty value) */
  size_t at, taken;  /* the input elements it was read from */
  const char *given; /* the first of them, as written (borrowed from the input) */
} gpujit__nvrtc_opt;

typedef struct gpujit__nvrtc_opts {
  gpujit__nvrtc_opt *items;
  size_t count, cap;
} gpujit__nvrtc_opts;

/**
 * Read `n` raw options the way NVRTC does: `--long=V`, `-short=V`, `-IV`/`-DV`/`-UV`, and a value
 * in the next element (`-I` `dir`). Paths are made absolute against the working directory.
 * @return 0; GPUJIT_EINVAL (an option that needs a value ends the list, or an element that is
 *   neither an option nor an option's value: the message names it); GPUJIT_ENOMEM.
 */
int gpujit__nvrtc_opts_parse(gpujit__nvrtc_opts *out, const char *const *opts, size_t n);
void gpujit__nvrtc_opts_free(gpujit__nvrtc_opts *o);

/** The raw options as gpujit gives them to NVRTC: each path-bearing one as `--name=ABSOLUTE`,
 *  the others as written. Appended to `out`. @return as gpujit__nvrtc_opts_parse. */
int gpujit__nvrtc_opts_given(gpujit__strvec *out, const char *const *opts, size_t n);

/** One option as NVRTC is given it: `name[=value]` in one element. */
int gpujit__nvrtc_opt_text(gpujit__buf *out, const gpujit__nvrtc_opt *o);

/** Whether a compile with these options may be cached; when not, `why` says which option. */
bool gpujit__nvrtc_opts_cacheable(const gpujit__nvrtc_opts *o, char *why, size_t why_size);

/** The first option of `role`, or NULL. */
const gpujit__nvrtc_opt *gpujit__nvrtc_opts_find(const gpujit__nvrtc_opts *o, gpujit__opt_role role);

#endif
