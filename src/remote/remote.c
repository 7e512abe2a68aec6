/* The list of remote stores (remote/remote.h). */
#define _GNU_SOURCE
#include <ctype.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/units.h"
#include "remote/backend.h"
#include "remote/remote.h"

typedef struct server {
  gpujit__backend *b;
  bool down; /* failed once in this process: not asked again */
} server;

struct gpujit__remote {
  server *servers;
  size_t count, cap;
  bool read_only;
  pthread_mutex_t lock;
  gpujit__remote_counts counts;
};

static bool warned; /* one warning per process */

static void warn_once(const char *what)
{
  if (!__atomic_exchange_n(&warned, true, __ATOMIC_ACQ_REL))
    gpujit__log(GPUJIT_LOG_WARN, "remote cache: %s; going on with the local cache", what);
}

static int parse_attr(gpujit__remote_attrs *a, const char *url, const char *attr)
{
  const char *eq = strchr(attr, '=');
  char name[32];
  char *end;
  long v;
  if (!eq || eq == attr || (size_t)(eq - attr) >= sizeof(name))
    return gpujit__error(GPUJIT_EINVAL, "remote cache %s: attribute '%s' is not NAME=VALUE", url, attr);
  snprintf(name, sizeof(name), "%.*s", (int)(eq - attr), attr);
  eq++;
  if (!strcmp(name, "layout")) {
    if (strcmp(eq, "flat") && strcmp(eq, "bazel"))
      return gpujit__error(GPUJIT_EINVAL, "remote cache %s: layout must be flat or bazel, not '%s'", url, eq);
    snprintf(a->layout, sizeof(a->layout), "%s", eq);
    return 0;
  }
  if (!strcmp(name, "bearer-env") || !strcmp(name, "userpwd-env") || !strcmp(name, "password-env")) {
    char *dst = name[0] == 'b' ? a->bearer_env : name[0] == 'u' ? a->userpwd_env : a->password_env;
    snprintf(dst, 64, "%s", eq);
    return 0;
  }
  if (!strcmp(name, "max-size")) { /* a size as everywhere else: ccache's (a bare number is GiB) */
    uint64_t bytes;
    if (gpujit__parse_size(eq, &bytes) < 0)
      return gpujit__error(GPUJIT_EINVAL, "remote cache %s: max-size: %s", url, gpujit_error_last());
    a->max_bytes = bytes && bytes < SIZE_MAX ? (size_t)bytes : SIZE_MAX;
    return 0;
  }
  v = strtol(eq, &end, 10);
  if (end == eq || *end || v < 0)
    return gpujit__error(GPUJIT_EINVAL, "remote cache %s: attribute %s needs a number, not '%s'", url, name, eq);
  if (!strcmp(name, "connect-timeout"))
    a->connect_ms = v;
  else if (!strcmp(name, "timeout"))
    a->total_ms = v;
  else if (!strcmp(name, "expire"))
    a->expire_s = v;
  else
    return gpujit__error(GPUJIT_EINVAL, "remote cache %s: unknown attribute '%s'", url, name);
  return 0;
}

