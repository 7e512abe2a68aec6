/*
 * In-process sessions: the injection library dlopen'd into a running program (gpujit_profile_start,
 * a gpujit.profile block in a plain `python app.py`) rather than preloaded at its start. The
 * settings a preloaded copy reads from its environment come through the start call, so no child
 * inherits a profile; the one variable set is NVTX_INJECTION64_PATH, to this library, while a
 * session counts NVTX steps and the program left it unset (below). What the session sees:
 *   - NVRTC, nvJitLink and libNVVM compiles, the driver's module loads, CUPTI taken by the program:
 *     through the loaded objects' calls rebound to the wrappers (rebind.c);
 *   - kernels, copies, memsets, launches, module loads with their images: CUPTI attached now (or at
 *     the schedule's first warmup step, as steps.c does under `gpujit profile`), detached after the
 *     last active step, and let go at the end;
 *   - steps: counted from the start of the session.
 * What it cannot see is said in a note: child processes (nothing is preloaded into them), and
 * compiles through functions the program resolved before the session and keeps on its heap.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inject/protocol.h"
#include "inject/cupti.h"
#include "inject/nvtx_inject.h"
#include "inject/rebind.h"
#include "inject/record.h"
#include "inject/steps.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool on;
static bool set_nvtx;   /* this session set NVTX_INJECTION64_PATH: put back at its end */
static bool nvtx_empty; /* ... where the program had it set, empty */

/* `nvtx:NAME` steps in-process: NVTX reads NVTX_INJECTION64_PATH once, at a copy's first call, so
 * this library becomes the injection of every copy of NVTX whose first call is still to come (the
 * steps counted here, at a string compare, with CUPTI off until the first warmup step, as under
 * `gpujit profile`); a copy that called before the session began has no injection, or another
 * tool's, and is not seen. A variable the program set is left as it is (CUPTI's, say). */
static void nvtx_inproc(const char *step)
{
  const char *nvtx = getenv(GPUJIT_ENV(NVTX_INJECTION));
  Dl_info self;
  if (!step || strncmp(step, "nvtx:", 5))
    return;
  if (nvtx && *nvtx) {
    if (!gji_nvtx_injected())
      gji_note("inproc-nvtx", "%s names %s (the program's): NVTX ranges go there, and the steps of %s are counted "
               "only where that is CUPTI's", GPUJIT_ENV(NVTX_INJECTION), nvtx, step);
    return;
  }
  if (!dladdr((void *)nvtx_inproc, &self) || !self.dli_fname || setenv(GPUJIT_ENV(NVTX_INJECTION), self.dli_fname, 1)) {
    gji_note("inproc-nvtx", "NVTX ranges are not seen in-process (%s could not be set): the steps of %s are not "
             "counted; mark them with gpujit.step() or kernel:NAME, or run under `gpujit profile`",
             GPUJIT_ENV(NVTX_INJECTION), step);
    return;
  }
  set_nvtx = true, nvtx_empty = nvtx != NULL;
  gji_note("inproc-nvtx", "the steps of %s are counted from the NVTX calls of libraries whose first NVTX call "
           "comes after the profile began (NVTX loads its injection, this library, once, at that call): one that "
           "called NVTX before is not seen; `gpujit profile` sees every one", step);
}
__attribute__((visibility("default"))) int GPUJIT_RECORD_INPROC_START_FN(const char *const *settings, char *why,
                                                                         size_t why_size);
int GPUJIT_RECORD_INPROC_START_FN(const char *const *settings, char *why, size_t why_size)
{
  const char *dir = settings ? settings[GPUJIT_RECORD_ENV_DIR] : NULL;
  pthread_mutex_lock(&lock);
  if (on || gji_active()) {
    snprintf(why, why_size, "%s",
             on ? "a gpujit.profile session is already recording in this process (one at a time)"
                : "this process runs under `gpujit profile`, whose injection library records it already");
    pthread_mutex_unlock(&lock);
    return -1;
  }
  if (!dir || !*dir) {
    snprintf(why, why_size, "no records directory given");
    pthread_mutex_unlock(&lock);
    return -1;
  }
  gji_settings_give(settings);
  gji_inproc_begin(dir, settings[GPUJIT_RECORD_ENV_FLAGS]);
  gji_steps_begin();
  gji_open_now(); /* the proc record: the session's file exists from its first moment */
  gji_note("inproc",
           "in-process profile (a program not started by `gpujit profile`): child processes are not followed, and "
           "compiles through NVRTC functions the program resolved before the profile began and keeps outside its "
           "libraries' data (the heap) are not seen; `gpujit profile -- CMD` sees both");
  nvtx_inproc(settings[GPUJIT_RECORD_ENV_STEP]);
  gji_nvtx_session();
  gji_rebind_start();
  if (settings[GPUJIT_RECORD_ENV_CUPTI_LIBRARY] && !strcmp(settings[GPUJIT_RECORD_ENV_CUPTI_LIBRARY], GPUJIT_RECORD_NO_CUPTI))
    gji_note("cupti", "CUPTI was left to the program (its own profiler records): kernels, copies and the driver's "
                      "JIT are not recorded; compiles and module loads are");
  else
    gji_cupti_inproc_start();
  on = true;
  pthread_mutex_unlock(&lock);
  return 0;
}

__attribute__((visibility("default"))) void GPUJIT_RECORD_INPROC_STOP_FN(void);
void GPUJIT_RECORD_INPROC_STOP_FN(void)
{
  pthread_mutex_lock(&lock);
  if (on) {
    gji_cupti_inproc_stop();
    gji_rebind_stop();
    gji_inproc_end();
    if (set_nvtx && nvtx_empty) /* as the program had it; NVTX's copies keep what they loaded */
      setenv(GPUJIT_ENV(NVTX_INJECTION), "", 1);
    else if (set_nvtx)
      unsetenv(GPUJIT_ENV(NVTX_INJECTION));
    set_nvtx = on = false;
  }
  pthread_mutex_unlock(&lock);
}
