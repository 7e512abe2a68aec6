/* How a dependency group's check uses threads (cache/records/check_threads.h): the policy over
 * base/crew.c. Read once per process: a lookup is too short to read the environment each time. */
#include <stdlib.h>
#include <string.h>

#include "base/crew.h"
#include "cache/records/check_threads.h"

#define DEFAULT_THREADS 8
#define MANY_CPUS 4 /* from this many, helpers go where the scheduler puts them */

enum { PLACE = 2, TIMELINE = 4, NO_AHEAD = 8, NO_WATCH = 16 };

gpujit__check_threads gpujit__check_threads_get(void)
{
  static size_t setting; /* the cap times 32, plus PLACE, TIMELINE, NO_AHEAD, NO_WATCH, plus 1: never 0 once set */
  size_t got = __atomic_load_n(&setting, __ATOMIC_RELAXED), cpus = gpujit__crew_cpus();
  gpujit__check_threads out;
  if (!got) {
    const char *e = getenv("GPUJIT_CHECK_THREADS"), *bench = getenv("GPUJIT_BENCH_CHECK");
    long v = e && *e ? strtol(e, NULL, 10) : 0;
    size_t cap = v >= 1 && v <= GPUJIT__CREW_MAX ? (size_t)v : DEFAULT_THREADS;
    size_t how = cpus >= MANY_CPUS ? 0 : PLACE;
    if (bench && (strchr(bench, 'b') || strchr(bench, 'u')))
      how = strchr(bench, 'b') ? PLACE : 0;
    if (bench && strchr(bench, 'v'))
      how |= TIMELINE;
    if (bench && strchr(bench, 'h'))
      how |= NO_AHEAD;
    if (bench && strchr(bench, 'w'))
      how |= NO_WATCH;
    got = cap * 32 + how + 1;
    __atomic_store_n(&setting, got, __ATOMIC_RELAXED);
  }
  out.threads = got / 32 < cpus ? got / 32 : cpus;
  out.place = got & PLACE;
  out.timeline = got & TIMELINE;
  out.ahead = !(got & NO_AHEAD) && out.threads > 1;
  out.watch = !(got & NO_WATCH);
  return out;
}
