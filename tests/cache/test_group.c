/* Shared dependency groups (the toolkit's headers a build read): their binary form read in place,
 * every record checked on every lookup wherever it lies in the group, however the checks are
 * spread over threads, and the forms earlier versions wrote read and written again, never
 * misread. */
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <xxhash.h>

#include "fixture.h"
#include "helpers.h"

#include "base/fs.h"
#include "cache/records/deps.h"
#include "cache/store/files.h"
#include "cache/store/handle.h"
#include "cache/records/groups.h"
#include "cache/records/head_start.h"
#include "cache/records/check_threads.h"
#include "cache/records/manifests.h"
#include "cache/store/store.h"
#include "gpujit.h"

/* A made-up toolkit: DIRS directories of FILES headers each, as a CUB module reads ~600 in ~50. */
#define DIRS 9
#define FILES 37
#define HEADERS (DIRS * FILES)

typedef struct fx {
  TH_CACHE_FIXTURE;
  char *tk;
  char *headers[HEADERS];
} fx;

static const char *const entry = "0123456789abcdef0123456789abcdef";
static const char *const request = "fedcba9876543210fedcba9876543210";

/* Header i's text: the same size for every version v, so only its content tells them apart. */
static void header_text(char out[64], size_t i, int v) { snprintf(out, 64, "#define H%04zu %d\n", i, v); }

