/* The profile's settings: the environment's variables (inject/protocol.h) for a preloaded copy, or
 * what an in-process session gave at its start (inproc.c), which stand for them from then on. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "inject/protocol.h"
#include "inject/record.h"

static char *given[GPUJIT_RECORD_ENV_COUNT];
static bool any_given; /* a session gave them: a later session's replace them */

void gji_settings_give(const char *const *settings)
{
  for (int i = 0; i < GPUJIT_RECORD_ENV_COUNT; i++) {
    free(given[i]);
    given[i] = settings[i] ? strdup(settings[i]) : NULL;
  }
  any_given = true;
}

const char *gji_setting(int id)
{
  if (id < 0 || id >= GPUJIT_RECORD_ENV_COUNT)
    return NULL;
  return any_given && given[id] ? given[id] : getenv(gpujit_record_env_names[id]);
}
