/* The lean pass: PTX read as top-level statements, the module-scope variables nothing reachable
 * uses removed. Anything the reader does not know leaves the text as it is. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/strset.h"
#include "compile/image/ptx.h"

/* ---- tokens ---- */

typedef enum { T_END, T_IDENT, T_DIRECTIVE, T_STRING, T_NUMBER, T_PUNCT } tok_kind;

typedef struct lexer {
  const char *s;
  size_t len, pos;
  bool bad; /* an unterminated comment or string */
} lexer;

typedef struct token {
  tok_kind kind;
  size_t start, len;
  bool newline_before; /* a line ended between the previous token and this one */
} token;

static bool ident_start(char c) { return isalpha((unsigned char)c) || c == '_' || c == '$' || c == '%'; }
static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_' || c == '$'; }

static token next_token(lexer *lx)
{
  token t = {T_END, 0, 0, false};
  const char *s = lx->s;
  while (lx->pos < lx->len) {
    char c = s[lx->pos];
    if (c == '\n') {
      t.newline_before = true;
      lx->pos++;
    } else if (isspace((unsigned char)c)) {
      lx->pos++;
    } else if (c == '/' && lx->pos + 1 < lx->len && s[lx->pos + 1] == '/') {
      while (lx->pos < lx->len && s[lx->pos] != '\n')
        lx->pos++;
    } else if (c == '/' && lx->pos + 1 < lx->len && s[lx->pos + 1] == '*') {
      const char *end = NULL;
      for (size_t i = lx->pos + 2; i + 1 < lx->len && !end; i++)
        if (s[i] == '*' && s[i + 1] == '/')
          end = s + i;
      if (!end) {
        lx->bad = true;
        lx->pos = lx->len;
        return t;
      }
      for (const char *p = s + lx->pos; p < end; p++)
        t.newline_before |= *p == '\n';
      lx->pos = (size_t)(end - s) + 2;
    } else {
      break;
    }
  }
  if (lx->pos >= lx->len)
    return t;
  t.start = lx->pos;
  char c = s[lx->pos];
  if (c == '"') {
    size_t i = lx->pos + 1;
    while (i < lx->len && s[i] != '"' && s[i] != '\n')
      i += s[i] == '\\' ? 2 : 1;
    if (i >= lx->len || s[i] != '"') {
      lx->bad = true;
      lx->pos = lx->len;
      t.kind = T_END;
      return t;
    }
    t.kind = T_STRING;
    lx->pos = i + 1;
  } else if (c == '.' && lx->pos + 1 < lx->len && ident_start(s[lx->pos + 1])) {
    t.kind = T_DIRECTIVE;
    lx->pos++;
    while (lx->pos < lx->len && ident_char(s[lx->pos]))
      lx->pos++;
  } else if (ident_start(c)) {
    t.kind = T_IDENT;
    while (++lx->pos < lx->len && ident_char(s[lx->pos]))
      ;
  } else if (isdigit((unsigned char)c)) {
    t.kind = T_NUMBER;
    while (++lx->pos < lx->len && (isalnum((unsigned char)s[lx->pos]) || s[lx->pos] == '.'))
      ;
  } else {
    t.kind = T_PUNCT;
    lx->pos++;
  }
  t.len = lx->pos - t.start;
  return t;
}

static bool tok_is(const lexer *lx, const token *t, const char *word)
{
  size_t n = strlen(word);
  return t->len == n && memcmp(lx->s + t->start, word, n) == 0;
}

/* ---- statements ---- */

enum { K_OTHER, K_VAR, K_FUNC, K_SECTION };

typedef struct stmt {
  size_t start, end; /* bytes of the statement */
  size_t refs;       /* where the names it uses begin (a variable's initialiser) */
  size_t name, name_len;
  int kind;
  bool candidate; /* a .global/.const variable without linkage: may go */
} stmt;

typedef struct parsed {
  stmt *items;
  size_t count, cap;
  char note[200];
} parsed;

static int refuse(parsed *p, const char *fmt, ...) GPUJIT__PRINTF(2, 3);
static int refuse(parsed *p, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->note, sizeof(p->note), fmt, ap);
  va_end(ap);
  return 1;
}

