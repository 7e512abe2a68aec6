/* NVRTC's option grammar, read as NVRTC 12.8-13.0 reads it (checked against libnvrtc): a long
 * name `--name`, a short one `-name`, a value after `=`, in the next element, or (for -I, -D and
 * -U) joined to the name; `_` and `-` alike in long names. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/fs.h"
#include "compile/toolkit/nvrtc_opts.h"

typedef struct spec {
  const char *name, *short_name; /* without their dashes */
  bool value;
  gpujit__opt_role role;
} spec;

/* NVRTC's documented options. Those that change what ptxas makes stand apart: on the lean path
 * gpujit runs ptxas itself and must give it what NVRTC would have. */
static const spec table[] = {
  {"gpu-architecture", "arch", true, GPUJIT__OPT_PLAIN},
  {"device-c", "dc", false, GPUJIT__OPT_PLAIN},
  {"device-w", "dw", false, GPUJIT__OPT_PLAIN},
  {"relocatable-device-code", "rdc", true, GPUJIT__OPT_PLAIN},
  {"extensible-whole-program", "ewp", false, GPUJIT__OPT_PLAIN},
  {"device-debug", "G", false, GPUJIT__OPT_PTXAS},
  {"generate-line-info", "lineinfo", false, GPUJIT__OPT_PTXAS},
  {"dopt", "dopt", true, GPUJIT__OPT_PTXAS},
  {"ptxas-options", "Xptxas", true, GPUJIT__OPT_PTXAS_PASS},
  {"maxrregcount", "maxrregcount", true, GPUJIT__OPT_PTXAS_MAXREG},
  {"ftz", "ftz", true, GPUJIT__OPT_PLAIN},
  {"prec-sqrt", "prec-sqrt", true, GPUJIT__OPT_PLAIN},
  {"prec-div", "prec-div", true, GPUJIT__OPT_PLAIN},
  {"fmad", "fmad", true, GPUJIT__OPT_PTXAS},
  {"use_fast_math", "use_fast_math", false, GPUJIT__OPT_PLAIN},
  {"extra-device-vectorization", "extra-device-vectorization", false, GPUJIT__OPT_PLAIN},
  {"modify-stack-limit", "modify-stack-limit", true, GPUJIT__OPT_PLAIN},
  {"dlink-time-opt", "dlto", false, GPUJIT__OPT_PLAIN},
  {"gen-opt-lto", "gen-opt-lto", false, GPUJIT__OPT_PLAIN},
  {"optix-ir", "optix-ir", false, GPUJIT__OPT_PLAIN},
  {"jump-table-density", "jtd", true, GPUJIT__OPT_PLAIN},
  {"device-stack-protector", "device-stack-protector", true, GPUJIT__OPT_PTXAS},
  {"Ofast-compile", "Ofc", true, GPUJIT__OPT_PTXAS},
  {"split-compile", "split-compile", true, GPUJIT__OPT_PTXAS},
  {"define-macro", "D", true, GPUJIT__OPT_DEFINE},
  {"undefine-macro", "U", true, GPUJIT__OPT_PLAIN},
  {"include-path", "I", true, GPUJIT__OPT_INCLUDE_DIR},
  {"pre-include", "include", true, GPUJIT__OPT_PRE_INCLUDE},
  {"no-source-include", "no-source-include", false, GPUJIT__OPT_SCAN},
  {"std", "std", true, GPUJIT__OPT_PLAIN},
  {"builtin-move-forward", "builtin-move-forward", true, GPUJIT__OPT_PLAIN},
  {"builtin-initializer-list", "builtin-initializer-list", true, GPUJIT__OPT_PLAIN},
  {"pch", "pch", false, GPUJIT__OPT_PLAIN},
  {"create-pch", "create-pch", true, GPUJIT__OPT_SIDE_FILE},
  {"use-pch", "use-pch", true, GPUJIT__OPT_SIDE_FILE},
  {"pch-dir", "pch-dir", true, GPUJIT__OPT_SIDE_FILE},
  {"pch-verbose", "pch-verbose", true, GPUJIT__OPT_PLAIN},
  {"pch-messages", "pch-messages", true, GPUJIT__OPT_PLAIN},
  {"instantiate-templates-in-pch", "instantiate-templates-in-pch", true, GPUJIT__OPT_PLAIN},
  {"disable-warnings", "w", false, GPUJIT__OPT_PLAIN},
  {"restrict", "restrict", false, GPUJIT__OPT_PLAIN},
  {"device-as-default-execution-space", "default-device", false, GPUJIT__OPT_PLAIN},
  {"device-int128", "device-int128", false, GPUJIT__OPT_PLAIN},
  {"device-float128", "device-float128", false, GPUJIT__OPT_PLAIN},
  {"optimization-info", "opt-info", true, GPUJIT__OPT_PLAIN},
  {"display-error-number", "err-no", false, GPUJIT__OPT_PLAIN},
  {"no-display-error-number", "no-err-no", false, GPUJIT__OPT_PLAIN},
  {"diag-error", "diag-error", true, GPUJIT__OPT_PLAIN},
  {"diag-suppress", "diag-suppress", true, GPUJIT__OPT_PLAIN},
  {"diag-warn", "diag-warn", true, GPUJIT__OPT_PLAIN},
  {"brief-diagnostics", "brief-diag", true, GPUJIT__OPT_PLAIN},
  {"time", "time", true, GPUJIT__OPT_SIDE_FILE},
  {"fdevice-syntax-only", "fdevice-syntax-only", false, GPUJIT__OPT_PLAIN},
  {"minimal", "minimal", false, GPUJIT__OPT_PLAIN},
  {"fdevice-time-trace", "fdevice-time-trace", true, GPUJIT__OPT_TRACE},
  {"no-cache", "no-cache", false, GPUJIT__OPT_PLAIN},
};