static void write_file(const char *path, const char *text)
{
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static int setup(void **state)
{
  fx *f = calloc(1, sizeof(*f));
  char dir[PATH_MAX], text[64];
  th_cache_setup(f);
  f->tk = th_path(f->root, "tk");
  mkdir(f->tk, 0755);
  for (size_t d = 0; d < DIRS; d++) {
    snprintf(dir, sizeof(dir), "%s/d%zu", f->tk, d);
    mkdir(dir, 0755);
    for (size_t k = 0; k < FILES; k++) {
      size_t i = d * FILES + k;
      f->headers[i] = malloc(PATH_MAX);
      snprintf(f->headers[i], PATH_MAX, "%s/h%03zu.h", dir, k);
      header_text(text, i, 0);
      write_file(f->headers[i], text);
    }
  }
  snprintf(dir, sizeof(dir), "%s/nf", f->tk);
  mkdir(dir, 0755);
  th_settle(f->headers[HEADERS - 1]); /* what is written from now on is stamped later */
  *state = f;
  return 0;
}

static int teardown(void **state)
{
  fx *f = *state;
  th_cache_teardown(f);
  for (size_t i = 0; i < HEADERS; i++)
    free(f->headers[i]);
  free(f->tk);
  free(f);
  return 0;
}

/* The group of every header as it is now, each stat trusted (recorded as if well after it was
 * written); plus a non-file (a directory on the search path) and names absent from one. */
static void record_all(const fx *f, gpujit__deps *d)
{
  char text[64], *gone = th_path(f->tk, "d0/absent.h"), *nf = th_path(f->tk, "nf");
  int64_t later = gpujit__deps_clock() + 5000000000LL;
  memset(d, 0, sizeof(*d));
  for (size_t i = 0; i < HEADERS; i++) {
    header_text(text, i, 0);
    assert_int_equal(gpujit__deps_add_file(d, f->headers[i], NULL, text, strlen(text), later), 0);
    assert_true(d->items[d->count - 1].trusted);
  }
  assert_int_equal(gpujit__deps_add_nofile(d, nf, NULL), 0);
  assert_int_equal(gpujit__deps_add_absent(d, gone, NULL), 0);
  d->items[d->count - 1].trusted = true; /* as if stamped long ago */
  free(gone);
  free(nf);
}

/* Record i's stat as the file has it now (the record taken again after a touch). */
static void restat(gpujit__dep *e)
{
  struct stat st;
  assert_int_equal(stat(e->path, &st), 0);
  e->ino = (uint64_t)st.st_ino;
  e->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
  e->ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec;
}

static int verify_bin(const gpujit__deps *d)
{
  gpujit__buf b = {0};
  gpujit__deps_view v;
  int err;
  assert_int_equal(gpujit__deps_to_bin(d, &b), 0);
  assert_int_equal(gpujit__deps_view_open(&v, b.data, b.len), 0);
  assert_int_equal(v.count, d->count);
  err = gpujit__deps_verify_view(&v, &b);
  assert_null(b.data); /* taken */
  return err;
}

/* Both ways of checking a group, here on its records as recorded: in place (the view) and read
 * whole (content decides). */
static int verify_full(const gpujit__deps *d)
{
  gpujit__buf b = {0};
  gpujit__deps back;
  bool refresh;
  int err;
  assert_int_equal(gpujit__deps_to_bin(d, &b), 0);
  assert_int_equal(gpujit__deps_from_bin(&back, b.data, b.len), 0);
  back.keep = b;
  err = gpujit__deps_verify(&back, &refresh);
  gpujit__deps_free(&back);
  return err;
}

/* Every record is checked, wherever it lies: in every position — each chunk a thread takes, the
 * first and last of each directory — a header changed (its size kept) is seen, both in place and
 * by the full check. */
static void test_group__every_header_checked(void **state)
{
  fx *f = *state;
  gpujit__deps d;
  char text[64];
  record_all(f, &d);
  assert_int_equal(verify_bin(&d), 0);
  assert_int_equal(verify_full(&d), 0);
  for (size_t i = 0; i < HEADERS; i++) {
    header_text(text, i, 1);
    write_file(f->headers[i], text);
    if (verify_bin(&d) != GPUJIT_ENOENT)
      fail_msg("header %zu of %d (%s) changed, and the group still held in place", i, HEADERS, f->headers[i]);
    if (verify_full(&d) != GPUJIT_ENOENT)
      fail_msg("header %zu of %d (%s) changed, and the group still held", i, HEADERS, f->headers[i]);
    header_text(text, i, 0);
    write_file(f->headers[i], text);
    restat(&d.items[i]);
    assert_int_equal(verify_bin(&d), 0); /* recorded again: holds again */
  }
  /* the non-file becomes a file; a name recorded absent appears */
  {
    char *gone = th_path(f->tk, "d0/absent.h"), *nf = th_path(f->tk, "nf");
    assert_int_equal(rmdir(nf), 0);
    write_file(nf, "x");
    assert_int_equal(verify_bin(&d), GPUJIT_ENOENT);
    assert_int_equal(unlink(nf), 0);
    assert_int_equal(mkdir(nf, 0755), 0);
    assert_int_equal(verify_bin(&d), 0); /* no regular file again: holds */
    write_file(gone, "#define GONE\n");
    assert_int_equal(verify_bin(&d), GPUJIT_ENOENT);
    free(gone);
    free(nf);
  }
  gpujit__deps_free(&d);
}

/* The same through a lookup: a header's content changed (its size kept) is a miss that names it,
 * in whichever position; its content put back is a hit again (decided by content). */
static void test_group__changed_header_is_a_miss(void **state)
{
  fx *f = *state;
  gpujit__deps none = {0}, d;
  char dir[PATH_MAX], found[33], miss[PATH_MAX + 160], text[64], *out = NULL;
  static const size_t at[] = {0, 1, FILES - 1, FILES, HEADERS / 2, HEADERS - 2, HEADERS - 1};
  record_all(f, &d);
  gpujit__cache_entry_path(dir, sizeof(dir), f->cache, entry);
  assert_int_equal(th_run(&out, "mkdir -p '%s'", dir), 0);
  free(out);
  assert_int_equal(gpujit__manifest_add(f->cache, request, NULL, entry, &none, &d), 0);
  assert_int_equal(gpujit__manifest_find(f->cache, request, found), 0);
  for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++) {
    size_t i = at[k];
    header_text(text, i, 1);
    write_file(f->headers[i], text);
    miss[0] = '\0';
    if (gpujit__manifest_find_why(f->cache, request, NULL, found, miss, sizeof(miss)) != GPUJIT_ENOENT)
      fail_msg("header %zu (%s) changed, and the lookup still hit", i, f->headers[i]);
    if (!strstr(miss, f->headers[i]) || !strstr(miss, "changed"))
      fail_msg("header %zu: the reason does not name it: %s", i, miss);
    header_text(text, i, 0);
    write_file(f->headers[i], text);
    assert_int_equal(gpujit__manifest_find(f->cache, request, found), 0);
    assert_string_equal(found, entry);
  }
  gpujit__deps_free(&d);
}

