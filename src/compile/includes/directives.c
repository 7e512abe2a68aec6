/* A file's directive lines as the preprocessor reads them (translation phases 1 to 3), so the
 * include scan sees `/ * * / #include`, `#include/ * * /"h"`, `%:include`, a directive split by
 * backslash-newlines and, where trigraphs are on, `??=include` as NVRTC does. */
#define _GNU_SOURCE
#include <ctype.h>
#include <string.h>

#include "base/error.h"
#include "compile/includes/directives.h"

/* Phases 1 and 2: trigraphs (when on) and backslash-newlines (also before "\r\n") removed. */
static int splice(gpujit__buf *out, const char *p, size_t n, bool trigraphs)
{
  static const char from[] = "=/'()!<>-", to[] = "#\\^[]|{}~";
  if (gpujit__buf_reserve(out, n + 1) < 0)
    return GPUJIT_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    char c = p[i];
    const char *t;
    if (trigraphs && c == '?' && i + 2 < n && p[i + 1] == '?' && p[i + 2] && (t = strchr(from, p[i + 2]))) {
      c = to[t - from];
      i += 2;
    }
    if (c == '\\' && i + 1 < n && p[i + 1] == '\n') {
      i++;
      continue;
    }
    if (c == '\\' && i + 2 < n && p[i + 1] == '\r' && p[i + 2] == '\n') {
      i += 2;
      continue;
    }
    out->data[out->len++] = c;
  }
  out->data[out->len] = '\0';
  return 0;
}

static bool ident_char(char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* A ' at p separates digits only inside a pp-number (1'000, 0x1'ff, 1.5e+3'0): the token it
 * ends began with a digit, or '.' and a digit. After an identifier (`case'x'`, `u8'a'`) it opens
 * a character literal. */
static bool digit_separator(const char *s, const char *p)
{
  const char *q = p;
  while (q > s && (ident_char(q[-1]) || q[-1] == '.' || q[-1] == '\'' ||
                   ((q[-1] == '+' || q[-1] == '-') && q - 1 > s && strchr("eEpP", q[-2]))))
    q--;
  if (q == p)
    return false;
  return (*q >= '0' && *q <= '9') || (*q == '.' && q + 1 < p && q[1] >= '0' && q[1] <= '9');
}

/* A raw string literal's opening at p (R" after an optional encoding prefix): its delimiter. */
static bool raw_open(const char *s, const char *p, const char *end, const char **delim, size_t *dlen)
{
  const char *q = p, *d;
  if (p > s && ident_char(p[-1]))
    return false;
  if (q < end && *q == 'u' && q + 1 < end && q[1] == '8')
    q += 2;
  else if (q < end && (*q == 'u' || *q == 'U' || *q == 'L'))
    q++;
  if (q + 1 >= end || q[0] != 'R' || q[1] != '"')
    return false;
  d = q + 2;
  for (q = d; q < end && q - d <= 16 && *q != '('; q++)
    if (*q == ' ' || *q == '\\' || *q == ')' || *q == '\n')
      return false;
  if (q >= end || *q != '(')
    return false;
  *delim = d;
  *dlen = (size_t)(q - d);
  return true;
}

/* Inside a block comment at p: past its end on this line (`*comment` cleared), else eol. */
static const char *comment_end(const char *p, const char *eol, bool *comment)
{
  const char *e = memmem(p, (size_t)(eol - p), "*/", 2);
  if (!e)
    return eol;
  *comment = false;
  return e + 2;
}

/* Phase 3's reading of the spliced text, line by line. */
typedef struct dir_scan {
  gpujit__buf *out;
  const char *s, *end; /* the whole text */
  bool comment;        /* inside a block comment */
  bool *unsure;        /* set where the reading may have gone wrong */
} dir_scan;

/* The line's start: blank space and comments, then '#' or "%:" make it a directive. */
static bool line_start(dir_scan *d, const char **p, const char *eol)
{
  while (*p < eol) {
    const char *q = *p;
    if (d->comment) {
      *p = comment_end(q, eol, &d->comment);
    } else if (*q == ' ' || *q == '\t' || *q == '\f' || *q == '\v' || *q == '\r') {
      (*p)++;
    } else if (*q == '/' && q + 1 < eol && q[1] == '*') {
      d->comment = true;
      *p += 2;
    } else {
      return *q == '#' || (*q == '%' && q + 1 < eol && q[1] == ':');
    }
  }
  return false;
}

/* A raw string literal at *p, whose body (lines included) ends at )delim": past it. When it ran
 * over lines, none of them is a directive: their newlines are kept and *eol moves to the end of
 * the line it ends on. */
static int raw_literal(dir_scan *d, const char **p, const char **eol, const char *delim, size_t dlen)
{
  const char *q = (const char *)memchr(*p, '(', (size_t)(d->end - *p)) + 1, *end = d->end;
  for (;;) {
    const char *close = memchr(q, ')', (size_t)(end - q));
    if (!close) {
      q = end;
      *d->unsure = true;
      break;
    }
    if ((size_t)(end - close) > dlen + 1 && memcmp(close + 1, delim, dlen) == 0 && close[1 + dlen] == '"') {
      q = close + dlen + 2;
      break;
    }
    q = close + 1;
  }
  if (q > *eol) {
    for (const char *l = *eol; l && l < q; l = memchr(l + 1, '\n', (size_t)(q - l - 1)))
      if (gpujit__buf_puts(d->out, "\n") < 0)
        return GPUJIT_ENOMEM;
    *eol = memchr(q, '\n', (size_t)(end - q));
    if (!*eol)
      *eol = end;
  }
  *p = q;
  return 0;
}

