/* __has_include in a compile's files, also through macros that wrap it: each resolved like an
 * #include, and a failure everywhere recorded too, since it is a result the code acts on. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "compile/includes/directives.h"
#include "compile/includes/includes.h"
#include "compile/includes/scan.h"

/* Macros whose body applies __has_include to a parameter (CCCL's _CCCL_HAS_INCLUDE(x)). */
static int find_wrappers(const char *data, size_t size, gpujit__strvec *out, gpujit__strvec *nexts)
{
  const char *p = data, *end = data + size;
  while ((p = memmem(p, (size_t)(end - p), "__has_include", 13)) != NULL) {
    const char *bol = p, *q;
    while (bol > data && bol[-1] != '\n')
      bol--;
    q = gpujit__inc_skip_ws(bol, p);
    if (q < p && *q == '#') {
      q = gpujit__inc_skip_ws(q + 1, p);
      if (p - q > 7 && strncmp(q, "define", 6) == 0) {
        const char *n0 = gpujit__inc_skip_ws(q + 6, p), *n1 = n0;
        while (n1 < p && gpujit__inc_ident_char(*n1))
          n1++;
        if (n1 < p && *n1 == '(' && n1 > n0) {
          char name[256];
          bool known = false;
          snprintf(name, sizeof(name), "%.*s", (int)(n1 - n0), n0);
          for (size_t i = 0; i < out->count && !known; i++)
            known = strcmp(out->items[i], name) == 0;
          if (!known && (gpujit__strvec_push(out, name) < 0 ||
                         (end - p > 18 && memcmp(p, "__has_include_next", 18) == 0 &&
                          gpujit__strvec_push(nexts, name) < 0)))
            return GPUJIT_ENOMEM;
        }
      }
    }
    p += 13;
  }
  return 0;
}

/* Whether the occurrence at p is inside a #define line (a macro body: resolved where used). */
static bool in_define(const char *data, const char *p)
{
  const char *bol = p, *q;
  while (bol > data && bol[-1] != '\n')
    bol--;
  q = gpujit__inc_skip_ws(bol, p);
  if (q >= p || *q != '#')
    return false;
  q = gpujit__inc_skip_ws(q + 1, p);
  return p - q > 6 && strncmp(q, "define", 6) == 0;
}

static int has_include_uses(gpujit__includes *inc, size_t s, const char *path, const char *data, size_t size,
                            const char *word, bool next, bool *provable)
{
  size_t wl = strlen(word);
  const char *p = data, *end = data + size;
  int err;
  while ((p = memmem(p, (size_t)(end - p), word, wl)) != NULL) {
    const char *q = gpujit__inc_skip_ws(p + wl, end);
    char name[PATH_MAX];
    bool quoted, whole = (p == data || !gpujit__inc_ident_char(p[-1])) && (p + wl >= end || !gpujit__inc_ident_char(p[wl]));
    p += wl;
    if (!whole || q >= end || *q != '(')
      continue; /* `#ifdef __has_include`, or a longer identifier */
    q = gpujit__inc_skip_ws(q + 1, end);
    if (gpujit__inc_header_name(q, end, name, sizeof(name), &quoted)) {
      if ((err = gpujit__inc_lookup(inc, s, path, name, quoted, true, next, 0)) < 0)
        return err;
    } else if (in_define(data, p - wl)) {
      continue; /* the wrapper's own definition, or a macro body: its uses are scanned */
    } else if (q < end && gpujit__inc_ident_start(*q)) {
      gpujit__strvec vals = {0};
      char macro[256];
      int found;
      gpujit__inc_ident(q, end, macro, sizeof(macro));
      found = gpujit__inc_macro_names(inc, macro, &vals, 0);
      for (size_t i = 0; found > 0 && i < vals.count; i++) {
        const char *v = vals.items[i];
        if (gpujit__inc_header_name(v, v + strlen(v), name, sizeof(name), &quoted) &&
            (err = gpujit__inc_lookup(inc, s, path, name, quoted, true, next, 0)) < 0) {
          gpujit__strvec_free(&vals);
          return err;
        }
      }
      gpujit__strvec_free(&vals);
      if (found <= 0 && *provable) {
        *provable = false;
        snprintf(inc->why, sizeof(inc->why), "%s(%s) in %s", word, macro, path);
      }
    } else if (*provable) {
      *provable = false;
      snprintf(inc->why, sizeof(inc->why), "%s(…) in %s names its header through an expression", word, path);
    }
  }
  return 0;
}

