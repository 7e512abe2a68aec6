/* Kernel parameter types: read from a kernel's Itanium-mangled symbol (C++ kernels carry their
 * parameter types in it) or from a signature the user writes ("float, const float *, int"). */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "compile/image/params.h"

#define MAX_SUBS 128
#define MAX_TARGS 64

typedef struct reader {
  const char *p;
  gpujit_param_type subs[MAX_SUBS]; /* substitution candidates, in the order the mangling makes them */
  int nsubs;
  gpujit_param_type targs[MAX_TARGS]; /* the function's template arguments, for T_ */
  int ntargs;
  int depth;
  bool bad;
} reader;

static gpujit_param_type type(reader *r);

/* Step over `c`, never past the end. */
static bool expect(reader *r, char c)
{
  if (*r->p != c)
    return false;
  r->p++;
  return true;
}

static void push_sub(reader *r, gpujit_param_type t)
{
  if (r->nsubs < MAX_SUBS)
    r->subs[r->nsubs++] = t;
  else
    r->bad = true;
}

static gpujit_param_type builtin(char c)
{
  switch (c) {
  case 'b': return GPUJIT_PARAM_BOOL;
  case 'c': case 'a': return GPUJIT_PARAM_I8; /* char is signed on the targets CUDA has */
  case 'h': return GPUJIT_PARAM_U8;
  case 's': return GPUJIT_PARAM_I16;
  case 't': return GPUJIT_PARAM_U16;
  case 'i': case 'w': return GPUJIT_PARAM_I32;
  case 'j': return GPUJIT_PARAM_U32;
  case 'l': case 'x': return GPUJIT_PARAM_I64; /* long is 64 bits on Linux */
  case 'm': case 'y': return GPUJIT_PARAM_U64;
  case 'f': return GPUJIT_PARAM_F32;
  case 'd': return GPUJIT_PARAM_F64;
  case 'n': case 'o': case 'e': case 'g': return GPUJIT_PARAM_RECORD; /* 128-bit and long double: bytes only */
  default: return GPUJIT_PARAM_UNKNOWN;
  }
}

/* <source-name> ::= <length> <identifier>; the type it names when it is one CUDA defines. */
static bool source_name(reader *r, gpujit_param_type *t)
{
  size_t len = 0;
  const char *id;
  while (isdigit((unsigned char)*r->p)) {
    len = len * 10 + (size_t)(*r->p++ - '0');
    if (len > 4096)
      return false;
  }
  if (!len || strnlen(r->p, len) < len)
    return false;
  id = r->p;
  r->p += len;
  *t = GPUJIT_PARAM_RECORD;
  if (len == 6 && !memcmp(id, "__half", 6))
    *t = GPUJIT_PARAM_F16;
  else if (len == 13 && !memcmp(id, "__nv_bfloat16", 13))
    *t = GPUJIT_PARAM_BF16;
  return true;
}

/* S_ S<base36>_ (an earlier candidate), or St/Sa/Sb/Ss/Si/So/Sd (std:: abbreviations). */
static gpujit_param_type substitution(reader *r, bool *is_std)
{
  unsigned long idx = 0;
  *is_std = false;
  r->p++;
  if (*r->p && strchr("tabsiod", *r->p)) {
    *is_std = *r->p == 't';
    r->p++;
    return GPUJIT_PARAM_RECORD;
  }
  if (*r->p != '_') {
    while (isdigit((unsigned char)*r->p) || isupper((unsigned char)*r->p)) {
      idx = idx * 36 + (unsigned long)(isdigit((unsigned char)*r->p) ? *r->p - '0' : *r->p - 'A' + 10);
      r->p++;
      if (idx > MAX_SUBS)
        break;
    }
    idx++;
  }
  if (!expect(r, '_') || idx >= (unsigned long)r->nsubs) {
    r->bad = true;
    return GPUJIT_PARAM_UNKNOWN;
  }
  return r->subs[idx];
}

/* T_ T<n>_ : the function's template argument n. */
static gpujit_param_type template_param(reader *r)
{
  unsigned long idx = 0;
  r->p++;
  if (*r->p != '_') {
    while (isdigit((unsigned char)*r->p))
      idx = idx * 10 + (unsigned long)(*r->p++ - '0');
    idx++;
  }
  if (!expect(r, '_') || idx >= (unsigned long)r->ntargs) {
    r->bad = true;
    return GPUJIT_PARAM_UNKNOWN;
  }
  return r->targs[idx];
}

