/* Parsing Nsight Compute's --page source CSV into a hot-spot table by CUDA line or by SASS instruction. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpujit/ncu.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/fs.h"

typedef struct hot_line {
  gpujit_ncu_line pub;
  char *file, *function, *source, *address;
} hot_line;

struct gpujit_ncu_hotspots {
  hot_line *lines;
  size_t count, cap;
  char *metric;
  gpujit_ncu_rows rows;
};

#define REMAKE "make one with \"" GPUJIT_NCU_SOURCE_COMMAND "\" (or give the .ncu-rep itself)"

/*
 * Split one CSV row of quoted fields. ncu writes every field quoted and separated by ",", and
 * does not escape quotes inside fields, so the separator sequence (quote, comma, quote) is the
 * only reliable boundary. The row's outer quotes are stripped; fields are NUL-terminated in place.
 */
static size_t split_row(char *row, char **fields, size_t max)
{
  size_t n = 0, len = strlen(row);
  char *p, *sep;
  while (len && (row[len - 1] == '\r' || row[len - 1] == ' '))
    row[--len] = '\0';
  if (len > 2 && row[len - 1] == ',' && row[len - 2] == '"') /* ncu ends some rows with a comma */
    row[--len] = '\0';
  if (len < 2 || row[0] != '"' || row[len - 1] != '"')
    return 0;
  row[len - 1] = '\0';
  p = row + 1;
  while (n < max) {
    fields[n++] = p;
    if (!(sep = strstr(p, "\",\"")))
      break;
    *sep = '\0';
    p = sep + 3;
  }
  return n;
}

