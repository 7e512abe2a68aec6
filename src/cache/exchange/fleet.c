/* Remote stores under the local cache (cache/exchange/fleet.h). A remote value is the request's records
 * as a bundle (cache/exchange/bundle.c): what comes back is checked record by record and every entry
 * verified before it is stored locally, so a bad server costs a miss, never a wrong hit. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "base/error.h"
#include "base/lockfile.h"
#include "cache/exchange/bundle.h"
#include "cache/exchange/fleet.h"
#include "cache/store/handle.h"
#include "cache/records/manifests.h"
#include "remote/remote.h"

#define FLEET_MAGIC 0x31746565666a7067ULL /* "gpjfeet1" */

typedef struct fleet_file {
  uint64_t magic;
  gpujit_cache_remote_stats s;
} fleet_file;

/* Add this process's counts to the shared ones (under flock), and `saved_ms`. */
static void persist(gpujit_cache *c, double saved_ms)
{
  gpujit__remote_counts n;
  fleet_file f;
  char p[PATH_MAX];
  int fd;
  gpujit__remote_take_counts(c->remote, &n);
  if (!c->writable)
    return;
  snprintf(p, sizeof(p), "%s/remote_stats", c->dir);
  if ((fd = gpujit__lockfile_open(p, O_RDWR | O_CREAT | O_NOFOLLOW, 0600)) < 0)
    return;
  if (gpujit__lockfile_lock(fd, LOCK_EX) == 0) {
    if (pread(fd, &f, sizeof(f), 0) != (ssize_t)sizeof(f) || f.magic != FLEET_MAGIC)
      memset(&f, 0, sizeof(f));
    f.magic = FLEET_MAGIC;
    f.s.hits += n.hits;
    f.s.misses += n.misses;
    f.s.errors += n.errors;
    f.s.bytes_in += n.bytes_in;
    f.s.bytes_out += n.bytes_out;
    f.s.compile_ms_saved += saved_ms;
    if (pwrite(fd, &f, sizeof(f), 0) != (ssize_t)sizeof(f))
      gpujit__log(GPUJIT_LOG_DEBUG, "remote cache counters not updated");
  }
  gpujit__lockfile_close(fd);
}

int gpujit_cache_remote_stats_get(gpujit_cache *c, gpujit_cache_remote_stats *out)
{
  fleet_file f;
  char p[PATH_MAX];
  int fd;
  if (!c || !out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_cache_remote_stats_get: NULL argument");
  memset(out, 0, sizeof(*out));
  snprintf(p, sizeof(p), "%s/remote_stats", c->dir);
  if ((fd = gpujit__lockfile_open(p, O_RDONLY, 0)) < 0)
    return 0;
  if (gpujit__lockfile_lock(fd, LOCK_SH) == 0 && pread(fd, &f, sizeof(f), 0) == (ssize_t)sizeof(f) &&
      f.magic == FLEET_MAGIC)
    *out = f.s;
  gpujit__lockfile_close(fd);
  return 0;
}

int gpujit__cache_has_remote(const gpujit_cache *c) { return c && c->remote; }

int gpujit__cache_remote_fetch(gpujit_cache *c, const char *request_hex)
{
  gpujit__buf value = {0};
  gpujit_cache_import_result r;
  char name[80];
  int err;
  if (!c || !c->remote || !c->writable)
    return GPUJIT_ENOENT;
  if ((err = gpujit__remote_get(c->remote, request_hex, &value)) < 0) {
    gpujit__buf_free(&value); /* what a failing server sent (an error page) */
    persist(c, 0);
    return GPUJIT_ENOENT;
  }
  snprintf(name, sizeof(name), "remote entry %s", request_hex);
  err = gpujit__bundle_unpack(c, value.data, value.len, name, request_hex, 0, &r);
  gpujit__buf_free(&value);
  if (err == 0) { /* a server answering with another request's records is not a hit */
    gpujit__strvec entries = {0}, groups = {0};
    if (r.manifests == 0 || gpujit__manifest_refs(c, request_hex, &entries, &groups) < 0)
      err = gpujit__error(GPUJIT_ECORRUPT, "it holds no manifest for %s", request_hex);
    gpujit__strvec_free(&entries);
    gpujit__strvec_free(&groups);
  }
  if (err < 0 || (r.entries == 0 && r.present == 0)) {
    gpujit__remote_bad(c->remote, request_hex, err < 0 ? gpujit_error_last() : "no entry verified");
    gpujit_error_clear();
    persist(c, 0);
    return GPUJIT_ENOENT;
  }
  persist(c, 0);
  return 0;
}

void gpujit__cache_remote_saved(gpujit_cache *c, double saved_ms)
{
  if (c && c->remote)
    persist(c, saved_ms);
}

void gpujit__cache_remote_store(gpujit_cache *c, const char *request_hex, const char *entry_hex)
{
  gpujit__buf packed = {0};
  if (!c || !c->remote || gpujit__remote_read_only(c->remote))
    return;
  if (gpujit__bundle_pack(c, request_hex, entry_hex, &packed) == 0)
    gpujit__remote_put(c->remote, request_hex, packed.data, packed.len);
  else
    gpujit_error_clear();
  gpujit__buf_free(&packed);
  persist(c, 0);
}
