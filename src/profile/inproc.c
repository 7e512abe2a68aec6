/* gpujit_profile_start/stop: an in-process profile — the injection library dlopen'd into the calling
 * process and given its settings by a call (inject/protocol.h, GPUJIT_RECORD_INPROC_*), never by the
 * environment, so no child inherits a profile and nothing of the program's environment changes;
 * what it recorded read back as a range of this process (api.c), as gpujit.profile reads a block
 * under `gpujit profile`. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "base/fs.h"
#include "compile/toolkit/toolkit.h"
#include "inject/protocol.h"
#include "profile/model.h"

struct gpujit_profile_session {
  char *dir, *inject;
  bool own_dir, on;
  uint64_t t0;
  gpujit_profile_options opts;
  gpujit_record_inproc_stop_fn stop;
};

static uint64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts); /* the records' host clock */
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The session's records directory: the one asked for (made if missing), else a new one in $TMPDIR. */
static int make_dir(gpujit_profile_session *s, const char *asked)
{
  const char *tmp = getenv("TMPDIR");
  char tmpl[PATH_MAX];
  if (asked) {
    if (!(s->dir = gpujit__abspath(asked)))
      return gpujit__error(GPUJIT_ENOMEM, "out of memory");
    if ((mkdir(s->dir, 0700) != 0 && errno != EEXIST) || access(s->dir, W_OK | X_OK) != 0)
      return gpujit__error(GPUJIT_EIO, "%s: cannot keep records there: %s", asked, strerror(errno));
    return 0;
  }
  snprintf(tmpl, sizeof(tmpl), "%s/gpujit-profile-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(tmpl))
    return gpujit__error(GPUJIT_EIO, "cannot make a records directory in %s: %s", tmp && *tmp ? tmp : "/tmp",
                         strerror(errno));
  s->own_dir = true;
  return (s->dir = gpujit__strdup(tmpl)) ? 0 : gpujit__error(GPUJIT_ENOMEM, "out of memory");
}

/* The injection library loaded (never unloaded: the wrappers it hands out live as long as the
 * process), its entry points found. */
static int load_inject(gpujit_profile_session *s, gpujit_record_inproc_start_fn *start,
                       gpujit_record_step_fn *step)
{
  void *h = dlopen(s->inject, RTLD_NOW | RTLD_LOCAL);
  if (!h)
    return gpujit__error(GPUJIT_ENOENT, "%s: the injection library cannot be loaded: %s", s->inject, dlerror());
  *(void **)start = dlsym(h, GPUJIT_RECORD_INPROC_START_SYMBOL);
  *(void **)&s->stop = dlsym(h, GPUJIT_RECORD_INPROC_STOP_SYMBOL);
  *(void **)step = dlsym(h, GPUJIT_RECORD_STEP_SYMBOL);
  if (!*start || !s->stop || !*step)
    return gpujit__error(GPUJIT_EVERSION, "%s: an injection library of another gpujit (no %s): it cannot record "
                                          "in-process", s->inject, GPUJIT_RECORD_INPROC_START_SYMBOL);
  return 0;
}

static int start_session(gpujit_profile_session *s, const gpujit_profile_options *o)
{
  char inject[PATH_MAX], why[512] = "", flags[64], budget[32], cupti[PATH_MAX] = "";
  const char *settings[GPUJIT_RECORD_ENV_COUNT] = {NULL}, *env_cupti = getenv(GPUJIT_ENV(CUPTI_LIBRARY));
  gpujit_record_inproc_start_fn start = NULL;
  gpujit_record_step_fn step = NULL;
  int err;
  if (gpujit_profile_recording(NULL))
    return gpujit__error(GPUJIT_EBUSY, "this process runs under `gpujit profile`: it is recorded already "
                                       "(gpujit.profile reads its records)");
  if ((err = gpujit__profile_find_inject(inject, sizeof(inject), o->inject_path)) < 0 ||
      !(s->inject = gpujit__strdup(inject)))
    return err < 0 ? err : gpujit__error(GPUJIT_ENOMEM, "out of memory");
  if ((err = make_dir(s, o->records_dir)) < 0 || (err = load_inject(s, &start, &step)) < 0)
    return err;
  snprintf(flags, sizeof(flags), "%s,%s", o->lineinfo ? GPUJIT_FLAG_LINEINFO : "",
           o->nvrtc_trace ? GPUJIT_FLAG_NVRTC_TRACE : "");
  snprintf(budget, sizeof(budget), "%llu", (unsigned long long)(o->max_trace_events ? o->max_trace_events : 200000));
  settings[GPUJIT_RECORD_ENV_DIR] = s->dir;
  settings[GPUJIT_RECORD_ENV_FLAGS] = flags;
  settings[GPUJIT_RECORD_ENV_MAX_EVENTS] = budget;
  settings[GPUJIT_RECORD_ENV_STEP] = o->steps ? o->steps : "auto";
  settings[GPUJIT_RECORD_ENV_SCHEDULE] = o->schedule ? o->schedule : "";
  /* CUPTI: $GPUJIT_CUPTI_LIBRARY, else the toolkit's, as `gpujit profile` gives it (not a copy the
   * program loaded, a framework's of another major version, whose records the library does not read);
   * no_cupti: none, which the injection library says */
  snprintf(cupti, sizeof(cupti), "%s", env_cupti && *env_cupti ? env_cupti
                                       : gpujit__cupti_library_path() ? gpujit__cupti_library_path() : "");
  settings[GPUJIT_RECORD_ENV_CUPTI_LIBRARY] = o->no_cupti ? GPUJIT_RECORD_NO_CUPTI : cupti;
  s->t0 = now_ns();
  if (start(settings, why, sizeof(why)) != 0)
    return gpujit__error(GPUJIT_EBUSY, "gpujit_profile_start: %s", why);
  s->on = true;
  gpujit__profile_step_bind(step);
  return 0;
}

int gpujit_profile_start(gpujit_profile_session **out, const gpujit_profile_options *opts)
{
  static const gpujit_profile_options init = GPUJIT_PROFILE_OPTIONS_INIT;
  gpujit_profile_options o = opts ? *opts : init;
  gpujit_profile_session *s;
  int err;
  if (!out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_profile_start: NULL argument");
  *out = NULL;
  if (o.version != GPUJIT_PROFILE_OPTIONS_VERSION)
    return gpujit__error(GPUJIT_EVERSION, "profile options version %u is not supported (this library: %u)",
                         o.version, GPUJIT_PROFILE_OPTIONS_VERSION);
  if ((err = gpujit_profile_check_steps(o.steps, o.schedule)) < 0)
    return err;
  if (!(s = calloc(1, sizeof(*s))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  s->opts = o;
  s->opts.inject_path = s->opts.records_dir = s->opts.steps = s->opts.schedule = NULL; /* not kept: borrowed */
  if ((err = start_session(s, &o)) < 0) {
    gpujit_profile_session_free(s);
    return err;
  }
  *out = s;
  return 0;
}

const char *gpujit_profile_session_dir(const gpujit_profile_session *s) { return s ? s->dir : NULL; }

const char *gpujit_profile_session_inject(const gpujit_profile_session *s) { return s ? s->inject : NULL; }

static void end(gpujit_profile_session *s)
{
  if (!s->on)
    return;
  gpujit__profile_step_bind(NULL);
  s->stop();
  s->on = false;
}

int gpujit_profile_stop(gpujit_profile_session *s, gpujit_profile **out)
{
  gpujit_profile *p = NULL;
  int err;
  if (!s || !out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_profile_stop: NULL argument");
  *out = NULL;
  if (!s->on)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_profile_stop: the session is stopped already");
  end(s);
  if ((err = gpujit_profile_load_range(&p, s->dir, (int)getpid(), s->t0, now_ns())) < 0)
    return err;
  p->opts = s->opts;
  /* the records go with the profile, which may be read and written after the session is gone */
  p->own_dir = s->own_dir;
  s->own_dir = false;
  *out = p;
  return 0;
}

void gpujit_profile_session_free(gpujit_profile_session *s)
{
  if (!s)
    return;
  end(s);
  if (s->own_dir && s->dir)
    pf_remove_dir(s->dir);
  free(s->dir), free(s->inject);
  free(s);
}