/* I <template-arg>+ E; when `save`, the arguments become the function's (for T_). */
static void template_args(reader *r, bool save)
{
  gpujit_param_type args[MAX_TARGS];
  int n = 0;
  r->p++;
  while (!r->bad && *r->p && *r->p != 'E') {
    gpujit_param_type t = GPUJIT_PARAM_UNKNOWN;
    if (*r->p == 'L') { /* a literal: L <type> <value> E, or L _Z <encoding> E */
      const char *end = strchr(r->p, 'E');
      if (!end || r->p[1] == '_') {
        r->bad = true;
        return;
      }
      r->p = end + 1;
    } else if (*r->p == 'X' || *r->p == 'J') { /* expressions and packs: not read */
      r->bad = true;
      return;
    } else {
      t = type(r);
    }
    if (n < MAX_TARGS)
      args[n++] = t;
  }
  if (*r->p != 'E') {
    r->bad = true;
    return;
  }
  r->p++;
  if (save) {
    memcpy(r->targs, args, (size_t)n * sizeof(args[0]));
    r->ntargs = n;
  }
}

/* N [CV] <prefix>... E as a type: every prefix is a candidate; the type is the last one's. */
static gpujit_param_type nested_type(reader *r)
{
  gpujit_param_type t = GPUJIT_PARAM_RECORD;
  r->p++;
  while (*r->p == 'r' || *r->p == 'V' || *r->p == 'K')
    r->p++;
  while (!r->bad && *r->p && *r->p != 'E') {
    bool is_std;
    if (isdigit((unsigned char)*r->p)) {
      if (!source_name(r, &t))
        r->bad = true;
    } else if (*r->p == 'S') {
      /* an earlier candidate is not made again; St is none by itself (std::name follows) */
      t = substitution(r, &is_std);
      continue;
    } else if (*r->p == 'I') {
      template_args(r, false);
      t = GPUJIT_PARAM_RECORD;
    } else {
      r->bad = true;
    }
    push_sub(r, t);
  }
  if (*r->p != 'E')
    r->bad = true;
  else
    r->p++;
  return t;
}

/* A template name followed by its arguments is an instance, a candidate of its own (a class). */
static gpujit_param_type instance(reader *r, gpujit_param_type t)
{
  if (*r->p != 'I')
    return t;
  template_args(r, false);
  push_sub(r, GPUJIT_PARAM_RECORD);
  return GPUJIT_PARAM_RECORD;
}

static gpujit_param_type type(reader *r)
{
  gpujit_param_type t;
  bool is_std;
  if (++r->depth > 64) {
    r->bad = true;
    return GPUJIT_PARAM_UNKNOWN;
  }
  switch (*r->p) {
  case 'r': case 'V': case 'K': /* a qualified type is a candidate of its own */
    r->p++;
    t = type(r);
    push_sub(r, t);
    break;
  case 'P': case 'R': case 'O':
    r->p++;
    type(r);
    t = GPUJIT_PARAM_POINTER;
    push_sub(r, t);
    break;
  case 'S':
    t = substitution(r, &is_std);
    if (is_std) { /* std::name, a candidate */
      if (!source_name(r, &t))
        r->bad = true;
      t = GPUJIT_PARAM_RECORD;
      push_sub(r, t);
    }
    t = instance(r, t);
    break;
  case 'T':
    t = template_param(r);
    push_sub(r, t);
    t = instance(r, t);
    break;
  case 'N':
    t = nested_type(r);
    break;
  case 'D':
    r->p++;
    if (*r->p == 'h') { /* IEEE half */
      r->p++;
      t = GPUJIT_PARAM_F16;
    } else if (*r->p == 'n') { /* nullptr_t */
      r->p++;
      t = GPUJIT_PARAM_POINTER;
    } else if (*r->p == 's' || *r->p == 'i' || *r->p == 'u') {
      t = *r->p == 's' ? GPUJIT_PARAM_U16 : *r->p == 'i' ? GPUJIT_PARAM_U32 : GPUJIT_PARAM_U8;
      r->p++;
    } else if (!strncmp(r->p, "F16_", 4)) {
      r->p += 4;
      t = GPUJIT_PARAM_F16;
    } else if (*r->p == 'v') { /* Dv <n> _ <type>: a vector */
      r->p++;
      while (isdigit((unsigned char)*r->p))
        r->p++;
      if (!expect(r, '_'))
        r->bad = true;
      type(r);
      t = GPUJIT_PARAM_RECORD;
      push_sub(r, t);
    } else {
      r->bad = true;
      t = GPUJIT_PARAM_UNKNOWN;
    }
    break;
  default:
    if (isdigit((unsigned char)*r->p)) { /* a class, maybe a template's instance */
      if (!source_name(r, &t))
        r->bad = true;
      push_sub(r, t);
      t = instance(r, t);
    } else if ((t = builtin(*r->p)) != GPUJIT_PARAM_UNKNOWN || *r->p == 'v') {
      r->p++;
    } else {
      r->bad = true;
    }
  }
  r->depth--;
  return t;
}

