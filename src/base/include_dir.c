/* Where gpujit's own headers for device code (gpujit/regions.cuh) are: the one search, for NVRTC's
 * include path in every build and for other compilers (gpujit --include-dir). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fs.h"
#include "gpujit/common.h"

#define MARKER "/gpujit/regions.cuh"

static char found[PATH_MAX];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int holds_headers(const char *dir)
{
  char p[PATH_MAX + sizeof(MARKER)];
  snprintf(p, sizeof(p), "%s" MARKER, dir);
  return access(p, R_OK) == 0;
}

/* `dir`'s real path into `found` when it holds the headers. */
static int take(const char *dir)
{
  char real[PATH_MAX];
  if (!holds_headers(dir) || !realpath(dir, real))
    return 0;
  snprintf(found, sizeof(found), "%s", real);
  return 1;
}

/* Beside the object this code is in (a library, the CLI, the Python extension in the wheel's
 * package directory): ../include of an installed tree, include/ of the package. */
static int beside(const char *object)
{
  static const char *const rel[] = {"/../include", "/include"};
  char real[PATH_MAX], cand[PATH_MAX + 16], *slash;
  if (!object || !realpath(object, real) || !(slash = strrchr(real, '/')))
    return 0;
  *slash = '\0';
  for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
    snprintf(cand, sizeof(cand), "%s%s", real, rel[i]);
    if (take(cand))
      return 1;
  }
  return 0;
}

static void search(void)
{
  const char *env = getenv("GPUJIT_INCLUDE_DIR");
  char self[PATH_MAX];
  Dl_info info;
  ssize_t n;
  if (env && *env) { /* named: that or nothing, so a wrong name is seen rather than passed over */
    take(env);
    return;
  }
  if (dladdr((void *)search, &info) && info.dli_fname && strchr(info.dli_fname, '/') && beside(info.dli_fname))
    return;
  if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) > 0) {
    self[n] = '\0';
    if (beside(self))
      return;
  }
#ifdef GPUJIT_INSTALL_INCLUDE_DIR
  if (take(GPUJIT_INSTALL_INCLUDE_DIR))
    return;
#endif
#ifdef GPUJIT_SOURCE_INCLUDE_DIR /* a build tree run in place */
  take(GPUJIT_SOURCE_INCLUDE_DIR);
#endif
}

const char *gpujit_include_dir(void)
{
  pthread_once(&once, search);
  return found[0] ? found : NULL;
}
