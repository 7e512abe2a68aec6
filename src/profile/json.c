/* gpujit_profile_json: a profile as JSON, the form `gpujit profile --json` writes — each table of
 * "format": "gpujit-profile" and "version" first (docs/json.md), then each table of
 * fields.c under its name (totals and options as objects, the rest as lists of rows), then the
 * notes as a list of lines. */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "profile/json.h"
#include "profile/model.h"

/* One struct as an object of its table's fields. */
static cJSON *object(const gpujit_profile_field *f, size_t nf, const char *row)
{
  cJSON *o = cJSON_CreateObject();
  for (size_t i = 0; o && i < nf; i++) {
    const void *v = row + f[i].offset;
    cJSON *item = NULL;
    switch (f[i].type) {
    case GPUJIT_FIELD_STR: {
      const char *s = *(const char *const *)v;
      item = f[i].optional && (!s || !*s) ? NULL : cJSON_CreateString(s ? s : "");
      break;
    }
    case GPUJIT_FIELD_INT: item = cJSON_CreateNumber(*(const int *)v); break;
    case GPUJIT_FIELD_U32: item = cJSON_CreateNumber(*(const uint32_t *)v); break;
    case GPUJIT_FIELD_U64:
      item = f[i].optional && !*(const uint64_t *)v ? NULL : cJSON_CreateNumber((double)*(const uint64_t *)v);
      break;
    case GPUJIT_FIELD_F64: item = cJSON_CreateNumber(*(const double *)v); break;
    case GPUJIT_FIELD_BOOL: item = cJSON_CreateBool(*(const int *)v != 0); break;
    }
    if (item)
      cJSON_AddItemToObject(o, f[i].key, item);
  }
  return o;
}

/* JSON is UTF-8 (RFC 8259), and a command line or NVRTC program name may be any bytes: a byte
 * that is no UTF-8 (only ever inside a string: cJSON escapes nothing above 0x7f) becomes the
 * escape \ufffd. */
static int utf8_only(char **text)
{
  gpujit__buf b = {0};
  const char *s = *text;
  size_t n = strlen(s), len, i = 0;
  int err = 0;
  while (i < n && gpujit__utf8_len(s + i, n - i))
    i += gpujit__utf8_len(s + i, n - i);
  if (i == n)
    return 0; /* all of it UTF-8, as nearly always */
  err = gpujit__buf_put(&b, s, i);
  for (; err == 0 && i < n; i += len ? len : 1)
    err = (len = gpujit__utf8_len(s + i, n - i)) ? gpujit__buf_put(&b, s + i, len) : gpujit__buf_puts(&b, "\\ufffd");
  free(*text);
  *text = err == 0 ? b.data : NULL;
  if (err < 0)
    gpujit__buf_free(&b);
  return err < 0 ? gpujit__error(GPUJIT_ENOMEM, "out of memory") : 0;
}

cJSON *gpujit__profile_notes_json(const gpujit_profile *p)
{
  cJSON *a = cJSON_CreateArray();
  for (const char *notes = gpujit_profile_notes(p); a && *notes;) {
    size_t len = strcspn(notes, "\n");
    char *line = strndup(notes, len);
    if (line)
      cJSON_AddItemToArray(a, cJSON_CreateString(line));
    free(line);
    notes += len + (notes[len] == '\n');
  }
  return a;
}

int gpujit_profile_json(const gpujit_profile *p, char **out)
{
  cJSON *j, *a;
  if (!out || !p)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_profile_json: NULL argument");
  if (!(j = cJSON_CreateObject()) || !cJSON_AddStringToObject(j, "format", "gpujit-profile") ||
      !cJSON_AddNumberToObject(j, "version", GPUJIT_PROFILE_JSON_VERSION)) {
    cJSON_Delete(j);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  for (int t = 0; t < GPUJIT_PROFILE_NTABLES; t++) {
    const char *name, *rows;
    size_t nf, stride, n = gpujit_profile_table_rows(p, (gpujit_profile_table)t, (const void **)&rows, &stride);
    const gpujit_profile_field *f = gpujit_profile_fields((gpujit_profile_table)t, &name, &nf);
    if (t == GPUJIT_PROFILE_TOTALS || t == GPUJIT_PROFILE_OPTIONS) {
      cJSON_AddItemToObject(j, name, object(f, nf, rows));
      continue;
    }
    a = cJSON_AddArrayToObject(j, name);
    for (size_t i = 0; a && i < n; i++)
      cJSON_AddItemToArray(a, object(f, nf, rows + i * stride));
  }
  cJSON_AddItemToObject(j, "notes", gpujit__profile_notes_json(p));
  *out = cJSON_Print(j);
  cJSON_Delete(j);
  return *out ? utf8_only(out) : gpujit__error(GPUJIT_ENOMEM, "out of memory");
}