/* A string or character literal at *p: it ends on its line (one left open is a misreading, or
 * prose in an #if 0). Copied when the line is a directive. */
static int quoted(dir_scan *d, const char **p, const char *eol, bool directive)
{
  const char *q = *p + 1;
  char c = **p;
  while (q < eol && *q != c)
    q += (*q == '\\' && q + 1 < eol) ? 2 : 1;
  if (q >= eol)
    *d->unsure = true;
  q = q < eol ? q + 1 : eol;
  if (directive && gpujit__buf_put(d->out, *p, (size_t)(q - *p)) < 0)
    return GPUJIT_ENOMEM;
  *p = q;
  return 0;
}

/* The rest of the line from *p: literals end with it; a block comment may run on. A directive's
 * text is copied, each comment as one space. */
static int line_rest(dir_scan *d, const char **p, const char **eol, bool directive)
{
  while (*p < *eol) {
    const char *q = *p, *delim;
    size_t dlen;
    char c = *q;
    int err = 0;
    if (d->comment) {
      *p = comment_end(q, *eol, &d->comment);
      if (!d->comment && directive && gpujit__buf_puts(d->out, " ") < 0)
        return GPUJIT_ENOMEM;
    } else if (c == '/' && q + 1 < *eol && q[1] == '/') {
      *p = *eol;
    } else if (c == '/' && q + 1 < *eol && q[1] == '*') {
      d->comment = true;
      *p += 2;
    } else if (!directive && raw_open(d->s, q, d->end, &delim, &dlen)) {
      err = raw_literal(d, p, eol, delim, dlen);
    } else if (c == '"' || (c == '\'' && !digit_separator(d->s, q))) {
      err = quoted(d, p, *eol, directive); /* a ' inside a number separates digits */
    } else {
      if (directive && gpujit__buf_put(d->out, (c == '\t' || c == '\f' || c == '\v') ? " " : q, 1) < 0)
        return GPUJIT_ENOMEM;
      (*p)++;
    }
    if (err < 0)
      return err;
  }
  return 0;
}

/* Phase 3 over spliced text: each directive line copied with its comments as one space.
 * `*unsure` is set where the reading may have gone wrong: a literal left open at a line's end,
 * a comment or raw string left open at the text's end. */
static int directives(gpujit__buf *out, const char *s, size_t n, bool *unsure)
{
  dir_scan d = {out, s, s + n, false, unsure};
  const char *p = s;
  bool carried = false;
  int err;
  while (p < d.end) {
    const char *eol = memchr(p, '\n', (size_t)(d.end - p));
    bool directive = carried;
    if (!eol)
      eol = d.end;
    /* A directive whose line ended in a comment goes on after the comment (one space). */
    if (!carried && (directive = line_start(&d, &p, eol))) {
      if (gpujit__buf_puts(out, "#") < 0)
        return GPUJIT_ENOMEM;
      p += *p == '#' ? 1 : 2;
    }
    if ((err = line_rest(&d, &p, &eol, directive)) < 0)
      return err;
    carried = directive && d.comment;
    if (!carried && gpujit__buf_puts(out, "\n") < 0)
      return GPUJIT_ENOMEM;
    p = eol + 1;
  }
  if (d.comment)
    *unsure = true;
  return 0;
}

int gpujit__directive_lines(gpujit__buf *out, const char *data, size_t size, bool *unsure)
{
  gpujit__buf spliced = {0};
  bool ignored = false;
  int err = 0;
  if (!unsure)
    unsure = &ignored;
  *unsure = false;
  out->len = 0;
  if (gpujit__buf_reserve(out, 1) < 0)
    return GPUJIT_ENOMEM;
  out->data[0] = '\0';
  /* Trigraphs are on in C++11 and C++14 and off in C++17 and later: both readings. */
  for (int tri = 0; err == 0 && tri < 2; tri++) {
    if (tri && !memmem(data, size, "??", 2))
      break;
    spliced.len = 0;
    if ((err = splice(&spliced, data, size, tri)) == 0)
      err = directives(out, spliced.data, spliced.len, unsure);
  }
  gpujit__buf_free(&spliced);
  return err;
}

/* ---- reading a directive ----------------------------------------------------------------- */

bool gpujit__inc_ident_start(char c) { return isalpha((unsigned char)c) || c == '_'; }
void gpujit__inc_ident(const char *p, const char *end, char *out, size_t size)
{
  size_t n = 0;
  while (p + n < end && gpujit__inc_ident_char(p[n]) && n < size - 1) {
    out[n] = p[n];
    n++;
  }
  out[n] = '\0';
}

bool gpujit__inc_ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

const char *gpujit__inc_skip_ws(const char *p, const char *end)
{
  while (p < end && (*p == ' ' || *p == '\t'))
    p++;
  return p;
}

/* A header-name token at p ("x" or <x>): copied to out; NULL when there is none. */
const char *gpujit__inc_header_name(const char *p, const char *end, char *out, size_t size, bool *quoted)
{
  char close;
  const char *e;
  if (p >= end || (*p != '"' && *p != '<'))
    return NULL;
  close = *p == '"' ? '"' : '>';
  if (!(e = memchr(p + 1, close, (size_t)(end - p - 1))) || (size_t)(e - p - 1) >= size)
    return NULL;
  memcpy(out, p + 1, (size_t)(e - p - 1));
  out[e - p - 1] = '\0';
  *quoted = close == '"';
  return e + 1;
}
