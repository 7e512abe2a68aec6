/* libcurl and hiredis, loaded at run time: gpujit starts and builds without them, and a remote
 * cache that needs one says so. */
#ifndef GPUJIT_REMOTE_LIBS_H
#define GPUJIT_REMOTE_LIBS_H

#define CURL_DISABLE_TYPECHECK /* its setopt macros would hide the function pointers */
#include <curl/curl.h>
#include <stdbool.h>
#include <hiredis/hiredis.h>

#define GPUJIT__CURL_FUNCS(X)                                                             \
  X(curl_global_init) X(curl_easy_init) X(curl_easy_setopt) X(curl_easy_perform)          \
  X(curl_easy_getinfo) X(curl_easy_cleanup) X(curl_easy_strerror) X(curl_slist_append)    \
  X(curl_slist_free_all) X(curl_easy_reset)

#define GPUJIT__HIREDIS_FUNCS(X)                                                          \
  X(redisConnectWithTimeout) X(redisSetTimeout) X(redisCommandArgv) X(freeReplyObject)    \
  X(redisFree)

typedef struct gpujit__curl_api {
#define GPUJIT__PTR(name) __typeof__(name) *name;
  GPUJIT__CURL_FUNCS(GPUJIT__PTR)
#undef GPUJIT__PTR
} gpujit__curl_api;

typedef struct gpujit__hiredis_api {
#define GPUJIT__PTR(name) __typeof__(name) *name;
  GPUJIT__HIREDIS_FUNCS(GPUJIT__PTR)
#undef GPUJIT__PTR
} gpujit__hiredis_api;

/** Load libcurl once (libcurl.so.4); `tls`: an https:// URL will be used.
 *  @return 0, or GPUJIT_EUNSUPPORTED with the reason. */
int gpujit__curl_get(const gpujit__curl_api **out, bool tls);
/** Load hiredis once (libhiredis.so.1.1.0, .so.0.14, .so). */
int gpujit__hiredis_get(const gpujit__hiredis_api **out);

#endif
