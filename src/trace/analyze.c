/* Trace analysis: phases, headers, templates, functions and modules across many traces. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gpujit/trace.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/fs.h"
#include "trace/analyze.h"
#include "trace/events.h"

int gpujit_trace_analysis_create(gpujit_trace_analysis **out)
{
  if (!out)
    return gpujit__error(GPUJIT_EINVAL, "NULL out");
  if (!(*out = calloc(1, sizeof(**out))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  return 0;
}

void gpujit_trace_analysis_free(gpujit_trace_analysis *a)
{
  if (!a)
    return;
  for (int k = 0; k < GPUJIT_TRACE_TABLE_COUNT; k++)
    gpujit__rows_free(&a->tables[k]);
  for (size_t i = 0; i < a->nmodules; i++)
    gpujit__profile_free(&a->modules[i]);
  free(a->modules);
  for (size_t i = 0; i < a->files_count; i++)
    free(a->files[i]);
  free(a->files);
  free(a);
}

static int add_tables(gpujit_trace_analysis *a, const gpujit__profile *p)
{
  int err = 0;
  for (int t = 0; t < GPUJIT__PROFILE_TABLES && err == 0; t++)
    err = gpujit__rows_merge(&a->tables[t], &p->tables[t]);
  return err;
}

/* Everything read from one trace, or nothing. */
static int add_read(gpujit_trace_analysis *a, const char *name, gpujit__trace_read *r)
{
  char **files = gpujit__grow(a->files, &a->files_cap, a->files_count, sizeof(*files), 8);
  gpujit__profile *mods;
  int err = 0;
  if (!files)
    return GPUJIT_ENOMEM;
  a->files = files;
  if (!(mods = gpujit__grow(a->modules, &a->capmodules, a->nmodules + r->count, sizeof(*mods), 16)))
    return GPUJIT_ENOMEM;
  a->modules = mods;
  if (!(a->files[a->files_count] = gpujit__strdup(name)))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  for (size_t i = 0; i < r->count && err == 0; i++) {
    if ((err = add_tables(a, &r->modules[i])) == 0)
      err = gpujit__rows_add(&a->tables[GPUJIT_TRACE_MODULES], r->modules[i].module, r->modules[i].build_us,
                             r->modules[i].build_us, 1);
  }
  if (err == 0)
    err = add_tables(a, &r->other);
  if (err < 0) {
    free(a->files[a->files_count]);
    return err;
  }
  for (size_t i = 0; i < r->count; i++) {
    a->modules[a->nmodules] = r->modules[i];
    a->modules[a->nmodules++].file = a->files[a->files_count];
    memset(&r->modules[i], 0, sizeof(r->modules[i]));
  }
  r->count = 0;
  a->files_count++;
  a->events += r->events;
  return 0;
}

int gpujit_trace_analysis_add_json(gpujit_trace_analysis *a, const char *name, const char *json, size_t len)
{
  gpujit__trace_read r;
  int err;
  if (!a || !json)
    return gpujit__error(GPUJIT_EINVAL, "trace analysis: NULL argument");
  if (!name)
    name = "(memory)";
  if ((err = gpujit__trace_read_json(&r, name, json, len)) < 0)
    return err;
  err = add_read(a, name, &r);
  gpujit__trace_read_free(&r);
  return err;
}

int gpujit_trace_analysis_add_file(gpujit_trace_analysis *a, const char *path)
{
  gpujit__buf buf = {0};
  int err;
  if (!a || !path)
    return gpujit__error(GPUJIT_EINVAL, "trace analysis: NULL argument");
  if ((err = gpujit__file_read(&buf, path)) < 0)
    return err;
  if (buf.len == 0)
    err = gpujit__error(GPUJIT_EPARSE, "%s: empty file, not a trace", path);
  else
    err = gpujit_trace_analysis_add_json(a, path, buf.data, buf.len);
  gpujit__buf_free(&buf);
  return err;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The *.json files beneath `dir`, sorted, into `out`. */
static int list_traces(gpujit__strvec *out, const char *dir, int depth)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  size_t first = out->count;
  int err = 0;
  if (!d)
    return gpujit__error(GPUJIT_EIO, "%s: cannot read the directory", dir);
  while (err == 0 && (e = readdir(d)) != NULL) {
    char path[4096];
    struct stat st;
    size_t len = strlen(e->d_name);
    if (e->d_name[0] == '.')
      continue;
    if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= sizeof(path) || stat(path, &st) < 0)
      continue;
    if (S_ISDIR(st.st_mode) && depth < 16)
      err = list_traces(out, path, depth + 1);
    else if (S_ISREG(st.st_mode) && len > 5 && strcmp(e->d_name + len - 5, ".json") == 0)
      err = gpujit__strvec_push(out, path);
  }
  closedir(d);
  if (err == 0 && out->count > first)
    qsort(out->items + first, out->count - first, sizeof(*out->items), cmp_str);
  return err;
}

int gpujit_trace_analysis_add_path(gpujit_trace_analysis *a, const char *path, size_t *out_files)
{
  gpujit__strvec files = {0};
  int err = 0;
  if (out_files)
    *out_files = 0;
  if (!a || !path)
    return gpujit__error(GPUJIT_EINVAL, "trace analysis: NULL argument");
  if (!gpujit__is_dir(path))
    err = gpujit_trace_analysis_add_file(a, path);
  else if ((err = list_traces(&files, path, 0)) == 0 && files.count == 0)
    err = gpujit__error(GPUJIT_ENOENT, "%s: no *.json traces in this directory", path);
  for (size_t i = 0; i < files.count && err == 0; i++)
    err = gpujit_trace_analysis_add_file(a, files.items[i]);
  if (err == 0 && out_files)
    *out_files = files.count ? files.count : 1;
  gpujit__strvec_free(&files);
  return err;
}

size_t gpujit_trace_analysis_count(const gpujit_trace_analysis *a, gpujit_trace_table t)
{
  return a && (unsigned)t < GPUJIT_TRACE_TABLE_COUNT ? a->tables[t].count : 0;
}

const gpujit_trace_stat *gpujit_trace_analysis_row(const gpujit_trace_analysis *ca, gpujit_trace_table t, size_t i)
{
  gpujit_trace_analysis *a = (gpujit_trace_analysis *)ca; /* sorting lazily is not observable */
  if (!a || (unsigned)t >= GPUJIT_TRACE_TABLE_COUNT || i >= a->tables[t].count)
    return NULL;
  if (gpujit__rows_sort(&a->tables[t]) < 0)
    return NULL;
  return &a->tables[t].rows[i];
}

void gpujit_trace_analysis_totals(const gpujit_trace_analysis *a, size_t *files, size_t *events)
{
  if (files)
    *files = a ? a->files_count : 0;
  if (events)
    *events = a ? a->events : 0;
}

size_t gpujit_trace_analysis_recorded(const gpujit_trace_analysis *a, size_t *out_unmeasured)
{
  size_t n = 0, unmeasured = 0;
  for (size_t i = 0; a && i < a->nmodules; i++) {
    n += a->modules[i].recorded;
    unmeasured += a->modules[i].compile_us < 0;
  }
  if (out_unmeasured)
    *out_unmeasured = unmeasured;
  return n;
}
