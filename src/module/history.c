/* Compile times of earlier misses, for scheduling project builds (module/history.h). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/fs.h"
#include "cache/store/key.h"
#include "cache/store/store.h"
#include "module/history.h"

static int history_key(gpujit__key *key, const char *const *paths, size_t count, const char *arch)
{
  gpujit__hasher *h = gpujit__hasher_new();
  if (!h)
    return GPUJIT_ENOMEM;
  gpujit__hasher_str(h, "arch", arch ? arch : "");
  for (size_t i = 0; i < count; i++) {
    char *abs = gpujit__abspath(paths[i]);
    gpujit__hasher_str(h, "source", abs ? abs : paths[i]);
    free(abs);
  }
  gpujit__hasher_digest(h, key);
  gpujit__hasher_free(h);
  return 0;
}

void gpujit__history_put(gpujit_cache *cache, const char *const *paths, size_t count, const char *arch, double ms)
{
  gpujit__key key;
  char text[64];
  int n;
  if (!cache || history_key(&key, paths, count, arch) < 0)
    return;
  n = snprintf(text, sizeof(text), "%.3f\n", ms);
  if (gpujit__cache_note_put(cache, "ctime", key.hex, text, (size_t)n) < 0)
    gpujit_error_clear();
}

double gpujit__history_get(gpujit_cache *cache, const char *const *paths, size_t count, const char *arch)
{
  gpujit__buf note = {0};
  gpujit__key key;
  double ms = -1;
  if (!cache || history_key(&key, paths, count, arch) < 0)
    return -1;
  if (gpujit__cache_note_get(cache, "ctime", key.hex, &note) == 0 && note.data) {
    char *end;
    double v = strtod(note.data, &end);
    if (end != note.data && v >= 0)
      ms = v;
  } else {
    gpujit_error_clear();
  }
  gpujit__buf_free(&note);
  return ms;
}