/* `a` (n bytes) names `b`, '_' and '-' alike. */
static bool same_name(const char *a, size_t n, const char *b)
{
  size_t i;
  for (i = 0; i < n && b[i]; i++)
    if (a[i] != b[i] && !((a[i] == '_' || a[i] == '-') && (b[i] == '_' || b[i] == '-')))
      return false;
  return i == n && b[i] == '\0';
}

static const spec *lookup(const char *head, size_t n)
{
  bool dashes = n > 2 && head[1] == '-';
  for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
    if (dashes && same_name(head + 2, n - 2, table[i].name))
      return &table[i];
    if (!dashes && n > 1 && same_name(head + 1, n - 1, table[i].short_name))
      return &table[i];
  }
  return NULL;
}

static gpujit__nvrtc_opt *push(gpujit__nvrtc_opts *o, const char *name, gpujit__opt_role role, const char *value)
{
  gpujit__nvrtc_opt *it = gpujit__grow(o->items, &o->cap, o->count, sizeof(*it), 8);
  if (!it)
    return NULL;
  o->items = it;
  it = &o->items[o->count];
  memset(it, 0, sizeof(*it));
  it->name = name;
  it->role = role;
  if (value && !(it->value = gpujit__strdup(value)))
    return NULL;
  o->count++;
  return it;
}

static bool is_path_role(gpujit__opt_role r) { return r == GPUJIT__OPT_INCLUDE_DIR || r == GPUJIT__OPT_PRE_INCLUDE; }

/* A directory or header named relative to the working directory, as NVRTC resolves it, made
 * absolute. A pre-included name that is no file there is looked up by NVRTC along the search
 * path: left as written and marked unsure (the compile is not cached). */
static int make_absolute(gpujit__nvrtc_opt *it)
{
  struct stat st;
  char *abs;
  if (!it->value[0] || strpbrk(it->value, " \t\n\r\v\f")) {
    it->unsure = true;
    return 0;
  }
  if (it->role == GPUJIT__OPT_PRE_INCLUDE && it->value[0] != '/' && (stat(it->value, &st) != 0 || !S_ISREG(st.st_mode))) {
    it->unsure = true;
    return 0;
  }
  if (!(abs = gpujit__abspath(it->value)))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  free(it->value);
  it->value = abs;
  return 0;
}

