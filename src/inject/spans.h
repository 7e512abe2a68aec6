/* Which module each launch's kernel came from, by CUPTI correlation id, in bounded memory
 * (spans.c): launches are kept as runs of consecutive correlation ids from one module, so a
 * program launching from few modules keeps few runs however many launches it makes. */
#ifndef GPUJIT_INJECT_SPANS_H
#define GPUJIT_INJECT_SPANS_H

#include <stdbool.h>
#include <stdint.h>

#include "inject/record.h"

/** A launch with correlation id `corr` of a function in `module`. */
GJI_HIDDEN void gji_span_launch(uint32_t corr, uint64_t module);
/** The module of the launch `corr`; false when it is older than every run kept (or unseen). */
GJI_HIDDEN bool gji_span_module(uint32_t corr, uint64_t *module);

#endif
