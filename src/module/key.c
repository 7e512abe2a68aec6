/* A module's cache keys. The request key: what the build is asked — options, toolkit, arch,
 * output, sources — computed on every lookup without reading anything else. The entry key: the
 * request key and the content of every dependency the compile had, known once it ran. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/fs.h"
#include "cache/store/files.h"
#include "compile/toolkit/nvrtc_opts.h"
#include "compile/toolkit/toolkit.h"
#include "module/key.h"
#include "module/lean.h"
#include "module/module.h"

/* Paths under the base directory enter keys relative to it, so another checkout hits. */
/* A path under the base directory relative to it; the base directory itself (-I . run from a
 * checkout's root) is ".", as a dependency record names it (cache/records/deps.c). */
static const char *relative(const char *path, const char *base)
{
  const char *rest = gpujit__path_under(path, base);
  if (!rest && base && *base && strcmp(path, base) == 0)
    return ".";
  return rest ? rest : path;
}

static int cmp_macro(const void *a, const void *b)
{
  const char *x = *(const char *const *)a, *y = *(const char *const *)b;
  size_t nx = strcspn(x, "=("), ny = strcspn(y, "=(");
  int c = strncmp(x, y, nx < ny ? nx : ny);
  return c ? c : (nx > ny) - (nx < ny);
}

/* Stable sort by macro name: reordering different macros hits, redefinition order counts. */
static void sorted_macros(gpujit__hasher *st, cJSON *inputs, const char *label, const char *const *items, size_t n)
{
  const char **copy = malloc((n + 1) * sizeof(*copy));
  cJSON *arr = inputs ? cJSON_AddArrayToObject(inputs, label) : NULL;
  if (!copy)
    return;
  for (size_t i = 0; i < n; i++)
    copy[i] = items[i];
  for (size_t i = 1; i < n; i++) /* insertion sort: stable */
    for (size_t j = i; j > 0 && cmp_macro(&copy[j - 1], &copy[j]) > 0; j--) {
      const char *t = copy[j];
      copy[j] = copy[j - 1];
      copy[j - 1] = t;
    }
  for (size_t i = 0; i < n; i++) {
    gpujit__hasher_str(st, label, copy[i]);
    if (arr)
      cJSON_AddItemToArray(arr, cJSON_CreateString(copy[i]));
  }
  free(copy);
}

/* Raw NVRTC options as NVRTC reads them, each in one spelling: `-I=inc`, `-Iinc` and `-I` `inc`
 * are one directory, made absolute (NVRTC resolves it against the working directory) and
 * relative to the base directory like gpujit's own -I. Options that do not change the image
 * (the NVRTC trace's file) stay out. Parse errors were reported by validation. */
static int nvrtc_options(gpujit__hasher *st, cJSON *arr, const gpujit_module_options *o, const char *base)
{
  gpujit__nvrtc_opts parsed;
  gpujit__buf text = {0};
  int err = 0;
  if (gpujit__nvrtc_opts_parse(&parsed, (const char *const *)o->nvrtc_options, o->nvrtc_options_count) < 0) {
    gpujit_error_clear(); /* not a valid request: it cannot hit what a valid one stored */
    gpujit__hasher_str(st, "nvrtc_option", "(invalid)");
    return 0;
  }
  for (size_t i = 0; err == 0 && i < parsed.count; i++) {
    gpujit__nvrtc_opt *it = &parsed.items[i];
    if (it->role == GPUJIT__OPT_TRACE)
      continue;
    if (it->value && (it->role == GPUJIT__OPT_INCLUDE_DIR || it->role == GPUJIT__OPT_PRE_INCLUDE) && !it->unsure) {
      char *rel = gpujit__strdup(relative(it->value, base));
      if (!rel) {
        err = GPUJIT_ENOMEM;
        break;
      }
      free(it->value);
      it->value = rel;
    }
    if ((err = gpujit__nvrtc_opt_text(&text, it)) < 0)
      break;
    gpujit__hasher_str(st, "nvrtc_option", text.data);
    if (arr)
      cJSON_AddItemToArray(arr, cJSON_CreateString(text.data));
  }
  gpujit__buf_free(&text);
  gpujit__nvrtc_opts_free(&parsed);
  return err;
}

