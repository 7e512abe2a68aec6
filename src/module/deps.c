/* A build's dependencies for the cache: the toolkit's headers apart from the user's. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "base/fs.h"
#include "compile/toolkit.h"
#include "module/deps.h"

bool gpujit__in_toolkit(const char *path)
{
  char inc[PATH_MAX];
  snprintf(inc, sizeof(inc), "%s/include", gpujit__cuda_root());
  gpujit__normpath(inc);
  return gpujit__path_under(path, inc) != NULL;
}

int gpujit__module_deps(gpujit__deps *deps, gpujit__deps *shared, const gpujit__includes *inc, const char *base,
                        int64_t read_start)
{
  int err = 0;
  for (size_t i = 0; err == 0 && i < gpujit__includes_count(inc); i++) {
    const char *data;
    size_t size;
    const char *path = gpujit__includes_path(inc, i, &data, &size);
    bool tk = gpujit__in_toolkit(path);
    err = gpujit__deps_add_file(tk ? shared : deps, path, tk ? NULL : base, data, size, read_start);
  }
  for (size_t i = 0; err == 0 && i < gpujit__includes_absent_count(inc); i++) {
    const char *path = gpujit__includes_absent(inc, i);
    bool tk = gpujit__in_toolkit(path);
    err = gpujit__deps_add_absent(tk ? shared : deps, path, tk ? NULL : base);
  }
  return err;
}
