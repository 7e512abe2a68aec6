/* The object-like #defines (and -D) a computed `#include MACRO` may name, and what a macro
 * stands for through them. */
#define _GNU_SOURCE
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "compile/includes/directives.h"
#include "compile/includes/includes.h"
#include "compile/includes/scan.h"

/* Every header name MACRO stands for, through object-like #defines and -D (depth-limited). */
int gpujit__inc_macro_names(const gpujit__includes *inc, const char *macro, gpujit__strvec *out, int depth)
{
  int found = 0;
  if (depth > 8)
    return 0;
  for (size_t i = 0; i < inc->macro_names.count; i++) {
    const char *v = inc->macro_values.items[i];
    if (strcmp(inc->macro_names.items[i], macro) != 0)
      continue;
    if (*v == '"' || *v == '<') {
      if (gpujit__strvec_push(out, v) < 0)
        return -1;
      found++;
    } else if (gpujit__inc_ident_start(*v)) {
      int n = gpujit__inc_macro_names(inc, v, out, depth + 1);
      if (n < 0)
        return n;
      found += n;
    }
  }
  return found;
}

/* `#define NAME value` with an object-like NAME and a header name or identifier for value. */
int gpujit__inc_note_define(gpujit__includes *inc, const char *p, const char *eol)
{
  const char *n0, *v0, *v1;
  char name[256], value[PATH_MAX];
  p = gpujit__inc_skip_ws(p, eol);
  if (p >= eol || !gpujit__inc_ident_start(*p))
    return 0;
  for (n0 = p; p < eol && gpujit__inc_ident_char(*p); p++)
    ;
  if (p < eol && *p == '(') /* function-like: not a header name */
    return 0;
  v0 = gpujit__inc_skip_ws(p, eol);
  for (v1 = eol; v1 > v0 && isspace((unsigned char)v1[-1]); v1--)
    ;
  if (v0 >= v1 || (*v0 != '"' && *v0 != '<' && !gpujit__inc_ident_start(*v0)) || (size_t)(p - n0) >= sizeof(name) ||
      (size_t)(v1 - v0) >= sizeof(value))
    return 0;
  memcpy(name, n0, (size_t)(p - n0));
  name[p - n0] = '\0';
  memcpy(value, v0, (size_t)(v1 - v0));
  value[v1 - v0] = '\0';
  if (gpujit__strvec_push(&inc->macro_names, name) < 0 || gpujit__strvec_push(&inc->macro_values, value) < 0)
    return GPUJIT_ENOMEM;
  return 0;
}

/* -D NAME=value: a header name a computed include may use. */
int gpujit__inc_note_option_define(gpujit__includes *inc, const char *def)
{
  const char *eq = strchr(def, '=');
  char line[PATH_MAX + 300];
  if (!eq)
    return 0;
  snprintf(line, sizeof(line), "%.*s %s", (int)(eq - def), def, eq + 1);
  return gpujit__inc_note_define(inc, line, line + strlen(line));
}

