/* Compile-time traces in Trace Event Format, and their analysis across many modules. */
#ifndef GPUJIT_TRACE_H
#define GPUJIT_TRACE_H

#include "common.h"

GPUJIT_BEGIN_DECLS

typedef struct gpujit_trace gpujit_trace;

#define GPUJIT_TRACE_OPTIONS_VERSION 1

typedef struct gpujit_trace_options {
  unsigned int version;
  const char *process_name; /**< the process track's name; NULL: "gpujit" */
  int nvrtc_phases;         /**< default 1: compile with --fdevice-time-trace and merge its phases */
  const char *tmp_dir;      /**< where NVRTC's per-compile trace files go; NULL: $TMPDIR or /tmp */
} gpujit_trace_options;

#define GPUJIT_TRACE_OPTIONS_INIT { GPUJIT_TRACE_OPTIONS_VERSION, NULL, 1, NULL }

/** @return 0, or GPUJIT_EVERSION. */
GPUJIT_API int gpujit_trace_options_init(gpujit_trace_options *opts, unsigned int version);

/**
 * Create an empty trace sink. Thread-safe: any thread may add events.
 * @return 0, GPUJIT_ENOMEM, GPUJIT_EVERSION or GPUJIT_EINVAL (tmp_dir not a directory).
 */
GPUJIT_API int gpujit_trace_create(gpujit_trace **out, const gpujit_trace_options *opts);

/** Free a trace; NULL is a no-op. */
GPUJIT_API void gpujit_trace_free(gpujit_trace *trace);

/** @return the trace clock (CLOCK_MONOTONIC) in microseconds. */
GPUJIT_API double gpujit_trace_now_us(void);

/**
 * Open a span on the calling thread's track. Spans on one thread must close in reverse
 * order of opening (they nest). A NULL trace is allowed: it does nothing and costs nothing.
 * @param out_id receives the span's id for arguments and gpujit_trace_span_end().
 * @return 0, GPUJIT_EINVAL or GPUJIT_ENOMEM.
 */
GPUJIT_API int gpujit_trace_span_begin(gpujit_trace *trace, uint64_t *out_id, const char *category,
                                       const char *name);

/** Attach a string argument to an open or closed span. */
GPUJIT_API int gpujit_trace_span_arg_str(gpujit_trace *trace, uint64_t id, const char *key,
                                         const char *value);

/** Attach a numeric argument to a span. */
GPUJIT_API int gpujit_trace_span_arg_num(gpujit_trace *trace, uint64_t id, const char *key,
                                         double value);

/** Close a span, stamping its duration. @return 0 or GPUJIT_EINVAL (unknown id). */
GPUJIT_API int gpujit_trace_span_end(gpujit_trace *trace, uint64_t id);

/**
 * Create a named track that is not a thread (a GPU stream, a queue); its tid is never 0, never
 * a real thread id, and fits in 32 bits (as Perfetto reads ids). @param out_tid receives the
 * track id for gpujit_trace_complete().
 */
GPUJIT_API int gpujit_trace_track(gpujit_trace *trace, int64_t *out_tid, const char *name);

/**
 * Add a complete event measured elsewhere (GPU activity) on a track; ts and dur in µs on the
 * trace clock. tid 0 means the calling thread. @param out_id may be NULL.
 * @return 0, GPUJIT_EINVAL (no name, a negative duration, a tid outside 0..2^32-1: Perfetto
 *         would put it on the process's track) or GPUJIT_ENOMEM.
 */
GPUJIT_API int gpujit_trace_complete(gpujit_trace *trace, uint64_t *out_id, int64_t tid,
                                     const char *category, const char *name, double ts_us,
                                     double dur_us);

/** Add an instant event on the calling thread's track, now. */
GPUJIT_API int gpujit_trace_instant(gpujit_trace *trace, const char *category, const char *name);

/** Add a counter sample (a "C" event) named `name`, series `series`, now. */
GPUJIT_API int gpujit_trace_counter(gpujit_trace *trace, const char *name, const char *series,
                                    double value);

/** Name the calling thread's track (default: "main" or "worker N"). */
GPUJIT_API int gpujit_trace_thread_name(gpujit_trace *trace, const char *name);

/** Record a key/value pair in the file's "otherData" object. */
GPUJIT_API int gpujit_trace_set_meta(gpujit_trace *trace, const char *key, const char *value);

/**
 * Merge the events of an existing trace file (gpujit's or NVRTC's) into this trace, keeping
 * their timestamps, so a later stage can append to an earlier one's file.
 * @return 0, GPUJIT_ENOENT/GPUJIT_EIO, GPUJIT_EPARSE (message names the file and the problem).
 */