/* The function's name; true when it ends in template arguments (then a return type follows). */
static bool function_name(reader *r)
{
  gpujit_param_type t;
  bool is_std, templated = false;
  if (*r->p == 'N') {
    r->p++;
    while (*r->p == 'r' || *r->p == 'V' || *r->p == 'K' || *r->p == 'R' || *r->p == 'O')
      r->p++;
    while (!r->bad && *r->p && *r->p != 'E') {
      if (isdigit((unsigned char)*r->p)) {
        if (!source_name(r, &t))
          r->bad = true;
        /* a prefix is a candidate; the function's own name is not, unless template args follow */
        if (*r->p != 'E')
          push_sub(r, GPUJIT_PARAM_RECORD);
        templated = false;
      } else if (*r->p == 'S') {
        substitution(r, &is_std);
        templated = false;
      } else if (*r->p == 'I') {
        template_args(r, true);
        templated = true;
        if (*r->p != 'E')
          push_sub(r, GPUJIT_PARAM_RECORD);
      } else {
        r->bad = true;
      }
    }
    if (*r->p != 'E')
      r->bad = true;
    else
      r->p++;
    return templated;
  }
  if (*r->p == 'S' && r->p[1] == 't')
    r->p += 2;
  if (!source_name(r, &t)) {
    r->bad = true;
    return false;
  }
  if (*r->p == 'I') {
    push_sub(r, GPUJIT_PARAM_RECORD); /* the template's name */
    template_args(r, true);
    return true;
  }
  return false;
}

int gpujit__params_demangle(const char *symbol, gpujit_param_type *types, int max, int *count)
{
  reader r;
  int n = 0;
  *count = -1;
  if (!symbol || strncmp(symbol, "_Z", 2) != 0)
    return 0; /* extern "C": nothing in the name */
  memset(&r, 0, sizeof(r));
  r.p = symbol + 2;
  if (function_name(&r) && !r.bad)
    type(&r); /* a function template's mangling holds its return type */
  if (!r.bad && r.p[0] == 'v' && (r.p[1] == '\0' || r.p[1] == '.')) {
    *count = 0;
    return 0;
  }
  while (!r.bad && *r.p && *r.p != '.') {
    gpujit_param_type t = type(&r);
    if (n < max)
      types[n] = t;
    n++;
  }
  if (r.bad || n > max)
    return gpujit__error(GPUJIT_EPARSE, "kernel symbol '%s': parameter types not understood", symbol);
  *count = n;
  return 0;
}

/* ---- written signatures ---------------------------------------------------------------- */

static const struct {
  const char *words; /* the base type's words, in the order tokens are sorted below */
  gpujit_param_type type;
} names[] = {
    {"bool", GPUJIT_PARAM_BOOL},
    {"char", GPUJIT_PARAM_I8}, {"char signed", GPUJIT_PARAM_I8}, {"int8_t", GPUJIT_PARAM_I8},
    {"char unsigned", GPUJIT_PARAM_U8}, {"uint8_t", GPUJIT_PARAM_U8},
    {"short", GPUJIT_PARAM_I16}, {"int short", GPUJIT_PARAM_I16}, {"short signed", GPUJIT_PARAM_I16},
    {"int16_t", GPUJIT_PARAM_I16},
    {"short unsigned", GPUJIT_PARAM_U16}, {"int short unsigned", GPUJIT_PARAM_U16}, {"uint16_t", GPUJIT_PARAM_U16},
    {"int", GPUJIT_PARAM_I32}, {"signed", GPUJIT_PARAM_I32}, {"int signed", GPUJIT_PARAM_I32},
    {"int32_t", GPUJIT_PARAM_I32},
    {"unsigned", GPUJIT_PARAM_U32}, {"int unsigned", GPUJIT_PARAM_U32}, {"uint32_t", GPUJIT_PARAM_U32},
    {"long", GPUJIT_PARAM_I64}, {"int long", GPUJIT_PARAM_I64}, {"long long", GPUJIT_PARAM_I64},
    {"int long long", GPUJIT_PARAM_I64}, {"long signed", GPUJIT_PARAM_I64}, {"long long signed", GPUJIT_PARAM_I64},
    {"int64_t", GPUJIT_PARAM_I64}, {"ptrdiff_t", GPUJIT_PARAM_I64}, {"ssize_t", GPUJIT_PARAM_I64},
    {"long unsigned", GPUJIT_PARAM_U64}, {"int long unsigned", GPUJIT_PARAM_U64},
    {"long long unsigned", GPUJIT_PARAM_U64}, {"int long long unsigned", GPUJIT_PARAM_U64},
    {"uint64_t", GPUJIT_PARAM_U64}, {"size_t", GPUJIT_PARAM_U64},
    {"float", GPUJIT_PARAM_F32}, {"double", GPUJIT_PARAM_F64},
    {"__half", GPUJIT_PARAM_F16}, {"half", GPUJIT_PARAM_F16},
    {"__nv_bfloat16", GPUJIT_PARAM_BF16}, {"bfloat16", GPUJIT_PARAM_BF16},
};

