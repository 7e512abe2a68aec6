/* Kernel regions analysed: raw events of gpujit/regions.cuh paired per unit into calls, and each
 * region's cycles, times, share of the kernel and imbalance across SMs and units — the analysis
 * itself in inject/kregions_analyze.h, which the injection library compiles in too (gpujit profile
 * summarises the regions of any program's modules with it). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "gpujit/regions.h"
#include "inject/kregions_analyze.h"

int gpujit_regions_analyze(gpujit_region_report **out, const uint64_t *events, size_t nevents, uint64_t dropped,
                           const gpujit_region_name *names_in, size_t nnames, double kernel_ns, unsigned launches,
                           gpujit_region_scope scope)
{
  if (!out || (!events && nevents))
    return gpujit__error(GPUJIT_EINVAL, "gpujit_regions_analyze: NULL argument");
  if (kra_analyze(out, events, nevents, dropped, names_in, nnames, kernel_ns, launches, scope) < 0)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  return 0;
}

void gpujit_region_report_free(gpujit_region_report *r) { kra_report_free(r); }
