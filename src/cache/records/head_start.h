/* A lookup's head start: the check of the shared group a build's sources used last time, begun on
 * helper threads when the build begins, while the build works out its arch and key. */
#ifndef GPUJIT_CACHE_RECORDS_HEAD_START_H
#define GPUJIT_CACHE_RECORDS_HEAD_START_H

#include "cache/records/deps.h"
#include "gpujit/cache.h"

typedef struct gpujit__head gpujit__head;

/** A build begins: `hint` (32 hex digits) names its sources; the cache's note for it is read.
 *  NULL: none — no cache, out of memory. (gpujit__group_head_start opens one and begins its
 *  check.) The build passes it to its lookup and its store: no state is kept elsewhere. */
gpujit__head *gpujit__head_open(gpujit_cache *c, const char *hint);
/** The group the note names, NULL none. */
const char *gpujit__head_noted(const gpujit__head *h);
/** `a`: the check of that group, begun. */
void gpujit__head_begun(gpujit__head *h, gpujit__deps_ahead *a);

/** The check of group `digest` begun ahead for build `h` (NULL: none), if that is the group it
 *  began: the caller joins it (gpujit__deps_ahead_join). NULL: none — check it now. */
gpujit__deps_ahead *gpujit__head_take(gpujit__head *h, gpujit_cache *c, const char *digest);

/** Group `digest` held for build `h` (NULL: nothing), or was stored with it: the note names it for
 *  the next build of the same sources (written where it named another group or none). */
void gpujit__head_held(gpujit__head *h, gpujit_cache *c, const char *digest);

/** Build `h`'s lookup is over: a check begun and not taken stops (a miss compiles without it). */
void gpujit__head_settle(gpujit__head *h);

/** Whether this build's lookup joined the check begun ahead (tests; bench's timeline says it too). */
bool gpujit__head_joined(const gpujit__head *h);

/** The build is over (NULL: nothing). */
void gpujit__head_end(gpujit__head *h);

#endif
