/* `gpujit cache`'s commands, one function each, on the cache cmd_cache.c opened for them. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache_cmd.h"

/* A number with an optional unit letter of `units` (and a "b", "B" or "i" after it), scaled. */
static bool parse_suffixed(const char *s, const char *units, const double *scale, double *out)
{
  char *end;
  double v;
  if (!s || !*s)
    return false;
  errno = 0;
  v = strtod(s, &end);
  if (errno || v < 0 || end == s)
    return false;
  if (*end) {
    const char *u = strchr(units, tolower((unsigned char)*end));
    if (!u || (end[1] && !(end[1] == 'b' || end[1] == 'B' || end[1] == 'i')))
      return false;
    v *= scale[u - units];
  }
  *out = v;
  return true;
}

/* An age: whole digits, then at most one unit of s, m, h, d, w (seconds without one). Strict, as
 * ccache's --evict-older-than: strtod took "1.5h" as 5400 s and "0x10d" as hex, 269 s. */
static bool parse_age(const char *s, double *out)
{
  static const char units[] = "smhdw";
  static const double secs[] = {1, 60, 3600, 86400, 604800};
  size_t digits = s ? strspn(s, "0123456789") : 0;
  const char *u = NULL;
  if (!digits || digits > 15 || (s[digits] && (s[digits + 1] || !(u = strchr(units, tolower((unsigned char)s[digits]))))))
    return false;
  *out = strtod(s, NULL) * (u ? secs[u - units] : 1);
  return true;
}

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
  if ((err = gpujit_cache_show(&text, c->cache, c->key)) < 0)
    rc = cli_fail(c->ctx, err);
  else
    printf("%s\n", text);
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
  if (!parse_age(c->since, &age))
    return cli_usage_error(c->ctx, "cache", "invalid --used-since '%s' (an age like 7d, or a Unix time)", c->since);
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
    return cli_usage_error(c->ctx, "cache", "invalid --max-member '%s' (e.g. 256M)", c->max_member);
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
  printf("limit     %s (%s)\n", bytes ? cli_size(sz, sizeof(sz), (double)bytes) : "none",
         !strcmp(limit_source, "none") ? "default" : limit_source);
  for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
    const char *v = getenv(vars[i]);
    printf("%-24s %s\n", vars[i], v && *v ? v : "-");
  }
  return EXIT_OK;
}

int cache_limit(cache_cmd *c)
{
  uint64_t bytes = 0;
  const char *source = NULL;
  char sz[32];
  int err;
  if (c->key && (err = gpujit_cache_parse_size(c->key, &bytes)) < 0)
    return cli_usage_error(c->ctx, "cache", "%s", gpujit_error_last());
  if (c->key && (err = gpujit_cache_limit_set(c->cache, bytes)) < 0)
    return cli_fail(c->ctx, err);
  if ((err = gpujit_cache_limit_get(c->cache, &bytes, &source)) < 0)
    return cli_fail(c->ctx, err);
  if (c->json) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "limit_bytes", (double)bytes);
    cJSON_AddStringToObject(o, "source", source);
    return emit(c, o);
  }
  if (bytes)
    printf("limit     %s (%s)\n", cli_size(sz, sizeof(sz), (double)bytes), source);
  else
    printf("limit     none\n");
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

static void stats_print(cache_cmd *c, const gpujit_cache_stats *st, uint64_t limit)
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
  printf("limit     %s\n", limit ? cli_size(lim, sizeof(lim), (double)limit) : "none");
  if (gpujit_cache_remote_stats_get(c->cache, &rs) == 0 && (rs.hits || rs.misses || rs.errors || rs.bytes_out)) {
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
  int err;
  if (gpujit_cache_limit_get(c->cache, &limit, NULL) < 0) {
    cli_warn(c->ctx, "%s", gpujit_error_last());
    limit = 0;
  }
  if ((err = gpujit_cache_stats_get(c->cache, &st)) < 0)
    return cli_fail(c->ctx, err);
  if (c->json)
    return emit(c, stats_json(c, &st, limit));
  stats_print(c, &st, limit);
  return EXIT_OK;
}

int cache_zero(cache_cmd *c)
{
  int err;
  if ((err = gpujit_cache_zero_stats(c->cache)) < 0)
    return cli_fail(c->ctx, err);
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
  static const double bytes[] = {1024.0, 1048576.0, 1073741824.0, 1099511627776.0};
  double size = 0, age = 0;
  uint64_t n = 0, freed = 0;
  char sz[32];
  int err;
  if (!c->max_size && !c->older)
    return cli_usage_error(c->ctx, "cache", "prune needs --max-size and/or --older-than");
  if (c->max_size && !parse_suffixed(c->max_size, "kmgt", bytes, &size))
    return cli_usage_error(c->ctx, "cache", "invalid --max-size '%s' (e.g. 500M, 2G)", c->max_size);
  if (c->older && (!parse_age(c->older, &age) || age <= 0))
    return cli_usage_error(c->ctx, "cache", "invalid %s '%s': a whole number with s, m, h, d or w (e.g. 30s, 90m, 12h, 7d)",
                           c->older_name, c->older);
  if ((err = gpujit_cache_prune(c->cache, (uint64_t)size, age, &n, &freed)) < 0)
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
