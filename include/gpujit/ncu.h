/* Nsight Compute helpers: per-line hot spots from `ncu --page source --csv` output. */
#ifndef GPUJIT_NCU_H
#define GPUJIT_NCU_H

#include "common.h"

GPUJIT_BEGIN_DECLS

typedef struct gpujit_ncu_hotspots gpujit_ncu_hotspots;

/** One CUDA source line with its metric. Strings are borrowed from the hot-spot table. */
typedef struct gpujit_ncu_line {
  const char *file;
  const char *function;
  int line;
  const char *source;
  double value; /**< the chosen metric on this line */
  double share; /**< value / the metric's total over the function, 0..1 */
  const char *address; /**< a SASS instruction's address (tables by instruction); NULL for lines */
} gpujit_ncu_line;

/** What a table's rows are: CUDA source lines, or SASS instructions (an export without the
 *  CUDA view: ncu's default `--page source --csv`, or `--print-source sass`). */
typedef enum gpujit_ncu_rows { GPUJIT_NCU_BY_LINE = 0, GPUJIT_NCU_BY_INSTRUCTION = 1 } gpujit_ncu_rows;

/** The command that makes the export this parser reads best (CUDA lines with their SASS). */
#define GPUJIT_NCU_SOURCE_COMMAND "ncu -i REPORT.ncu-rep --page source --csv --print-source cuda,sass"

/** @return whether the table is by CUDA line or by SASS instruction. */
GPUJIT_API gpujit_ncu_rows gpujit_ncu_hotspots_rows(const gpujit_ncu_hotspots *h);

/**
 * Read a report directly: run `ncu -i PATH --page source --csv --print-source cuda,sass` (ncu
 * from $GPUJIT_NCU, else PATH, else $CUDA_PATH/bin or /usr/local/cuda/bin) and parse its output.
 * @return as gpujit_ncu_hotspots_parse(); GPUJIT_ENOENT (no ncu: the message says where it looked),
 *         GPUJIT_EIO (ncu failed: its message).
 */
GPUJIT_API int gpujit_ncu_hotspots_from_report(gpujit_ncu_hotspots **out, const char *path, const char *metric,
                                               const char *function);

/** The default metric: where warps stalled, sampled. */
#define GPUJIT_NCU_DEFAULT_METRIC "Warp Stall Sampling (All Samples)"

/**
 * Parse `ncu -i REP --page source --csv` output. With `--print-source cuda,sass` the table is by
 * CUDA source line (SASS rows are folded into their lines by ncu and skipped here); the default
 * export and `--print-source sass` give a table by SASS instruction. Exports without metrics
 * (`--print-source cuda` or `ptx`) and other pages are refused with the command that makes a
 * good one. ncu 2025.3 does not escape quotes inside source lines and repeats
 * the "Source" column: fields are split on the quoted separators, and a row with more fields
 * than the header gives the extra ones back to its source text.
 * @param metric NULL: GPUJIT_NCU_DEFAULT_METRIC. @param function NULL: every function.
 * @return 0; GPUJIT_EPARSE (message says what is wrong: no header, unknown metric, …), GPUJIT_ENOMEM.
 */
GPUJIT_API int gpujit_ncu_hotspots_parse(gpujit_ncu_hotspots **out, const char *csv, size_t len,
                                         const char *metric, const char *function);

GPUJIT_API void gpujit_ncu_hotspots_free(gpujit_ncu_hotspots *h);

/** @return the number of source lines, sorted by value, largest first. */
GPUJIT_API size_t gpujit_ncu_hotspots_count(const gpujit_ncu_hotspots *h);

/** @return line i (borrowed), or NULL out of range. */
GPUJIT_API const gpujit_ncu_line *gpujit_ncu_hotspots_line(const gpujit_ncu_hotspots *h, size_t i);

/** @return the metric's column name (borrowed). */
GPUJIT_API const char *gpujit_ncu_hotspots_metric(const gpujit_ncu_hotspots *h);

GPUJIT_END_DECLS

#endif
