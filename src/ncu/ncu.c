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

int gpujit_ncu_hotspots_parse(gpujit_ncu_hotspots **out, const char *csv, size_t len, const char *metric,
                              const char *function)
{
  gpujit_ncu_hotspots *h;
  char *text, *row, *save = NULL, *fields[MAX_FIELDS];
  char file[4096] = "", fn[1024] = "", first[64] = "";
  size_t ncols = 0, rowno = 0, headers = 0, bare = 0;
  int col_src = -1, col_metric = -1, err = 0;
  bool by_instruction = false;

  if (!out || !csv)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_ncu_hotspots_parse: NULL argument");
  *out = NULL;
  if (!metric)
    metric = GPUJIT_NCU_DEFAULT_METRIC;
  if (!(h = calloc(1, sizeof(*h))) || !(text = gpujit__strndup(csv, len)) || !(h->metric = gpujit__strdup(metric))) {
    gpujit_ncu_hotspots_free(h);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  for (row = strtok_r(text, "\n", &save); row; row = strtok_r(NULL, "\n", &save)) {
    size_t n;
    rowno++;
    if (!(n = split_row(row, fields, MAX_FIELDS)))
      continue; /* blank lines, ncu's ==PROF== notes */
    if (!first[0])
      snprintf(first, sizeof(first), "%s", fields[0]);
    if (n >= 2 && !strcmp(fields[0], "Kernel Name")) { /* the SASS view names its kernel so */
      snprintf(fn, sizeof(fn), "%s", fields[1]);
      continue;
    }
    if (n == 2 && (!strcmp(fields[0], "File Path") || !strcmp(fields[0], "File Name"))) {
      snprintf(file, sizeof(file), "%s", fields[1]);
      continue;
    }
    if (n == 2 && !strcmp(fields[0], "Function Name")) {
      snprintf(fn, sizeof(fn), "%s", fields[1]);
      continue;
    }
    if (!strcmp(fields[0], "Line No") || !strcmp(fields[0], "#") || !strcmp(fields[0], "Address")) {
      /* The header: the first "Source" is the CUDA (or SASS) text; metric columns follow. */
      ncols = n;
      col_src = -1;
      col_metric = -1;
      by_instruction = !strcmp(fields[0], "Address");
      for (size_t i = 1; i < n; i++) {
        if (col_src < 0 && !strcmp(fields[i], "Source"))
          col_src = (int)i;
        if (col_metric < 0 && !strcmp(fields[i], metric))
          col_metric = (int)i;
      }
      if (col_src < 0) {
        err = gpujit__error(GPUJIT_EPARSE, "row %zu: the header has no \"Source\" column", rowno);
        goto done;
      }
      if (n == 2) { /* "Line No","Source": source text alone (--print-source cuda or ptx) */
        bare++;
        ncols = 0;
        continue;
      }
      if (col_metric < 0) {
        err = gpujit__error(GPUJIT_EPARSE, "no metric column \"%s\" in the CSV (was it profiled with --set full?)",
                            metric);
        goto done;
      }
      headers++;
      continue;
    }
    if (!ncols || !fields[0][0])
      continue; /* SASS rows of the CUDA view have no line number */
    if (by_instruction) {
      char *end;
      double v;
      if (strncmp(fields[0], "0x", 2) != 0 || n <= (size_t)col_metric)
        continue; /* "..." rows and what is not an instruction */
      v = strtod(fields[col_metric], &end);
      if (end == fields[col_metric] || *end)
        v = 0;
      if (function && strcmp(function, fn) != 0)
        continue;
      if ((err = add_line(h, "", fn, 0, fields[col_src], v, fields[0])) < 0)
        goto done;
      continue;
    }
    {
      char *end, src[8192];
      long line = strtol(fields[0], &end, 10);
      size_t extra = n > ncols ? n - ncols : 0;
      double v;
      if (*end || line <= 0)
        continue;
      if (n < ncols && n <= (size_t)col_metric) {
        err = gpujit__error(GPUJIT_EPARSE, "row %zu: %zu fields, the header has %zu", rowno, n, ncols);
        goto done;
      }
      /* Source text with an unescaped "," sequence inside: give the extra fields back to it. */
      src[0] = '\0';
      for (size_t i = 0; i <= extra; i++) {
        if (i)
          strncat(src, "\",\"", sizeof(src) - strlen(src) - 1);
        strncat(src, fields[col_src + i], sizeof(src) - strlen(src) - 1);
      }
      v = strtod(fields[col_metric + extra], &end);
      if (end == fields[col_metric + extra] || *end)
        v = 0; /* "-" and blanks: no value on this line */
      if (function && strcmp(function, fn) != 0)
        continue;
      if ((err = add_line(h, file, fn, (int)line, src, v, NULL)) < 0)
        goto done;
    }
  }
  if (!headers && bare) {
    err = gpujit__error(GPUJIT_EPARSE,
                        "this export has source text but no metrics (--print-source cuda or ptx leaves them out): " REMAKE);
    goto done;
  }
  if (!headers) {
    err = gpujit__error(GPUJIT_EPARSE, "not ncu's --page source CSV%s: " REMAKE,
                        !strcmp(first, "ID") ? " (this is a --page details or --page raw export)" : "");
    goto done;
  }
  h->rows = by_instruction ? GPUJIT_NCU_BY_INSTRUCTION : GPUJIT_NCU_BY_LINE;
  if (h->count) /* qsort takes no NULL base, even for nothing */
    qsort(h->lines, h->count, sizeof(*h->lines), cmp_lines);
  {
    /* Shares within each function. */
    for (size_t i = 0; i < h->count; i++) {
      double total = 0;
      for (size_t k = 0; k < h->count; k++)
        if (!strcmp(h->lines[k].function, h->lines[i].function))
          total += h->lines[k].pub.value;
      h->lines[i].pub.share = total > 0 ? h->lines[i].pub.value / total : 0;
    }
  }
  for (size_t i = 0; i < h->count; i++) {
    h->lines[i].pub.file = h->lines[i].file;
    h->lines[i].pub.function = h->lines[i].function;
    h->lines[i].pub.source = h->lines[i].source;
    h->lines[i].pub.address = h->lines[i].address;
  }
done:
  free(text);
  if (err < 0) {
    gpujit_ncu_hotspots_free(h);
    return err;
  }
  *out = h;
  return 0;
}

size_t gpujit_ncu_hotspots_count(const gpujit_ncu_hotspots *h) { return h ? h->count : 0; }

const gpujit_ncu_line *gpujit_ncu_hotspots_line(const gpujit_ncu_hotspots *h, size_t i)
{
  return h && i < h->count ? &h->lines[i].pub : NULL;
}

const char *gpujit_ncu_hotspots_metric(const gpujit_ncu_hotspots *h) { return h ? h->metric : NULL; }

gpujit_ncu_rows gpujit_ncu_hotspots_rows(const gpujit_ncu_hotspots *h) { return h ? h->rows : GPUJIT_NCU_BY_LINE; }
