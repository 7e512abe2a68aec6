/* gpujit_profile_html: one self-contained page of a profile — the page (html/report.html, built
 * into the library) with the profile's JSON, its modules' readable names and the timeline
 * (html_timeline.c) as its data. Strings of the records reach the page only inside that JSON,
 * with every '<', '>' and '&' escaped, and its script sets them as text. */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "base/buf.h"
#include "base/demangle.h"
#include "base/error.h"
#include "base/output.h"
#include "profile/html_timeline.h"
#include "profile/model.h"

/* The page, from src/profile/html/report.html (generated at build time: cmake/embed.cmake). */
extern const char gpujit__profile_html_page[];

#define STEP_OPS_DRAWN 5000 /* a step's operations drawn, at most (its tables count them all) */
#define STEPS_DRAWN 50      /* the steps drawn, at most (the page's tables list them all) */

/* The active steps' operations, for the page's step timelines: per step, its streams
 * ([device, stream]) and its operations ([stream, start_us, dur_us from the step's start, kind
 * "k"/"c"/"m", name]), and how many were left undrawn; the first STEPS_DRAWN steps. */
static cJSON *step_ops(const gpujit_profile *p)
{
  const gpujit_profile_step_row *st;
  size_t n = gpujit_profile_steps(p, &st);
  cJSON *all = cJSON_CreateArray();
  for (size_t i = 0; all && i < n && i < STEPS_DRAWN; i++) {
    cJSON *one = cJSON_CreateObject(), *streams = cJSON_AddArrayToObject(one, "streams"),
          *ops = cJSON_AddArrayToObject(one, "ops");
    uint64_t t0 = 0, left = 0;
    size_t drawn = 0, nstreams = 0, active = 0;
    uint32_t seen[64][2];
    char shown[512];
    for (size_t k = 0; k < p->steps.n; k++) /* the rows are the active steps, in order (steps.c) */
      if (!strcmp(p->steps.v[k].phase, "active") && active++ == i)
        t0 = p->steps.v[k].t;
    for (size_t k = 0; k < p->ops.n; k++) {
      const pf_op *o = &p->ops.v[k];
      size_t sidx = 0;
      cJSON *e;
      if (o->step != (int)i + 1)
        continue;
      while (sidx < nstreams && (seen[sidx][0] != o->device || seen[sidx][1] != o->stream))
        sidx++;
      if (sidx == nstreams && nstreams < 64) {
        seen[nstreams][0] = o->device, seen[nstreams][1] = o->stream, nstreams++;
        cJSON_AddItemToArray(streams, cJSON_CreateIntArray((const int[]){(int)o->device, (int)o->stream}, 2));
      }
      if (sidx == nstreams || drawn == STEP_OPS_DRAWN) {
        left++;
        continue;
      }
      e = cJSON_CreateArray();
      cJSON_AddItemToArray(e, cJSON_CreateNumber((double)sidx));
      cJSON_AddItemToArray(e, cJSON_CreateNumber(o->s > t0 ? (double)(o->s - t0) / 1e3 : -(double)(t0 - o->s) / 1e3));
      cJSON_AddItemToArray(e, cJSON_CreateNumber(o->e > o->s ? (double)(o->e - o->s) / 1e3 : 0));
      cJSON_AddItemToArray(e, cJSON_CreateString(o->kind == 'k' ? "k" : o->kind == 'c' ? "c" : "m"));
      if (o->kind == 'k')
        gpujit__kernel_name(o->name ? o->name : "", shown, sizeof(shown)); /* as the tables name it */
      cJSON_AddItemToArray(e, cJSON_CreateString(o->kind == 'k' ? shown : o->name ? o->name : ""));
      cJSON_AddItemToArray(ops, e);
      drawn++;
    }
    cJSON_AddNumberToObject(one, "undrawn", (double)left);
    cJSON_AddItemToArray(all, one);
  }
  return all;
}

/* The profile's JSON with what the page shows beside it. */
static int page_data(const gpujit_profile *p, char **out)
{
  const gpujit_profile_module *m;
  size_t nm = gpujit_profile_modules(p, &m), i = 0;
  char *json = NULL, *timeline = NULL;
  cJSON *j, *row;
  int err;
  *out = NULL;
  if ((err = gpujit_profile_json(p, &json)) < 0)
    return err;
  j = cJSON_Parse(json);
  free(json);
  if (!j)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  cJSON_AddStringToObject(j, "command", gpujit_profile_command(p));
  cJSON_AddStringToObject(j, "producer", "gpujit " GPUJIT_VERSION_STRING);
  cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(j, "modules")) /* as the table labels them */
  {
    char kernel[1024];
    if (i >= nm)
      break;
    gpujit__kernel_name(m[i].kernel, kernel, sizeof(kernel));
    cJSON_AddStringToObject(row, "label", m[i].kernel[0] ? kernel : m[i].name);
    i++;
  }
  if ((err = gpujit__profile_html_timeline(p, &timeline)) < 0) {
    cJSON_Delete(j);
    return err;
  }
  cJSON_AddItemToObject(j, "timeline", cJSON_CreateRaw(timeline));
  cJSON_AddItemToObject(j, "step_ops", step_ops(p));
  free(timeline);
  *out = cJSON_PrintUnformatted(j);
  cJSON_Delete(j);
  return *out ? 0 : gpujit__error(GPUJIT_ENOMEM, "out of memory");
}