static int open_one(gpujit__remote *r, char *item)
{
  gpujit__remote_attrs a = {.layout = "flat", .connect_ms = 1000, .total_ms = 10000, .max_bytes = (size_t)256 << 20};
  char *bar = strchr(item, '|'), *url = item;
  gpujit__backend *b = NULL;
  server *p;
  int err;
  if (bar)
    *bar = '\0';
  while (bar) {
    char *attr = bar + 1;
    if ((bar = strchr(attr, '|')))
      *bar = '\0';
    if ((err = parse_attr(&a, url, attr)) < 0)
      return err;
  }
  if (!strncmp(url, "http://", 7) || !strncmp(url, "https://", 8))
    err = gpujit__http_open(&b, url, &a);
  else if (!strncmp(url, "redis://", 8))
    err = gpujit__redis_open(&b, url, &a);
  else
    return gpujit__error(GPUJIT_EINVAL, "remote cache: '%s' is not an http://, https:// or redis:// URL", url);
  if (err < 0)
    return err;
  if (!(p = gpujit__grow(r->servers, &r->cap, r->count, sizeof(*p), 2))) {
    b->free(b);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  r->servers = p;
  r->servers[r->count].b = b;
  r->servers[r->count++].down = false;
  return 0;
}

int gpujit__remote_open(gpujit__remote **out, const char *spec, bool read_only)
{
  gpujit__remote *r;
  char *copy, *save = NULL, *item;
  int err = 0;
  *out = NULL;
  if (!spec)
    return 0;
  if (!(r = calloc(1, sizeof(*r))) || !(copy = gpujit__strdup(spec))) {
    free(r);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  pthread_mutex_init(&r->lock, NULL);
  r->read_only = read_only;
  for (item = strtok_r(copy, " \t\n", &save); item && err == 0; item = strtok_r(NULL, " \t\n", &save))
    err = open_one(r, item);
  free(copy);
  if (err < 0 || r->count == 0) {
    gpujit__remote_free(r);
    return err;
  }
  *out = r;
  return 0;
}

void gpujit__remote_free(gpujit__remote *r)
{
  if (!r)
    return;
  for (size_t i = 0; i < r->count; i++)
    r->servers[i].b->free(r->servers[i].b);
  free(r->servers);
  pthread_mutex_destroy(&r->lock);
  free(r);
}

bool gpujit__remote_read_only(const gpujit__remote *r) { return !r || r->read_only; }

static void failed(gpujit__remote *r, server *s)
{
  char msg[600];
  snprintf(msg, sizeof(msg), "%s", gpujit_error_last());
  gpujit_error_clear();
  s->down = true;
  r->counts.errors++;
  warn_once(msg);
}

int gpujit__remote_get(gpujit__remote *r, const char *key, gpujit__buf *out)
{
  int found = GPUJIT_ENOENT;
  if (!r)
    return GPUJIT_ENOENT;
  pthread_mutex_lock(&r->lock);
  for (size_t i = 0; i < r->count && found < 0; i++) {
    server *s = &r->servers[i];
    int err;
    if (s->down)
      continue;
    err = s->b->get(s->b, key, out);
    if (err == 0) {
      r->counts.hits++;
      r->counts.bytes_in += out->len;
      found = 0;
    } else if (err != GPUJIT_ENOENT) {
      failed(r, s);
    }
  }
  if (found < 0)
    r->counts.misses++;
  pthread_mutex_unlock(&r->lock);
  return found;
}

void gpujit__remote_bad(gpujit__remote *r, const char *key, const char *why)
{
  char msg[300];
  if (!r)
    return;
  pthread_mutex_lock(&r->lock);
  r->counts.hits--;
  r->counts.errors++;
  r->counts.misses++;
  pthread_mutex_unlock(&r->lock);
  snprintf(msg, sizeof(msg), "entry %s from the server is bad (%s): not used", key, why);
  warn_once(msg);
}

void gpujit__remote_put(gpujit__remote *r, const char *key, const void *data, size_t len)
{
  if (!r || r->read_only)
    return;
  pthread_mutex_lock(&r->lock);
  for (size_t i = 0; i < r->count; i++) {
    server *s = &r->servers[i];
    if (s->down)
      continue;
    if (s->b->put(s->b, key, data, len) == 0)
      r->counts.bytes_out += len;
    else
      failed(r, s);
  }
  pthread_mutex_unlock(&r->lock);
}

void gpujit__remote_take_counts(gpujit__remote *r, gpujit__remote_counts *out)
{
  memset(out, 0, sizeof(*out));
  if (!r)
    return;
  pthread_mutex_lock(&r->lock);
  *out = r->counts;
  memset(&r->counts, 0, sizeof(r->counts));
  pthread_mutex_unlock(&r->lock);
}
