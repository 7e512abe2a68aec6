/* The scope of a PTX variable's name: the source names of its Itanium mangling, outside template
 * arguments. Only what a variable's name can hold is read; anything else is refused. */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "compile/image/ptx.h"

typedef struct reader {
  const char *p;
  int depth; /* recursion guard */
} reader;

static bool skip_type(reader *r);
static bool skip_args(reader *r);

/* <source-name> ::= <length> <identifier>; the identifier in *id, its length in *n. */
static bool source_name(reader *r, const char **id, size_t *n)
{
  size_t len = 0;
  if (!isdigit((unsigned char)*r->p))
    return false;
  while (isdigit((unsigned char)*r->p)) {
    len = len * 10 + (size_t)(*r->p++ - '0');
    if (len > 4096)
      return false;
  }
  if (strnlen(r->p, len) < len)
    return false;
  *id = r->p;
  *n = len;
  r->p += len;
  return true;
}

/* S_, S<base36>_, St, Sa, Sb, Ss, Si, So, Sd */
static bool substitution(reader *r)
{
  if (*r->p != 'S')
    return false;
  r->p++;
  if (strchr("tabsiod", *r->p) && *r->p) {
    r->p++;
    return true;
  }
  while (isdigit((unsigned char)*r->p) || isupper((unsigned char)*r->p))
    r->p++;
  return *r->p++ == '_';
}

/* T_ or T<n>_ */
static bool template_param(reader *r)
{
  r->p++;
  while (isdigit((unsigned char)*r->p))
    r->p++;
  return *r->p++ == '_';
}

/* N … E inside a type: every part skipped. */
static bool skip_nested(reader *r)
{
  const char *id;
  size_t n;
  r->p++;
  while (*r->p == 'K' || *r->p == 'V' || *r->p == 'r')
    r->p++;
  while (*r->p && *r->p != 'E') {
    if (isdigit((unsigned char)*r->p) ? !source_name(r, &id, &n)
        : *r->p == 'S'                ? !substitution(r)
        : *r->p == 'I'                ? !skip_args(r)
        : *r->p == 'T'                ? !template_param(r)
                                      : true)
      return false;
  }
  return *r->p++ == 'E';
}

static bool skip_type(reader *r)
{
  const char *id;
  size_t n;
  if (++r->depth > 64)
    return false;
  bool ok = true;
  char c = *r->p;
  if (c && strchr("vwbcahstijlmxynofdegz", c)) {
    r->p++;
  } else if (c == 'D') { /* Dn, Dh, Df, Dd, De, Ds, Di, Da, Dc, Du */
    r->p++;
    ok = *r->p && strchr("nhfdesiacu", *r->p) && r->p++;
  } else if (c && strchr("PROKVr", c)) {
    r->p++;
    ok = skip_type(r);
  } else if (c == 'N') {
    ok = skip_nested(r);
  } else if (isdigit((unsigned char)c)) {
    ok = source_name(r, &id, &n) && (*r->p != 'I' || skip_args(r));
  } else if (c == 'S') {
    ok = substitution(r) && (*r->p != 'I' || skip_args(r));
  } else if (c == 'T') {
    ok = template_param(r) && (*r->p != 'I' || skip_args(r));
  } else if (c == 'A') { /* A <n> _ <type> */
    r->p++;
    while (isdigit((unsigned char)*r->p))
      r->p++;
    ok = *r->p++ == '_' && skip_type(r);
  } else if (c == 'M') {
    r->p++;
    ok = skip_type(r) && skip_type(r);
  } else {
    ok = false; /* function types, expressions, vendor types: not read */
  }
  r->depth--;
  return ok;
}

/* L <type> <value> E, the value a number: 'n' for negative, lowercase hex for floats. */
static bool skip_literal(reader *r)
{
  r->p++;
  if (r->p[0] == '_' && r->p[1] == 'Z')
    return false; /* an external name as an argument */
  if (!skip_type(r))
    return false;
  if (*r->p == 'n')
    r->p++;
  while (isdigit((unsigned char)*r->p) || (*r->p >= 'a' && *r->p <= 'f')) /* floats: lowercase hex */
    r->p++;
  return *r->p++ == 'E';
}

static bool skip_arg(reader *r)
{
  if (*r->p == 'L')
    return skip_literal(r);
  if (*r->p == 'J') { /* a pack */
    r->p++;
    while (*r->p && *r->p != 'E')
      if (!skip_arg(r))
        return false;
    return *r->p++ == 'E';
  }
  return skip_type(r);
}

static bool skip_args(reader *r)
{
  if (*r->p != 'I' || ++r->depth > 64)
    return false;
  r->p++;
  while (*r->p && *r->p != 'E')
    if (!skip_arg(r))
      return false;
  r->depth--;
  return *r->p++ == 'E';
}

/* Anonymous namespaces and NVCC's file-internal prefix say nothing of who declared the name. */
static bool anonymous(const char *id, size_t n)
{
  return (n >= 12 && memcmp(id, "_GLOBAL__N_", 11) == 0) || (n >= 10 && memcmp(id, "_INTERNAL_", 10) == 0);
}

static int push(gpujit__strvec *out, const char *id, size_t n)
{
  char *s;
  int err;
  if (anonymous(id, n))
    return 0;
  if (!(s = gpujit__strndup(id, n)))
    return GPUJIT_ENOMEM;
  err = gpujit__strvec_push(out, s);
  free(s);
  return err;
}

int gpujit__ptx_name_scope(gpujit__strvec *out, const char *name)
{
  reader r = {name, 0};
  const char *id;
  size_t n;
  int err;
  if (strncmp(name, "_Z", 2) != 0)
    return push(out, name, strlen(name)) < 0 ? gpujit__error(GPUJIT_ENOMEM, "out of memory") : 0;
  r.p += 2;
  if (*r.p == 'N') { /* N [qualifiers] <prefix>… <name> E */
    r.p++;
    while (*r.p == 'K' || *r.p == 'V' || *r.p == 'r')
      r.p++;
    while (*r.p && *r.p != 'E') {
      if (isdigit((unsigned char)*r.p)) {
        if (!source_name(&r, &id, &n))
          goto unknown;
        if ((err = push(out, id, n)) < 0)
          return gpujit__error(err, "out of memory");
      } else if (*r.p == 'S' && r.p[1] == 't') {
        r.p += 2; /* std:: */
        if ((err = push(out, "std", 3)) < 0)
          return gpujit__error(err, "out of memory");
      } else if (*r.p == 'S' ? !substitution(&r) : *r.p == 'I' ? !skip_args(&r) : true) {
        goto unknown;
      }
    }
    if (*r.p++ != 'E' || *r.p)
      goto unknown;
    return 0;
  }
  if (r.p[0] == 'S' && r.p[1] == 't') {
    r.p += 2;
    if ((err = push(out, "std", 3)) < 0)
      return gpujit__error(err, "out of memory");
  }
  if (!source_name(&r, &id, &n))
    goto unknown;
  if ((err = push(out, id, n)) < 0)
    return gpujit__error(err, "out of memory");
  if (*r.p == 'I' && !skip_args(&r))
    goto unknown;
  if (*r.p)
    goto unknown;
  return 0;
unknown:
  return gpujit__error(GPUJIT_EPARSE, "mangled name '%s' not understood", name);
}
