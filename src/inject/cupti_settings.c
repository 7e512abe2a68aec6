/* How the injection library sets CUPTI up: the profile's defaults, and the measuring words of
 * $GPUJIT_BENCH_LAUNCH_CALLBACKS that change them (said in a note, so a report so made never
 * passes for a default profile's). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inject/buffers.h"
#include "inject/cupti_settings.h"
#include "inject/protocol.h"

/* How CUPTI is set up. The defaults are the profile's; $GPUJIT_BENCH_LAUNCH_CALLBACKS, the
 * measuring knob (bench/profile_overhead.py), takes comma-separated words that change them, to
 * measure what each costs without a rebuild:
 *   0 / 1        launch callbacks off (launches are then not tied to modules) / on
 *   flush=MS     CUPTI's worker delivers full buffers every MS ms (0: CUPTI's own heuristics)
 *   buffer=KIB   each activity buffer's size
 *   devbuf=KIB   CUPTI's device buffer per context (CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE)
 *   pinned=0|1   CUPTI's buffers in page-locked host memory instead of device memory
 *   kind=serial  CUPTI_ACTIVITY_KIND_KERNEL (serializes the program's kernels) instead of concurrent
 *   hwtrace=1    kernel times from the hardware event system (Blackwell; elsewhere refused, noted)
 *   unread=1     completed buffers given back unread: CUPTI's own cost (nothing of the GPU's counted)
 *   kinds=kernel CUPTI's kernel records alone (no copies, memsets, driver JIT or NVTX ranges)
 *   subscribe=0  no CUPTI callbacks at all (module loads through driver.c's wrappers, launches
 *                not tied to modules): what CUPTI's callback subscription costs
 *   ahead=0      with a schedule that waits, CUPTI is loaded at the first warmup step, not ahead
 *                on a thread at cuInit: what loading it ahead saves or costs the waiting steps */
gji_cupti_config gji_cupti_cfg = {.launch_callbacks = true, .flush_ms = 100, .buffer_kib = GJI_BUFFER_BYTES >> 10, .devbuf_kib = -1, .pinned = -1};

void gji_cupti_settings(const char *words)
{
  char buf[256], *save = NULL;
  snprintf(buf, sizeof(buf), "%s", words ? words : "");
  for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(w, '='), *end = NULL;
    long v = eq ? strtol(eq + 1, &end, 10) : 0;
    bool number = eq && end && end != eq + 1 && !*end && v >= 0;
    if (!strcmp(w, "0") || !strcmp(w, "1"))
      gji_cupti_cfg.launch_callbacks = w[0] == '1';
    else if (number && !strncmp(w, "flush=", 6))
      gji_cupti_cfg.flush_ms = v;
    else if (number && v > 0 && !strncmp(w, "buffer=", 7))
      gji_cupti_cfg.buffer_kib = v;
    else if (number && v > 0 && !strncmp(w, "devbuf=", 7))
      gji_cupti_cfg.devbuf_kib = v;
    else if (number && v <= 1 && !strncmp(w, "pinned=", 7))
      gji_cupti_cfg.pinned = v;
    else if (number && v <= 1 && !strncmp(w, "hwtrace=", 8))
      gji_cupti_cfg.hwtrace = v == 1;
    else if (number && v <= 1 && !strncmp(w, "unread=", 7))
      gji_cupti_cfg.unread = v == 1;
    else if (number && v <= 1 && !strncmp(w, "subscribe=", 10))
      gji_cupti_cfg.no_subscriber = v == 0;
    else if (number && v <= 1 && !strncmp(w, "ahead=", 6))
      gji_cupti_cfg.no_ahead = v == 0;
    else if (!strcmp(w, "kinds=kernel") || !strcmp(w, "kinds=all"))
      gji_cupti_cfg.kernel_only = !strcmp(w, "kinds=kernel");
    else if (!strcmp(w, "kind=serial") || !strcmp(w, "kind=concurrent"))
      gji_cupti_cfg.serial = !strcmp(w, "kind=serial");
    else
      gji_note("launch-callbacks-setting", "%s: the word '%s' is not known and was left out", GPUJIT_ENV(LAUNCH_CALLBACKS), w);
  }
}

/* The measuring settings, where they are not the profile's own: said in a note (once), so a
 * report never passes for a default profile's. */
void gji_cupti_note_settings(void)
{
  if (gji_cupti_cfg.launch_callbacks && !gji_cupti_cfg.serial && !gji_cupti_cfg.hwtrace && gji_cupti_cfg.flush_ms == 100 && gji_cupti_cfg.buffer_kib == GJI_BUFFER_BYTES >> 10 &&
      gji_cupti_cfg.devbuf_kib < 0 && gji_cupti_cfg.pinned < 0 && !gji_cupti_cfg.unread && !gji_cupti_cfg.kernel_only &&
      !gji_cupti_cfg.no_subscriber && !gji_cupti_cfg.no_ahead)
    return;
  gji_note("measuring", "measuring settings (%s): launch callbacks %s, flush %ld ms, buffers %ld KiB, device buffer %ld KiB, pinned %ld, kind %s, hwtrace %d, records %s, %s, %s%s",
           GPUJIT_ENV(LAUNCH_CALLBACKS), gji_cupti_cfg.launch_callbacks ? "on" : "off", gji_cupti_cfg.flush_ms, gji_cupti_cfg.buffer_kib, gji_cupti_cfg.devbuf_kib, gji_cupti_cfg.pinned,
           gji_cupti_cfg.serial ? "serial" : "concurrent", (int)gji_cupti_cfg.hwtrace, gji_cupti_cfg.unread ? "unread (nothing of the GPU's counted)" : "read",
           gji_cupti_cfg.kernel_only ? "kernel records alone" : "every kind",
           gji_cupti_cfg.no_subscriber ? "no CUPTI callbacks (launches not tied to modules)" : "CUPTI callbacks",
           gji_cupti_cfg.no_ahead ? ", CUPTI not loaded ahead of a schedule's warmup" : "");
}
