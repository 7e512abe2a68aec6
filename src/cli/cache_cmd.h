/* `gpujit cache`'s pieces: the command's state after its options are read (cmd_cache.c) and one
 * function per command (cache_verbs.c). */
#ifndef GPUJIT_CLI_CACHE_CMD_H
#define GPUJIT_CLI_CACHE_CMD_H

#include "cli.h"

/* An option given for some commands only (or, alone, standing for one: ccache's -M,
 * --evict-older-than); checked against the command once it is known. */
typedef struct verb_opt {
  const char *name;  /* as given */
  const char *verbs; /* the commands it applies to, space-separated */
} verb_opt;

typedef struct cache_cmd {
  cli_ctx *ctx;
  gpujit_cache_options copts;
  gpujit_cache *cache;
  const char *verb, *verb_from; /* the command, and the argument that named it */
  const char *then;             /* ccache's -s -z (-sz): zero after stats (or stats after zero) */
  const char *key;              /* the command's operand: KEY, FILE or SIZE */
  const char *extract, *max_size, *older, *since, *max_member, *max_size_flag, *older_name;
  const char **keys; /* --key, as many as given */
  size_t nkeys, keys_cap;
  verb_opt given[16];
  size_t ngiven;
  bool json, remove_bad;
  bool second;           /* running `then`: its JSON document is the first one's */
  const char *json_file; /* --json=FILE */
  char format[64];       /* "gpujit-cache-VERB" (docs/json.md) */
} cache_cmd;

/* cache_verbs.c: each command, on c->cache; each returns an exit code. */
int cache_path(cache_cmd *c);
int cache_ls(cache_cmd *c);
int cache_show(cache_cmd *c);
int cache_source(cache_cmd *c);
int cache_stats(cache_cmd *c);
int cache_zero(cache_cmd *c);
int cache_config(cache_cmd *c);
int cache_limit(cache_cmd *c);
int cache_clear(cache_cmd *c);
int cache_prune(cache_cmd *c);
int cache_verify(cache_cmd *c);
int cache_export(cache_cmd *c);
int cache_import(cache_cmd *c);

#endif
