/* CUPTI's settings in the injection library (cupti_settings.c). */
#ifndef GPUJIT_INJECT_CUPTI_SETTINGS_H
#define GPUJIT_INJECT_CUPTI_SETTINGS_H

#include <stdbool.h>

#include "inject/record.h"

typedef struct gji_cupti_config {
  bool launch_callbacks, serial, hwtrace, unread, kernel_only, no_subscriber, no_ahead;
  long flush_ms, buffer_kib, devbuf_kib, pinned;
} gji_cupti_config;

/** The settings in effect (the profile's defaults unless measuring words changed them). */
GJI_HIDDEN extern gji_cupti_config gji_cupti_cfg;
/** Read $GPUJIT_BENCH_LAUNCH_CALLBACKS's comma-separated words. */
GJI_HIDDEN void gji_cupti_settings(const char *words);
/** Say, once, in a note, which settings are not the profile's own. */
GJI_HIDDEN void gji_cupti_note_settings(void);

#endif
