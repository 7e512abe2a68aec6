/* `gpujit cache`'s listings, one callback each: entries (ls), dumped sources (source), bad entries (verify). */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"

int cli_cache_ls_one(const gpujit_cache_entry *e, void *payload)
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

int cli_cache_src_one(const char *named, const char *dump, void *payload)
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

void cli_cache_bad_one(const char *key, const char *problem, void *payload)
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

