/* The text form of a dependency record, one line per dependency: the form of shared groups before
 * the binary one ("gpujit-deps-2"), still read so that an old group is checked by content and
 * written again, and the form people read. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/fs.h"
#include "cache/records/deps.h"

/* ---- text form: one line per dependency ---------------------------------------------------
 * The form of groups before the binary one ("gpujit-deps-2", still read) and the form people read.
 * It has no device number and no `once`: read back, no stat is trusted (a lookup decides by
 * content, and writes the group again in the binary form) and no identity compared (a group of
 * this form is named by what it records without them). `f SIZE INO MTIME CTIME XXH3 PATH` (INO MTIME CTIME "-" when the stat cannot be
 * trusted), behind `g SAME ` where files were one file; `a INO MTIME CTIME NAMES DIR` (the stamp
 * "-" likewise); `n PATH` for a path that must stay no regular file. NAMES and paths escape '%',
 * blanks and control characters as %XX; an empty NAMES is "-". */

static int put_escaped(gpujit__buf *b, const char *s)
{
  int err = 0;
  if (!*s)
    return gpujit__buf_puts(b, "-");
  for (; *s && err == 0; s++) {
    unsigned char c = (unsigned char)*s;
    err = c == '%' || c <= ' ' || c == 0x7f ? gpujit__buf_printf(b, "%%%02x", c) : gpujit__buf_put(b, s, 1);
  }
  return err;
}

int gpujit__deps_to_text(const gpujit__deps *d, gpujit__buf *out)
{
  int err = 0;
  for (size_t i = 0; i < d->count && err == 0; i++) {
    const gpujit__dep *e = &d->items[i];
    if (e->err || e->env)
      return gpujit__error(GPUJIT_EINVAL, "%s: not a record of a shared group", e->rel);
    if (e->nofile) {
      if ((err = gpujit__buf_puts(out, "n ")) == 0 && (err = put_escaped(out, e->rel)) == 0)
        err = gpujit__buf_puts(out, "\n");
      continue;
    }
    if (!e->absent && e->same && (err = gpujit__buf_printf(out, "g %u ", e->same)) < 0)
      break;
    if (e->absent)
      err = e->trusted ? gpujit__buf_printf(out, "a %llu %lld %lld ", (unsigned long long)e->ino,
                                            (long long)e->mtime_ns, (long long)e->ctime_ns)
                       : gpujit__buf_puts(out, "a - - - ");
    else if (e->trusted)
      err = gpujit__buf_printf(out, "f %llu %llu %lld %lld %s ", (unsigned long long)e->size,
                               (unsigned long long)e->ino, (long long)e->mtime_ns, (long long)e->ctime_ns, e->hash);
    else
      err = gpujit__buf_printf(out, "f %llu - - - %s ", (unsigned long long)e->size, e->hash);
    if (err == 0 && e->absent && (err = put_escaped(out, e->names ? e->names : "")) == 0)
      err = gpujit__buf_puts(out, " ");
    if (err == 0 && (err = put_escaped(out, e->rel)) == 0)
      err = gpujit__buf_puts(out, "\n");
  }
  return err;
}

/* The next space- (or line-) terminated token of [*p, end), unescaped into a new string. */
static char *take(const char **p, const char *end, bool last)
{
  const char *s = *p, *stop = memchr(s, last ? '\n' : ' ', (size_t)(end - s));
  char *out, *o;
  if (!stop || stop == s || (!last && memchr(s, '\n', (size_t)(stop - s))))
    return NULL;
  if (!(out = o = malloc((size_t)(stop - s) + 1)))
    return NULL;
  if (!memchr(s, '%', (size_t)(stop - s))) { /* nothing escaped: most paths */
    memcpy(out, s, (size_t)(stop - s));
    out[stop - s] = '\0';
    *p = stop + 1;
    return out;
  }
  for (const char *q = s; q < stop; q++) {
    if (*q != '%') {
      *o++ = *q;
      continue;
    }
    /* [s, end) need not end in a NUL: the two digits are read here, never through sscanf */
    unsigned long long v;
    if (stop - q < 3 || gpujit__hex_span(q + 1, q + 3, &v) < 0 || v == 0) {
      free(out);
      return NULL;
    }
    *o++ = (char)v;
    q += 2;
  }
  *o = '\0';
  *p = stop + 1;
  return out;
}