/* Directives that end with their line. */
static bool line_directive(const lexer *lx, const token *t)
{
  return tok_is(lx, t, ".version") || tok_is(lx, t, ".target") || tok_is(lx, t, ".address_size") ||
         tok_is(lx, t, ".file");
}

/* What a statement's tokens have said so far. */
typedef struct stmt_scan {
  bool linkage, attribute, candidate_space, other_space, seen_eq;
  bool after_head; /* past a '(' / '{' / '=' at depth 0: directives no longer classify */
  int depth, kinds;
} stmt_scan;

/* A line directive (.version, .target, ...): the statement is its line. */
static int line_stmt(lexer *lx, token first, stmt *st)
{
  st->refs = first.start;
  for (token t = next_token(lx); t.kind != T_END && !t.newline_before; t = next_token(lx))
    st->end = t.start + t.len;
  if (!st->end)
    st->end = first.start + first.len;
  lx->pos = st->end;
  return 0;
}

/* A directive of the statement's head: its linkage, kind or state space. 0, or 1 refused. */
static int head_directive(parsed *p, const lexer *lx, const token *t, const token *first, stmt *st, stmt_scan *sc)
{
  if (tok_is(lx, t, ".visible") || tok_is(lx, t, ".extern") || tok_is(lx, t, ".weak") || tok_is(lx, t, ".common"))
    sc->linkage = true;
  else if (tok_is(lx, t, ".entry") || tok_is(lx, t, ".func"))
    st->kind = K_FUNC, sc->kinds++;
  else if (tok_is(lx, t, ".global") || tok_is(lx, t, ".const"))
    sc->candidate_space = true, st->kind = K_VAR, sc->kinds++;
  else if (tok_is(lx, t, ".shared") || tok_is(lx, t, ".local") || tok_is(lx, t, ".tex") ||
           tok_is(lx, t, ".texref") || tok_is(lx, t, ".surfref") || tok_is(lx, t, ".samplerref"))
    sc->other_space = true, st->kind = K_VAR, sc->kinds += tok_is(lx, t, ".shared") || tok_is(lx, t, ".local");
  else if (tok_is(lx, t, ".section"))
    st->kind = K_SECTION, sc->kinds++;
  else if (tok_is(lx, t, ".pragma"))
    sc->kinds++;
  else if (tok_is(lx, t, ".attribute"))
    sc->attribute = true;
  else if (tok_is(lx, t, ".alias"))
    return refuse(p, "'.alias' at %zu", t->start);
  else if (t->start == first->start)
    return refuse(p, "unknown directive '%.*s'", (int)(t->len > 40 ? 40 : t->len), lx->s + t->start);
  return 0;
}

/* A function's body, from its '{' to the matching '}': the statement's end. 0, or 1 refused. */
static int skip_body(parsed *p, lexer *lx, stmt *st)
{
  int d = 1;
  while (d > 0) {
    token b = next_token(lx);
    if (b.kind == T_END)
      return refuse(p, "a body without its '}'");
    if (b.kind == T_PUNCT && lx->s[b.start] == '{')
      d++;
    else if (b.kind == T_PUNCT && lx->s[b.start] == '}')
      d--;
    st->end = b.start + 1;
  }
  return 0;
}

/* A punctuation token: nesting, an initialiser, the statement's end (*done). 0, or 1 refused. */
static int punct(parsed *p, lexer *lx, const token *t, stmt *st, stmt_scan *sc, bool *done)
{
  char c = lx->s[t->start];
  if (c == '(' || c == '[' || c == '{') {
    if (sc->depth == 0 && c == '{' && !sc->seen_eq && st->kind != K_VAR) { /* a body */
      *done = true;
      return skip_body(p, lx, st);
    }
    if (sc->depth == 0 && (c == '{' || st->kind == K_FUNC)) /* not .attribute( */
      sc->after_head = true;
    sc->depth++;
  } else if (c == ')' || c == ']' || c == '}') {
    if (--sc->depth < 0)
      return refuse(p, "unbalanced '%c' at %zu", c, t->start);
  } else if (c == '=' && sc->depth == 0) {
    sc->seen_eq = sc->after_head = true;
  } else if (c == ',' && sc->depth == 0 && st->kind == K_VAR && !sc->seen_eq) {
    return refuse(p, "several variables in one declaration at %zu", t->start);
  } else if (c == ';' && sc->depth == 0) {
    st->end = t->start + 1;
    *done = true;
  }
  return 0;
}

