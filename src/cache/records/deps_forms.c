/* A dependency record's written forms: JSON in a manifest's results and the binary form every
 * lookup of a shared (toolkit) group reads in place. The forms groups had before (text, JSON, the
 * binary form without devices) are not read: such a group misses (cache/records/groups.c). */
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
#include "base/hash.h"
#include "cache/records/deps.h"

/* ---- binary form: fixed records read in place ------------------------------------------------
 * What every lookup of a header-heavy module reads: a 16-byte header, `count` records of
 * REC_SIZE bytes, then a table of NUL-terminated strings that begins with a NUL (offset 0 is
 * ""). All numbers little-endian. A record:
 *   0 kind 'f' file, 'a' names absent from a directory, 'n' no regular file
 *   1 flags (1: trusted, 2: once — a file's identity can matter)
 *   2 u16 0   4 u32 same ('f' once)   8 u32 path   12 u32 names (an 'a' record's; else 0)
 *   16 u64 size ('f')   24 u64 dev   32 u64 ino   40 i64 mtime_ns   48 i64 ctime_ns (0 unless trusted)
 *   56 the file's XXH3-128, 16 bytes canonical ('f'; else 0)
 * The header: u32 count, u32 REC_SIZE, u32 the string table's size, u32 0. */

#define REC_SIZE GPUJIT__DEPS_REC_SIZE
#define TRUSTED 1
#define ONCE 2
#define HEAD_SIZE 16