/* A decimal field, or "-" (`*dash` set): read in place (every lookup reads ~2,500 of them). */
static bool take_num(const char **p, const char *end, long long *v, bool *dash)
{
  const char *s = *p, *q = s;
  bool neg = q < end && *q == '-';
  unsigned long long n = 0, limit = neg ? (unsigned long long)LLONG_MAX + 1 : (unsigned long long)LLONG_MAX;
  *dash = false;
  q += neg;
  if (neg && q < end && *q == ' ') { /* "-": no value */
    *dash = true;
    *p = q + 1;
    return true;
  }
  if (q >= end || !isdigit((unsigned char)*q))
    return false;
  /* at most 19 digits, which cannot overflow 64 bits: no division per digit */
  for (const char *first = q; q < end && isdigit((unsigned char)*q); q++) {
    if (q - first == 19)
      return false; /* out of range */
    n = n * 10 + (unsigned)(*q - '0');
  }
  if (n > limit)
    return false; /* out of range */
  if (q >= end || *q != ' ')
    return false;
  *v = neg ? (long long)(0 - n) : (long long)n;
  *p = q + 1;
  return true;
}

/* Whether the `n` bytes at `s` are all lower-case hex digits (read within them alone). */
static bool lower_hex(const char *s, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
      return false;
  return true;
}

static int parse_line(gpujit__deps *out, const char **p, const char *end)
{
  long long size = 0, ino = 0, m = 0, c = 0;
  long long same = 0;
  bool d0 = false, d1 = false, d2 = false, d3 = false, file;
  char *hash = NULL, *names = NULL, *path = NULL;
  gpujit__dep *e;
  int err = GPUJIT_ECORRUPT;
  if (end - *p >= 2 && (*p)[0] == 'n' && (*p)[1] == ' ') { /* n PATH: no regular file */
    *p += 2;
    if (!(path = take(p, end, true)) || !(e = gpujit__deps_push(out, path, NULL))) {
      free(path);
      return GPUJIT_ECORRUPT;
    }
    e->nofile = true;
    free(path);
    return 0;
  }
  if (end - *p >= 2 && (*p)[0] == 'g' && (*p)[1] == ' ') { /* g SAME, then a file's line */
    *p += 2;
    if (!take_num(p, end, &same, &d0) || d0 || same < 1 || same > 1000000000 || end - *p < 1 || **p != 'f')
      return GPUJIT_ECORRUPT;
  }
  file = **p == 'f';
  if ((**p != 'f' && **p != 'a') || end - *p < 2 || (*p)[1] != ' ')
    return GPUJIT_ECORRUPT;
  *p += 2;
  if ((file && (!take_num(p, end, &size, &d0) || d0 || size < 0)) || !take_num(p, end, &ino, &d1) ||
      !take_num(p, end, &m, &d2) || !take_num(p, end, &c, &d3) || d1 != d2 || d2 != d3)
    return GPUJIT_ECORRUPT;
  if (file && (end - *p < 33 || (*p)[32] != ' ' || !lower_hex(*p, 32)))
    goto done;
  if (file)
    hash = (char *)*p, *p += 33;
  if (!file && !(names = take(p, end, false)))
    goto done;
  if (!(path = take(p, end, true)) || strcmp(path, "-") == 0 || !(e = gpujit__deps_push(out, path, NULL)))
    goto done;
  e->absent = !file;
  e->same = (unsigned)same;
  e->trusted = false; /* the stat has no device: it cannot stand for the file */
  e->size = (uint64_t)size;
  e->ino = (uint64_t)ino;
  e->mtime_ns = m;
  e->ctime_ns = c;
  if (file) {
    memcpy(e->hash, hash, 32);
    e->hash[32] = '\0';
  }
  else if (strcmp(names, "-") != 0) {
    e->names = names;
    names = NULL;
  }
  err = 0;
done:
  free(names);
  free(path);
  return err;
}

int gpujit__deps_from_text(gpujit__deps *out, const char *text, size_t len)
{
  const char *p = text, *end = text + len;
  memset(out, 0, sizeof(*out));
  while (p < end)
    if (parse_line(out, &p, end) < 0) {
      gpujit__deps_free(out);
      return GPUJIT_ECORRUPT;
    }
  return 0;
}
