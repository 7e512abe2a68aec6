/* Run-time loading of libcurl and hiredis (remote/libs.h). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdbool.h>
#include <string.h>

#include "base/error.h"
#include "remote/libs.h"

#define GPUJIT__NAME(name) #name,
static const char *const curl_names[] = {GPUJIT__CURL_FUNCS(GPUJIT__NAME)};
static const char *const redis_names[] = {GPUJIT__HIREDIS_FUNCS(GPUJIT__NAME)};
#undef GPUJIT__NAME

_Static_assert(sizeof(gpujit__curl_api) == sizeof(curl_names) / sizeof(curl_names[0]) * sizeof(void *),
               "gpujit__curl_api holds exactly the listed functions");
_Static_assert(sizeof(gpujit__hiredis_api) == sizeof(redis_names) / sizeof(redis_names[0]) * sizeof(void *),
               "gpujit__hiredis_api holds exactly the listed functions");

static gpujit__curl_api curl_api;
static gpujit__hiredis_api redis_api;
static char curl_error[512], redis_error[512];
static bool curl_tls;
static pthread_once_t curl_once = PTHREAD_ONCE_INIT, redis_once = PTHREAD_ONCE_INIT;

static void load(const char *what, const char *const *files, size_t nfiles, const char *const *names, void **slots,
                 size_t n, char *error, size_t size)
{
  void *h = NULL;
  for (size_t i = 0; i < nfiles && !h; i++)
    h = dlopen(files[i], RTLD_LAZY | RTLD_LOCAL); /* lazy: libcurl's TLS stack costs ms to bind */
  if (!h) {
    snprintf(error, size, "%s is not installed (%s): install it for a remote cache", what, files[0]);
    return;
  }
  for (size_t i = 0; i < n; i++)
    if (!(slots[i] = dlsym(h, names[i]))) {
      snprintf(error, size, "%s lacks %s", what, names[i]);
      return;
    }
}

static void load_curl(void)
{
  static const char *const files[] = {"libcurl.so.4", "libcurl-gnutls.so.4", "libcurl.so"};
  load("libcurl", files, 3, curl_names, (void **)&curl_api, sizeof(curl_names) / sizeof(curl_names[0]), curl_error,
       sizeof(curl_error));
  /* TLS is set up only for https:// URLs (OpenSSL's initialisation costs milliseconds) */
  if (!curl_error[0] && curl_api.curl_global_init(curl_tls ? CURL_GLOBAL_DEFAULT : CURL_GLOBAL_NOTHING) != CURLE_OK)
    snprintf(curl_error, sizeof(curl_error), "libcurl did not initialise");
}

static void load_redis(void)
{
  static const char *const files[] = {"libhiredis.so.1.1.0", "libhiredis.so.0.14", "libhiredis.so"};
  load("hiredis", files, 3, redis_names, (void **)&redis_api, sizeof(redis_names) / sizeof(redis_names[0]), redis_error,
       sizeof(redis_error));
}

int gpujit__curl_get(const gpujit__curl_api **out, bool tls)
{
  if (tls)
    curl_tls = true; /* before the first load; a later https:// URL still works: curl initialises lazily */
  pthread_once(&curl_once, load_curl);
  if (curl_error[0])
    return gpujit__error(GPUJIT_EUNSUPPORTED, "%s", curl_error);
  *out = &curl_api;
  return 0;
}

int gpujit__hiredis_get(const gpujit__hiredis_api **out)
{
  pthread_once(&redis_once, load_redis);
  if (redis_error[0])
    return gpujit__error(GPUJIT_EUNSUPPORTED, "%s", redis_error);
  *out = &redis_api;
  return 0;
}
