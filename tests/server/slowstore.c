/* LD_PRELOAD shim for the build server's tests: a rename(2) onto a path containing
 * $GPUJIT_SLOW_RENAME (e.g. "/manifests/": the last step of a cache store) first sleeps
 * $GPUJIT_SLOW_RENAME_MS milliseconds, so that a store that follows an early answer is seen
 * still running. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int rename(const char *from, const char *to)
{
  static int (*real)(const char *, const char *);
  const char *part = getenv("GPUJIT_SLOW_RENAME"), *ms = getenv("GPUJIT_SLOW_RENAME_MS");
  if (!real)
    *(void **)&real = dlsym(RTLD_NEXT, "rename");
  if (part && *part && ms && to && strstr(to, part)) {
    long n = atol(ms);
    struct timespec t = {n / 1000, (n % 1000) * 1000000L};
    nanosleep(&t, NULL);
  }
  return real(from, to);
}
