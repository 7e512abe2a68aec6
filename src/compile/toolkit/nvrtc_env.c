/* The environment NVRTC and nvJitLink read (compile/toolkit/nvrtc_env.h). */
#include <string.h>

#include "compile/toolkit/nvrtc_env.h"

#define NAME(n, who) {n, who},
static const struct {
  const char *name, *reader;
} table[] = {GPUJIT__NVRTC_ENV(NAME)};
#undef NAME

size_t gpujit__nvrtc_env_count(void) { return sizeof(table) / sizeof(table[0]); }

const char *gpujit__nvrtc_env_name(size_t i, const char **reader)
{
  if (i >= gpujit__nvrtc_env_count())
    return NULL;
  if (reader)
    *reader = table[i].reader;
  return table[i].name;
}

bool gpujit__nvrtc_env_reads(const char *name)
{
  for (size_t i = 0; name && i < gpujit__nvrtc_env_count(); i++)
    if (!strcmp(table[i].name, name))
      return true;
  return false;
}
