/* The last build of each module, kept as a cache note ("request", keyed by the module's name and
 * source paths), and the difference of a new request from it: which field of the request key
 * changed (module/explain.h). */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/error.h"
#include "cache/store/key.h"
#include "cache/store/store.h"
#include "module/explain.h"

/* The request fields (module/key.c) and how a person names them; a list field's items are
 * shown with its prefix. */
static const struct {
  const char *key, *name, *prefix;
  bool flag; /* 0 or 1: said off or on */
} fields[] = {
    {"arch", "arch", NULL, false},
    {"output", "output kind", NULL, false},
    {"toolkit", "toolkit", NULL, false},
    {"toolkit_root", "the toolkit root", NULL, false},
    {"std", "--std", NULL, false},
    {"lineinfo", "lineinfo", NULL, true},
    {"lean", "lean modules", NULL, true},
    {"line_directives", "line directives", NULL, true},
    {"device_debug", "-G", NULL, true},
    {"fast_math", "--fast-math", NULL, true},
    {"maxrregcount", "--maxrregcount", NULL, false},
    {"ofast_compile", "--Ofast-compile", NULL, false},
    {"prelude", "the prelude", NULL, false},
    {"prelude_join", "how the prelude is joined", NULL, false},
    {"defines", "defines", "-D ", false},
    {"undefines", "undefines", "-U ", false},
    {"name_expressions", "name expressions", "--name-expr ", false},
    {"nvrtc_options", "NVRTC options", "", false},
    {"include_dirs", "include directories", "-I ", false},
    {"gpujit", "gpujit version", NULL, false},
    {"schema", "cache schema", NULL, false},
    {"rules", "cache rules", NULL, false},
};

static int note_key(gpujit__key *key, const char *name, const char *const *paths, size_t count)
{
  gpujit__hasher *h = gpujit__hasher_new();
  if (!h)
    return GPUJIT_ENOMEM;
  gpujit__hasher_str(h, "name", name);
  for (size_t i = 0; i < count; i++)
    gpujit__hasher_str(h, "source", paths[i]);
  gpujit__hasher_digest(h, key);
  gpujit__hasher_free(h);
  return 0;
}

void gpujit__explain_put(gpujit_cache *c, const char *name, const char *const *paths, size_t count,
                         const cJSON *inputs)
{
  gpujit__key key;
  char *text;
  if (!c || note_key(&key, name, paths, count) < 0 || !(text = cJSON_PrintUnformatted(inputs)))
    return;
  if (gpujit__cache_note_put(c, "request", key.hex, text, strlen(text)) < 0)
    gpujit_error_clear(); /* only an explanation is lost */
  free(text);
}

/* One change more, after a "; " */
static void add(char *out, size_t size, size_t *at, const char *change)
{
  int n;
  if (*at < size && (n = snprintf(out + *at, size - *at, "%s%s", *at ? "; " : "", change)) > 0)
    *at += (size_t)n;
}

/* A scalar as text (strings as they are, numbers without decimals, flags as on or off). */
static void text_of(const cJSON *v, bool flag, char *out, size_t size)
{
  if (flag)
    snprintf(out, size, "%s", cJSON_IsNumber(v) && v->valuedouble != 0 ? "on" : "off");
  else if (cJSON_IsString(v))
    snprintf(out, size, "%.60s%s", v->valuestring, strlen(v->valuestring) > 60 ? "…" : "");
  else if (cJSON_IsNumber(v))
    snprintf(out, size, "%.0f", v->valuedouble);
  else
    snprintf(out, size, "(none)");
}

static bool holds(const cJSON *arr, const char *s)
{
  const cJSON *it;
  cJSON_ArrayForEach(it, arr) if (cJSON_IsString(it) && !strcmp(it->valuestring, s)) return true;
  return false;
}

/* Items of `a` not in `b`, each as PREFIX ITEM, with `what` ("added", "gone"). */
static void list_change(char *out, size_t size, size_t *at, const cJSON *a, const cJSON *b, const char *prefix,
                        const char *what)
{
  const cJSON *it;
  cJSON_ArrayForEach(it, a) {
    char item[320];
    if (!cJSON_IsString(it) || holds(b, it->valuestring))
      continue;
    snprintf(item, sizeof(item), "%s%.256s %s", prefix, it->valuestring, what);
    add(out, size, at, item);
  }
}

bool gpujit__explain_diff(gpujit_cache *c, const char *name, const char *const *paths, size_t count,
                          const cJSON *inputs, char *out, size_t size)
{
  gpujit__buf note = {0};
  gpujit__key key;
  cJSON *last = NULL;
  size_t at = 0;
  out[0] = '\0';
  if (!c || note_key(&key, name, paths, count) < 0 || gpujit__cache_note_get(c, "request", key.hex, &note) < 0 ||
      !note.data || !(last = cJSON_ParseWithLength(note.data, note.len))) {
    gpujit_error_clear();
    gpujit__buf_free(&note);
    return false;
  }
  gpujit__buf_free(&note);
  for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
    const cJSON *was = cJSON_GetObjectItemCaseSensitive(last, fields[i].key);
    const cJSON *now = cJSON_GetObjectItemCaseSensitive(inputs, fields[i].key);
    if (fields[i].prefix) {
      list_change(out, size, &at, now, was, fields[i].prefix, "added");
      list_change(out, size, &at, was, now, fields[i].prefix, "gone");
    } else if ((was || now) && !cJSON_Compare(was, now, true)) {
      char a[80], b[80], change[256];
      text_of(was, fields[i].flag, a, sizeof(a));
      text_of(now, fields[i].flag, b, sizeof(b));
      if (!strcmp(fields[i].key, "toolkit")) /* the id is a list of file hashes: name it only */
        snprintf(change, sizeof(change), "the toolkit changed (NVRTC, nvJitLink, ptxas or the builtin headers "
                                         "are other files)");
      else
        snprintf(change, sizeof(change), "%s %s -> %s", fields[i].name, a, b);
      add(out, size, &at, change);
    }
  }
  { /* the sources' text, by position (the paths are the note's key, so they are the same) */
    const cJSON *was = cJSON_GetObjectItemCaseSensitive(last, "source_digests");
    const cJSON *now = cJSON_GetObjectItemCaseSensitive(inputs, "source_digests");
    for (size_t i = 0; i < count; i++) {
      const cJSON *w = cJSON_GetArrayItem(was, (int)i), *n = cJSON_GetArrayItem(now, (int)i);
      if (cJSON_IsString(w) && cJSON_IsString(n) && strcmp(w->valuestring, n->valuestring) != 0) {
        char change[PATH_MAX + 128];
        if (access(paths[i], F_OK) != 0) /* an in-memory source (Python's source=): no file changed */
          snprintf(change, sizeof(change), "no build of this source on record (an in-memory source; the last build "
                   "named %s had other text)", paths[i]);
        else
          snprintf(change, sizeof(change), "%s changed", paths[i]);
        add(out, size, &at, change);
      }
    }
  }
  cJSON_Delete(last);
  return at > 0;
}