static int add_line(gpujit_ncu_hotspots *h, const char *file, const char *fn, int line, const char *src, double v,
                    const char *address)
{
  hot_line *l = gpujit__grow(h->lines, &h->cap, h->count, sizeof(*l), 64);
  if (!l)
    return GPUJIT_ENOMEM;
  h->lines = l;
  l = &h->lines[h->count];
  memset(l, 0, sizeof(*l));
  l->file = gpujit__strdup(file);
  l->function = gpujit__strdup(fn);
  l->source = gpujit__strdup(src);
  l->address = address ? gpujit__strdup(address) : NULL;
  if (!l->file || !l->function || !l->source || (address && !l->address)) {
    free(l->file);
    free(l->function);
    free(l->source);
    free(l->address);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  l->pub.line = line;
  l->pub.value = v;
  h->count++;
  return 0;
}

static int cmp_lines(const void *a, const void *b)
{
  const hot_line *x = a, *y = b;
  if (x->pub.value != y->pub.value)
    return x->pub.value > y->pub.value ? -1 : 1;
  return x->pub.line - y->pub.line;
}

void gpujit_ncu_hotspots_free(gpujit_ncu_hotspots *h)
{
  if (!h)
    return;
  for (size_t i = 0; i < h->count; i++) {
    free(h->lines[i].file);
    free(h->lines[i].function);
    free(h->lines[i].source);
    free(h->lines[i].address);
  }
  free(h->lines);
  free(h->metric);
  free(h);
}

#define MAX_FIELDS 512

/* The reading of one CSV: what the rows so far said. */
typedef struct csv_state {
  gpujit_ncu_hotspots *h;
  const char *metric, *function;          /* the column wanted; only this function's rows (or all) */
  char file[4096], fn[1024], first[64];   /* the current file and function; the first field read */
  size_t ncols, rowno, headers, bare;     /* columns of the current header (0: none); headers seen */
  int col_src, col_metric;
  bool by_instruction;                    /* a SASS view: rows by address */
} csv_state;

/* Rows that name what follows them: the kernel, the file, the function. */
static bool context_row(csv_state *st, char **fields, size_t n)
{
  if (n >= 2 && !strcmp(fields[0], "Kernel Name")) /* the SASS view names its kernel so */
    snprintf(st->fn, sizeof(st->fn), "%s", fields[1]);
  else if (n == 2 && (!strcmp(fields[0], "File Path") || !strcmp(fields[0], "File Name")))
    snprintf(st->file, sizeof(st->file), "%s", fields[1]);
  else if (n == 2 && !strcmp(fields[0], "Function Name"))
    snprintf(st->fn, sizeof(st->fn), "%s", fields[1]);
  else
    return false;
  return true;
}

/* The header: the first "Source" is the CUDA (or SASS) text; metric columns follow. */
static int header_row(csv_state *st, char **fields, size_t n)
{
  st->ncols = n;
  st->col_src = -1;
  st->col_metric = -1;
  st->by_instruction = !strcmp(fields[0], "Address");
  for (size_t i = 1; i < n; i++) {
    if (st->col_src < 0 && !strcmp(fields[i], "Source"))
      st->col_src = (int)i;
    if (st->col_metric < 0 && !strcmp(fields[i], st->metric))
      st->col_metric = (int)i;
  }
  if (st->col_src < 0)
    return gpujit__error(GPUJIT_EPARSE, "row %zu: the header has no \"Source\" column", st->rowno);
  if (n == 2) { /* "Line No","Source": source text alone (--print-source cuda or ptx) */
    st->bare++;
    st->ncols = 0;
    return 0;
  }
  if (st->col_metric < 0)
    return gpujit__error(GPUJIT_EPARSE, "no metric column \"%s\" in the CSV (was it profiled with --set full?)",
                         st->metric);
  st->headers++;
  return 0;
}

/* A value of the metric column: "-" and blanks are no value on this line. */
static double value_of(const char *field)
{
  char *end;
  double v = strtod(field, &end);
  return end == field || *end ? 0 : v;
}

/* A row of the SASS view: one instruction at its address. */
static int instruction_row(csv_state *st, char **fields, size_t n)
{
  double v;
  if (strncmp(fields[0], "0x", 2) != 0 || n <= (size_t)st->col_metric)
    return 0; /* "..." rows and what is not an instruction */
  v = value_of(fields[st->col_metric]);
  if (st->function && strcmp(st->function, st->fn) != 0)
    return 0;
  return add_line(st->h, "", st->fn, 0, fields[st->col_src], v, fields[0]);
}

/* A row of the CUDA view: one source line. */
static int line_row(csv_state *st, char **fields, size_t n)
{
  char *end, src[8192];
  long line = strtol(fields[0], &end, 10);
  size_t extra = n > st->ncols ? n - st->ncols : 0;
  double v;
  if (*end || line <= 0)
    return 0;
  if (n < st->ncols && n <= (size_t)st->col_metric)
    return gpujit__error(GPUJIT_EPARSE, "row %zu: %zu fields, the header has %zu", st->rowno, n, st->ncols);
  /* Source text with an unescaped "," sequence inside: give the extra fields back to it. */
  src[0] = '\0';
  for (size_t i = 0; i <= extra; i++) {
    if (i)
      strncat(src, "\",\"", sizeof(src) - strlen(src) - 1);
    strncat(src, fields[st->col_src + i], sizeof(src) - strlen(src) - 1);
  }
  v = value_of(fields[st->col_metric + extra]);
  if (st->function && strcmp(st->function, st->fn) != 0)
    return 0;
  return add_line(st->h, st->file, st->fn, (int)line, src, v, NULL);
}

static int parse_row(csv_state *st, char *row)
{
  char *fields[MAX_FIELDS];
  size_t n;
  st->rowno++;
  if (!(n = split_row(row, fields, MAX_FIELDS)))
    return 0; /* blank lines, ncu's ==PROF== notes */
  if (!st->first[0])
    snprintf(st->first, sizeof(st->first), "%s", fields[0]);
  if (context_row(st, fields, n))
    return 0;
  if (!strcmp(fields[0], "Line No") || !strcmp(fields[0], "#") || !strcmp(fields[0], "Address"))
    return header_row(st, fields, n);
  if (!st->ncols || !fields[0][0])
    return 0; /* SASS rows of the CUDA view have no line number */
  return st->by_instruction ? instruction_row(st, fields, n) : line_row(st, fields, n);
}

/* The whole CSV read: refused when it had no header with metrics; else sorted, with shares. */
static int finish(csv_state *st)
{
  gpujit_ncu_hotspots *h = st->h;
  if (!st->headers && st->bare)
    return gpujit__error(GPUJIT_EPARSE,
                         "this export has source text but no metrics (--print-source cuda or ptx leaves them out): " REMAKE);
  if (!st->headers)
    return gpujit__error(GPUJIT_EPARSE, "not ncu's --page source CSV%s: " REMAKE,
                         !strcmp(st->first, "ID") ? " (this is a --page details or --page raw export)" : "");
  h->rows = st->by_instruction ? GPUJIT_NCU_BY_INSTRUCTION : GPUJIT_NCU_BY_LINE;
  if (h->count) /* qsort takes no NULL base, even for nothing */
    qsort(h->lines, h->count, sizeof(*h->lines), cmp_lines);
  /* Shares within each function. */
  for (size_t i = 0; i < h->count; i++) {
    double total = 0;
    for (size_t k = 0; k < h->count; k++)
      if (!strcmp(h->lines[k].function, h->lines[i].function))
        total += h->lines[k].pub.value;
    h->lines[i].pub.share = total > 0 ? h->lines[i].pub.value / total : 0;
  }
  for (size_t i = 0; i < h->count; i++) {
    h->lines[i].pub.file = h->lines[i].file;
    h->lines[i].pub.function = h->lines[i].function;
    h->lines[i].pub.source = h->lines[i].source;
    h->lines[i].pub.address = h->lines[i].address;
  }
  return 0;
}

int gpujit_ncu_hotspots_parse(gpujit_ncu_hotspots **out, const char *csv, size_t len, const char *metric,
                              const char *function)
{
  csv_state *st;
  char *text = NULL, *row, *save = NULL;
  int err = 0;

  if (!out || !csv)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_ncu_hotspots_parse: NULL argument");
  *out = NULL;
  if (!metric)
    metric = GPUJIT_NCU_DEFAULT_METRIC;
  if (!(st = calloc(1, sizeof(*st))) || !(st->h = calloc(1, sizeof(*st->h))) || !(text = gpujit__strndup(csv, len)) ||
      !(st->h->metric = gpujit__strdup(metric))) {
    if (st)
      gpujit_ncu_hotspots_free(st->h);
    free(st);
    free(text);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  st->metric = metric, st->function = function, st->col_src = -1, st->col_metric = -1;
  for (row = strtok_r(text, "\n", &save); row && err == 0; row = strtok_r(NULL, "\n", &save))
    err = parse_row(st, row);
  if (err == 0)
    err = finish(st);
  free(text);
  if (err < 0)
    gpujit_ncu_hotspots_free(st->h);
  else
    *out = st->h;
  free(st);
  return err < 0 ? err : 0;
}

size_t gpujit_ncu_hotspots_count(const gpujit_ncu_hotspots *h) { return h ? h->count : 0; }

const gpujit_ncu_line *gpujit_ncu_hotspots_line(const gpujit_ncu_hotspots *h, size_t i)
{
  return h && i < h->count ? &h->lines[i].pub : NULL;
}

const char *gpujit_ncu_hotspots_metric(const gpujit_ncu_hotspots *h) { return h ? h->metric : NULL; }

gpujit_ncu_rows gpujit_ncu_hotspots_rows(const gpujit_ncu_hotspots *h) { return h ? h->rows : GPUJIT_NCU_BY_LINE; }