/* JSON text made safe inside <script>: '<', '>' and '&' (only ever inside its strings) and the
 * two line separators JavaScript once refused, as \u escapes; a byte that is no UTF-8 (a
 * command line's or a program name's, only ever inside a string) as U+FFFD, so the page stays
 * text a browser decodes as the UTF-8 it declares. */
static void put_json(gpujit__buf *b, const char *s)
{
  for (; *s; s++) {
    const unsigned char *u = (const unsigned char *)s;
    size_t len = gpujit__utf8_len(s, strnlen(s, 4));
    if (*s == '<' || *s == '>' || *s == '&')
      gpujit__buf_printf(b, "\\u%04x", *s);
    else if (!len)
      gpujit__buf_puts(b, "\\ufffd");
    else if (u[0] == 0xe2 && u[1] == 0x80 && (u[2] == 0xa8 || u[2] == 0xa9))
      gpujit__buf_printf(b, "\\u20%s", u[2] == 0xa8 ? "28" : "29"), s += 2;
    else
      gpujit__buf_put(b, s, len), s += len - 1;
  }
}

/* Text as HTML: the page's <title>, before its script runs; cut at a character, never inside
 * one, and a byte that is no UTF-8 as U+FFFD. */
static void put_text(gpujit__buf *b, const char *s, size_t max)
{
  for (size_t n = 0; *s && n < max; s++, n++) {
    size_t len = gpujit__utf8_len(s, strnlen(s, 4));
    if (len != 1) {
      if (len)
        gpujit__buf_put(b, s, len), s += len - 1;
      else
        gpujit__buf_puts(b, "\xef\xbf\xbd");
      continue;
    }
    switch (*s) {
    case '<': gpujit__buf_puts(b, "&lt;"); break;
    case '>': gpujit__buf_puts(b, "&gt;"); break;
    case '&': gpujit__buf_puts(b, "&amp;"); break;
    case '"': gpujit__buf_puts(b, "&quot;"); break;
    case '\'': gpujit__buf_puts(b, "&#39;"); break;
    case '\n': case '\r': case '\t': gpujit__buf_puts(b, " "); break;
    default: gpujit__buf_put(b, (unsigned char)*s < 0x20 || *s == 0x7f ? " " : s, 1);
    }
  }
}

/* A fresh nonce for the page's one script: its policy runs nothing else. */
static void nonce(char out[33])
{
  unsigned char r[16];
  if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
    struct timespec ts;
    uint64_t seed[2];
    clock_gettime(CLOCK_REALTIME, &ts);
    seed[0] = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec, seed[1] = (uint64_t)getpid();
    XXH128_hash_t h = XXH3_128bits(seed, sizeof(seed));
    memcpy(r, &h, sizeof(r));
  }
  for (int i = 0; i < 16; i++)
    snprintf(out + 2 * i, 3, "%02x", r[i]);
}

int gpujit_profile_html(const gpujit_profile *p, const char *path)
{
  gpujit__buf b = {0};
  char *data = NULL, n[33];
  const char *s = gpujit__profile_html_page;
  int err;
  if (!p || !path || !*path)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_profile_html: NULL argument");
  if ((err = page_data(p, &data)) < 0)
    return err;
  nonce(n);
  while (*s) { /* the page with its @@FIELD@@s filled */
    const char *at = strstr(s, "@@"), *end;
    if (!at) {
      gpujit__buf_puts(&b, s);
      break;
    }
    gpujit__buf_put(&b, s, (size_t)(at - s));
    if (!strncmp(at, "@@DATA@@", 8))
      put_json(&b, data), end = at + 8;
    else if (!strncmp(at, "@@NONCE@@", 9))
      gpujit__buf_puts(&b, n), end = at + 9;
    else if (!strncmp(at, "@@TITLE@@", 9))
      put_text(&b, gpujit_profile_command(p), 200), end = at + 9;
    else if (!strncmp(at, "@@PRODUCER@@", 12))
      gpujit__buf_puts(&b, "gpujit " GPUJIT_VERSION_STRING), end = at + 12;
    else
      gpujit__buf_put(&b, at, 2), end = at + 2;
    s = end;
  }
  free(data);
  if (gpujit__buf_put(&b, "", 1) < 0) {
    gpujit__buf_free(&b);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  err = gpujit__output_write(path, b.data, b.len - 1);
  gpujit__buf_free(&b);
  return err;
}
