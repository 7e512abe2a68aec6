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
} gpujit_ncu_line;

/** The default metric: where warps stalled, sampled. */
#define GPUJIT_NCU_DEFAULT_METRIC "Warp Stall Sampling (All Samples)"

/**
 * Parse `ncu -i REP --page source --csv --print-source cuda,sass` output (CUDA-source rows;
 * SASS rows are skipped). ncu 2025.3 does not escape quotes inside source lines and repeats
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
