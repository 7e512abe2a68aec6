/* The include prediction's state, shared by includes.c (the #include closure), macros.c (the
 * #defines computed includes follow) and includes_memo.c (scans kept between builds). */
#ifndef GPUJIT_COMPILE_INCLUDES_SCAN_H
#define GPUJIT_COMPILE_INCLUDES_SCAN_H

#include <stdbool.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/strset.h"
#include "compile/includes/directives.h"
#include "gpujit/module.h"

typedef struct gpujit__inc_file {
  char *path;
  gpujit__buf data;
  gpujit__buf directives; /* its directive lines as the preprocessor reads them; made on first use */
  bool has_directives;
} gpujit__inc_file;

/** Read `path` into `f` (data; with gpujit__inc_files_keep() on, its directive lines too), from
 *  what this process kept of it while the file is unchanged (file_memo.c). @return 0 or the read's error. */
int gpujit__inc_file_load(gpujit__inc_file *f, const char *path);

typedef struct gpujit__inc_pending {
  char *includer, *name;
  size_t source;
  bool next; /* #include_next */
} gpujit__inc_pending;

struct gpujit__includes {
  const gpujit_source *sources;
  char **source_paths; /* normalised absolute paths */
  size_t nsources;
  const char *prelude;
  gpujit__strvec before, after; /* -I before the source's directory; toolkit and NVRTC-option -I after */
  gpujit__inc_file *files;
  size_t nfiles, capfiles;
  gpujit__strset byname;       /* path → file index */
  gpujit__strvec absent;      /* shallowest missing components of lookups passed over: must stay absent */
  gpujit__strset absent_set;
  gpujit__strvec not_files; /* paths looked up that exist but are no file, or found nowhere */
  gpujit__strvec pre_includes; /* headers NVRTC reads before each source (--pre-include) */
  gpujit__strvec resolved; /* lookup cache keys */
  gpujit__strset resolved_set;
  gpujit__strvec macro_names, macro_values; /* object-like #define NAME value */
  gpujit__inc_pending *pend;
  size_t npend, cappend;
  bool needs_trace;
  char why[512];
  char refused[600]; /* a candidate NVRTC would open that is a FIFO, device or socket: it would wait */
};

/** One lookup of `name` from `includer` in NVRTC's order for source `s`: the header found is
 *  added and scanned, failed candidates before it recorded absent. `next`: the search resumes
 *  after the directory the includer was found in (#include_next). */
int gpujit__inc_lookup(gpujit__includes *inc, size_t s, const char *includer, const char *name, bool quoted,
                       bool next, int depth);
/** The readings of file `i` a compile may take, for scanning: its text as written and its
 *  directive lines (gpujit__directive_lines). Each is NUL-terminated; borrowed from `inc`. */
int gpujit__inc_readings(gpujit__includes *inc, size_t i, const char *data[2], size_t size[2]);

/** `#include MACRO` from `includer`: each header name MACRO stands for looked up; `*resolved`
 *  false when MACRO names none yet. */
int gpujit__inc_computed(gpujit__includes *inc, size_t s, const char *includer, const char *macro, bool next,
                         int depth, bool *resolved);
/** Keep `#include MACRO` for when a later #define names it. */
int gpujit__inc_add_pending(gpujit__includes *inc, size_t s, const char *includer, const char *macro, bool next);
/** A `#define NAME value` line's rest [p, eol): kept when value is a header name or identifier
 *  (macros.c, with the two below). */
int gpujit__inc_note_define(gpujit__includes *inc, const char *p, const char *eol);
/** -D NAME=value: a header name a computed include may use. */
int gpujit__inc_note_option_define(gpujit__includes *inc, const char *def);
/** Every header name MACRO stands for (through object-like #defines and -D); -1 out of memory. */
int gpujit__inc_macro_names(const gpujit__includes *inc, const char *macro, gpujit__strvec *out, int depth);
/** A kept scan for these sources and options, its disk still as it was, copied into *out
 *  (gpujit__includes_memo_enable; includes_memo.c). `key` receives the scan's key for
 *  gpujit__inc_memo_put(). @return 1 when *out is set, else 0. */
int gpujit__inc_memo_take(gpujit__includes **out, uint64_t key[2], const gpujit_source *sources,
                          const char *const *abs_paths, size_t count, const gpujit_module_options *o);
/** Keep a fresh scan (made from read_start_ns, CLOCK_REALTIME) when it may be kept. */
void gpujit__inc_memo_put(gpujit__includes *inc, const uint64_t key[2], int64_t read_start_ns);

#endif