/* The binary form gives back every field as recorded, and the same name (the group's hash). */
static void test_group__binary_form_round_trip(void **state)
{
  fx *f = *state;
  char *odd = th_write(f->root, "with space %.h", "#pragma once\n"), *dir = th_path(f->root, "odd dir");
  char *gone = th_path(dir, "gone 100%.h"), *link = th_path(f->root, "link.h");
  gpujit__deps d = {0}, back;
  gpujit__buf b = {0}, again = {0};
  gpujit__hasher *h1 = gpujit__hasher_new(), *h2 = gpujit__hasher_new();
  gpujit__key k1, k2;
  mkdir(dir, 0755);
  assert_int_equal(symlink(odd, link), 0);
  assert_int_equal(gpujit__deps_add_file(&d, odd, NULL, "#pragma once\n", 13, gpujit__deps_clock() + 5000000000LL), 0);
  assert_int_equal(gpujit__deps_add_file(&d, link, NULL, "#pragma once\n", 13, gpujit__deps_clock()), 0); /* untrusted */
  assert_int_equal(gpujit__deps_add_file(&d, "rel.h", NULL, "x", 1, gpujit__deps_clock()), 0); /* ./rel.h */
  assert_int_equal(gpujit__deps_add_absent(&d, gone, NULL), 0);
  assert_int_equal(gpujit__deps_add_absent(&d, gone, NULL), 0); /* each name once */
  assert_int_equal(gpujit__deps_add_nofile(&d, dir, NULL), 0);
  assert_int_equal(gpujit__deps_identities(&d, NULL), 0);
  assert_true(d.items[0].once && d.items[1].once && !d.items[2].once);
  assert_true(d.items[0].same && d.items[0].same == d.items[1].same);
  assert_true(d.items[0].trusted && d.items[0].dev != 0);
  assert_string_equal(d.items[3].names, "gone 100%.h/");
  assert_int_equal(gpujit__deps_to_bin(&d, &b), 0);
  assert_int_equal(gpujit__deps_from_bin(&back, b.data, b.len), 0);
  assert_int_equal(back.count, d.count);
  for (size_t i = 0; i < d.count; i++) {
    const gpujit__dep *x = &d.items[i], *y = &back.items[i];
    assert_string_equal(y->path, x->rel);
    assert_string_equal(y->rel, x->rel);
    assert_true(y->borrowed);
    assert_int_equal(y->absent, x->absent);
    assert_int_equal(y->nofile, x->nofile);
    assert_int_equal(y->trusted, x->trusted);
    assert_int_equal(y->same, x->same);
    assert_int_equal(y->once, x->once);
    if (!x->nofile && !x->absent) {
      assert_int_equal(y->size, x->size);
      assert_string_equal(y->hash, x->hash);
    }
    if (x->trusted) {
      assert_int_equal(y->dev, x->dev);
      assert_int_equal(y->ino, x->ino);
      assert_int_equal(y->mtime_ns, x->mtime_ns);
      assert_int_equal(y->ctime_ns, x->ctime_ns);
    }
    if (x->absent)
      assert_string_equal(y->names, x->names);
  }
  assert_string_equal(back.items[2].rel, "./rel.h");
  gpujit__deps_hash(&d, h1, "shared");
  gpujit__deps_hash(&back, h2, "shared");
  gpujit__hasher_digest(h1, &k1);
  gpujit__hasher_digest(h2, &k2);
  assert_string_equal(k1.hex, k2.hex);
  assert_int_equal(gpujit__deps_to_bin(&back, &again), 0); /* and writes back to the same bytes */
  assert_int_equal(again.len, b.len);
  assert_memory_equal(again.data, b.data, b.len);
  /* a pin is no record of a shared group */
  assert_int_equal(gpujit__deps_add_pin(&d, "/base"), 0);
  gpujit__buf_free(&again);
  assert_int_equal(gpujit__deps_to_bin(&d, &again), GPUJIT_EINVAL);
  gpujit_error_clear();
  gpujit__hasher_free(h1);
  gpujit__hasher_free(h2);
  gpujit__buf_free(&b);
  gpujit__buf_free(&again);
  gpujit__deps_free(&d);
  gpujit__deps_free(&back);
  free(odd), free(dir), free(gone), free(link);
}

