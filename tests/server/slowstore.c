/* LD_PRELOAD shim for the build server's tests: a rename(2) or renameat(2) onto a path containing
 * $GPUJIT_SLOW_RENAME (e.g. "/manifests/": the last step of a cache store) first sleeps
 * $GPUJIT_SLOW_RENAME_MS milliseconds, so that a store that follows an early answer is seen
 * still running. renameat's target is named through its directory's descriptor (the cache
 * writes its records beneath a directory it opened), as /proc/self/fd names it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void slow_if(const char *to)
{
  const char *part = getenv("GPUJIT_SLOW_RENAME"), *ms = getenv("GPUJIT_SLOW_RENAME_MS");
  if (part && *part && ms && to && strstr(to, part)) {
    long n = atol(ms);
    struct timespec t = {n / 1000, (n % 1000) * 1000000L};
    nanosleep(&t, NULL);
  }
}

int rename(const char *from, const char *to)
{
  static int (*real)(const char *, const char *);
  if (!real)
    *(void **)&real = dlsym(RTLD_NEXT, "rename");
  slow_if(to);
  return real(from, to);
}

int renameat(int fromfd, const char *from, int tofd, const char *to)
{
  static int (*real)(int, const char *, int, const char *);
  char link[64], full[4096 + 256];
  ssize_t n;
  if (!real)
    *(void **)&real = dlsym(RTLD_NEXT, "renameat");
  if (to && to[0] != '/' && tofd != AT_FDCWD) {
    snprintf(link, sizeof(link), "/proc/self/fd/%d", tofd);
    if ((n = readlink(link, full, 4096)) > 0) {
      full[n] = '\0';
      snprintf(full + n, sizeof(full) - (size_t)n, "/%s", to);
      slow_if(full);
    }
  } else
    slow_if(to);
  return real(fromfd, from, tofd, to);
}
