/* Shared dependency groups kept verified under inotify (cache/records/group_watch.c): verified
 * once, with every file of a group and every directory entry its paths resolve through watched,
 * then vouched for until an event says something changed — by the build server for the processes
 * it serves (server/watch.c), and by a process for itself from a group's third check on. */
#ifndef GPUJIT_CACHE_RECORDS_GROUP_WATCH_H
#define GPUJIT_CACHE_RECORDS_GROUP_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache/records/deps.h"
#include "gpujit/cache.h"

typedef struct gpujit__group_watch gpujit__group_watch;

/** What a watch did: asked, vouched, verified, invalidated (groups an event unverified), watches. */
typedef struct gpujit__group_watch_counts {
  uint64_t asked, vouched, verified, invalidated, watches;
} gpujit__group_watch_counts;

/** How a group's records are read (cache/records/groups.c's gpujit__group_load). */
typedef int (*gpujit__group_loader)(gpujit_cache *c, const char *digest, gpujit__deps *out, char *why, size_t n);

/** @return 0, or GPUJIT_EIO (no inotify: nothing can be vouched for). */
int gpujit__group_watch_new(gpujit__group_watch **out);
void gpujit__group_watch_free(gpujit__group_watch *w);

/**
 * Whether group `digest` of cache `c` holds now: the events queued so far are taken first (a
 * change that finished before this call is among them); a group not held since is loaded,
 * read by `load`, watched and then verified by stat and content as a lookup verifies it.
 * @return true only when it holds and stays watched; false with `why`.
 */
bool gpujit__group_watch_vouch(gpujit__group_watch *w, gpujit_cache *c, const char *digest, gpujit__group_loader load,
                               char *why, size_t n);
/** Whether `w` holds group `digest` verified now (the events taken first); sets nothing up. */
bool gpujit__group_watch_holds(gpujit__group_watch *w, const char *digest);
void gpujit__group_watch_counts_get(const gpujit__group_watch *w, gpujit__group_watch_counts *out);

/**
 * The process's own watch, for a lookup: false on a group's first two checks in the process (the
 * lookup checks it, as a process that builds once or twice should), and where the watch is busy, refused (a
 * filesystem inotify cannot vouch for, no inotify) or off (GPUJIT_BENCH_CHECK=w); from the third
 * check on, the group is watched and verified once, then vouched for while no event comes.
 */
bool gpujit__group_watch_process_vouch(gpujit_cache *c, const char *digest, gpujit__group_loader load);
/** What the process's watch did (zeros where there is none). */
void gpujit__group_watch_process_counts(gpujit__group_watch_counts *out);
/** Whether the process's watch holds group `digest` verified now (a check begun ahead would be in vain). */
bool gpujit__group_watch_process_holds(const char *digest);

#endif