static void put32(char *p, uint32_t v)
{
  for (int i = 0; i < 4; i++)
    p[i] = (char)(v >> (8 * i));
}

/* Bytes that are not exactly a record of the binary form are refused whole, never half read:
 * each damage below on a sound group of a file, a non-file and an absent group. */
static void test_group__binary_form_refused(void **state)
{
  fx *f = *state;
  gpujit__deps d = {0}, back;
  gpujit__deps_view v;
  gpujit__buf b = {0};
  char *gone = th_path(f->tk, "d1/none.h");
  size_t rec = 16, nrec = 3, strings, R = GPUJIT__DEPS_REC_SIZE;
  assert_int_equal(gpujit__deps_add_file(&d, f->headers[0], NULL, "x", 1, gpujit__deps_clock() + 5000000000LL), 0);
  assert_int_equal(gpujit__deps_add_nofile(&d, f->tk, NULL), 0);
  assert_int_equal(gpujit__deps_add_absent(&d, gone, NULL), 0);
  d.items[2].trusted = true;
  assert_int_equal(gpujit__deps_to_bin(&d, &b), 0);
  strings = rec + nrec * R;
  assert_int_equal(gpujit__deps_from_bin(&back, b.data, b.len), 0);
  gpujit__deps_free(&back);
  for (int k = 0;; k++) {
    char *x = malloc(b.len + 1);
    size_t len = b.len;
    memcpy(x, b.data, b.len);
    switch (k) {
    case 0: len--; break;                                    /* cut short */
    case 1: x[len++] = '\0'; break;                          /* a byte more */
    case 2: x[rec] = 'q'; break;                             /* an unknown kind */
    case 3: x[rec + 1] = 4; break;                           /* an unknown flag */
    case 4: x[rec + 2] = 1; break;                           /* a reserved byte set */
    case 5: put32(x + rec + 8, (uint32_t)(b.len - strings)); break; /* a path past the table */
    case 6: put32(x + rec + 8, 0); break;                    /* the empty path */
    case 7: x[b.len - 1] = 'x'; break;                       /* the table not ended */
    case 8: x[strings + 1] = 'r'; break;                     /* a relative path not "./" */
    case 9: x[rec + R + 24] = 1; break;                      /* a stamp (its device) on the non-file */
    case 10: put32(x + rec + R + 4, 1); break;               /* a non-file "one file" with others */
    case 11: x[rec + 2 * R + 16] = 1; break;                 /* a size for an absent group */
    case 12: x[rec + R + 56] = 1; break;                     /* a hash for a non-file */
    case 13: put32(x + 4, 65); break;                        /* another record size */
    case 14: put32(x, 4); break;                             /* more records than bytes */
    case 15: put32(x, 0xffffffffu); break;                   /* and far more */
    case 16: put32(x + 12, 1); break;                        /* the header's reserved word */
    case 17: put32(x + rec + 12, 1); break;                  /* names on a file */
    case 18: x[rec + R + 1] = 2; break;                      /* `once` on a non-file */
    case 19: put32(x + 4, 64); break;                        /* the earlier form's record size */
    default: free(x); goto done;
    }
    if (gpujit__deps_from_bin(&back, x, len) != GPUJIT_ECORRUPT || gpujit__deps_view_open(&v, x, len) != GPUJIT_ECORRUPT)
      fail_msg("damage %d accepted", k);
    assert_int_equal(back.count, 0);
    free(x);
  }
done:
  gpujit__buf_free(&b);
  gpujit__deps_free(&d);
  free(gone);
}