int gpujit__nvrtc_opts_parse(gpujit__nvrtc_opts *out, const char *const *opts, size_t n)
{
  int err = 0;
  memset(out, 0, sizeof(*out));
  for (size_t i = 0; i < n && err == 0; i++) {
    const char *e = opts[i], *eq = strchr(e, '='), *value = NULL;
    size_t head = eq ? (size_t)(eq - e) : strlen(e);
    const spec *s;
    gpujit__nvrtc_opt *it;
    size_t at = i;
    if (e[0] != '-') {
      err = gpujit__error(GPUJIT_EINVAL, "invalid NVRTC option '%s': options start with '-'", e);
      break;
    }
    s = lookup(e, head);
    if (s && s->value) {
      value = eq ? eq + 1 : (i + 1 < n ? opts[++i] : NULL);
      if (!value) {
        err = gpujit__error(GPUJIT_EINVAL, "NVRTC option '%s' needs a value", e);
        break;
      }
    } else if (s && eq) {
      s = NULL; /* a flag given a value: not a form NVRTC has */
    } else if (!s && e[1] && strchr("IDU", e[1]) && e[2]) {
      s = lookup(e, 2); /* -Idir, -DNAME=V, -UNAME */
      value = e + 2;
    }
    if (!s) {
      /* "-I dir" in one element: NVRTC takes it, but what it names is not certain */
      const char *blank = strpbrk(e, " \t");
      const spec *lead = blank ? lookup(e, (size_t)(blank - e)) : NULL;
      if (!(it = push(out, e, GPUJIT__OPT_UNKNOWN, NULL))) {
        err = GPUJIT_ENOMEM;
        break;
      }
      it->at = at;
      it->taken = 1;
      it->given = e;
      if (lead) {
        it->unsure = is_path_role(lead->role);
        it->role = is_path_role(lead->role) ? lead->role : GPUJIT__OPT_PLAIN;
      }
      continue;
    }
    if (!(it = push(out, NULL, s->role, value))) {
      err = GPUJIT_ENOMEM;
      break;
    }
    it->name = s->name;
    it->at = at;
    it->taken = i - at + 1;
    it->given = e;
    if (is_path_role(s->role))
      err = make_absolute(it);
  }
  if (err < 0)
    gpujit__nvrtc_opts_free(out);
  return err == GPUJIT_ENOMEM ? gpujit__error(GPUJIT_ENOMEM, "out of memory") : err;
}

void gpujit__nvrtc_opts_free(gpujit__nvrtc_opts *o)
{
  for (size_t i = 0; i < o->count; i++)
    free(o->items[i].value);
  free(o->items);
  memset(o, 0, sizeof(*o));
}

int gpujit__nvrtc_opt_text(gpujit__buf *out, const gpujit__nvrtc_opt *o)
{
  out->len = 0;
  if (!o->value) /* a flag, or an element kept as written */
    return o->name[0] == '-' ? gpujit__buf_puts(out, o->name) : gpujit__buf_printf(out, "--%s", o->name);
  return gpujit__buf_printf(out, "--%s=%s", o->name, o->value);
}

bool gpujit__nvrtc_opts_cacheable(const gpujit__nvrtc_opts *o, char *why, size_t why_size)
{
  for (size_t i = 0; i < o->count; i++) {
    const gpujit__nvrtc_opt *it = &o->items[i];
    if (it->role == GPUJIT__OPT_UNKNOWN)
      snprintf(why, why_size, "NVRTC option '%s' is not one gpujit knows", it->given);
    else if (it->role == GPUJIT__OPT_SIDE_FILE)
      snprintf(why, why_size, "NVRTC option '%s' names a file the cache cannot stand for", it->given);
    else if (it->unsure)
      snprintf(why, why_size, "NVRTC option '%s': what it names is not certain (write --%s=PATH, a path from here)",
               it->given, it->role == GPUJIT__OPT_PRE_INCLUDE ? "pre-include" : "include-path");
    else
      continue;
    return false;
  }
  return true;
}

int gpujit__nvrtc_opts_given(gpujit__strvec *out, const char *const *opts, size_t n)
{
  gpujit__nvrtc_opts parsed;
  gpujit__buf text = {0};
  int err = gpujit__nvrtc_opts_parse(&parsed, opts, n);
  for (size_t i = 0; err == 0 && i < parsed.count; i++) {
    const gpujit__nvrtc_opt *it = &parsed.items[i];
    if (is_path_role(it->role) && !it->unsure) {
      if ((err = gpujit__nvrtc_opt_text(&text, it)) == 0)
        err = gpujit__strvec_push(out, text.data);
      continue;
    }
    for (size_t k = 0; err == 0 && k < it->taken; k++)
      err = gpujit__strvec_push(out, opts[it->at + k]);
  }
  gpujit__buf_free(&text);
  gpujit__nvrtc_opts_free(&parsed);
  return err;
}

const gpujit__nvrtc_opt *gpujit__nvrtc_opts_find(const gpujit__nvrtc_opts *o, gpujit__opt_role role)
{
  for (size_t i = 0; i < o->count; i++)
    if (o->items[i].role == role)
      return &o->items[i];
  return NULL;
}
