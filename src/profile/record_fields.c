/* A record's fields read from its JSON (profile/record_fields.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "base/buf.h"
#include "profile/model.h"
#include "profile/record_fields.h"

const char *pf_s_of(const cJSON *j, const char *k)
{
  const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, k));
  return s ? s : "";
}

uint64_t pf_u_of(const cJSON *j, const char *k)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, k);
  if (cJSON_IsString(v) && !strncmp(v->valuestring, "0x", 2))
    return strtoull(v->valuestring + 2, NULL, 16);
  /* a number no record writes (beyond 64 bits, NaN) reads as 0, never as undefined behaviour */
  return cJSON_IsNumber(v) && v->valuedouble > 0 && v->valuedouble < 18446744073709549568.0 ? (uint64_t)v->valuedouble
                                                                                            : 0;
}

/* Exact 64-bit integers: cJSON keeps numbers as doubles, nanosecond times need all 64 bits. */
uint64_t pf_t_of(const char *line, const char *k)
{
  char key[40];
  const char *at;
  snprintf(key, sizeof(key), "\"%s\":", k);
  at = strstr(line, key);
  return at ? strtoull(at + strlen(key), NULL, 10) : 0;
}

int64_t pf_i_of(const cJSON *j, const char *k)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, k);
  return cJSON_IsNumber(v) && v->valuedouble > -9223372036854774784.0 && v->valuedouble < 9223372036854774784.0
             ? (int64_t)v->valuedouble
             : 0;
}

char *pf_dup(const char *s)
{
  return gpujit__strdup(s ? s : "");
}

void pf_copy_hash(char out[33], const char *s)
{
  snprintf(out, 33, "%s", s);
}

int pf_grow(void **v, size_t *cap, size_t size)
{
  void *g = gpujit__grow(*v, cap, *cap, size, 64);
  if (!g)
    return -1;
  *v = g;
  return 0;
}

void gpujit__profile_compile_free(pf_compile *c)
{
  free(c->name), free(c->options), free(c->log), free(c->lib_path), free(c->nvrtc_trace), free(c->key);
  free(c->paths), free(c->fatbins);
}

char *pf_options_of(const cJSON *j)
{
  const cJSON *o = cJSON_GetObjectItemCaseSensitive(j, "options"), *e;
  gpujit__buf b = {0};
  char *s;
  if (cJSON_IsString(o))
    return pf_dup(o->valuestring);
  cJSON_ArrayForEach(e, o)
  {
    if (b.len)
      gpujit__buf_put(&b, " ", 1);
    if (cJSON_IsString(e))
      gpujit__buf_put(&b, e->valuestring, strlen(e->valuestring));
  }
  s = pf_dup(b.data ? b.data : "");
  gpujit__buf_free(&b);
  return s;
}