/* A directory NVRTC passed over (no regular file) is vouched for by a file found under it, and by
 * nothing else: with no file under it, it is looked at itself — a regular file in its place is a
 * miss, though every path under it is then absent as recorded. */
static void test_group__non_file_vouched_only_by_a_file(void **state)
{
  fx *f = *state;
  gpujit__deps d = {0};
  char *dir = th_path(f->tk, "passed"), *sub = th_path(dir, "deeper"), *h = th_path(f->tk, "d3/h001.h");
  char *moved = th_path(f->root, "passed.moved");
  mkdir(dir, 0755);
  assert_int_equal(gpujit__deps_add_nofile(&d, dir, NULL), 0);
  assert_int_equal(gpujit__deps_add_nofile(&d, sub, NULL), 0); /* absent: no regular file either */
  assert_int_equal(verify_bin(&d), 0);
  assert_int_equal(verify_full(&d), 0);
  assert_int_equal(rename(dir, moved), 0);
  write_file(dir, "x");
  assert_int_equal(verify_bin(&d), GPUJIT_ENOENT);
  assert_int_equal(verify_full(&d), GPUJIT_ENOENT);
  /* a file under it vouches: with the directory back and a header recorded in it, it holds; a
   * regular file in its place is a miss through that header */
  assert_int_equal(unlink(dir), 0);
  assert_int_equal(rename(moved, dir), 0);
  {
    char *in = th_path(dir, "in.h");
    gpujit__deps e = {0};
    write_file(in, "#define IN 1\n");
    assert_int_equal(gpujit__deps_add_nofile(&e, dir, NULL), 0);
    assert_int_equal(gpujit__deps_add_file(&e, in, NULL, "#define IN 1\n", 13, gpujit__deps_clock() + 5000000000LL), 0);
    assert_int_equal(verify_bin(&e), 0);
    assert_int_equal(unlink(in), 0);
    assert_int_equal(rmdir(dir), 0);
    write_file(dir, "x");
    assert_int_equal(verify_bin(&e), GPUJIT_ENOENT);
    gpujit__deps_free(&e);
    free(in);
  }
  gpujit__deps_free(&d);
  free(dir), free(sub), free(h), free(moved);
}

static char *group_path(const fx *f)
{
  char *path = NULL;
  assert_int_equal(th_run(&path, "printf %%s \"$(ls '%s'/deps/*/*)\"", f->cache_dir), 0);
  return path;
}

static char *head_of(const char *path)
{
  char *out = NULL;
  assert_int_equal(th_run(&out, "head -c 14 '%s'", path), 0);
  return out;
}

/* The bytes of the earlier binary form ("gpujit-deps-3": 64-byte records, no device, no `once`)
 * for the same records as `v4`, as the gpujit before this one wrote them. */
static void earlier_binary(const gpujit__buf *v4, gpujit__buf *v3)
{
  const unsigned char *h = (const unsigned char *)v4->data;
  size_t count = gpujit__deps_ld32(h), R = GPUJIT__DEPS_REC_SIZE, strings = v4->len - 16 - count * R;
  char *o = calloc(1, 16 + count * 64 + strings);
  assert_non_null(o);
  memcpy(o, h, 16);
  put32(o + 4, 64);
  for (size_t i = 0; i < count; i++) {
    const unsigned char *r = h + 16 + i * R;
    char *w = o + 16 + i * 64;
    memcpy(w, r, 24);          /* kind, flags, same, path, names, size */
    w[1] = (char)(r[1] & 1);   /* trusted only */
    memcpy(w + 24, r + 32, 24); /* ino, mtime, ctime */
    memcpy(w + 48, r + 56, 16); /* the hash */
  }
  memcpy(o + 16 + count * 64, h + 16 + count * R, strings);
  v3->data = o;
  v3->len = 16 + count * 64 + strings;
  v3->cap = v3->len;
}

