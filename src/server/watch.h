/* Shared dependency groups the build server keeps verified: it verifies a group once, with
 * inotify watching every file of it and every directory entry its paths resolve through, and
 * vouches for it to the processes it serves until an event says something changed. */
#ifndef GPUJIT_SERVER_WATCH_H
#define GPUJIT_SERVER_WATCH_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpujit/cache.h"

typedef struct gpujit__watch gpujit__watch;

/** @return 0, or GPUJIT_EIO (no inotify: nothing can be vouched for). */
int gpujit__watch_new(gpujit__watch **out);
void gpujit__watch_free(gpujit__watch *w);

/** What identifies how this process resolves absolute paths (its mount namespace and root):
 *  a process with another answer is not vouched for. */
void gpujit__watch_namespace(char *out, size_t size);

/**
 * Whether group `digest` of cache `c` holds now: the events queued so far are taken first (a
 * change that finished before this call is among them); a group not held since is loaded,
 * watched and then verified by stat and content as a lookup verifies it.
 * @return true only when it holds and stays watched; false with `why`.
 */
bool gpujit__watch_vouch(gpujit__watch *w, gpujit_cache *c, const char *digest, char *why, size_t n);

/** Its counts into `j`: asked, vouched, verified, invalidated (groups an event unverified), watches. */
void gpujit__watch_status(const gpujit__watch *w, cJSON *j);

/**
 * A client's "vouch" request, {"op": "vouch", "build", "toolkit", "cache", "namespace",
 * "groups": [DIGEST…]}, answered {"held": [BOOL…], "why"}: all false unless it is the same build
 * of gpujit with the same toolkit, cache directory, mount namespace and root — the client's, at
 * the other end of `peer`, as the kernel gives them. `*w` and `*c` (the server's cache directory
 * `cache_dir`, NULL: the default) are made on the first request.
 */
cJSON *gpujit__watch_answer(gpujit__watch **w, gpujit_cache **c, const char *cache_dir, const cJSON *req, int peer);

#endif
