/*
 * A lookup's head start. A hit of a module that includes a library's headers spends most of its
 * time checking the shared group — hundreds of stats — and reaches that check only after working
 * out its arch, toolkit and key. The group a build's sources used last time is noted in the cache
 * (notes/group/HINT, HINT a hash of the sources' text); when the build begins, that group's check
 * is begun on helper threads (gpujit__group_head_start, which reads the group), and the lookup
 * joins it if its manifest names the same group. Here: the build's note and its check, one state
 * per build that the build hands to its lookup and its store (nothing is kept per thread).
 *
 * The answer is the same check's: every record held exactly as recorded when it was stat'ed, and
 * every stat is made after the build began — a file changed before the build is seen. A note that
 * names another group, or none, costs nothing but the check begun in vain; it is stopped when the
 * lookup ends.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/hash.h"
#include "cache/records/head_start.h"
#include "cache/store/store.h"

struct gpujit__head {
  gpujit_cache *cache;
  char hint[33];
  char noted[33];            /* the group the note named ("" none) */
  bool wrote;                /* the note written by this build */
  bool joined;               /* the lookup joined the check begun ahead */
  gpujit__deps_ahead *ahead; /* the check begun, until taken or stopped */
};

gpujit__head *gpujit__head_open(gpujit_cache *c, const char *hint)
{
  gpujit__head *h;
  gpujit__buf note = {0};
  if (!c || !gpujit__is_digest(hint, strlen(hint)) || !(h = calloc(1, sizeof(*h))))
    return NULL;
  h->cache = c;
  memcpy(h->hint, hint, 32);
  if (gpujit__cache_note_get(c, "group", hint, &note) == 0 && gpujit__is_digest(note.data, note.len))
    memcpy(h->noted, note.data, 32);
  gpujit__buf_free(&note);
  gpujit_error_clear();
  return h;
}

const char *gpujit__head_noted(const gpujit__head *h) { return h->noted[0] ? h->noted : NULL; }

void gpujit__head_begun(gpujit__head *h, gpujit__deps_ahead *a) { h->ahead = a; }

gpujit__deps_ahead *gpujit__head_take(gpujit__head *h, gpujit_cache *c, const char *digest)
{
  gpujit__deps_ahead *a = NULL;
  if (h && h->cache == c && h->ahead && !strcmp(h->noted, digest)) {
    a = h->ahead;
    h->ahead = NULL;
    h->joined = true;
  }
  return a;
}

void gpujit__head_held(gpujit__head *h, gpujit_cache *c, const char *digest)
{
  if (!h || h->cache != c || h->wrote || !strcmp(h->noted, digest))
    return;
  h->wrote = true;
  if (gpujit__cache_note_put(c, "group", h->hint, digest, strlen(digest)) < 0)
    gpujit_error_clear(); /* a note is a guess for next time: a failed one costs only that */
}

void gpujit__head_settle(gpujit__head *h)
{
  if (h && h->ahead) {
    gpujit__deps_ahead_drop(h->ahead);
    h->ahead = NULL;
  }
}

void gpujit__head_end(gpujit__head *h)
{
  if (!h)
    return;
  if (h->ahead)
    gpujit__deps_ahead_drop(h->ahead);
  free(h);
}

bool gpujit__head_joined(const gpujit__head *h) { return h && h->joined; }