/* Groups earlier versions wrote (JSON, gpujit-deps-1; text, -2; binary without devices, -3) are
 * not read, as ccache's lookups miss a manifest of an older version: each is a clean miss that
 * says why — not an error, not counted as damage — and the build that follows stores the group
 * again in this form, which then hits. A form this version does not know is damage: a miss. */
static void test_group__earlier_forms_miss(void **state)
{
  fx *f = *state;
  gpujit__deps none = {0}, d;
  gpujit__buf v4 = {0}, v3 = {0};
  gpujit_cache_stats before, after;
  char dir[PATH_MAX], found[33], miss[512], *out = NULL, *path, *head;
  static const char text[] = "f 1 - - - 0123456789abcdef0123456789abcdef /y\n";
  cJSON *j;
  char *json;
  record_all(f, &d);
  gpujit__cache_entry_path(dir, sizeof(dir), f->cache, entry);
  assert_int_equal(th_run(&out, "mkdir -p '%s'", dir), 0);
  free(out);
  assert_int_equal(gpujit__manifest_add(f->cache, request, NULL, entry, &none, &d), 0);
  path = group_path(f);
  assert_int_equal(gpujit__deps_to_bin(&d, &v4), 0);
  earlier_binary(&v4, &v3);
  assert_non_null(j = gpujit__deps_to_json(&d));
  assert_non_null(json = cJSON_PrintUnformatted(j));
  for (int form = 3; form >= 1; form--) {
    if (form == 3)
      assert_int_equal(gpujit__write_blob(f->cache_dir, path, "gpujit-deps-3", v3.data, v3.len), 0);
    else if (form == 2)
      assert_int_equal(gpujit__write_blob(f->cache_dir, path, "gpujit-deps-2", text, strlen(text)), 0);
    else
      assert_int_equal(gpujit__write_blob(f->cache_dir, path, "gpujit-deps-1", json, strlen(json)), 0);
    assert_int_equal(gpujit_cache_stats_get(f->cache, &before), 0);
    miss[0] = '\0';
    assert_int_equal(gpujit__manifest_find_why(f->cache, request, NULL, found, miss, sizeof(miss)), GPUJIT_ENOENT);
    if (!strstr(miss, "an earlier form (gpujit-deps-") || !strchr(miss, '0' + form))
      fail_msg("form %d: miss reason: %s", form, miss);
    assert_int_equal(gpujit_cache_stats_get(f->cache, &after), 0);
    assert_int_equal(after.corrupt, before.corrupt); /* a miss, not damage */
    head = head_of(path);
    assert_int_equal(head[12], '0' + form); /* a lookup writes nothing */
    free(head);
    assert_int_equal(gpujit__manifest_add(f->cache, request, NULL, entry, &none, &d), 0); /* the build stores */
    head = head_of(path);
    assert_string_equal(head, "gpujit-deps-4 ");
    free(head);
    assert_int_equal(gpujit__manifest_find(f->cache, request, found), 0);
  }
  /* a form it does not know, or this form's records under an earlier form's name: a miss */
  assert_int_equal(gpujit__write_blob(f->cache_dir, path, "gpujit-deps-5", v4.data, v4.len), 0);
  assert_int_equal(gpujit__manifest_find(f->cache, request, found), GPUJIT_ENOENT);
  assert_int_equal(gpujit__write_blob(f->cache_dir, path, "gpujit-deps-3", v4.data, v4.len), 0);
  assert_int_equal(gpujit__manifest_find(f->cache, request, found), GPUJIT_ENOENT);
  free(json);
  cJSON_Delete(j);
  gpujit__buf_free(&v4);
  gpujit__buf_free(&v3);
  gpujit__deps_free(&d);
  free(path);
}

/* Helpers that outlive a verify touch nothing of it: many short verifies in a row, each group
 * freed at once (what AddressSanitizer would catch), each with its right answer — of records in
 * memory and of records where they lie. */
