/* Records of answers other than a file's content: a probe that failed with an error (EACCES,
 * ELOOP, …), replayed by failing the same way, and an environment variable NVRTC read, replayed by
 * having the same value (its hash) or none — made, written as JSON, read back and checked here. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "base/hash.h"
#include "cache/records/deps.h"

int gpujit__deps_add_error(gpujit__deps *d, const char *path, const char *base, int err)
{
  gpujit__dep *e = gpujit__deps_push(d, path, base);
  if (!e)
    return GPUJIT_ENOMEM;
  e->err = err;
  return 0;
}

int gpujit__deps_add_env(gpujit__deps *d, const char *name, const char *value)
{
  gpujit__dep *e = gpujit__deps_push_as(d, name, name);
  if (!e)
    return GPUJIT_ENOMEM;
  e->env = true;
  e->unset = value == NULL;
  if (value)
    gpujit__hash_hex(e->hash, value, strlen(value));
  return 0;
}

/* A probe that failed: NVRTC's open of the path must fail as it did. An open (not a stat) because
 * a file's own permissions fail an open that a stat passes. */
static bool replays_error(const gpujit__dep *e, const char *shown, char *why, size_t n)
{
  int fd = open(e->path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC), now = fd < 0 ? errno : 0;
  char how[160];
  if (fd >= 0)
    close(fd);
  if (now == e->err)
    return true;
  snprintf(how, sizeof(how), "gave %s when it was built, and now %s", strerror(e->err),
           now ? strerror(now) : "opens");
  if (why && n)
    snprintf(why, n, "%s %s", shown, how);
  return false;
}

/* A variable NVRTC read: set to the same value, or unset, as it was. */
static bool env_holds(const gpujit__dep *e, char *why, size_t n)
{
  const char *v = getenv(e->path);
  char h[33];
  if (!v && e->unset)
    return true;
  if (v && !e->unset) {
    gpujit__hash_hex(h, v, strlen(v));
    if (strcmp(h, e->hash) == 0)
      return true;
  }
  if (why && n)
    snprintf(why, n, "the environment variable %s, which %s, %s", e->path,
             strcmp(e->path, "LD_LIBRARY_PATH") == 0 ? "chose the builtins library NVRTC mapped" : "NVRTC or nvJitLink read",
             e->unset ? "is set now" : v ? "has another value now" : "is not set now");
  return false;
}

bool gpujit__deps_answer_holds(const gpujit__dep *e, const char *shown, char *why, size_t n)
{
  return e->err ? replays_error(e, shown, why, n) : env_holds(e, why, n);
}

void gpujit__deps_answer_to_json(const gpujit__dep *e, cJSON *o)
{
  if (e->err) {
    cJSON_AddStringToObject(o, "error", e->rel);
    cJSON_AddNumberToObject(o, "errno", e->err);
    return;
  }
  cJSON_AddStringToObject(o, "env", e->path);
  if (e->unset)
    cJSON_AddBoolToObject(o, "unset", 1);
  else
    cJSON_AddStringToObject(o, "xxh3", e->hash);
}

int gpujit__deps_errno_from_json(const cJSON *o)
{
  const cJSON *no = cJSON_GetObjectItemCaseSensitive(o, "errno");
  if (!cJSON_IsNumber(no) || no->valuedouble < 1 || no->valuedouble > 4095 || no->valuedouble != (int)no->valuedouble)
    return 0;
  return (int)no->valuedouble;
}

/* {"env": NAME, "xxh3": HASH} or {"env": NAME, "unset": true} */
int gpujit__deps_env_from_json(gpujit__deps *out, const cJSON *o)
{
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "env"), *h = cJSON_GetObjectItemCaseSensitive(o, "xxh3");
  bool unset = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "unset"));
  gpujit__dep *e;
  if (!cJSON_IsString(name) || !name->valuestring[0] || strchr(name->valuestring, '=') ||
      unset == cJSON_IsString(h) || (h && (!cJSON_IsString(h) || strlen(h->valuestring) != 32)) ||
      !(e = gpujit__deps_push_as(out, name->valuestring, name->valuestring)))
    return GPUJIT_ECORRUPT;
  e->env = true;
  e->unset = unset;
  if (!unset)
    memcpy(e->hash, h->valuestring, 33);
  return 0;
}
