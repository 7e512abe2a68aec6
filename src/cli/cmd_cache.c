/* `gpujit cache`: inspect and maintain the kernel cache. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"

static void cache_help(void)
{
  printf("usage: gpujit cache [--cache-dir DIR] [--json[=FILE]] COMMAND\n\n"
         "commands:\n"
         "  path                       print the cache directory\n"
         "  ls                         list entries, most recently used first\n"
         "  show KEY                   print an entry's metadata (KEY: 4+ hex digits)\n"
         "  source KEY [--extract DIR] print the dumped sources, or copy them under DIR\n"
         "  stats                      entries, bytes, hits, misses, hit rate, corrupt, time saved,\n"
         "                             limit\n"
         "  zero                       zero the counters, keep the entries (to measure one run)\n"
         "  limit [SIZE|none]          show or set the size limit kept in the cache (SIZE: 500M,\n"
         "                             2G); $GPUJIT_CACHE_MAX_SIZE overrides it. Past the limit,\n"
         "                             a store evicts least recently used entries to 90 %% of it\n"
         "  clear                      remove every entry and its records, reset the counters\n"
         "  prune [--max-size SIZE] [--older-than AGE]\n"
         "                             drop least recently used entries (SIZE: 500M, 2G;\n"
         "                             AGE: 30s, 10m, 12h, 7d)\n"
         "  verify [--remove]          check every checksum; --remove deletes bad entries\n"
         "  export FILE [--used-since AGE|UNIX] [--key KEY]...\n"
         "                             write entries (those used within AGE, e.g. 7d, or since a\n"
         "                             Unix time; or the named keys) with their manifests into one\n"
         "                             archive: FILE.tar, .tar.zst, .tar.gz (CI artifacts, caches)\n"
         "  import FILE [--max-member SIZE]\n"
         "                             add an export's entries, each verified; a hostile archive\n"
         "                             (absolute or .. paths, links, devices, members over SIZE,\n"
         "                             default 1G) is refused whole, naming the member\n");
}

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
    if (!u || (end[1] && !(end[1] == 'b' || end[1] == 'B' || end[1] == 'i') ))
      return false;
    v *= scale[u - units];
  }
  *out = v;
  return true;
}


typedef struct ls_ctx {
  bool json;
  cJSON *arr;
  size_t n;
} ls_ctx;

static int ls_one(const gpujit_cache_entry *e, void *payload)
{
  ls_ctx *l = payload;
  char when[32], sz[32];
  time_t t = (time_t)e->last_used;
  l->n++;
  if (l->json) {
    cJSON *o = cJSON_CreateObject(), *k;
    cJSON_AddStringToObject(o, "key", e->key);
    cJSON_AddStringToObject(o, "name", e->module); /* the keys of a build's record (docs/json.md) */
    cJSON_AddStringToObject(o, "arch", e->arch);
    cJSON_AddStringToObject(o, "kind", e->kind);
    k = cJSON_AddArrayToObject(o, "kernels");
    for (const char *c = e->kernels; k && *c;) {
      size_t n = strcspn(c, " ");
      char name[1024];
      if (n) {
        snprintf(name, sizeof(name), "%.*s", (int)n, c);
        cJSON_AddItemToArray(k, cJSON_CreateString(name));
      }
      c += n + (c[n] == ' ');
    }
    cJSON_AddNumberToObject(o, "bytes", (double)e->bytes);
    cJSON_AddNumberToObject(o, "created", (double)e->created);
    cJSON_AddNumberToObject(o, "last_used", (double)e->last_used);
    cJSON_AddNumberToObject(o, "compile_ms", e->compile_ms);
    cJSON_AddItemToArray(l->arr, o);
    return 0;
  }
  strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&t));
  printf("%.12s  %-16s %-8s %9s  %s  %s\n", e->key, e->module, e->arch,
         cli_size(sz, sizeof(sz), (double)e->bytes), when, e->kernels);
  return 0;
}

typedef struct src_ctx {
  cJSON *arr;
  const char *extract;
  int err;
} src_ctx;

static int copy_file(const char *from, const char *to)
{
  FILE *in = fopen(from, "rb"), *out;
  char buf[65536], *dir = strdup(to), *slash;
  size_t n;
  int rc = 0;
  if (!in || !dir) {
    free(dir);
    if (in)
      fclose(in);
    return -1;
  }
  for (slash = dir + 1; (slash = strchr(slash, '/')); slash++) {
    *slash = '\0';
    mkdir(dir, 0755);
    *slash = '/';
  }
  free(dir);
  if (!(out = fopen(to, "wb"))) {
    fclose(in);
    return -1;
  }
  while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
    if (fwrite(buf, 1, n, out) != n)
      rc = -1;
  fclose(in);
  if (fclose(out) != 0)
    rc = -1;
  return rc;
}