static void test_group__verifies_in_a_row(void **state)
{
  fx *f = *state;
  gpujit__deps d;
  record_all(f, &d);
  for (int i = 0; i < 200; i++) {
    bool refresh = true;
    gpujit__buf b = {0};
    gpujit__deps back;
    assert_int_equal(gpujit__deps_to_bin(&d, &b), 0);
    assert_int_equal(gpujit__deps_from_bin(&back, b.data, b.len), 0);
    back.keep = b; /* freed with the records */
    if (i % 50 == 49)
      back.items[(size_t)i % HEADERS].size++; /* one wrong: a miss */
    assert_int_equal(gpujit__deps_verify(&back, &refresh), i % 50 == 49 ? GPUJIT_ENOENT : 0);
    assert_false(refresh);
    gpujit__deps_free(&back);
    /* in place: the bytes go with the check, freed when its last thread lets go */
    if (i % 50 == 49)
      d.items[(size_t)i % HEADERS].size++;
    assert_int_equal(verify_bin(&d), i % 50 == 49 ? GPUJIT_ENOENT : 0);
    if (i % 50 == 49)
      d.items[(size_t)i % HEADERS].size--;
  }
  gpujit__deps_free(&d);
}

/* Start a build's head start for `hint`, look `req` up, end it: the lookup's answer (`found`,
 * `miss`), and in *joined whether it joined a check begun ahead. */
static int look_up_ahead(fx *f, const char *hint, const char *req, char found[33], char *miss, size_t n, bool *joined)
{
  gpujit__head *h = gpujit__group_head_start(f->cache, hint);
  int err;
  assert_non_null(h);
  err = gpujit__manifest_find_why(f->cache, req, h, found, miss, n);
  *joined = gpujit__head_joined(h);
  gpujit__head_end(h);
  return err;
}

/* A lookup's head start (cache/records/head_start.c). The lookup that holds a group notes it for its sources'
 * hint; the next build of them begins that group's check when it begins, and its lookup joins
 * it: a header changed before the build began is a miss that names it, wherever it lies. A note
 * that names another group (the same sources built another way) is passed over and then names
 * the group that held; a damaged note is a note not there; a check begun and never joined stops. */
