/* `gpujit cache`'s commands, one function each, on the cache cmd_cache.c opened for them. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache_cmd.h"

static int emit(cache_cmd *c, cJSON *o) { return cli_json_emit(c->ctx, o, c->format, c->json_file); }

int cache_path(cache_cmd *c)
{
  cJSON *o;
  if (!c->json) {
    printf("%s\n", gpujit_cache_path(c->cache));
    return EXIT_OK;
  }
  o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "path", gpujit_cache_path(c->cache));
  return emit(c, o);
}

int cache_ls(cache_cmd *c)
{
  ls_ctx l = {c->json, c->json ? cJSON_CreateArray() : NULL, 0};
  cJSON *o = c->json ? cJSON_CreateObject() : NULL;
  int err, rc = EXIT_OK;
  if ((err = gpujit_cache_list(c->cache, cli_cache_ls_one, &l)) < 0) {
    rc = cli_fail(c->ctx, err);
  } else if (c->json) {
    cJSON_AddStringToObject(o, "path", gpujit_cache_path(c->cache));
    cJSON_AddItemToObject(o, "entries", l.arr), l.arr = NULL;
    rc = emit(c, o), o = NULL;
  } else if (!l.n && c->ctx->verbose >= 0) {
    printf("(empty: %s)\n", gpujit_cache_path(c->cache));
  }
  cJSON_Delete(l.arr);
  cJSON_Delete(o);
  return rc;
}

int cache_show(cache_cmd *c)
{
  char *text = NULL;
  int err, rc = EXIT_OK;
  if ((err = gpujit_cache_show(&text, c->cache, c->key)) < 0) {
    rc = cli_fail(c->ctx, err);
  } else if (c->json) { /* the entry's metadata inside the versioned document every command prints */
    cJSON *o = cJSON_CreateObject(), *meta = cJSON_Parse(text);
    cJSON_AddStringToObject(o, "key", c->key);
    cJSON_AddItemToObject(o, "entry", meta ? meta : cJSON_CreateNull());
    rc = emit(c, o);
  } else {
    printf("%s\n", text);
  }
  gpujit_free(text);
  return rc;
}

int cache_source(cache_cmd *c)
{
  src_ctx s = {c->json ? cJSON_CreateArray() : NULL, c->extract, 0};
  int err, rc = EXIT_OK;
  if ((err = gpujit_cache_sources(c->cache, c->key, cli_cache_src_one, &s)) < 0) {
    rc = cli_fail(c->ctx, err);
  } else if (s.err) {
    rc = s.err;
  } else if (c->json) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "key", c->key);
    cJSON_AddItemToObject(o, "files", s.arr), s.arr = NULL;
    rc = emit(c, o);
  }
  cJSON_Delete(s.arr);
  return rc;
}

/* --used-since: an age (7d) or a Unix time; 0 when not given. */
static int used_since(cache_cmd *c, double *out)
{
  double age = 0;
  char *end = NULL;
  *out = 0;
  if (!c->since)
    return EXIT_OK;
  if ((*out = strtod(c->since, &end), end && !*end && *out > 1e9))
    return EXIT_OK; /* a Unix time */
  if (gpujit_cache_parse_age(c->since, &age) < 0)
    return cli_usage_error(c->ctx, "cache", "--used-since: %s; or a Unix time", gpujit_error_last());
  *out = (double)time(NULL) - age;
  return EXIT_OK;
}

int cache_export(cache_cmd *c)
{
  gpujit_cache_export_options eo = GPUJIT_CACHE_EXPORT_OPTIONS_INIT;
  uint64_t n = 0;
  int err, rc;
  if (!c->key)
    return cli_usage_error(c->ctx, "cache", "export needs a FILE");
  if ((rc = used_since(c, &eo.used_since)) != EXIT_OK)
    return rc;
  eo.keys = c->nkeys ? c->keys : NULL;
  eo.keys_count = c->nkeys;
  if ((err = gpujit_cache_export(c->cache, c->key, &eo, &n)) < 0)
    return cli_fail(c->ctx, err);
  /* An empty archive is valid (nothing used since AGE is a true answer), but the CI job saving it
   * most likely points at another cache than its builds used: say so, whatever the output. */
  if (n == 0)
    cli_warn(c->ctx, "exported no entries: %s %s (is it the cache the builds used? GPUJIT_CACHE_DIR, --cache-dir)",
             gpujit_cache_path(c->cache),
             c->since || c->nkeys ? "has none that --used-since or --key chose" : "is empty");
  if (c->json) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "file", c->key);
    cJSON_AddNumberToObject(o, "entries", (double)n);
    return emit(c, o);
  }
  printf("exported %llu entr%s to %s\n", (unsigned long long)n, n == 1 ? "y" : "ies", c->key);
  return EXIT_OK;
}

