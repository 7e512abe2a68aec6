/* Steps as the public API gives them: gpujit_profile_step(), the program's step boundary, passed
 * to the injection library where one is loaded (under `gpujit profile` or a gpujit.profile
 * block) and nothing elsewhere; and the step source and schedule checked before a run. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "gpujit/profile.h"
#include "inject/protocol.h"
#include "profile/model.h"

/* The injection library's entry point: looked up once per process, then one load per step. It is
 * there from the process's start (LD_PRELOAD), or bound by an in-process session while it runs
 * (its library is loaded RTLD_LOCAL, out of the global look-up's reach). */
static gpujit_record_step_fn step_fn;
static int looked; /* 0: not yet; 1: looked up */

void gpujit__profile_step_bind(void (*fn)(int))
{
  __atomic_store_n(&step_fn, fn ? fn : (gpujit_record_step_fn)dlsym(RTLD_DEFAULT, GPUJIT_RECORD_STEP_SYMBOL),
                   __ATOMIC_RELEASE);
  __atomic_store_n(&looked, 1, __ATOMIC_RELEASE);
}

void gpujit_profile_step(void)
{
  gpujit_record_step_fn f;
  if (!__atomic_load_n(&looked, __ATOMIC_ACQUIRE)) {
    f = (gpujit_record_step_fn)dlsym(RTLD_DEFAULT, GPUJIT_RECORD_STEP_SYMBOL);
    __atomic_store_n(&step_fn, f, __ATOMIC_RELEASE);
    __atomic_store_n(&looked, 1, __ATOMIC_RELEASE);
  }
  if ((f = __atomic_load_n(&step_fn, __ATOMIC_ACQUIRE)) != NULL)
    f(GPUJIT_STEP_SRC_API);
}

static int check_source(const char *steps)
{
  static const char *const words[] = GPUJIT_STEP_WORDS;
  for (size_t i = 0; steps && i < sizeof(words) / sizeof(words[0]); i++)
    if (!strcmp(steps, words[i]))
      return 0;
  if (!steps)
    return 0;
  if ((!strncmp(steps, "nvtx:", 5) && steps[5]) || (!strncmp(steps, "kernel:", 7) && steps[7]))
    return strlen(steps) < 240 ? 0 : gpujit__error(GPUJIT_EINVAL, "--step: the name is too long (at most 230 bytes)");
  return gpujit__error(GPUJIT_EINVAL, "invalid --step '%s': expected one of %s", steps, GPUJIT_STEP_SOURCES);
}

/* One "name=N" word of a schedule into `v` (names[k] matched), or an error naming it. */
static int schedule_word(const char *w, long v[6], bool seen[6])
{
  static const char *const names[6] = {"wait", "warmup", "active", "repeat", "skip_first", "skip_first_wait"};
  const char *eq = strchr(w, '=');
  char *end = NULL;
  long n;
  for (int k = 0; eq && k < 6; k++)
    if ((size_t)(eq - w) == strlen(names[k]) && !strncmp(w, names[k], (size_t)(eq - w))) {
      n = strtol(eq + 1, &end, 10);
      if (!eq[1] || *end || n < 0 || n > 1000000000L || eq[1] == '+' || eq[1] == '-' || eq[1] == ' ')
        return gpujit__error(GPUJIT_EINVAL, "invalid --schedule: '%s' needs a whole number of steps, 0 or more", w);
      if (seen[k])
        return gpujit__error(GPUJIT_EINVAL, "invalid --schedule: %s given twice", names[k]);
      seen[k] = true;
      v[k] = n;
      return 0;
    }
  return gpujit__error(GPUJIT_EINVAL,
                       "invalid --schedule: '%s' is not one of wait=W, warmup=U, active=A, repeat=R, skip_first=S, "
                       "skip_first_wait=B", w);
}

int gpujit_profile_check_steps(const char *steps, const char *schedule)
{
  char buf[256], *save = NULL;
  long v[6] = {0, 0, -1, 0, 0, 0};
  bool seen[6] = {false};
  int err;
  if ((err = check_source(steps)) < 0 || !schedule)
    return err;
  if (strlen(schedule) >= sizeof(buf) || !*schedule)
    return gpujit__error(GPUJIT_EINVAL, "invalid --schedule: expected wait=W,warmup=U,active=A,repeat=R,skip_first=S,skip_first_wait=B");
  snprintf(buf, sizeof(buf), "%s", schedule);
  for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save))
    if ((err = schedule_word(w, v, seen)) < 0)
      return err;
  if (v[2] < 1)
    return gpujit__error(GPUJIT_EINVAL, "invalid --schedule '%s': active must be given, at least 1 (the steps recorded)",
                         schedule);
  return 0;
}