/* One statement from `first` on; 0, 1 (refused: p->note says why) or an error. */
static int parse_stmt(parsed *p, lexer *lx, token first, stmt *st)
{
  stmt_scan sc = {0};
  bool done = false;
  int r;
  memset(st, 0, sizeof(*st));
  st->start = first.start;
  st->kind = K_OTHER;
  if (line_directive(lx, &first))
    return line_stmt(lx, first, st);
  for (token t = first;; t = next_token(lx)) {
    if (t.kind == T_END)
      return lx->bad ? refuse(p, "an unterminated comment or string") : refuse(p, "a statement without its end");
    if (t.kind == T_DIRECTIVE && sc.depth == 0 && !sc.after_head) {
      if ((r = head_directive(p, lx, &t, &first, st, &sc)) != 0)
        return r;
    } else if (t.kind == T_IDENT && sc.depth == 0 && !sc.after_head && !st->name_len && st->kind != K_SECTION) {
      st->name = t.start;
      st->name_len = t.len;
      st->refs = t.start + t.len;
    } else if (t.kind == T_PUNCT && (r = punct(p, lx, &t, st, &sc, &done)) != 0) {
      return r;
    }
    if (done) /* no token read past the statement's end */
      break;
  }
  if (sc.kinds != 1 && !(sc.kinds == 0 && sc.other_space))
    return refuse(p, "a statement the pass does not know at %zu", st->start);
  if (st->kind == K_VAR && !st->name_len)
    return refuse(p, "a variable without a name at %zu", st->start);
  st->candidate = sc.candidate_space && !sc.other_space && !sc.linkage && !sc.attribute;
  if (st->kind != K_VAR)
    st->refs = st->start;
  return 0;
}

/* 0 parsed, 1 refused (p->note), or an error. */
static int parse(parsed *p, const char *text, size_t len)
{
  lexer lx = {text, len, 0, false};
  for (;;) {
    token t = next_token(&lx);
    stmt st;
    int r;
    if (t.kind == T_END)
      return lx.bad ? refuse(p, "an unterminated comment or string") : 0;
    if (t.kind != T_DIRECTIVE)
      return refuse(p, "'%.*s' at the top level", (int)(t.len > 40 ? 40 : t.len), text + t.start);
    if ((r = parse_stmt(p, &lx, t, &st)) != 0)
      return r;
    lx.pos = st.end;
    if (p->count == p->cap) {
      stmt *n = gpujit__grow(p->items, &p->cap, p->count, sizeof(*n), 64);
      if (!n)
        return gpujit__error(GPUJIT_ENOMEM, "out of memory");
      p->items = n;
    }
    p->items[p->count++] = st;
  }
}

/* ---- reachability ---- */

typedef struct graph {
  parsed *p;
  const char *text;
  char **names;      /* per statement: its variable's name, or NULL */
  gpujit__strset by_name;
  bool *marked;
  size_t *stack, top;
} graph;

static void mark(graph *g, size_t i)
{
  if (!g->marked[i]) {
    g->marked[i] = true;
    g->stack[g->top++] = i;
  }
}

/* Every identifier in the bytes [from, to) that names a variable marks it. */
static void mark_uses(graph *g, size_t from, size_t to)
{
  lexer lx = {g->text, to, from, false};
  char small[256];
  for (token t = next_token(&lx); t.kind != T_END; t = next_token(&lx)) {
    size_t i;
    if (t.kind != T_IDENT || t.len >= sizeof(small))
      continue; /* no variable has a name this long: they were all looked up when named */
    memcpy(small, g->text + t.start, t.len);
    small[t.len] = '\0';
    if (gpujit__strset_find(&g->by_name, small, &i))
      mark(g, i);
  }
}

static void propagate(graph *g)
{
  while (g->top) {
    size_t i = g->stack[--g->top];
    mark_uses(g, g->p->items[i].refs, g->p->items[i].end);
  }
}