static void test_group__checked_ahead(void **state)
{
  fx *f = *state;
  gpujit__deps none = {0}, d, d2 = {0};
  char dir[PATH_MAX], found[33], miss[PATH_MAX + 160], text[64], *out = NULL, *note;
  static const char *const hint = "00112233445566778899aabbccddeeff", *const hint2 = "ffeeddccbbaa99887766554433221100";
  static const char *const entry2 = "abcdef0123456789abcdef0123456789", *const request2 = "0123456789abcdef0123456789abcdef";
  static const size_t at[] = {0, FILES, HEADERS / 2, HEADERS - 1};
  int64_t later = gpujit__deps_clock() + 5000000000LL;
  bool joined;
  if (gpujit__check_threads_get().threads < 2) {
    print_message("skip: one CPU here, so no helper thread begins a check ahead\n");
    skip();
  }
  record_all(f, &d);
  for (size_t i = 0; i < FILES; i++) { /* another group: the first directory alone */
    header_text(text, i, 0);
    assert_int_equal(gpujit__deps_add_file(&d2, f->headers[i], NULL, text, strlen(text), later), 0);
  }
  gpujit__cache_entry_path(dir, sizeof(dir), f->cache, entry);
  assert_int_equal(th_run(&out, "mkdir -p '%s'", dir), 0);
  free(out);
  gpujit__cache_entry_path(dir, sizeof(dir), f->cache, entry2);
  assert_int_equal(th_run(&out, "mkdir -p '%s'", dir), 0);
  free(out);
  assert_int_equal(gpujit__manifest_add(f->cache, request, NULL, entry, &none, &d), 0); /* no build began: no note */
  assert_int_equal(gpujit__manifest_add(f->cache, request2, NULL, entry2, &none, &d2), 0);
  assert_int_equal(look_up_ahead(f, hint, request, found, NULL, 0, &joined), 0);
  assert_false(joined); /* nothing noted yet; now noted */
  assert_int_equal(look_up_ahead(f, hint, request, found, NULL, 0, &joined), 0);
  assert_string_equal(found, entry);
  assert_true(joined);
  for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++) {
    size_t i = at[k];
    header_text(text, i, 1);
    write_file(f->headers[i], text);
    miss[0] = '\0';
    if (look_up_ahead(f, hint, request, found, miss, sizeof(miss), &joined) != GPUJIT_ENOENT)
      fail_msg("header %zu (%s) changed before the build began, and its check begun ahead held", i, f->headers[i]);
    assert_true(joined);
    if (!strstr(miss, f->headers[i]))
      fail_msg("header %zu: the reason does not name it: %s", i, miss);
    header_text(text, i, 0);
    write_file(f->headers[i], text);
    assert_int_equal(look_up_ahead(f, hint, request, found, NULL, 0, &joined), 0);
  }
  /* the same hint, another group: checked the usual way, and noted */
  assert_int_equal(look_up_ahead(f, hint, request2, found, NULL, 0, &joined), 0);
  assert_string_equal(found, entry2);
  assert_false(joined);
  assert_int_equal(look_up_ahead(f, hint, request2, found, NULL, 0, &joined), 0);
  assert_true(joined);
  /* a group stored within a build is noted for it */
  {
    gpujit__head *h = gpujit__group_head_start(f->cache, hint2);
    assert_int_equal(gpujit__manifest_add(f->cache, request, h, entry, &none, &d), 0);
    gpujit__head_end(h);
  }
  assert_int_equal(look_up_ahead(f, hint2, request, found, NULL, 0, &joined), 0);
  assert_true(joined);
  /* a damaged note: as if none, then written again */
  note = malloc(PATH_MAX);
  snprintf(note, PATH_MAX, "%s/notes/group/%s", f->cache_dir, hint);
  write_file(note, "gpujit-note-1 not a note\n");
  assert_int_equal(look_up_ahead(f, hint, request, found, NULL, 0, &joined), 0);
  assert_false(joined);
  assert_int_equal(look_up_ahead(f, hint, request, found, NULL, 0, &joined), 0);
  assert_true(joined);
  free(note);
  /* notes/group a link to elsewhere (not the cache's own): the note is not written through it,
   * and the lookup is still a hit */
  {
    char *group_dir = th_path(f->cache_dir, "notes/group"), *target = th_path(f->root, "elsewhere"), *out = NULL;
    assert_int_equal(th_run(&out, "rm -rf '%s' && mkdir '%s' && ln -s '%s' '%s'", group_dir, target, target, group_dir),
                     0);
    free(out);
    assert_int_equal(look_up_ahead(f, hint, request, found, NULL, 0, &joined), 0);
    assert_string_equal(found, entry);
    assert_int_equal(th_run(&out, "ls -A '%s' | wc -l", target), 0);
    assert_int_equal(atoi(out), 0);
    free(out);
    assert_int_equal(th_run(&out, "rm '%s'", group_dir), 0);
    free(out);
    free(group_dir), free(target);
  }
  /* begun and never joined (the build failed before its lookup): stopped, nothing left behind */
  for (int i = 0; i < 50; i++)
    gpujit__head_end(gpujit__group_head_start(f->cache, hint));
  gpujit__deps_free(&d);
  gpujit__deps_free(&d2);
}

int main(void)
{
  /* every lookup here checks its group itself (a lookup's own check, and the head start); the
   * process's watch, from a group's second check on, is tests/cache/test_group_watch.c's */
  setenv("GPUJIT_BENCH_CHECK", "w", 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_group__every_header_checked, setup, teardown),
      cmocka_unit_test_setup_teardown(test_group__changed_header_is_a_miss, setup, teardown),
      cmocka_unit_test_setup_teardown(test_group__binary_form_round_trip, setup, teardown),
      cmocka_unit_test_setup_teardown(test_group__binary_form_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(test_group__non_file_vouched_only_by_a_file, setup, teardown),
      cmocka_unit_test_setup_teardown(test_group__earlier_forms_miss, setup, teardown),
      cmocka_unit_test_setup_teardown(test_group__verifies_in_a_row, setup, teardown),
      cmocka_unit_test_setup_teardown(test_group__checked_ahead, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