static int src_one(const char *named, const char *dump, void *payload)
{
  src_ctx *s = payload;
  if (s->arr) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "path", named);
    cJSON_AddStringToObject(o, "dump", dump);
    cJSON_AddItemToArray(s->arr, o);
  } else if (s->extract) {
    char to[8192];
    snprintf(to, sizeof(to), "%s%s", s->extract, named);
    if (copy_file(dump, to) < 0) {
      fprintf(stderr, "gpujit: error: cannot write %s: %s\n", to, strerror(errno));
      s->err = EXIT_IO;
      return 1;
    }
    printf("%s\n", to);
  } else {
    FILE *f = fopen(dump, "rb");
    char buf[65536];
    size_t n;
    printf("== %s ==\n", named);
    while (f && (n = fread(buf, 1, sizeof(buf), f)) > 0)
      fwrite(buf, 1, n, stdout);
    if (f)
      fclose(f);
  }
  return 0;
}

static void bad_one(const char *key, const char *problem, void *payload)
{
  cJSON *arr = payload;
  if (arr) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "key", key);
    cJSON_AddStringToObject(o, "problem", problem);
    cJSON_AddItemToArray(arr, o);
  } else {
    printf("bad %s: %s\n", key, problem);
  }
}

int cmd_cache(cli_ctx *ctx, int argc, char **argv)
{
  gpujit_cache_options copts = GPUJIT_CACHE_OPTIONS_INIT;
  gpujit_cache *cache = NULL;
  const char *verb = NULL, *key = NULL, *extract = NULL, *max_size = NULL, *older = NULL, *since = NULL;
  const char *max_member = NULL, *keys[256];
  size_t nkeys = 0;
  bool json = false, remove_bad = false;
  const char *json_file = NULL; /* --json=FILE */
  char format[64];
  cli_args a = {.argc = argc, .i = 1, .argv = argv, .cmd = "cache"};
  int err, rc = EXIT_OK;

  for (; a.i < argc; a.i++) {
    const char *arg = argv[a.i];
    if (cli_end_of_options(&a)) {
      continue;
    } else if (cli_opt(&a, "-h", false) || cli_opt(&a, "--help", false)) {
      cache_help();
      return EXIT_OK;
    } else if (cli_opt(&a, "--cache-dir", true)) {
      copts.dir = a.value;
    } else if (cli_json_opt(&a, &json, &json_file)) {
    } else if (cli_opt(&a, "--extract", true)) {
      extract = a.value;
    } else if (cli_opt(&a, "--max-size", true)) {
      max_size = a.value;
    } else if (cli_opt(&a, "--older-than", true)) {
      older = a.value;
    } else if (cli_opt(&a, "--remove", false)) {
      remove_bad = true;
    } else if (cli_opt(&a, "--used-since", true)) {
      since = a.value;
    } else if (cli_opt(&a, "--max-member", true)) {
      max_member = a.value;
    } else if (cli_opt(&a, "--key", true)) {
      if (a.value && nkeys < sizeof(keys) / sizeof(keys[0]))
        keys[nkeys++] = a.value;
    } else if (cli_is_option(&a)) {
      return cli_unknown_option(ctx, &a, "cache");
    } else if (!verb) {
      verb = arg;
    } else if (!key) {
      key = arg;
    } else {
      return cli_usage_error(ctx, "cache", "unexpected argument '%s'", arg);
    }
    if (a.failed)
      return cli_usage_error(ctx, "cache", "option '%s' needs a value", arg);
  }
  if (!verb) {
    cache_help();
    return EXIT_USAGE;
  }
  snprintf(format, sizeof(format), "gpujit-cache-%s", verb); /* docs/json.md */
  if ((!strcmp(verb, "show") || !strcmp(verb, "source")) && !key)
    return cli_usage_error(ctx, "cache", "'%s' needs a KEY", verb);
  /* import and limit may make a cache; every other verb looks at one that is there */
  if ((err = (!strcmp(verb, "import") || !strcmp(verb, "path") || !strcmp(verb, "limit")
                  ? gpujit_cache_open(&cache, &copts)
                  : gpujit_cache_open_existing(&cache, &copts))) < 0)
    return cli_fail(ctx, err);

  if (!strcmp(verb, "path")) {
    if (json) {
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "path", gpujit_cache_path(cache));
      rc = cli_json_emit(ctx, o, format, json_file);
    } else {
      printf("%s\n", gpujit_cache_path(cache));
    }
  } else if (!strcmp(verb, "ls")) {
    ls_ctx l = {json, json ? cJSON_CreateArray() : NULL, 0};
    cJSON *o = json ? cJSON_CreateObject() : NULL;
    if ((err = gpujit_cache_list(cache, ls_one, &l)) < 0)
      rc = cli_fail(ctx, err);
    else if (json) {
      cJSON_AddStringToObject(o, "path", gpujit_cache_path(cache));
      cJSON_AddItemToObject(o, "entries", l.arr), l.arr = NULL;
      rc = cli_json_emit(ctx, o, format, json_file), o = NULL;
    } else if (!l.n && ctx->verbose >= 0)
      printf("(empty: %s)\n", gpujit_cache_path(cache));
    cJSON_Delete(l.arr);
    cJSON_Delete(o);
  } else if (!strcmp(verb, "show")) {
    char *text = NULL;
    if ((err = gpujit_cache_show(&text, cache, key)) < 0)
      rc = cli_fail(ctx, err);
    else
      printf("%s\n", text);
    gpujit_free(text);
  } else if (!strcmp(verb, "source")) {
    src_ctx s = {json ? cJSON_CreateArray() : NULL, extract, 0};
    if ((err = gpujit_cache_sources(cache, key, src_one, &s)) < 0)
      rc = cli_fail(ctx, err);
    else if (s.err)
      rc = s.err;
    else if (json) {
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "key", key);
      cJSON_AddItemToObject(o, "files", s.arr), s.arr = NULL;
      rc = cli_json_emit(ctx, o, format, json_file);
    }
    cJSON_Delete(s.arr);
  } else if (!strcmp(verb, "export")) {
    static const double secs[] = {1, 60, 3600, 86400, 604800};
    gpujit_cache_export_options eo = GPUJIT_CACHE_EXPORT_OPTIONS_INIT;
    double age = 0;
    uint64_t n = 0;
    char *end = NULL;
    if (!key)
      rc = cli_usage_error(ctx, "cache", "export needs a FILE");
    else if (since && (eo.used_since = strtod(since, &end), end && !*end && eo.used_since > 1e9))
      ; /* a Unix time */
    else if (since && !parse_suffixed(since, "smhdw", secs, &age))
      rc = cli_usage_error(ctx, "cache", "invalid --used-since '%s' (an age like 7d, or a Unix time)", since);
    else if (since)
      eo.used_since = (double)time(NULL) - age;
    if (rc == EXIT_OK) {
      eo.keys = nkeys ? keys : NULL;
      eo.keys_count = nkeys;
      if ((err = gpujit_cache_export(cache, key, &eo, &n)) < 0)
        rc = cli_fail(ctx, err);
      else if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "file", key);
        cJSON_AddNumberToObject(o, "entries", (double)n);
        rc = cli_json_emit(ctx, o, format, json_file);
      } else {
        printf("exported %llu entr%s to %s\n", (unsigned long long)n, n == 1 ? "y" : "ies", key);
      }
    }
  } else if (!strcmp(verb, "import")) {
    gpujit_cache_import_result r;
    uint64_t limit = 0;
    if (!key)
      rc = cli_usage_error(ctx, "cache", "import needs a FILE");
    else if (max_member && gpujit_cache_parse_size(max_member, &limit) < 0)
      rc = cli_usage_error(ctx, "cache", "invalid --max-member '%s' (e.g. 256M)", max_member);
    else if ((err = gpujit_cache_import(cache, key, limit, &r)) < 0)
      rc = cli_fail(ctx, err);
    else if (json) {
      cJSON *o = cJSON_CreateObject();
      cJSON_AddNumberToObject(o, "entries", (double)r.entries);
      cJSON_AddNumberToObject(o, "present", (double)r.present);
      cJSON_AddNumberToObject(o, "manifests", (double)r.manifests);
      cJSON_AddNumberToObject(o, "rejected", (double)r.rejected);
      rc = cli_json_emit(ctx, o, format, json_file);
    } else {
      printf("imported %llu entr%s (%llu already here, %llu refused), %llu manifest%s\n",
             (unsigned long long)r.entries, r.entries == 1 ? "y" : "ies", (unsigned long long)r.present,
             (unsigned long long)r.rejected, (unsigned long long)r.manifests, r.manifests == 1 ? "" : "s");
    }
  } else if (!strcmp(verb, "limit")) {
    uint64_t bytes = 0;
    const char *source = NULL;
    char sz[32];
    if (key && (err = gpujit_cache_parse_size(key, &bytes)) < 0)
      rc = cli_usage_error(ctx, "cache", "%s", gpujit_error_last());
    else if (key && (err = gpujit_cache_limit_set(cache, bytes)) < 0)
      rc = cli_fail(ctx, err);
    else if ((err = gpujit_cache_limit_get(cache, &bytes, &source)) < 0)
      rc = cli_fail(ctx, err);
    else if (json) {
      cJSON *o = cJSON_CreateObject();
      cJSON_AddNumberToObject(o, "limit_bytes", (double)bytes);
      cJSON_AddStringToObject(o, "source", source);
      rc = cli_json_emit(ctx, o, format, json_file);
    } else if (bytes) {
      printf("limit     %s (%s)\n", cli_size(sz, sizeof(sz), (double)bytes), source);
    } else {
      printf("limit     none\n");
    }
  } else if (!strcmp(verb, "stats")) {
    gpujit_cache_stats st;
    gpujit_cache_remote_stats rs;
    uint64_t limit = 0;
    if (gpujit_cache_limit_get(cache, &limit, NULL) < 0) {
      cli_warn(ctx, "%s", gpujit_error_last());
      limit = 0;
    }
    if ((err = gpujit_cache_stats_get(cache, &st)) < 0) {
      rc = cli_fail(ctx, err);
    } else if (json) {
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "path", gpujit_cache_path(cache));
      cJSON_AddNumberToObject(o, "entries", (double)st.entries);
      cJSON_AddNumberToObject(o, "bytes", (double)st.bytes);
      cJSON_AddNumberToObject(o, "hits", (double)st.hits);
      cJSON_AddNumberToObject(o, "misses", (double)st.misses);
      if (st.hits + st.misses)
        cJSON_AddNumberToObject(o, "hit_rate", (double)st.hits / (double)(st.hits + st.misses));
      else
        cJSON_AddNullToObject(o, "hit_rate");
      cJSON_AddNumberToObject(o, "stores", (double)st.stores);
      cJSON_AddNumberToObject(o, "corrupt", (double)st.corrupt);
      cJSON_AddNumberToObject(o, "compile_ms_saved", st.compile_ms_saved);
      cJSON_AddNumberToObject(o, "limit_bytes", (double)limit);
      if (gpujit_cache_remote_stats_get(cache, &rs) == 0) {
        cJSON *r = cJSON_AddObjectToObject(o, "remote");
        cJSON_AddNumberToObject(r, "hits", (double)rs.hits);
        cJSON_AddNumberToObject(r, "misses", (double)rs.misses);
        cJSON_AddNumberToObject(r, "errors", (double)rs.errors);
        cJSON_AddNumberToObject(r, "bytes_in", (double)rs.bytes_in);
        cJSON_AddNumberToObject(r, "bytes_out", (double)rs.bytes_out);
        cJSON_AddNumberToObject(r, "compile_ms_saved", rs.compile_ms_saved);
      }
      rc = cli_json_emit(ctx, o, format, json_file);
    } else {
      char sz[32], lim[32];
      printf("path      %s\nentries   %llu\nsize      %s\nhits      %llu\nmisses    %llu\n"
             "stores    %llu\ncorrupt   %llu\nsaved     %.1f ms of compiling\n",
             gpujit_cache_path(cache), (unsigned long long)st.entries, cli_size(sz, sizeof(sz), (double)st.bytes),
             (unsigned long long)st.hits, (unsigned long long)st.misses, (unsigned long long)st.stores,
             (unsigned long long)st.corrupt, st.compile_ms_saved);
      if (st.hits + st.misses)
        printf("hit rate  %.1f %% (%llu of %llu lookups)\n", 100.0 * (double)st.hits / (double)(st.hits + st.misses),
               (unsigned long long)st.hits, (unsigned long long)(st.hits + st.misses));
      else
        printf("hit rate  - (no lookups since the counters were zeroed)\n");
      printf("limit     %s\n", limit ? cli_size(lim, sizeof(lim), (double)limit) : "none");
      if (gpujit_cache_remote_stats_get(cache, &rs) == 0 && (rs.hits || rs.misses || rs.errors || rs.bytes_out)) {
        char in[32], out[32];
        printf("remote    %llu hits, %llu misses, %llu errors; %s in, %s out; saved %.1f ms of compiling\n",
               (unsigned long long)rs.hits, (unsigned long long)rs.misses, (unsigned long long)rs.errors,
               cli_size(in, sizeof(in), (double)rs.bytes_in), cli_size(out, sizeof(out), (double)rs.bytes_out),
               rs.compile_ms_saved);
      }
    }
  } else if (!strcmp(verb, "zero")) {
    if ((err = gpujit_cache_zero_stats(cache)) < 0)
      rc = cli_fail(ctx, err);
    else if (json) {
      cJSON *o = cJSON_CreateObject();
      cJSON_AddBoolToObject(o, "zeroed", true);
      rc = cli_json_emit(ctx, o, format, json_file);
    }
    else if (ctx->verbose >= 0)
      printf("counters zeroed (entries kept)\n");
  } else if (!strcmp(verb, "clear")) {
    uint64_t n = 0;
    if ((err = gpujit_cache_clear(cache, &n)) < 0) {
      rc = cli_fail(ctx, err);
    } else if (json) {
      cJSON *o = cJSON_CreateObject();
      cJSON_AddNumberToObject(o, "removed", (double)n);
      rc = cli_json_emit(ctx, o, format, json_file);
    } else {
      printf("removed %llu entr%s\n", (unsigned long long)n, n == 1 ? "y" : "ies");
    }
  } else if (!strcmp(verb, "prune")) {
    static const double bytes[] = {1024.0, 1048576.0, 1073741824.0, 1099511627776.0};
    static const double secs[] = {1, 60, 3600, 86400, 604800};
    double size = 0, age = 0;
    uint64_t n = 0, freed = 0;
    if (!max_size && !older)
      rc = cli_usage_error(ctx, "cache", "prune needs --max-size and/or --older-than");
    else if (max_size && !parse_suffixed(max_size, "kmgt", bytes, &size))
      rc = cli_usage_error(ctx, "cache", "invalid --max-size '%s' (e.g. 500M, 2G)", max_size);
    else if (older && (!parse_suffixed(older, "smhdw", secs, &age) || age <= 0))
      rc = cli_usage_error(ctx, "cache", "invalid --older-than '%s' (e.g. 30s, 10m, 12h, 7d)", older);
    else if ((err = gpujit_cache_prune(cache, (uint64_t)size, age, &n, &freed)) < 0)
      rc = cli_fail(ctx, err);
    else if (json) {
      cJSON *o = cJSON_CreateObject();
      cJSON_AddNumberToObject(o, "removed", (double)n);
      cJSON_AddNumberToObject(o, "freed_bytes", (double)freed);
      rc = cli_json_emit(ctx, o, format, json_file);
    } else {
      char sz[32];
      printf("removed %llu entr%s, freed %s\n", (unsigned long long)n, n == 1 ? "y" : "ies",
             cli_size(sz, sizeof(sz), (double)freed));
    }
  } else if (!strcmp(verb, "verify")) {
    cJSON *arr = json ? cJSON_CreateArray() : NULL;
    uint64_t checked = 0, bad = 0;
    if ((err = gpujit_cache_verify(cache, remove_bad, bad_one, arr, &checked, &bad)) < 0) {
      rc = cli_fail(ctx, err);
      cJSON_Delete(arr);
    } else {
      if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "checked", (double)checked);
        cJSON_AddNumberToObject(o, "bad", (double)bad);
        cJSON_AddBoolToObject(o, "removed", remove_bad && bad);
        cJSON_AddItemToObject(o, "problems", arr);
        rc = cli_json_emit(ctx, o, format, json_file);
      } else {
        printf("checked %llu entr%s, %llu bad%s\n", (unsigned long long)checked, checked == 1 ? "y" : "ies",
               (unsigned long long)bad, bad && remove_bad ? " (removed)" : "");
      }
      if (bad && !remove_bad)
        rc = EXIT_INPUT;
    }
  } else {
    static const char *const verbs[] = {"path", "ls", "show", "source", "stats", "zero", "limit",
                                        "clear", "prune", "verify", "export", "import"};
    const char *near = cli_nearest(verb, verbs, sizeof(verbs) / sizeof(verbs[0]));
    rc = near ? cli_usage_error(ctx, "cache", "unknown command '%s' (did you mean '%s'?)", verb, near)
              : cli_usage_error(ctx, "cache", "unknown command '%s'", verb);
  }
  gpujit_cache_free(cache);
  return rc;
}
