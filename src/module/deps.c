/* A build's dependencies for the cache: the toolkit's headers apart from the user's; and whether
 * a build may be cached at all. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/fs.h"
#include "compile/directives.h"
#include "compile/nvrtc_opts.h"
#include "compile/toolkit.h"
#include "module/deps.h"

bool gpujit__in_toolkit(const char *path)
{
  char inc[PATH_MAX];
  snprintf(inc, sizeof(inc), "%s/include", gpujit__cuda_root());
  gpujit__normpath(inc);
  return gpujit__path_under(path, inc) != NULL;
}

int gpujit__module_deps(gpujit__deps *deps, gpujit__deps *shared, const gpujit__includes *inc, const char *base,
                        int64_t read_start)
{
  int err = 0;
  for (size_t i = 0; err == 0 && i < gpujit__includes_count(inc); i++) {
    const char *data;
    size_t size;
    const char *path = gpujit__includes_path(inc, i, &data, &size);
    bool tk = gpujit__in_toolkit(path);
    err = gpujit__deps_add_file(tk ? shared : deps, path, tk ? NULL : base, data, size, read_start);
  }
  for (size_t i = 0; err == 0 && i < gpujit__includes_absent_count(inc); i++) {
    const char *path = gpujit__includes_absent(inc, i);
    bool tk = gpujit__in_toolkit(path);
    err = gpujit__deps_add_absent(tk ? shared : deps, path, tk ? NULL : base);
  }
  for (size_t i = 0; err == 0 && i < gpujit__includes_rejected_count(inc); i++) {
    const char *path = gpujit__includes_rejected(inc, i);
    bool tk = gpujit__in_toolkit(path);
    err = gpujit__deps_add_nofile(tk ? shared : deps, path, tk ? NULL : base);
  }
  gpujit__deps_identities(deps);
  gpujit__deps_identities(shared);
  return err;
}

/* __TIME__, __DATE__ or __TIMESTAMP__ as a whole identifier in [p, p+n). */
static const char *time_macro(const char *p, size_t n)
{
  static const char *const names[] = {"__TIME__", "__DATE__", "__TIMESTAMP__"};
  const char *end = p + n;
  for (int k = 0; k < 3; k++) {
    size_t len = strlen(names[k]);
    for (const char *at = p; at && at + len <= end; at++) {
      if (!(at = memmem(at, (size_t)(end - at), names[k], len)))
        break;
      if ((at == p || !gpujit__inc_ident_char(at[-1])) && (at + len == end || !gpujit__inc_ident_char(at[len])))
        return names[k];
    }
  }
  return NULL;
}

/* A time macro in a define, a raw NVRTC option or the prelude. */
static const char *option_time_macro(const gpujit_module_options *o)
{
  const char *macro = NULL;
  for (size_t i = 0; !macro && i < o->defines_count; i++)
    macro = time_macro(o->defines[i], strlen(o->defines[i]));
  for (size_t i = 0; !macro && i < o->nvrtc_options_count; i++)
    macro = time_macro(o->nvrtc_options[i], strlen(o->nvrtc_options[i]));
  return macro || !o->prelude ? macro : time_macro(o->prelude, strlen(o->prelude));
}

bool gpujit__module_cacheable(const gpujit_module_options *o, const gpujit_source *sources, const char *const *paths,
                              size_t count, const gpujit__includes *inc, char *why, size_t why_size)
{
  gpujit__nvrtc_opts raw;
  const char *macro, *sloppy = getenv("GPUJIT_CACHE_TIME_MACROS");
  bool ok;
  if (gpujit__nvrtc_opts_parse(&raw, (const char *const *)o->nvrtc_options, o->nvrtc_options_count) < 0) {
    gpujit_error_clear();
    snprintf(why, why_size, "its NVRTC options do not parse");
    return false;
  }
  ok = gpujit__nvrtc_opts_cacheable(&raw, why, why_size);
  gpujit__nvrtc_opts_free(&raw);
  if (!ok || (sloppy && strcmp(sloppy, "1") == 0))
    return ok;
  /* Like ccache: a build that expands the time or date would be served with the first one's. */
  for (size_t i = 0; i < count; i++)
    if ((macro = time_macro(sources[i].data, sources[i].size))) {
      snprintf(why, why_size, "%s uses %s (GPUJIT_CACHE_TIME_MACROS=1 caches it anyway)", paths[i], macro);
      return false;
    }
  for (size_t i = 0; i < gpujit__includes_count(inc); i++) {
    const char *data;
    size_t size;
    const char *path = gpujit__includes_path(inc, i, &data, &size);
    if ((macro = time_macro(data, size))) {
      snprintf(why, why_size, "%s uses %s (GPUJIT_CACHE_TIME_MACROS=1 caches it anyway)", path, macro);
      return false;
    }
  }
  if ((macro = option_time_macro(o))) {
    snprintf(why, why_size, "an option or the prelude uses %s (GPUJIT_CACHE_TIME_MACROS=1 caches it anyway)", macro);
    return false;
  }
  return true;
}