int gpujit__module_key(gpujit__key *out, cJSON *in, const char *base, const gpujit_source *sources,
                       const char *const *abs_paths, size_t count, const gpujit_module_options *o, const char *arch,
                       gpujit_output_kind output)
{
  gpujit__hasher *st = gpujit__hasher_new();
  cJSON *arr = NULL;
  char num[64];

  if (!st)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  /* Each field goes into the hash and, when `in` is given (a store), into the readable inputs. */
#define STR(label, value)                                                              \
  do {                                                                                 \
    gpujit__hasher_str(st, label, value);                                              \
    if (in)                                                                            \
      cJSON_AddStringToObject(in, label, (value) ? (value) : "");                      \
  } while (0)
#define NUM(label, value)                                                              \
  do {                                                                                 \
    snprintf(num, sizeof(num), "%d", (int)(value));                                    \
    gpujit__hasher_str(st, label, num);                                                \
    if (in)                                                                            \
      cJSON_AddNumberToObject(in, label, (double)(value));                             \
  } while (0)
#define LIST(name) (in ? (arr = cJSON_AddArrayToObject(in, name)) : NULL)
#define ITEM(value) (arr ? cJSON_AddItemToArray(arr, cJSON_CreateString(value)) : 0)
  NUM("schema", GPUJIT_CACHE_SCHEMA);
  STR("gpujit", GPUJIT_VERSION_STRING);
  /* 3: a record is what NVRTC was seen to probe (compile/observe/observe.c); 4: with devices and
   * identities told apart (`once`): a record of 3 is never found, so never read as one of 4 */
  NUM("rules", 4);
  STR("toolkit", gpujit__toolkit_id());
  /* the include directories gpujit adds are under the root: another root is another search path,
   * however alike its NVRTC (its headers are verified as dependencies, not trusted by the id) */
  STR("toolkit_root", gpujit__cuda_root());
  STR("arch", arch);
  STR("output", gpujit_output_kind_name(output));
  NUM("lineinfo", o->lineinfo != 0);
  if (gpujit__lean_applies(o, output)) /* the lean path makes another image */
    NUM("lean", 1);
  NUM("line_directives", o->line_directives != 0);
  NUM("device_debug", o->device_debug != 0);
  NUM("fast_math", o->fast_math != 0);
  NUM("maxrregcount", o->maxrregcount);
  STR("std", o->std);
  STR("ofast_compile", o->ofast_compile);
  gpujit__hasher_str(st, "prelude", o->prelude);
  if (o->prelude && *o->prelude) /* pre-included header since project builds; text before */
    STR("prelude_join", o->line_directives ? "pre-include" : "text");
  if (in && o->prelude)
    cJSON_AddStringToObject(in, "prelude", o->prelude);
  sorted_macros(st, in, "defines", o->defines, o->defines_count);
  sorted_macros(st, in, "undefines", o->undefines, o->undefines_count);
  LIST("name_expressions");
  for (size_t i = 0; i < o->name_expressions_count; i++) {
    gpujit__hasher_str(st, "name_expression", o->name_expressions[i]);
    ITEM(o->name_expressions[i]);
  }
  LIST("nvrtc_options");
  if (nvrtc_options(st, arr, o, base) < 0) {
    gpujit__hasher_free(st);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  LIST("include_dirs");
  for (size_t i = 0; i < o->include_dirs_count; i++) {
    char *abs = gpujit__abspath(o->include_dirs[i]);
    if (!abs) {
      gpujit__hasher_free(st);
      return gpujit__error(GPUJIT_ENOMEM, "out of memory");
    }
    gpujit__hasher_str(st, "include_dir", relative(abs, base));
    ITEM(relative(abs, base));
    free(abs);
  }
  LIST("sources");
  for (size_t i = 0; i < count; i++) {
    gpujit__hasher_str(st, "source-path", relative(abs_paths[i], base));
    gpujit__hasher_field(st, "source", sources[i].data, sources[i].size);
    ITEM(relative(abs_paths[i], base));
  }
  LIST("source_digests"); /* readable only (the text is in the key): which source changed, for -v */
  for (size_t i = 0; arr && i < count; i++) {
    gpujit__hasher *h = gpujit__hasher_new();
    gpujit__key k;
    if (!h)
      break;
    gpujit__hasher_field(h, "source", sources[i].data, sources[i].size);
    gpujit__hasher_digest(h, &k);
    gpujit__hasher_free(h);
    ITEM(k.hex);
  }
#undef STR
#undef NUM
#undef LIST
#undef ITEM
  gpujit__hasher_digest(st, out);
  gpujit__hasher_free(st);
  return 0;
}

int gpujit__module_entry_key(gpujit__key *out, const gpujit__key *request, const gpujit__deps *deps,
                             const gpujit__deps *shared)
{
  gpujit__hasher *st = gpujit__hasher_new();
  if (!st)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  gpujit__hasher_str(st, "request", request->hex);
  gpujit__deps_hash(deps, st, "dep");
  gpujit__deps_hash(shared, st, "shared");
  gpujit__hasher_digest(st, out);
  gpujit__hasher_free(st);
  return 0;
}