/* What a pass over the compile's texts looks for: the words that apply __has_include. */
typedef struct pass {
  gpujit__strvec *words;
  gpujit__strvec *nexts; /* those among them that apply __has_include_next */
  bool *provable;
  bool find; /* finding wrappers, not resolving uses */
} pass;

static bool is_next(const pass *ps, const char *word)
{
  for (size_t i = 0; i < ps->nexts->count; i++)
    if (strcmp(ps->nexts->items[i], word) == 0)
      return true;
  return false;
}

static int one_text(gpujit__includes *inc, size_t s, const char *path, const char *data, size_t size, pass *ps)
{
  int err = 0;
  if (ps->find)
    return find_wrappers(data, size, ps->words, ps->nexts);
  for (size_t w = 0; err == 0 && w < ps->words->count; w++)
    err = has_include_uses(inc, s, path, data, size, ps->words->items[w], is_next(ps, ps->words->items[w]),
                           ps->provable);
  return err;
}

/* A source's text or the prelude, in both readings (as written, and its directive lines). */
static int one_source_text(gpujit__includes *inc, size_t s, const char *data, size_t size, pass *ps)
{
  gpujit__buf lines = {0};
  int err = one_text(inc, s, inc->source_paths[s], data, size, ps);
  if (err == 0 && (err = gpujit__directive_lines(&lines, data, size, NULL)) == 0)
    err = one_text(inc, s, inc->source_paths[s], lines.data, lines.len, ps);
  gpujit__buf_free(&lines);
  return err;
}

/* The sources, the prelude and the first `nfiles` headers, each in both readings. */
static int each_text(gpujit__includes *inc, size_t nfiles, pass *ps)
{
  int err = 0;
  for (size_t s = 0; err == 0 && s < inc->nsources; s++) {
    err = one_source_text(inc, s, inc->sources[s].data, inc->sources[s].size, ps);
    if (err == 0 && inc->prelude)
      err = one_source_text(inc, s, inc->prelude, strlen(inc->prelude), ps);
  }
  /* Which source's compile reached a header is not kept: look up from each (usually one). */
  for (size_t i = 0; err == 0 && i < nfiles; i++) {
    const char *data[2];
    size_t size[2];
    if ((err = gpujit__inc_readings(inc, i, data, size)) < 0)
      break;
    for (size_t s = 0; s < (ps->find ? 1 : inc->nsources) && err == 0; s++)
      for (int r = 0; r < 2 && err == 0; r++)
        err = one_text(inc, s, inc->files[i].path, data[r], size[r], ps);
  }
  return err;
}

int gpujit__includes_finish(gpujit__includes *inc, bool *provable, const char **why)
{
  gpujit__strvec words = {0}, nexts = {0};
  pass ps = {&words, &nexts, provable, true};
  int err = 0;
  *provable = true;
  if ((err = gpujit__strvec_push(&words, "__has_include")) < 0 ||
      (err = gpujit__strvec_push(&words, "__has_include_next")) < 0 ||
      (err = gpujit__strvec_push(&nexts, "__has_include_next")) < 0)
    goto done;
  if ((err = each_text(inc, inc->nfiles, &ps)) < 0)
    goto done;
  /* Files found by these lookups are dependencies but are not scanned again (not opened). */
  ps.find = false;
  err = each_text(inc, inc->nfiles, &ps);
done:
  gpujit__strvec_free(&words);
  gpujit__strvec_free(&nexts);
  if (why)
    *why = inc->why;
  return err;
}