int cache_import(cache_cmd *c)
{
  gpujit_cache_import_result r;
  uint64_t limit = 0;
  int err;
  if (!c->key)
    return cli_usage_error(c->ctx, "cache", "import needs a FILE");
  if (c->max_member && gpujit_cache_parse_size(c->max_member, &limit) < 0)
    return cli_usage_error(c->ctx, "cache", "--max-member: %s", gpujit_error_last());
  if ((err = gpujit_cache_import(c->cache, c->key, limit, &r)) < 0)
    return cli_fail(c->ctx, err);
  if (c->json) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "entries", (double)r.entries);
    cJSON_AddNumberToObject(o, "present", (double)r.present);
    cJSON_AddNumberToObject(o, "manifests", (double)r.manifests);
    cJSON_AddNumberToObject(o, "rejected", (double)r.rejected);
    return emit(c, o);
  }
  printf("imported %llu entr%s (%llu already here, %llu refused), %llu manifest%s\n", (unsigned long long)r.entries,
         r.entries == 1 ? "y" : "ies", (unsigned long long)r.present, (unsigned long long)r.rejected,
         (unsigned long long)r.manifests, r.manifests == 1 ? "" : "s");
  return EXIT_OK;
}

int cache_config(cache_cmd *c)
{
  static const char *const vars[] = {"GPUJIT_NO_CACHE", "GPUJIT_BASE_DIR", "GPUJIT_REMOTE_CACHE",
                                     "GPUJIT_REMOTE_READ_ONLY", "GPUJIT_CACHE_TIME_MACROS"};
  const char *path_source = "--cache-dir", *limit_source = NULL;
  char *dflt = NULL, sz[32];
  uint64_t bytes = 0;
  int err;
  if (!c->copts.dir && gpujit_cache_default_dir(&dflt, &path_source) == 0 && !strcmp(path_source, "HOME"))
    path_source = "default";
  gpujit_free(dflt);
  if ((err = gpujit_cache_limit_get(c->cache, &bytes, &limit_source)) < 0)
    return cli_fail(c->ctx, err);
  if (c->json) {
    cJSON *o = cJSON_CreateObject(), *set;
    cJSON_AddStringToObject(o, "path", gpujit_cache_path(c->cache));
    cJSON_AddStringToObject(o, "path_source", path_source);
    cJSON_AddNumberToObject(o, "limit_bytes", (double)bytes);
    cJSON_AddStringToObject(o, "limit_source", !strcmp(limit_source, "none") ? "default" : limit_source);
    set = cJSON_AddObjectToObject(o, "settings");
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
      const char *v = getenv(vars[i]);
      if (v && *v)
        cJSON_AddStringToObject(set, vars[i], v);
      else
        cJSON_AddNullToObject(set, vars[i]);
    }
    return emit(c, o);
  }
  printf("path      %s (%s)\n", gpujit_cache_path(c->cache), path_source);
  printf("limit     %s (%s)\n", bytes ? cli_limit_size(sz, sizeof(sz), bytes) : "none",
         !strcmp(limit_source, "none") ? "default" : limit_source);
  for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
    const char *v = getenv(vars[i]);
    printf("%-24s %s\n", vars[i], v && *v ? v : "-");
  }
  return EXIT_OK;
}

int cache_limit(cache_cmd *c)
{
  uint64_t bytes = 0, removed = 0, freed = 0;
  const char *source = NULL;
  char sz[32], fr[32];
  int err;
  if (c->key && (err = gpujit_cache_parse_size(c->key, &bytes)) < 0)
    return cli_usage_error(c->ctx, "cache", "%s", gpujit_error_last());
  if (c->key && (err = gpujit_cache_limit_set(c->cache, bytes, &removed, &freed)) < 0)
    return cli_fail(c->ctx, err);
  if ((err = gpujit_cache_limit_get(c->cache, &bytes, &source)) < 0)
    return cli_fail(c->ctx, err);
  if (c->json) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "limit_bytes", (double)bytes);
    cJSON_AddStringToObject(o, "source", source);
    if (c->key) { /* what setting it evicted */
      cJSON_AddNumberToObject(o, "evicted", (double)removed);
      cJSON_AddNumberToObject(o, "evicted_bytes", (double)freed);
    }
    return emit(c, o);
  }
  if (bytes)
    printf("limit     %s (%s)\n", cli_limit_size(sz, sizeof(sz), bytes), source);
  else
    printf("limit     none\n");
  if (c->key && (removed || freed)) /* a limit that empties the cache must never be silent */
    printf("evicted   %llu entr%s, %s, least recently used first\n", (unsigned long long)removed,
           removed == 1 ? "y" : "ies", cli_size(fr, sizeof(fr), (double)freed));
  return EXIT_OK;
}

