/* Run-time loading of libarchive (cache/exchange/libarchive.h). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "base/error.h"
#define GPUJIT__ARCHIVE_NO_MACROS
#include "cache/exchange/libarchive.h"

#define GPUJIT__NAME(name) #name,
static const char *const names[] = {GPUJIT__ARCHIVE_FUNCS(GPUJIT__NAME)};
#undef GPUJIT__NAME
_Static_assert(sizeof(gpujit__archive_api) == sizeof(names) / sizeof(names[0]) * sizeof(void *),
               "gpujit__archive_api holds exactly the listed functions");

static gpujit__archive_api api;
static char error[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
  void *h = dlopen("libarchive.so.13", RTLD_LAZY | RTLD_LOCAL);
  if (!h)
    h = dlopen("libarchive.so", RTLD_LAZY | RTLD_LOCAL);
  if (!h) {
    snprintf(error, sizeof(error), "libarchive is not installed (libarchive.so.13): install it for cache export, "
                                   "import and remote stores");
    return;
  }
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (!(((void **)&api)[i] = dlsym(h, names[i]))) {
      snprintf(error, sizeof(error), "libarchive lacks %s (too old?)", names[i]);
      return;
    }
}

int gpujit__archive_api_get(const gpujit__archive_api **out)
{
  pthread_once(&once, load);
  if (error[0])
    return gpujit__error(GPUJIT_EUNSUPPORTED, "%s", error);
  *out = &api;
  return 0;
}

const gpujit__archive_api *gpujit__archive;

int gpujit__archive_need(void)
{
  const gpujit__archive_api *a;
  int err;
  if (gpujit__archive)
    return 0;
  if ((err = gpujit__archive_api_get(&a)) < 0)
    return err;
  __atomic_store_n(&gpujit__archive, a, __ATOMIC_RELEASE);
  return 0;
}
