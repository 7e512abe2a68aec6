/* The cache's side of the remote stores: a local miss asks them for the request's records, each
 * verified like an import; a compile stores its records to them; shared counters of both. */
#ifndef GPUJIT_CACHE_EXCHANGE_FLEET_H
#define GPUJIT_CACHE_EXCHANGE_FLEET_H

#include "gpujit/cache.h"

/** Whether remote stores are configured. */
int gpujit__cache_has_remote(const gpujit_cache *c);

/** After a local miss of `request_hex`: fetch and import it. @return 0 when something was
 *  imported (look up again), GPUJIT_ENOENT otherwise (absent, bad, no remote, server down). */
int gpujit__cache_remote_fetch(gpujit_cache *c, const char *request_hex);

/** A hit served thanks to a fetch: the compile time it saved. */
void gpujit__cache_remote_saved(gpujit_cache *c, double saved_ms);

/** After a store: put the request's records (with `entry_hex`) to the writable remote stores. */
void gpujit__cache_remote_store(gpujit_cache *c, const char *request_hex, const char *entry_hex);

#endif