static cJSON *stats_json(cache_cmd *c, const gpujit_cache_stats *st, uint64_t limit)
{
  gpujit_cache_remote_stats rs;
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "path", gpujit_cache_path(c->cache));
  cJSON_AddNumberToObject(o, "entries", (double)st->entries);
  cJSON_AddNumberToObject(o, "bytes", (double)st->bytes);
  cJSON_AddNumberToObject(o, "hits", (double)st->hits);
  cJSON_AddNumberToObject(o, "misses", (double)st->misses);
  cJSON_AddNumberToObject(o, "uncacheable", (double)st->uncacheable);
  if (st->hits + st->misses)
    cJSON_AddNumberToObject(o, "hit_rate", (double)st->hits / (double)(st->hits + st->misses));
  else
    cJSON_AddNullToObject(o, "hit_rate");
  cJSON_AddNumberToObject(o, "stores", (double)st->stores);
  cJSON_AddNumberToObject(o, "corrupt", (double)st->corrupt);
  cJSON_AddNumberToObject(o, "compile_ms_saved", st->compile_ms_saved);
  cJSON_AddNumberToObject(o, "limit_bytes", (double)limit);
  if (limit) /* ccache -s's percent of the limit */
    cJSON_AddNumberToObject(o, "limit_used_percent", 100.0 * (double)st->bytes / (double)limit);
  else
    cJSON_AddNullToObject(o, "limit_used_percent");
  if (gpujit_cache_remote_stats_get(c->cache, &rs) == 0) {
    cJSON *r = cJSON_AddObjectToObject(o, "remote");
    cJSON_AddNumberToObject(r, "hits", (double)rs.hits);
    cJSON_AddNumberToObject(r, "misses", (double)rs.misses);
    cJSON_AddNumberToObject(r, "errors", (double)rs.errors);
    cJSON_AddNumberToObject(r, "bytes_in", (double)rs.bytes_in);
    cJSON_AddNumberToObject(r, "bytes_out", (double)rs.bytes_out);
    cJSON_AddNumberToObject(r, "compile_ms_saved", rs.compile_ms_saved);
  }
  return o;
}

static void stats_print(cache_cmd *c, const gpujit_cache_stats *st, uint64_t limit, const char *source)
{
  gpujit_cache_remote_stats rs;
  char sz[32], lim[32];
  printf("path      %s\nentries   %llu\nsize      %s\nhits      %llu\nmisses    %llu\nuncacheable %llu\n"
         "stores    %llu\ncorrupt   %llu\nsaved     %.1f ms of compiling\n",
         gpujit_cache_path(c->cache), (unsigned long long)st->entries, cli_size(sz, sizeof(sz), (double)st->bytes),
         (unsigned long long)st->hits, (unsigned long long)st->misses, (unsigned long long)st->uncacheable,
         (unsigned long long)st->stores, (unsigned long long)st->corrupt, st->compile_ms_saved);
  if (st->hits + st->misses)
    printf("hit rate  %.1f %% (%llu of %llu lookups)\n", 100.0 * (double)st->hits / (double)(st->hits + st->misses),
           (unsigned long long)st->hits, (unsigned long long)(st->hits + st->misses));
  else
    printf("hit rate  - (no lookups since the counters were zeroed)\n");
  if (limit) /* as ccache -s: the size against the limit */
    printf("limit     %s, %.1f %% used", cli_limit_size(lim, sizeof(lim), limit),
           100.0 * (double)st->bytes / (double)limit);
  else
    printf("limit     none");
  printf(c->ctx->verbose > 0 ? " (%s)\n" : "\n", !strcmp(source, "none") ? "default" : source);
  if (gpujit_cache_remote_stats_get(c->cache, &rs) == 0 &&
      (rs.hits || rs.misses || rs.errors || rs.bytes_out || c->ctx->verbose > 0)) {
    char in[32], out[32];
    printf("remote    %llu hits, %llu misses, %llu errors; %s in, %s out; saved %.1f ms of compiling\n",
           (unsigned long long)rs.hits, (unsigned long long)rs.misses, (unsigned long long)rs.errors,
           cli_size(in, sizeof(in), (double)rs.bytes_in), cli_size(out, sizeof(out), (double)rs.bytes_out),
           rs.compile_ms_saved);
  }
}

