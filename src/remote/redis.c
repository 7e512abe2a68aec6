/* The Redis remote store through hiredis: GET and SET (with EX when an expiry is asked) of
 * gpujit:KEY; redis://[:PASSWORD@]HOST[:PORT][/DB]. One connection per process, made on first
 * use and made again after an error. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "base/error.h"
#include "remote/backend.h"
#include "remote/libs.h"

typedef struct redis {
  gpujit__backend base;
  const gpujit__hiredis_api *r;
  redisContext *ctx;
  char host[256], password[256];
  int port, db;
  gpujit__remote_attrs a;
} redis;

static struct timeval ms_tv(long ms)
{
  struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
  return tv;
}

static void disconnect(redis *s)
{
  if (s->ctx)
    s->r->redisFree(s->ctx);
  s->ctx = NULL;
}

/* One command: 0 with the reply, or the error (the connection dropped, made again next time). */
static int command(redis *s, int argc, const char **argv, const size_t *lens, redisReply **out)
{
  redisReply *reply;
  int err;
  *out = NULL;
  if (!s->ctx) {
    s->ctx = s->r->redisConnectWithTimeout(s->host, s->port, ms_tv(s->a.connect_ms));
    if (!s->ctx || s->ctx->err) {
      err = gpujit__error(GPUJIT_EIO, "redis %s: %s", s->base.shown, s->ctx ? s->ctx->errstr : "cannot connect");
      disconnect(s);
      return err;
    }
    s->r->redisSetTimeout(s->ctx, ms_tv(s->a.total_ms));
    if (s->password[0]) {
      const char *auth[] = {"AUTH", s->password};
      redisReply *ok = s->r->redisCommandArgv(s->ctx, 2, auth, NULL);
      bool good = ok && ok->type != REDIS_REPLY_ERROR;
      if (ok)
        s->r->freeReplyObject(ok);
      if (!good) {
        err = gpujit__error(GPUJIT_EIO, "redis %s: authentication refused", s->base.shown);
        disconnect(s);
        return err;
      }
    }
    if (s->db) {
      char db[16];
      const char *sel[] = {"SELECT", db};
      redisReply *ok;
      snprintf(db, sizeof(db), "%d", s->db);
      ok = s->r->redisCommandArgv(s->ctx, 2, sel, NULL);
      if (ok)
        s->r->freeReplyObject(ok);
    }
  }
  reply = s->r->redisCommandArgv(s->ctx, argc, argv, lens);
  if (!reply) {
    err = gpujit__error(GPUJIT_EIO, "redis %s: %s", s->base.shown, s->ctx->errstr[0] ? s->ctx->errstr : "no reply");
    disconnect(s);
    return err;
  }
  if (reply->type == REDIS_REPLY_ERROR) { /* OOM, READONLY, …: the server refused */
    err = gpujit__error(GPUJIT_EIO, "redis %s: %.*s", s->base.shown, (int)reply->len, reply->str);
    s->r->freeReplyObject(reply);
    return err;
  }
  *out = reply;
  return 0;
}

static int redis_get(gpujit__backend *b, const char *key, gpujit__buf *out)
{
  redis *s = (redis *)b;
  char k[64];
  const char *argv[] = {"GET", k};
  redisReply *reply;
  int err = 0;
  snprintf(k, sizeof(k), "gpujit:%s", key);
  if ((err = command(s, 2, argv, NULL, &reply)) < 0)
    return err;
  if (reply->type == REDIS_REPLY_NIL)
    err = GPUJIT_ENOENT;
  else if (reply->type != REDIS_REPLY_STRING)
    err = gpujit__error(GPUJIT_ECORRUPT, "redis %s: GET answered a non-string", s->base.shown);
  else if (reply->len > s->a.max_bytes)
    err = gpujit__error(GPUJIT_ECORRUPT, "redis %s: the value is over %zu bytes", s->base.shown, s->a.max_bytes);
  else {
    out->len = 0;
    err = gpujit__buf_put(out, reply->str, reply->len);
  }
  s->r->freeReplyObject(reply);
  return err;
}

static int redis_put(gpujit__backend *b, const char *key, const void *data, size_t len)
{
  redis *s = (redis *)b;
  char k[64], ex[32];
  const char *argv[] = {"SET", k, data, "EX", ex};
  size_t lens[] = {3, 0, len, 2, 0};
  redisReply *reply;
  int err;
  snprintf(k, sizeof(k), "gpujit:%s", key);
  snprintf(ex, sizeof(ex), "%ld", s->a.expire_s);
  lens[1] = strlen(k);
  lens[4] = strlen(ex);
  if ((err = command(s, s->a.expire_s > 0 ? 5 : 3, argv, lens, &reply)) < 0)
    return err;
  s->r->freeReplyObject(reply);
  return 0;
}

static int redis_exists(gpujit__backend *b, const char *key)
{
  redis *s = (redis *)b;
  char k[64];
  const char *argv[] = {"EXISTS", k};
  redisReply *reply;
  int err;
  snprintf(k, sizeof(k), "gpujit:%s", key);
  if ((err = command(s, 2, argv, NULL, &reply)) < 0)
    return err;
  err = reply->type == REDIS_REPLY_INTEGER && reply->integer > 0 ? 0 : GPUJIT_ENOENT;
  s->r->freeReplyObject(reply);
  return err;
}

static void redis_free(gpujit__backend *b)
{
  redis *s = (redis *)b;
  if (s->r)
    disconnect(s);
  free(s->base.shown);
  free(s);
}

int gpujit__redis_open(gpujit__backend **out, const char *url, const gpujit__remote_attrs *a)
{
  const gpujit__hiredis_api *api;
  const char *p = url + 8, *at, *slash, *colon; /* after "redis://" */
  redis *s;
  int err;
  if ((err = gpujit__hiredis_get(&api)) < 0)
    return err;
  if (!(s = calloc(1, sizeof(*s))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  s->r = api;
  s->a = *a;
  s->port = 6379;
  if ((at = strchr(p, '@'))) { /* [user]:password@ */
    const char *pw = memchr(p, ':', (size_t)(at - p));
    if (pw)
      snprintf(s->password, sizeof(s->password), "%.*s", (int)(at - pw - 1), pw + 1);
    p = at + 1;
  }
  slash = strchr(p, '/');
  colon = memchr(p, ':', slash ? (size_t)(slash - p) : strlen(p));
  snprintf(s->host, sizeof(s->host), "%.*s", (int)((colon ? colon : slash ? slash : p + strlen(p)) - p), p);
  if (colon)
    s->port = atoi(colon + 1);
  if (slash && slash[1])
    s->db = atoi(slash + 1);
  if (a->password_env[0] && getenv(a->password_env))
    snprintf(s->password, sizeof(s->password), "%s", getenv(a->password_env));
  if (!s->host[0] || s->port <= 0 || s->port > 65535) {
    free(s);
    return gpujit__error(GPUJIT_EINVAL, "invalid Redis URL (expected redis://[:PASSWORD@]HOST[:PORT][/DB])");
  }
  {
    gpujit__buf shown = {0};
    gpujit__buf_printf(&shown, "redis://%s:%d/%d", s->host, s->port, s->db);
    s->base.shown = shown.data;
  }
  s->base.get = redis_get;
  s->base.put = redis_put;
  s->base.exists = redis_exists;
  s->base.free = redis_free;
  *out = &s->base;
  return 0;
}
