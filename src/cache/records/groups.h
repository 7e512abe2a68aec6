/* Dependency groups: the records many builds share (a toolkit's headers), stored once under the
 * hash of what they record, checked once per lookup, vouched for by a watcher where one runs. */
#ifndef GPUJIT_CACHE_RECORDS_GROUPS_H
#define GPUJIT_CACHE_RECORDS_GROUPS_H

#include <stdbool.h>

#include "base/buf.h"
#include "cache/records/deps.h"
#include "cache/records/head_start.h"
#include "gpujit/cache.h"

/** Something that watches the files of shared groups (the build server) and may vouch that one
 *  holds now: `held` true only when it can say so for certain; false leaves the check here. */
typedef struct gpujit__voucher {
  bool (*held)(void *ctx, const char *digest);
  bool (*absent)(void *ctx); /* optional: true when none is there to ask (this process checks) */
  void *ctx;
} gpujit__voucher;

/** Ask `v` (NULL: none) before checking a shared group in this thread's lookups.
 *  @return the voucher it replaces (put it back when done). */
const gpujit__voucher *gpujit__group_voucher(const gpujit__voucher *v);

/** A build on this thread begins (cache/records/head_start.c): the check of the group its sources
 *  used last time (`hint` names them) is begun now, unless a voucher answers for groups. NULL: no
 *  head start; else end it with gpujit__head_end. */
gpujit__head *gpujit__group_head_start(gpujit_cache *c, const char *hint);

/** A group that held in this lookup, and its identity print (gpujit__deps_identity_print) now; ""
 *  not yet worked out. */
typedef struct gpujit__held_group {
  char digest[33];
  char print[33];
} gpujit__held_group;

/** The groups that held in one lookup (the records of one manifest mostly share one). Never kept
 *  past the lookup: a process that lives on (a server's worker, a Python session) would hit on a
 *  changed toolkit. Zero it before the lookup. */
typedef struct gpujit__group_memo {
  gpujit__held_group held[8];
  size_t n;
} gpujit__group_memo;

/** Whether shared group `digest` holds: vouched for, remembered in `memo`, joined from the check
 *  build `head` (NULL: none) began ahead, or checked here (in place; a moved stat or damage read
 *  whole). `out` receives it; `miss` (when given) why it does not hold. */
bool gpujit__group_holds(gpujit_cache *c, const char *digest, gpujit__head *head, gpujit__group_memo *memo,
                         gpujit__held_group *out, char *miss, size_t miss_size);
/** `g->print` worked out from its records where the check did not (and kept in `memo`). */
void gpujit__group_print(gpujit_cache *c, gpujit__held_group *g, gpujit__group_memo *memo);
/** The `once` files of `deps` that are one file now are those recorded as one, across the entry
 *  and group `digest` (#pragma once sees identity); `miss` says why not. */
bool gpujit__group_identities_hold(gpujit_cache *c, const char *digest, gpujit__deps *deps, char *miss, size_t n);

/** Store `shared` as group `digest` unless a sound one is there, and note it for the next build of
 *  build `head`'s sources (NULL: no note). */
int gpujit__group_store(gpujit_cache *c, const char *digest, gpujit__head *head, const gpujit__deps *shared);

/** The shared group `digest` of this cache as a view, when it is of the binary form read in
 *  place: 0 (`b` holds the bytes `view` lies in), else GPUJIT_ENOENT (free `b` either way). */
int gpujit__group_view(gpujit_cache *c, const char *digest, gpujit__buf *b, gpujit__deps_view *view);

/** Read the shared group `digest` of this cache. @return 0, GPUJIT_ENOENT or GPUJIT_ECORRUPT (`why`). */
int gpujit__group_load(gpujit_cache *c, const char *digest, gpujit__deps *out, char *why, size_t n);

/** Read a dependency group file anywhere, verified: GPUJIT_ECORRUPT (`why`) for damage and for a
 *  group of a form earlier versions wrote, which is not read. */
int gpujit__group_read(const char *path, gpujit__deps *out, char *why, size_t n);
/** The same from a record's bytes. */
int gpujit__group_parse(const char *data, size_t len, gpujit__deps *out, char *why, size_t n);

/** Whether the cache holds group `digest` with exactly these bytes. */
bool gpujit__group_same(gpujit_cache *c, const char *digest, const void *data, size_t len);
/** Store a foreign dependency group unless the cache has it; refused (GPUJIT_ECORRUPT, `why`)
 *  when its content does not hash to its name `digest`. */
int gpujit__group_import(gpujit_cache *c, const char *digest, const gpujit__deps *group, char *why, size_t n);

#endif