static int emit(gpujit__buf *out, const char *text, size_t len, const parsed *p, const bool *drop)
{
  size_t from = 0;
  int err;
  for (size_t i = 0; i < p->count; i++) {
    size_t s = p->items[i].start, e = p->items[i].end;
    if (!drop[i])
      continue;
    while (s > from && (text[s - 1] == ' ' || text[s - 1] == '\t')) /* the line it stood on */
      s--;
    while (e < len && (text[e] == ' ' || text[e] == '\t' || text[e] == '\r'))
      e++;
    if (e < len && text[e] == '\n')
      e++;
    if ((err = gpujit__buf_put(out, text + from, s - from)) < 0)
      return err;
    from = e;
  }
  return gpujit__buf_put(out, text + from, len - from);
}

int gpujit__ptx_lean(gpujit__buf *out, const char *ptx, size_t len, const gpujit__lean_policy *policy,
                     gpujit__lean_stats *stats, gpujit__strvec *removed)
{
  parsed p = {0};
  graph g = {&p, ptx, NULL, {0}, NULL, NULL, 0};
  const char **unreached = NULL;
  size_t *unreached_at = NULL, n_unreached = 0;
  bool *keep = NULL;
  int err = 0, r;

  memset(stats, 0, sizeof(*stats));
  stats->ptx_before = len;
  out->len = 0;
  if ((r = parse(&p, ptx, len)) != 0) {
    if (r < 0) {
      err = r;
      goto done;
    }
    snprintf(stats->note, sizeof(stats->note), "PTX kept whole: %s", p.note);
    err = gpujit__buf_put(out, ptx, len);
    goto done;
  }
  g.names = calloc(p.count + 1, sizeof(*g.names));
  g.marked = calloc(p.count + 1, sizeof(*g.marked));
  g.stack = calloc(p.count + 1, sizeof(*g.stack));
  if (!g.names || !g.marked || !g.stack) {
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < p.count; i++) {
    stmt *s = &p.items[i];
    if (!s->candidate)
      continue;
    stats->variables++;
    if (!(g.names[i] = gpujit__strndup(ptx + s->name, s->name_len))) {
      err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
      goto done;
    }
    if (gpujit__strset_find(&g.by_name, g.names[i], NULL)) {
      snprintf(stats->note, sizeof(stats->note), "PTX kept whole: '%s' is declared twice", g.names[i]);
      err = gpujit__buf_put(out, ptx, len);
      goto done;
    }
    if ((err = gpujit__strset_put(&g.by_name, g.names[i], i)) < 0)
      goto done;
  }
  /* Roots: every function, section and directive, every variable that may not go. */
  for (size_t i = 0; i < p.count; i++)
    if (!p.items[i].candidate)
      mark_uses(&g, p.items[i].refs, p.items[i].end);
  for (size_t k = 0; policy && k < policy->keep_count; k++) {
    size_t i;
    if (policy->keep[k] && gpujit__strset_find(&g.by_name, policy->keep[k], &i))
      mark(&g, i);
  }
  propagate(&g);
  unreached = calloc(p.count + 1, sizeof(*unreached));
  unreached_at = calloc(p.count + 1, sizeof(*unreached_at));
  keep = calloc(p.count + 1, sizeof(*keep));
  if (!unreached || !unreached_at || !keep) {
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < p.count; i++)
    if (p.items[i].candidate && !g.marked[i]) {
      unreached_at[n_unreached] = i;
      unreached[n_unreached++] = g.names[i];
    }
  if (n_unreached) {
    if (!policy || !policy->user)
      for (size_t k = 0; k < n_unreached; k++)
        keep[k] = true;
    else if ((err = policy->user(unreached, n_unreached, keep, policy->payload)) < 0)
      goto done;
    for (size_t k = 0; k < n_unreached; k++)
      if (keep[k]) {
        stats->kept_user++;
        mark(&g, unreached_at[k]);
      }
    propagate(&g);
  }
  for (size_t i = 0; i < p.count; i++) {
    keep[i] = p.items[i].candidate && !g.marked[i]; /* now: drop */
    if (keep[i]) {
      stats->removed++;
      if (removed && (err = gpujit__strvec_push(removed, g.names[i])) < 0)
        goto done;
    }
  }
  err = emit(out, ptx, len, &p, keep);
done:
  if (err == 0)
    stats->ptx_after = out->len;
  for (size_t i = 0; g.names && i < p.count; i++)
    free(g.names[i]);
  free(g.names);
  free(g.marked);
  free(g.stack);
  gpujit__strset_free(&g.by_name);
  free(unreached);
  free(unreached_at);
  free(keep);
  free(p.items);
  return err;
}