GPUJIT_API int gpujit_trace_load(gpujit_trace *trace, const char *path);

/** @return the number of events recorded so far (metadata excluded). */
GPUJIT_API size_t gpujit_trace_event_count(gpujit_trace *trace);

/**
 * Serialise as Trace Event Format object JSON ({"traceEvents":[…],"displayTimeUnit":"ms",
 * "otherData":{…}}), events sorted per track so complete events nest.
 * @param out receives a NUL-terminated buffer the caller frees with gpujit_free().
 */
GPUJIT_API int gpujit_trace_to_json(char **out, size_t *out_len, gpujit_trace *trace);

/** Write the JSON to `path` atomically. @return 0 or GPUJIT_EIO. */
GPUJIT_API int gpujit_trace_write(gpujit_trace *trace, const char *path);


/* ---- analysis ---------------------------------------------------------------------------- */

typedef struct gpujit_trace_analysis gpujit_trace_analysis;

/** The tables an analysis fills. */
typedef enum gpujit_trace_table {
  GPUJIT_TRACE_PHASES = 0,      /**< front end, NVVM optimizer, codegen, ptxas, link, gpujit */
  GPUJIT_TRACE_HEADERS,         /**< "Processing Header File", per header */
  GPUJIT_TRACE_TEMPLATES,       /**< instantiations grouped by template, arguments collapsed */
  GPUJIT_TRACE_INSTANTIATIONS,  /**< each instantiation */
  GPUJIT_TRACE_FUNCTIONS,       /**< IR generation, optimisation, ptxas, per function */
  GPUJIT_TRACE_MODULES,         /**< per compiled module (NVRTC program) */
  GPUJIT_TRACE_TABLE_COUNT
} gpujit_trace_table;

/** One aggregated row. Times in microseconds. */
typedef struct gpujit_trace_stat {
  const char *name;
  double total_us;
  double max_us;
  uint64_t count;
} gpujit_trace_stat;

/** @return 0 or GPUJIT_ENOMEM. */
GPUJIT_API int gpujit_trace_analysis_create(gpujit_trace_analysis **out);

/** Free an analysis; NULL is a no-op. */
GPUJIT_API void gpujit_trace_analysis_free(gpujit_trace_analysis *analysis);

/**
 * Add one trace file: gpujit's, or raw NVRTC/nvcc --fdevice-time-trace output (object or
 * array form). Nothing is added when it fails.
 * @return 0, GPUJIT_ENOENT/GPUJIT_EIO, or GPUJIT_EPARSE (message names the file and what is wrong).
 */
GPUJIT_API int gpujit_trace_analysis_add_file(gpujit_trace_analysis *analysis, const char *path);

/** As add_file, from memory; `name` is used in messages. */
GPUJIT_API int gpujit_trace_analysis_add_json(gpujit_trace_analysis *analysis, const char *name,
                                              const char *json, size_t len);

/**
 * Add a trace file, or every *.json trace beneath a directory (sorted by path).
 * @param out_files receives how many traces were added (may be NULL).
 * @return as add_file; GPUJIT_ENOENT for a directory without traces.
 */
GPUJIT_API int gpujit_trace_analysis_add_path(gpujit_trace_analysis *analysis, const char *path,
                                              size_t *out_files);

/**
 * How many module builds were cache hits whose compile profile was recorded when the entry was
 * built (their phases and tables come from that record).
 * @param out_unmeasured receives how many hits had no record: their compile cost is unknown.
 */
GPUJIT_API size_t gpujit_trace_analysis_recorded(const gpujit_trace_analysis *analysis,
                                                 size_t *out_unmeasured);

/** @return the number of rows in a table. */
GPUJIT_API size_t gpujit_trace_analysis_count(const gpujit_trace_analysis *analysis,
                                              gpujit_trace_table table);

/** @return row i of a table, sorted by total time, largest first; NULL out of range (borrowed). */
GPUJIT_API const gpujit_trace_stat *gpujit_trace_analysis_row(const gpujit_trace_analysis *analysis,
                                                              gpujit_trace_table table, size_t i);

/** @return the number of files added and events read. */
GPUJIT_API void gpujit_trace_analysis_totals(const gpujit_trace_analysis *analysis, size_t *files,
                                             size_t *events);

/** @return a short name for a table ("phases", "headers", …) (static). */
GPUJIT_API const char *gpujit_trace_table_name(gpujit_trace_table table);


/* ---- comparison ------------------------------------------------------------------------- */

typedef struct gpujit_trace_diff gpujit_trace_diff;

#define GPUJIT_TRACE_DIFF_OPTIONS_VERSION 1