int cache_stats(cache_cmd *c)
{
  gpujit_cache_stats st;
  uint64_t limit = 0;
  const char *source = "none";
  int err;
  if (gpujit_cache_limit_get(c->cache, &limit, &source) < 0) {
    cli_warn(c->ctx, "%s", gpujit_error_last());
    limit = 0, source = "none";
  }
  if ((err = gpujit_cache_stats_get(c->cache, &st)) < 0)
    return cli_fail(c->ctx, err);
  if (c->json)
    return emit(c, stats_json(c, &st, limit));
  stats_print(c, &st, limit, source ? source : "none");
  return EXIT_OK;
}

int cache_zero(cache_cmd *c)
{
  int err;
  if ((err = gpujit_cache_zero_stats(c->cache)) < 0)
    return cli_fail(c->ctx, err);
  if (c->json && c->then) /* -s -z --json: the stats document is the one printed */
    return EXIT_OK;
  if (c->json) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "zeroed", true);
    return emit(c, o);
  }
  if (c->ctx->verbose >= 0)
    printf("counters zeroed (entries kept)\n");
  return EXIT_OK;
}

int cache_clear(cache_cmd *c)
{
  uint64_t n = 0;
  int err;
  if ((err = gpujit_cache_clear(c->cache, &n)) < 0)
    return cli_fail(c->ctx, err);
  if (c->json) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "removed", (double)n);
    return emit(c, o);
  }
  printf("removed %llu entr%s\n", (unsigned long long)n, n == 1 ? "y" : "ies");
  return EXIT_OK;
}

int cache_prune(cache_cmd *c)
{
  uint64_t size = 0;
  double age = 0;
  uint64_t n = 0, freed = 0;
  char sz[32];
  int err;
  if (!c->max_size && !c->older)
    return cli_usage_error(c->ctx, "cache", "prune needs --max-size and/or --older-than");
  if (c->max_size && gpujit_cache_parse_size(c->max_size, &size) < 0)
    return cli_usage_error(c->ctx, "cache", "--max-size: %s", gpujit_error_last());
  if (c->older && gpujit_cache_parse_age(c->older, &age) < 0)
    return cli_usage_error(c->ctx, "cache", "%s: %s", c->older_name, gpujit_error_last());
  if (c->older && age <= 0)
    return cli_usage_error(c->ctx, "cache", "%s '%s': an age of 0 would remove every entry; clear does that",
                           c->older_name, c->older);
  if ((err = gpujit_cache_prune(c->cache, size, age, &n, &freed)) < 0)
    return cli_fail(c->ctx, err);
  if (c->json) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "removed", (double)n);
    cJSON_AddNumberToObject(o, "freed_bytes", (double)freed);
    return emit(c, o);
  }
  printf("removed %llu entr%s, freed %s\n", (unsigned long long)n, n == 1 ? "y" : "ies",
         cli_size(sz, sizeof(sz), (double)freed));
  return EXIT_OK;
}

int cache_verify(cache_cmd *c)
{
  cJSON *arr = c->json ? cJSON_CreateArray() : NULL;
  uint64_t checked = 0, bad = 0;
  int err, rc = EXIT_OK;
  if ((err = gpujit_cache_verify(c->cache, c->remove_bad, cli_cache_bad_one, arr, &checked, &bad)) < 0) {
    cJSON_Delete(arr);
    return cli_fail(c->ctx, err);
  }
  if (c->json) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "checked", (double)checked);
    cJSON_AddNumberToObject(o, "bad", (double)bad);
    cJSON_AddBoolToObject(o, "removed", c->remove_bad && bad);
    cJSON_AddItemToObject(o, "problems", arr);
    rc = emit(c, o);
  } else {
    printf("checked %llu entr%s, %llu bad%s\n", (unsigned long long)checked, checked == 1 ? "y" : "ies",
           (unsigned long long)bad, bad && c->remove_bad ? " (removed)" : "");
  }
  return bad && !c->remove_bad ? EXIT_INPUT : rc;
}