static void st32(unsigned char *p, uint32_t v)
{
  for (int i = 0; i < 4; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

static void st64(unsigned char *p, uint64_t v)
{
  for (int i = 0; i < 8; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

#define ld32 gpujit__deps_ld32

static inline uint64_t ld64(const unsigned char *p) { return (uint64_t)ld32(p) | (uint64_t)ld32(p + 4) << 32; }

/* Add `s` and its NUL to the string table; its offset in `*off`. */
static int put_string(gpujit__buf *strings, const char *s, uint32_t *off)
{
  if (strings->len > UINT32_MAX - strlen(s) - 1)
    return gpujit__error(GPUJIT_EINVAL, "dependency group too large for its binary form");
  *off = (uint32_t)strings->len;
  return gpujit__buf_put(strings, s, strlen(s) + 1);
}

int gpujit__deps_to_bin(const gpujit__deps *d, gpujit__buf *out)
{
  gpujit__buf strings = {0};
  unsigned char head[HEAD_SIZE] = {0};
  size_t at;
  int err;
  if (d->count > UINT32_MAX)
    return gpujit__error(GPUJIT_EINVAL, "dependency group too large for its binary form");
  st32(head, (uint32_t)d->count);
  st32(head + 4, REC_SIZE);
  if ((err = gpujit__buf_put(out, head, sizeof(head))) < 0 || (err = gpujit__buf_put(&strings, "", 1)) < 0)
    goto done;
  at = out->len;
  if ((err = gpujit__buf_reserve(out, d->count * REC_SIZE)) < 0)
    goto done;
  memset(out->data + at, 0, d->count * REC_SIZE);
  out->len += d->count * REC_SIZE;
  for (size_t i = 0; i < d->count; i++) {
    const gpujit__dep *e = &d->items[i];
    unsigned char *r = (unsigned char *)out->data + at + i * REC_SIZE;
    uint32_t off = 0; /* put_string sets it; -O3 cannot see that through its early return */
    if (e->pin || e->err || e->env || e->with || !e->rel || (e->rel[0] != '/' && strncmp(e->rel, "./", 2) != 0) ||
        ((e->same || e->once) && (e->absent || e->nofile))) {
      err = gpujit__error(GPUJIT_EINVAL, "%s: not a record of a shared group", e->rel ? e->rel : "(none)");
      goto done;
    }
    r[0] = e->nofile ? 'n' : e->absent ? 'a' : 'f';
    r[1] = (unsigned char)((!e->nofile && e->trusted ? TRUSTED : 0) | (e->once ? ONCE : 0));
    st32(r + 4, e->same);
    if ((err = put_string(&strings, e->rel, &off)) < 0)
      goto done;
    st32(r + 8, off);
    if (e->absent && e->names && e->names[0]) {
      if ((err = put_string(&strings, e->names, &off)) < 0)
        goto done;
      st32(r + 12, off);
    }
    if (!e->nofile && !e->absent)
      st64(r + 16, e->size);
    if (!e->nofile && e->trusted) {
      st64(r + 24, e->dev);
      st64(r + 32, e->ino);
      st64(r + 40, (uint64_t)e->mtime_ns);
      st64(r + 48, (uint64_t)e->ctime_ns);
    }
    if (!e->nofile && !e->absent && !gpujit__is_digest(e->hash, strnlen(e->hash, 33))) {
      err = gpujit__error(GPUJIT_EINVAL, "%s: its content hash is not 32 hex digits", e->rel);
      goto done;
    }
    for (int k = 0; !e->nofile && !e->absent && k < 16; k++) {
      unsigned long long byte = 0;
      gpujit__hex_span(e->hash + 2 * k, e->hash + 2 * k + 2, &byte); /* a digest: two hex digits */
      r[56 + k] = (unsigned char)byte;
    }
  }
  st32((unsigned char *)out->data + at - HEAD_SIZE + 8, (uint32_t)strings.len);
  err = gpujit__buf_put(out, strings.data, strings.len);
done:
  gpujit__buf_free(&strings);
  return err;
}

static bool all_zero(const unsigned char *p, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (p[i])
      return false;
  return true;
}

/* A record as the form allows it: a known kind, flags and offsets, fields zero where its kind has
 * none, a path that is absolute or under the working directory ("./"). */
static bool record_sound(const unsigned char *r, const char *strings, size_t nstr)
{
  uint32_t path = ld32(r + 8), names = ld32(r + 12), same = ld32(r + 4);
  size_t stat_at = 24, stat_len = 32, hash_at = REC_SIZE - 16;
  bool file = r[0] == 'f', absent = r[0] == 'a', nofile = r[0] == 'n', trusted = r[1] & TRUSTED;
  bool once = r[1] & ONCE;
  if ((!file && !absent && !nofile) || r[1] > (TRUSTED | ONCE) || r[2] || r[3] ||
      path == 0 || path >= nstr || names >= nstr || (names && !absent) || (same && !file) || same > 1000000000 ||
      (once && !file) || (!file && ld64(r + 16)) || (nofile && trusted) ||
      (!trusted && !all_zero(r + stat_at, stat_len)) || (!file && !all_zero(r + hash_at, 16)))
    return false;
  return strings[path] == '/' || (strings[path] == '.' && strings[path + 1] == '/');
}

int gpujit__deps_view_open(gpujit__deps_view *out, const char *data, size_t len)
{
  const unsigned char *h = (const unsigned char *)data;
  const size_t rs = REC_SIZE;
  size_t count, nstr;
  memset(out, 0, sizeof(*out));
  if (len < HEAD_SIZE || ld32(h + 4) != rs || ld32(h + 12) != 0)
    return GPUJIT_ECORRUPT;
  count = ld32(h);
  nstr = ld32(h + 8);
  /* exactly header, records and table; the table starts and ends with a NUL, so every offset
   * inside it names a terminated string */
  if ((len - HEAD_SIZE) / rs < count || len - HEAD_SIZE - count * rs != nstr || nstr < 1)
    return GPUJIT_ECORRUPT;
  out->records = h + HEAD_SIZE;
  out->strings = data + HEAD_SIZE + count * rs;
  out->rec_size = rs;
  if (out->strings[0] != '\0' || out->strings[nstr - 1] != '\0')
    return GPUJIT_ECORRUPT;
  for (size_t i = 0; i < count; i++)
    if (!record_sound(out->records + i * rs, out->strings, nstr)) {
      memset(out, 0, sizeof(*out));
      return GPUJIT_ECORRUPT;
    }
  out->count = count;
  return 0;
}

void gpujit__deps_view_rec(const gpujit__deps_view *v, size_t i, gpujit__deps_rec *out)
{
  const unsigned char *r = v->records + i * v->rec_size;
  uint32_t names = ld32(r + 12);
  out->kind = (char)r[0];
  out->trusted = r[1] & TRUSTED;
  out->once = r[1] & ONCE;
  out->same = ld32(r + 4);
  out->path = v->strings + ld32(r + 8);
  out->names = names ? v->strings + names : NULL;
  out->size = ld64(r + 16);
  out->dev = ld64(r + 24);
  out->ino = ld64(r + 32);
  out->mtime_ns = (int64_t)ld64(r + 40);
  out->ctime_ns = (int64_t)ld64(r + 48);
  out->hash = r + v->rec_size - 16;
}

int gpujit__deps_from_bin(gpujit__deps *out, const char *data, size_t len)
{
  static const char hex[] = "0123456789abcdef";
  gpujit__deps_view v;
  memset(out, 0, sizeof(*out));
  if (gpujit__deps_view_open(&v, data, len) < 0)
    return GPUJIT_ECORRUPT;
  if (v.count && !(out->items = calloc(v.count, sizeof(*out->items))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  out->count = out->cap = v.count;
  for (size_t i = 0; i < v.count; i++) {
    gpujit__dep *e = &out->items[i];
    gpujit__deps_rec r;
    gpujit__deps_view_rec(&v, i, &r);
    e->path = e->rel = (char *)r.path;
    e->names = (char *)r.names;
    e->borrowed = true;
    e->absent = r.kind == 'a';
    e->nofile = r.kind == 'n';
    e->trusted = r.trusted;
    e->once = r.once;
    e->same = r.same;
    e->size = r.size;
    e->dev = r.dev;
    e->ino = r.ino;
    e->mtime_ns = r.mtime_ns;
    e->ctime_ns = r.ctime_ns;
    for (int k = 0; r.kind == 'f' && k < 16; k++) {
      e->hash[2 * k] = hex[r.hash[k] >> 4];
      e->hash[2 * k + 1] = hex[r.hash[k] & 15];
    }
  }
  return 0;
}

/* Compact on purpose: a lookup parses this; one string per stat, one per group of names. */
cJSON *gpujit__deps_to_json(const gpujit__deps *d)
{
  cJSON *arr = cJSON_CreateArray();
  for (size_t i = 0; arr && i < d->count; i++) {
    const gpujit__dep *e = &d->items[i];
    cJSON *o = cJSON_CreateObject();
    char st[96];
    if (!o) {
      cJSON_Delete(arr);
      return NULL;
    }
    cJSON_AddItemToArray(arr, o);
    if (e->pin) {
      cJSON_AddStringToObject(o, "built_in", e->path);
      continue;
    }
    if (e->nofile) {
      cJSON_AddStringToObject(o, "nofile", e->rel);
      continue;
    }
    if (e->err || e->env) { /* deps_answers.c */
      gpujit__deps_answer_to_json(e, o);
      continue;
    }
    if (e->absent) {
      cJSON_AddStringToObject(o, "dir", e->rel);
      cJSON_AddStringToObject(o, "absent", e->names ? e->names : "");
      if (e->trusted) { /* device inode mtime ctime */
        snprintf(st, sizeof(st), "%llu %llu %lld %lld", (unsigned long long)e->dev, (unsigned long long)e->ino,
                 (long long)e->mtime_ns, (long long)e->ctime_ns);
        cJSON_AddStringToObject(o, "stamp", st);
      }
      continue;
    }
    cJSON_AddStringToObject(o, "path", e->rel);
    cJSON_AddStringToObject(o, "xxh3", e->hash);
    /* size device inode mtime ctime (ns); the size alone when the stat cannot be trusted */
    if (e->trusted)
      snprintf(st, sizeof(st), "%llu %llu %llu %lld %lld", (unsigned long long)e->size, (unsigned long long)e->dev,
               (unsigned long long)e->ino, (long long)e->mtime_ns, (long long)e->ctime_ns);
    else
      snprintf(st, sizeof(st), "%llu", (unsigned long long)e->size);
    cJSON_AddStringToObject(o, "stat", st);
    if (e->once)
      cJSON_AddTrueToObject(o, "once");
    if (e->same)
      cJSON_AddNumberToObject(o, "same", e->same);
    if (e->with)
      cJSON_AddStringToObject(o, "with", e->with);
    if (e->once && e->programs)
      cJSON_AddNumberToObject(o, "programs", e->programs);
  }
  return arr;
}

/* A file's record of JSON object `o` into `e` (its stat `st`). @return 0 or GPUJIT_ECORRUPT. */
static int file_from_json(gpujit__dep *e, const cJSON *o, const cJSON *st)
{
  const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "xxh3");
  const cJSON *same = cJSON_GetObjectItemCaseSensitive(o, "same");
  const cJSON *once = cJSON_GetObjectItemCaseSensitive(o, "once");
  const cJSON *with = cJSON_GetObjectItemCaseSensitive(o, "with");
  const cJSON *programs = cJSON_GetObjectItemCaseSensitive(o, "programs");
  unsigned long long size, dev, ino;
  long long m, c;
  int n;
  if (!cJSON_IsString(h) || strlen(h->valuestring) != 32 || !cJSON_IsString(st))
    return GPUJIT_ECORRUPT;
  memcpy(e->hash, h->valuestring, 33);
  /* 4: an earlier record, without the device (a group of the JSON form): not trusted */
  n = sscanf(st->valuestring, "%llu %llu %llu %lld %lld", &size, &dev, &ino, &m, &c);
  if (n != 1 && n != 4 && n != 5)
    return GPUJIT_ECORRUPT;
  e->size = size;
  if ((same && (!cJSON_IsNumber(same) || same->valuedouble < 1 || same->valuedouble > 1e9)) ||
      (once && !cJSON_IsTrue(once)) || (with && (!cJSON_IsString(with) || !with->valuestring[0])) ||
      (with && !once) ||
      (programs && (!once || !cJSON_IsNumber(programs) || programs->valuedouble < 1 ||
                    programs->valuedouble > UINT32_MAX || programs->valuedouble != (uint32_t)programs->valuedouble)))
    return GPUJIT_ECORRUPT;
  e->programs = programs ? (uint32_t)programs->valuedouble : 0;
  e->same = same ? (unsigned)same->valuedouble : 0;
  e->once = once != NULL;
  if (with && !(e->with = gpujit__strdup(with->valuestring)))
    return GPUJIT_ECORRUPT;
  if (n == 5) {
    e->dev = dev;
    e->ino = ino;
    e->mtime_ns = m;
    e->ctime_ns = c;
    e->trusted = true;
  }
  return 0;
}

int gpujit__deps_from_json(gpujit__deps *out, const cJSON *arr, const char *base)
{
  const cJSON *o;
  memset(out, 0, sizeof(*out));
  if (!cJSON_IsArray(arr))
    return GPUJIT_ECORRUPT;
  cJSON_ArrayForEach(o, arr) {
    const cJSON *dir = cJSON_GetObjectItemCaseSensitive(o, "dir");
    const cJSON *nofile = cJSON_GetObjectItemCaseSensitive(o, "nofile");
    const cJSON *pin = cJSON_GetObjectItemCaseSensitive(o, "built_in");
    const cJSON *errpath = cJSON_GetObjectItemCaseSensitive(o, "error");
    const cJSON *p = cJSON_IsString(dir) ? dir : cJSON_IsString(nofile) ? nofile : cJSON_GetObjectItemCaseSensitive(o, "path");
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, cJSON_IsString(dir) ? "stamp" : "stat");
    char path[PATH_MAX];
    gpujit__dep *e;
    if (cJSON_IsString(pin)) {
      if (pin->valuestring[0] != '/' || !(e = gpujit__deps_push(out, pin->valuestring, NULL)))
        goto bad;
      e->pin = true;
      e->elsewhere = strcmp(pin->valuestring, base && *base ? base : "/") != 0;
      continue;
    }
    if (cJSON_GetObjectItemCaseSensitive(o, "env")) {
      if (gpujit__deps_env_from_json(out, o) < 0)
        goto bad;
      continue;
    }
    if (cJSON_IsString(errpath))
      p = errpath;
    if (!cJSON_IsString(p) || !p->valuestring[0])
      goto bad;
    if (strncmp(p->valuestring, "./", 2) == 0) /* relative to the verifier's working directory */
      snprintf(path, sizeof(path), "%s", p->valuestring + 2);
    else if (p->valuestring[0] == '/' || !base)
      snprintf(path, sizeof(path), "%s", p->valuestring);
    else if (strcmp(p->valuestring, ".") == 0)
      snprintf(path, sizeof(path), "%s", base);
    else
      snprintf(path, sizeof(path), "%s/%s", base, p->valuestring);
    if (!(e = gpujit__deps_push_as(out, path, p->valuestring)))
      goto bad;
    if (cJSON_IsString(nofile)) {
      e->nofile = true;
      continue;
    }
    if (cJSON_IsString(errpath)) {
      if ((e->err = gpujit__deps_errno_from_json(o)) == 0)
        goto bad;
      continue;
    }
    if (cJSON_IsString(dir)) {
      const cJSON *names = cJSON_GetObjectItemCaseSensitive(o, "absent");
      unsigned long long dev, ino;
      long long m, c;
      e->absent = true;
      if (!cJSON_IsString(names) || !(e->names = gpujit__strdup(names->valuestring)))
        goto bad;
      if (cJSON_IsString(st)) {
        int got = sscanf(st->valuestring, "%llu %llu %lld %lld", &dev, &ino, &m, &c);
        if (got == 3) /* an earlier stamp, without the device: not trusted */
          continue;
        if (got != 4)
          goto bad;
        e->dev = dev;
        e->ino = ino;
        e->mtime_ns = m;
        e->ctime_ns = c;
        e->trusted = true;
      }
      continue;
    }
    if (file_from_json(e, o, st) < 0)
      goto bad;
  }
  return 0;
bad:
  gpujit__deps_free(out);
  return GPUJIT_ECORRUPT;
}

