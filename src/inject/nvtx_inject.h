/* gpujit's own NVTX injection (nvtx_inject.c): with `--step nvtx:NAME`, NVTX_INJECTION64_PATH names
 * this library, whose InitializeInjectionNvtx2 takes the program's NVTX calls — each range or mark
 * of the name a step boundary, at a string compare a call — so no CUPTI is set up to count steps. */
#ifndef GPUJIT_INJECT_NVTX_INJECT_H
#define GPUJIT_INJECT_NVTX_INJECT_H
#include <stdbool.h>
#include "inject/record.h"

/** Whether NVTX_INJECTION64_PATH names this very library: NVTX's calls come here, not to CUPTI
 *  (worked out again when the variable changes; `gpujit profile`, and an in-process session, set
 *  it so for an nvtx step source the program left it to). */
GJI_HIDDEN bool gji_nvtx_injected(void);

/** A session begins: the step name NVTX's calls are compared with, taken again (a copy of NVTX
 *  that loaded this library in an earlier session keeps calling in). */
GJI_HIDDEN void gji_nvtx_session(void);

/** What the steps (steps.c) give the NVTX handlers, set from its constructor. */
typedef struct gji_nvtx_steps {
  const char *(*name)(void); /* the NVTX name that begins a step, or NULL */
  void (*boundary)(void);    /* a range or mark of that name began: a step begins */
  bool (*recording)(void);   /* whether the step going on now is one CUPTI would record (warmup, active, the
                                one after; the whole run without a schedule): its NVTX ranges are written */
} gji_nvtx_steps;
GJI_HIDDEN void gji_nvtx_steps_set(const gji_nvtx_steps *s);
#endif