typedef struct gpujit_trace_diff_options {
  unsigned int version;
  double fail_above_pct; /**< the gate: a module or the total slower by more than this many percent
                              fails; < 0 (default): no gate */
  double min_ms;         /**< ... and by at least this many milliseconds (default 0) */
} gpujit_trace_diff_options;

#define GPUJIT_TRACE_DIFF_OPTIONS_INIT { GPUJIT_TRACE_DIFF_OPTIONS_VERSION, -1.0, 0.0 }

/** @return 0, or GPUJIT_EVERSION. */
GPUJIT_API int gpujit_trace_diff_options_init(gpujit_trace_diff_options *opts, unsigned int version);

typedef enum gpujit_trace_change {
  GPUJIT_TRACE_SAME = 0,    /**< no change beyond the measured spread, nor above 0.5 % */
  GPUJIT_TRACE_SLOWER,
  GPUJIT_TRACE_FASTER,
  GPUJIT_TRACE_ADDED,       /**< only in the new traces */
  GPUJIT_TRACE_REMOVED,     /**< only in the base traces */
  GPUJIT_TRACE_UNMEASURED   /**< a module whose compile cost one side does not know (cache hits
                                 without a recorded profile) */
} gpujit_trace_change;

/** One compared row. Values in microseconds. */
typedef struct gpujit_trace_diff_row {
  const char *name;          /**< borrowed from the diff */
  double base_us, new_us;    /**< per side: the sum over modules of the median of each module's
                                  samples (a module built in several traces has several). A
                                  module's value is its time in NVRTC and nvJitLink (recorded, for
                                  a cache hit); gpujit's own time is the phase "gpujit overhead".
                                  A table row missing where a recorded profile left its smallest
                                  rows out is not compared */
  double delta_us;           /**< new - base */
  double delta_pct;          /**< 100 * delta / base; 0 when base is 0 */
  double base_spread_us;     /**< per side: the sum over modules of the range (max - min) of
                                  their samples; 0 with one sample */
  double new_spread_us;
  unsigned int base_samples; /**< the fewest samples of a module on each side (modules table and
                                  total: of this row's modules) */
  unsigned int new_samples;
  double p_value;            /**< modules with >= 2 samples a side: the one-sided Mann-Whitney
                                  probability of a change this large by chance; -1 otherwise */
  gpujit_trace_change change;
  int regression;            /**< slower beyond the noise and beyond the gate's thresholds */
} gpujit_trace_diff_row;

/** The comparison's outcome. */
typedef struct gpujit_trace_diff_verdict {
  int gated;                 /**< a gate was asked for */
  int failed;                /**< a module or the total regressed past the gate */
  int total_regressed;       /**< the whole compile time regressed past the gate */
  size_t regressions;        /**< modules that regressed past the gate */
  size_t slower, faster, added, removed, unmeasured; /**< modules */
  unsigned int min_samples;  /**< the fewest samples any compared module has on either side */
  double worst_p;            /**< the largest p_value among regressions (-1: none computed) */
} gpujit_trace_diff_verdict;

/**
 * Compare two analyses (`base`, the reference, and `next`): modules by name, and every table's
 * rows. Neither analysis may change while the diff lives.
 * @return 0, GPUJIT_EINVAL (NULL argument, or a side without any module build), GPUJIT_EVERSION
 *         or GPUJIT_ENOMEM.
 */
GPUJIT_API int gpujit_trace_diff_create(gpujit_trace_diff **out, const gpujit_trace_analysis *base,
                                        const gpujit_trace_analysis *next,
                                        const gpujit_trace_diff_options *opts);

/** Free a diff; NULL is a no-op. */
GPUJIT_API void gpujit_trace_diff_free(gpujit_trace_diff *diff);

/** @return the number of compared rows of a table. */
GPUJIT_API size_t gpujit_trace_diff_count(const gpujit_trace_diff *diff, gpujit_trace_table table);

/** @return row i of a table, the largest absolute change first; NULL out of range (borrowed). */
GPUJIT_API const gpujit_trace_diff_row *gpujit_trace_diff_row_at(const gpujit_trace_diff *diff,
                                                              gpujit_trace_table table, size_t i);

/** @return the whole compile time of every measured module (borrowed). */
GPUJIT_API const gpujit_trace_diff_row *gpujit_trace_diff_total(const gpujit_trace_diff *diff);

/** Fill `out` with the verdict. @return 0 or GPUJIT_EINVAL. */
GPUJIT_API int gpujit_trace_diff_outcome(const gpujit_trace_diff *diff, gpujit_trace_diff_verdict *out);

/** @return a short word for a change ("same", "slower", "faster", "added", …) (static). */
GPUJIT_API const char *gpujit_trace_change_name(gpujit_trace_change change);

GPUJIT_END_DECLS

#endif
