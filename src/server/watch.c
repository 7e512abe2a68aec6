/*
 * The build server's watched groups. A shared dependency group (the toolkit's headers: about
 * 600 files for CUB) costs a fresh process one stat per file before its first hit; the server
 * checks it once and then only listens (cache/records/group_watch.c: what is watched, and why a
 * vouch is sound). Here: which clients it vouches for — the same build of gpujit and toolkit, the
 * same cache directory, mount namespace and root.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "cache/records/group_watch.h"
#include "cache/records/groups.h"
#include "compile/toolkit/toolkit.h"
#include "server/socket.h"
#include "server/watch.h"

struct gpujit__watch {
  gpujit__group_watch *g; /* cache/records/group_watch.c: the groups, their watches */
  char ns[128];           /* gpujit__watch_namespace() of this process */
};

int gpujit__watch_new(gpujit__watch **out)
{
  gpujit__watch *w = calloc(1, sizeof(*w));
  int err;
  *out = NULL;
  if (!w)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  if ((err = gpujit__group_watch_new(&w->g)) < 0) {
    free(w);
    return err;
  }
  gpujit__watch_namespace(w->ns, sizeof(w->ns));
  *out = w;
  return 0;
}

void gpujit__watch_free(gpujit__watch *w)
{
  if (!w)
    return;
  gpujit__group_watch_free(w->g);
  free(w);
}

void gpujit__watch_namespace(char *out, size_t size)
{
  struct stat ns, root;
  if (stat("/proc/self/ns/mnt", &ns) != 0 || stat("/", &root) != 0) {
    snprintf(out, size, "unknown");
    return;
  }
  snprintf(out, size, "mnt:%llu root:%llu:%llu", (unsigned long long)ns.st_ino, (unsigned long long)root.st_dev,
           (unsigned long long)root.st_ino);
}

bool gpujit__watch_vouch(gpujit__watch *w, gpujit_cache *c, const char *digest, char *why, size_t n)
{
  return gpujit__group_watch_vouch(w->g, c, digest, gpujit__group_load, why, n);
}

void gpujit__watch_status(const gpujit__watch *w, cJSON *j)
{
  gpujit__group_watch_counts st;
  gpujit__group_watch_counts_get(w->g, &st);
  cJSON_AddNumberToObject(j, "asked", (double)st.asked);
  cJSON_AddNumberToObject(j, "vouched", (double)st.vouched);
  cJSON_AddNumberToObject(j, "verified", (double)st.verified);
  cJSON_AddNumberToObject(j, "invalidated", (double)st.invalidated);
  cJSON_AddNumberToObject(j, "watches", (double)st.watches);
}

cJSON *gpujit__watch_answer(gpujit__watch **w, gpujit_cache **c, const char *cache_dir, const cJSON *req, int peer)
{
  const char *ver = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req, "build"));
  const char *tk = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req, "toolkit"));
  const char *dir = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req, "cache"));
  const char *ns = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req, "namespace"));
  const cJSON *groups = cJSON_GetObjectItemCaseSensitive(req, "groups"), *g;
  cJSON *a = cJSON_CreateObject(), *held = cJSON_AddArrayToObject(a, "held");
  char why[PATH_MAX + 160] = "";
  if (!*c) {
    gpujit_cache_options co = GPUJIT_CACHE_OPTIONS_INIT;
    co.dir = cache_dir;
    if (gpujit_cache_open(c, &co) < 0)
      snprintf(why, sizeof(why), "the server's cache: %s", gpujit_error_last());
  }
  if (!*w && !why[0] && gpujit__watch_new(w) < 0)
    snprintf(why, sizeof(why), "%s", gpujit_error_last());
  if (why[0])
    gpujit_error_clear();
  else if (!ver || strcmp(ver, gpujit__build_identity()) || !tk || strcmp(tk, gpujit__toolkit_id()))
    snprintf(why, sizeof(why), "stale server: another build of gpujit or another toolkit");
  else if (!dir || strcmp(dir, gpujit_cache_path(*c)))
    snprintf(why, sizeof(why), "the server serves the cache %s", gpujit_cache_path(*c));
  else if (!ns || strcmp(ns, (*w)->ns))
    snprintf(why, sizeof(why), "another mount namespace or root (%s; the server's: %s)", ns ? ns : "?", (*w)->ns);
  else /* what the kernel says of the client, whatever it said of itself */
    (void)gpujit__peer_resolves_as_we_do(peer, why, sizeof(why));
  cJSON_ArrayForEach(g, groups) {
    const char *digest = cJSON_GetStringValue(g);
    char one[PATH_MAX + 160] = "";
    bool ok = !why[0] && digest && gpujit__watch_vouch(*w, *c, digest, one, sizeof(one));
    if (!ok && !why[0])
      snprintf(why, sizeof(why), "%s", one[0] ? one : "not a group");
    cJSON_AddItemToArray(held, cJSON_CreateBool(ok));
  }
  if (why[0])
    cJSON_AddStringToObject(a, "why", why);
  return a;
}