static bool qualifier(const char *w)
{
  static const char *const q[] = {"const", "volatile", "restrict", "__restrict__", "__restrict", "struct"};
  for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++)
    if (!strcmp(w, q[i]))
      return true;
  return false;
}

static int cmp_words(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* One parameter's text (between commas) → its type. */
static int one_param(const char *s, size_t len, int index, gpujit_param_type *out)
{
  char buf[256], *words[16], joined[256] = "";
  size_t nw = 0;
  bool pointer = false;
  char *p, *save = NULL;
  if (len >= sizeof(buf))
    return gpujit__error(GPUJIT_EINVAL, "signature: parameter %d is too long", index + 1);
  memcpy(buf, s, len);
  buf[len] = '\0';
  for (p = buf; *p; p++)
    if (*p == '*' || *p == '&') {
      pointer = true;
      *p = ' ';
    } else if (!isalnum((unsigned char)*p) && *p != '_' && !isspace((unsigned char)*p)) {
      return gpujit__error(GPUJIT_EINVAL, "signature: parameter %d ('%.*s'): '%c' is not part of a C type", index + 1,
                           (int)len, s, *p);
    }
  for (p = strtok_r(buf, " \t\n", &save); p; p = strtok_r(NULL, " \t\n", &save))
    if (!qualifier(p) && nw < sizeof(words) / sizeof(words[0]))
      words[nw++] = p;
  if (nw == 0)
    return gpujit__error(GPUJIT_EINVAL, "signature: parameter %d is empty", index + 1);
  for (int named = 0; named < 2; named++) { /* the words as written, then without a trailing name */
    size_t n = nw - (size_t)named;
    char *sorted[16];
    if (n == 0)
      break;
    memcpy(sorted, words, n * sizeof(words[0]));
    qsort(sorted, n, sizeof(sorted[0]), cmp_words);
    joined[0] = '\0';
    for (size_t i = 0; i < n; i++) {
      if (i)
        strcat(joined, " ");
      strncat(joined, sorted[i], sizeof(joined) - strlen(joined) - 2);
    }
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
      if (!strcmp(joined, names[i].words)) {
        *out = pointer ? GPUJIT_PARAM_POINTER : names[i].type;
        return 0;
      }
    if (pointer && n == 1) /* T * for any T: a pointer */
      return (*out = GPUJIT_PARAM_POINTER), 0;
  }
  return gpujit__error(GPUJIT_EINVAL,
                       "signature: parameter %d ('%.*s') is not a type gpujit can pass: use a pointer (T *), bool, "
                       "a C integer or <stdint.h> type, float, double, __half or __nv_bfloat16",
                       index + 1, (int)len, s);
}

int gpujit__params_parse(const char *sig, gpujit_param_type *types, int max, int *count)
{
  const char *s = sig, *end;
  int n = 0, err;
  *count = 0;
  while (isspace((unsigned char)*s))
    s++;
  if (!*s || !strcmp(s, "void") || !strncmp(s, "void ", 5))
    return 0;
  for (;; s = end + 1) {
    gpujit_param_type t;
    end = strchr(s, ',');
    if (!end)
      end = s + strlen(s);
    if ((err = one_param(s, (size_t)(end - s), n, &t)) < 0)
      return err;
    if (n == max)
      return gpujit__error(GPUJIT_EINVAL, "signature: more than %d parameters", max);
    types[n++] = t;
    if (!*end)
      break;
  }
  *count = n;
  return 0;
}

size_t gpujit__param_type_size(gpujit_param_type t)
{
  switch (t) {
  case GPUJIT_PARAM_BOOL: case GPUJIT_PARAM_I8: case GPUJIT_PARAM_U8: return 1;
  case GPUJIT_PARAM_I16: case GPUJIT_PARAM_U16: case GPUJIT_PARAM_F16: case GPUJIT_PARAM_BF16: return 2;
  case GPUJIT_PARAM_I32: case GPUJIT_PARAM_U32: case GPUJIT_PARAM_F32: return 4;
  case GPUJIT_PARAM_I64: case GPUJIT_PARAM_U64: case GPUJIT_PARAM_F64: case GPUJIT_PARAM_POINTER: return 8;
  default: return 0;
  }
}
