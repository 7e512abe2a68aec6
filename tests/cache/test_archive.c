/* Cache export and import: a round trip that hits with the same bytes in a second cache, the
 * filters, and hostile or damaged archives refused with the member named and nothing stored. */
#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"

#include "base/fs.h"
#include "cache/records/deps.h"
#include "cache/store/files.h"
#include "cache/records/groups.h"
#include "gpujit.h"

typedef struct fx {
  char *root, *src;
  gpujit_cache *a, *b;
} fx;

static gpujit_cache *open_at(const fx *f, const char *name)
{
  gpujit_cache_options co = GPUJIT_CACHE_OPTIONS_INIT;
  gpujit_cache *c = NULL;
  char *dir = th_path(f->root, name);
  co.dir = dir;
  assert_int_equal(gpujit_cache_open(&c, &co), 0);
  free(dir);
  return c;
}

static int setup(void **state)
{
  fx *f = calloc(1, sizeof(*f));
  f->root = th_tmpdir();
  f->src = th_path(f->root, "k.cu");
  f->a = open_at(f, "a");
  f->b = open_at(f, "b");
  *state = f;
  return 0;
}

static int teardown(void **state)
{
  fx *f = *state;
  gpujit_cache_free(f->a);
  gpujit_cache_free(f->b);
  th_rmrf(f->root);
  free(f->root);
  free(f->src);
  free(f);
  return 0;
}

static gpujit_module *build(const fx *f, gpujit_cache *c, int v)
{
  char text[256];
  const char *p = f->src;
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_module *m = NULL;
  snprintf(text, sizeof(text), "extern \"C\" __global__ void k(float *x) { x[threadIdx.x] *= %d.0f; }\n", v);
  free(th_write(f->root, "k.cu", text));
  o.arch = "sm_90";
  o.cache = c;
  if (gpujit_module_build_files(&m, &p, 1, &o) != 0)
    fail_msg("build: %s", gpujit_error_last());
  return m;
}

static void test_archive__round_trip(void **state)
{
  fx *f = *state;
  char *file = th_path(f->root, "x.tar.zst");
  gpujit_module *m1 = build(f, f->a, 1), *m2, *hit;
  gpujit_cache_import_result r;
  uint64_t n = 0;
  size_t s1, s2;
  const void *i1, *i2;
  gpujit_module_free(build(f, f->a, 2));
  assert_int_equal(gpujit_cache_export(f->a, file, NULL, &n), 0);
  assert_int_equal(n, 2);
  assert_int_equal(gpujit_cache_import(f->b, file, 0, &r), 0);
  assert_int_equal(r.entries, 2);
  assert_int_equal(r.manifests, 2); /* two requests: the source's text differs */
  assert_int_equal(r.rejected, 0);
  hit = build(f, f->b, 1);
  assert_int_equal(gpujit_module_cache_status(hit), GPUJIT_CACHE_HIT);
  i1 = gpujit_module_image(m1, &s1);
  i2 = gpujit_module_image(hit, &s2);
  assert_int_equal(s1, s2);
  assert_memory_equal(i1, i2, s1);
  m2 = build(f, f->b, 2);
  assert_int_equal(gpujit_module_cache_status(m2), GPUJIT_CACHE_HIT);
  /* again: everything is here already and stays */
  assert_int_equal(gpujit_cache_import(f->b, file, 0, &r), 0);
  assert_int_equal(r.entries, 0);
  assert_int_equal(r.present, 2);
  gpujit_module_free(m1);
  gpujit_module_free(m2);
  gpujit_module_free(hit);
  free(file);
}

static void test_archive__filters(void **state)
{
  fx *f = *state;
  char *file = th_path(f->root, "x.tar");
  gpujit_cache_export_options eo = GPUJIT_CACHE_EXPORT_OPTIONS_INIT;
  gpujit_module *m = build(f, f->a, 1);
  const char *key = gpujit_module_cache_key(m);
  char prefix[9];
  uint64_t n = 0;
  gpujit_cache_import_result r;
  gpujit_module_free(build(f, f->a, 2));
  snprintf(prefix, sizeof(prefix), "%.8s", key);
  {
    const char *keys[] = {prefix};
    eo.keys = keys;
    eo.keys_count = 1;
    assert_int_equal(gpujit_cache_export(f->a, file, &eo, &n), 0);
  }
  assert_int_equal(n, 1);
  assert_int_equal(gpujit_cache_import(f->b, file, 0, &r), 0);
  assert_int_equal(r.entries, 1);
  eo.keys = NULL;
  eo.keys_count = 0;
  eo.used_since = (double)time(NULL) + 3600; /* nothing used in the future */
  assert_int_equal(gpujit_cache_export(f->a, file, &eo, &n), 0);
  assert_int_equal(n, 0);
  gpujit_module_free(m);
  free(file);
}

/* An archive written member by member, for the hostile cases. */
typedef struct member {
  const char *name;
  mode_t type;
  const char *data;
  const char *link;
} member;

static char *write_archive(const fx *f, const member *ms, size_t n)
{
  char *file = th_path(f->root, "hostile.tar");
  struct archive *a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  assert_int_equal(archive_write_open_filename(a, file), ARCHIVE_OK);
  for (size_t i = 0; i < n; i++) {
    struct archive_entry *e = archive_entry_new();
    size_t len = ms[i].data ? strlen(ms[i].data) : 0;
    archive_entry_set_pathname(e, ms[i].name);
    archive_entry_set_filetype(e, ms[i].type);
    archive_entry_set_perm(e, 0644);
    archive_entry_set_size(e, (la_int64_t)len);
    if (ms[i].link)
      archive_entry_set_symlink(e, ms[i].link);
    assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
    if (len)
      archive_write_data(a, ms[i].data, len);
    archive_entry_free(e);
  }
  archive_write_close(a);
  archive_write_free(a);
  return file;
}

#define MARKER {"gpujit-export.json", AE_IFREG, "{}", NULL}
#define EK "entries/ab/cdef0123456789abcdef0123456789"

static void refused(const fx *f, const member *ms, size_t n, const char *want)
{
  char *file = write_archive(f, ms, n);
  gpujit_cache_import_result r;
  gpujit_cache_stats st;
  if (gpujit_cache_import(f->b, file, 1024, &r) != GPUJIT_EPARSE)
    fail_msg("%s: not refused: %s", ms[n - 1].name, gpujit_error_last());
  if (!strstr(gpujit_error_last(), want))
    fail_msg("got '%s', want '%s'", gpujit_error_last(), want);
  assert_int_equal(gpujit_cache_stats_get(f->b, &st), 0);
  assert_int_equal(st.entries, 0);
  free(file);
}

static void test_archive__hostile(void **state)
{
  fx *f = *state;
  const member absolute[] = {MARKER, {"/etc/passwd", AE_IFREG, "x", NULL}};
  const member dotdot[] = {MARKER, {EK "/../../../../evil", AE_IFREG, "x", NULL}};
  const member link[] = {MARKER, {EK "/meta.json", AE_IFLNK, NULL, "/etc/passwd"}};
  const member device[] = {MARKER, {EK "/image.cubin", AE_IFCHR, NULL, NULL}};
  const member big[] = {MARKER, {EK "/image.cubin", AE_IFREG, NULL, NULL}};
  const member foreign[] = {MARKER, {"notes/arch/x", AE_IFREG, "x", NULL}};
  char large[2048];
  member big2[2];
  memset(large, 'x', sizeof(large) - 1);
  large[sizeof(large) - 1] = '\0';
  memcpy(big2, big, sizeof(big2));
  big2[1].data = large;
  refused(f, absolute, 2, "member /etc/passwd is an absolute path: refused");
  refused(f, dotdot, 2, "leaves its directory");
  refused(f, link, 2, "is a symbolic link: refused");
  refused(f, device, 2, "is a character device: refused");
  refused(f, big2, 2, "2047 bytes, over the 1024-byte limit: refused");
  refused(f, foreign, 2, "member notes/arch/x is not a file of gpujit's cache");
  {
    const member nomarker[] = {{EK "/meta.json", AE_IFREG, "{}", NULL}};
    refused(f, nomarker, 1, "not a gpujit cache export");
  }
  {
    char *garbage = th_write(f->root, "garbage.tar", "this is not an archive at all, just text\n");
    assert_int_equal(gpujit_cache_import(f->b, garbage, 0, NULL), GPUJIT_EPARSE);
    free(garbage);
  }
  assert_false(th_exists("/tmp/evil"));
}

/* A damaged entry in the archive is refused; it never replaces a good local one. */
static void test_archive__bad_entry_never_replaces_good(void **state)
{
  fx *f = *state;
  char *file = th_path(f->root, "x.tar"), *bad = th_path(f->root, "bad.tar"), cmd[2048], *dir = NULL;
  gpujit_module *m = build(f, f->a, 1), *again;
  gpujit_cache_import_result r;
  assert_int_equal(gpujit_cache_export(f->a, file, NULL, NULL), 0);
  /* flip bytes of the image inside the archive: unpack, damage, repack */
  snprintf(cmd, sizeof(cmd),
           "cd '%s' && mkdir -p unpack && tar -xf x.tar -C unpack && "
           "for i in unpack/entries/*/*/image.cubin; do printf 'XXXX' | dd of=$i bs=1 seek=100 conv=notrunc 2>/dev/null; done && "
           "tar -cf bad.tar -C unpack .",
           f->root);
  assert_int_equal(system(cmd), 0);
  /* into an empty cache: refused, counted, not stored */
  assert_int_equal(gpujit_cache_import(f->b, bad, 0, &r), 0);
  assert_int_equal(r.entries, 0);
  assert_int_equal(r.rejected, 1);
  /* into the cache that has it good: kept */
  assert_int_equal(gpujit_cache_import(f->a, bad, 0, &r), 0);
  assert_int_equal(r.rejected, 1);
  assert_int_equal(gpujit_cache_entry_dir(&dir, f->a, gpujit_module_cache_key(m)), 0);
  {
    uint64_t badn = 1;
    assert_int_equal(gpujit_cache_verify(f->a, 0, NULL, NULL, NULL, &badn), 0);
    assert_int_equal(badn, 0);
  }
  again = build(f, f->a, 1);
  assert_int_equal(gpujit_module_cache_status(again), GPUJIT_CACHE_HIT);
  gpujit_module_free(again);
  gpujit_module_free(m);
  gpujit_free(dir);
  free(file);
  free(bad);
}

/* A dependency group must hash to its name: one with a line dropped (its record checksum made
 * good again) is refused, and the request it serves stays a miss. */
static void test_archive__group_named_by_its_content(void **state)
{
  fx *f = *state;
  const char *p = f->src;
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_module *m = NULL;
  gpujit_cache_import_result r;
  char *file = th_path(f->root, "x.tar"), *bad = th_path(f->root, "bad.tar"), *group = NULL, *text;
  free(th_write(f->root, "k.cu", "#include <cuda/std/cstddef>\n"
                                 "extern \"C\" __global__ void k(int *x) { x[0] = (int)sizeof(cuda::std::size_t); }\n"));
  o.arch = "sm_90";
  o.cache = f->a;
  assert_int_equal(gpujit_module_build_files(&m, &p, 1, &o), 0);
  gpujit_module_free(m);
  assert_int_equal(gpujit_cache_export(f->a, file, NULL, NULL), 0);
  assert_int_equal(th_run(&group, "cd '%s' && mkdir -p unpack && tar -xf x.tar -C unpack && printf %%s \"$PWD\"/unpack/deps/*/*",
                          f->root), 0);
  {
    gpujit__deps d;
    gpujit__buf bin = {0};
    char why[128];
    assert_int_equal(gpujit__group_read(group, &d, why, sizeof(why)), 0);
    assert_true(d.count > 1);
    d.count--; /* the last dependency dropped (its strings stay in the record's bytes) */
    assert_int_equal(gpujit__deps_to_bin(&d, &bin), 0);
    d.count++;
    assert_int_equal(gpujit__write_blob(f->root, group, "gpujit-deps-4", bin.data, bin.len), 0);
    gpujit__buf_free(&bin);
    gpujit__deps_free(&d);
  }
  assert_int_equal(th_run(&text, "cd '%s' && tar -cf bad.tar -C unpack .", f->root), 0);
  assert_int_equal(gpujit_cache_import(f->b, bad, 0, &r), 0);
  assert_int_equal(r.entries, 1);
  assert_int_equal(r.rejected, 1); /* the group */
  o.cache = f->b;
  assert_int_equal(gpujit_module_build_files(&m, &p, 1, &o), 0);
  assert_int_equal(gpujit_module_cache_status(m), GPUJIT_CACHE_MISS);
  gpujit_module_free(m);
  free(text);
  free(group);
  free(file);
  free(bad);
}

/* A module built with a relative include directory, from the fixture's root (as CMake and
 * Python's include_dirs give one); `rel`: the -I as given. */
static gpujit_module *build_relative(const fx *f, gpujit_cache *c, const char *rel)
{
  char cwd[4096], *p;
  const char *dirs[] = {rel}, *src = "k.cu";
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_module *m = NULL;
  free(th_write(f->root, "k.cu", "#include \"h.h\"\nextern \"C\" __global__ void k(float *x) { x[0] *= H; }\n"));
  p = th_path(f->root, "inc");
  mkdir(p, 0700);
  free(p);
  p = th_path(f->root, "sub");
  mkdir(p, 0700);
  free(p);
  free(th_write(f->root, "inc/h.h", "#define H 2.0f\n"));
  assert_non_null(getcwd(cwd, sizeof(cwd)));
  assert_int_equal(chdir(f->root), 0);
  o.arch = "sm_90";
  o.cache = c;
  o.include_dirs = dirs;
  o.include_dirs_count = 1;
  if (gpujit_module_build_files(&m, &src, 1, &o) != 0)
    fail_msg("build: %s", gpujit_error_last());
  assert_int_equal(chdir(cwd), 0);
  return m;
}

typedef struct dumped {
  char names[4][4096];
  size_t n;
} dumped;

static int dumped_one(const char *named, const char *dump, void *payload)
{
  dumped *d = payload;
  (void)dump;
  if (d->n < 4)
    snprintf(d->names[d->n++], sizeof(d->names[0]), "%s", named);
  return 0;
}

/* The header's copy is dumped at its absolute path, whatever form the -I took; the export
 * imports whole and hits in the second cache with the same bytes. */
static void test_archive__relative_include_dir_travels(void **state)
{
  fx *f = *state;
  const char *forms[] = {"inc", "./inc", "sub/../inc"};
  for (size_t i = 0; i < 3; i++) {
    char *file = th_path(f->root, "x.tar"), *header = th_path(f->root, "inc/h.h");
    gpujit_module *m = build_relative(f, f->a, forms[i]), *hit;
    gpujit_cache_import_result r;
    dumped d = {0};
    size_t s1, s2;
    const void *i1, *i2;
    assert_int_equal(gpujit_cache_sources(f->a, gpujit_module_cache_key(m), dumped_one, &d), 0);
    assert_int_equal(d.n, 2); /* k.cu and inc/h.h, each at its absolute path */
    if (strcmp(d.names[0], header) != 0 && strcmp(d.names[1], header) != 0)
      fail_msg("-I %s: the header is dumped as %s and %s, not %s", forms[i], d.names[0], d.names[1], header);
    assert_int_equal(gpujit_cache_export(f->a, file, NULL, NULL), 0);
    if (gpujit_cache_import(f->b, file, 0, &r) != 0)
      fail_msg("-I %s: import: %s", forms[i], gpujit_error_last());
    assert_int_equal(r.rejected, 0);
    hit = build_relative(f, f->b, forms[i]);
    assert_int_equal(gpujit_module_cache_status(hit), GPUJIT_CACHE_HIT);
    i1 = gpujit_module_image(m, &s1);
    i2 = gpujit_module_image(hit, &s2);
    assert_int_equal(s1, s2);
    assert_memory_equal(i1, i2, s1);
    gpujit_module_free(m);
    gpujit_module_free(hit);
    free(file);
    free(header);
  }
}

/* Source text built in `dir` with -I inc and the working directory as the base (what Python's
 * gpujit.build(source=..., include_dirs=["inc"]) does), through a cache opened with that base. */
static gpujit_module *build_text_in(const fx *f, const char *dir, const char *cache_name, gpujit_cache **cache,
                                    bool cached)
{
  char cwd[4096], *path = th_path(f->root, dir), *cdir = th_path(f->root, cache_name);
  const char *dirs[] = {"inc"};
  gpujit_source src = {"k.cu", "#include \"h.h\"\nextern \"C\" __global__ void k(float *x) { x[0] *= H; }\n", 0};
  gpujit_cache_options co = GPUJIT_CACHE_OPTIONS_INIT;
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_module *m = NULL;
  src.size = strlen(src.data);
  co.dir = cdir;
  co.base_dir = path;
  if (cached)
    assert_int_equal(gpujit_cache_open(cache, &co), 0);
  assert_non_null(getcwd(cwd, sizeof(cwd)));
  assert_int_equal(chdir(path), 0);
  o.arch = "sm_90";
  o.cache = cached ? *cache : NULL;
  o.include_dirs = dirs;
  o.include_dirs_count = 1;
  if (gpujit_module_build_sources(&m, &src, 1, &o) != 0)
    fail_msg("build in %s: %s", dir, gpujit_error_last());
  assert_int_equal(chdir(cwd), 0);
  free(path);
  free(cdir);
  return m;
}

/* Source text with a relative -I in checkout X, exported; a copy of X (Y) imports the archive
 * and hits with the bytes its own compile makes; Y's header edited, a miss. */
static void test_archive__source_text_relative_include_travels(void **state)
{
  fx *f = *state;
  gpujit_cache *ca = NULL, *cb = NULL;
  gpujit_module *m, *own, *hit, *edited;
  gpujit_cache_import_result r;
  char *file = th_path(f->root, "x.tar"), *out = NULL;
  size_t s1, s2;
  const void *i1, *i2;
  assert_int_equal(th_run(&out, "mkdir -p '%s/X/inc' && printf '#define H 2.0f\\n' >'%s/X/inc/h.h'", f->root, f->root),
                   0);
  free(out);
  m = build_text_in(f, "X", "ca", &ca, true);
  assert_int_equal(gpujit_cache_export(ca, file, NULL, NULL), 0);
  assert_int_equal(th_run(&out, "cp -a '%s/X' '%s/Y'", f->root, f->root), 0);
  free(out);
  own = build_text_in(f, "Y", "cb", &cb, false); /* Y's own compile, uncached */
  {
    char *cdir = th_path(f->root, "cb"), *ydir = th_path(f->root, "Y");
    gpujit_cache_options co = GPUJIT_CACHE_OPTIONS_INIT;
    co.dir = cdir;
    co.base_dir = ydir;
    assert_int_equal(gpujit_cache_open(&cb, &co), 0);
    if (gpujit_cache_import(cb, file, 0, &r) != 0)
      fail_msg("import: %s", gpujit_error_last());
    assert_int_equal(r.entries, 1);
    assert_int_equal(r.rejected, 0);
    gpujit_cache_free(cb);
    free(cdir);
    free(ydir);
  }
  hit = build_text_in(f, "Y", "cb", &cb, true);
  assert_int_equal(gpujit_module_cache_status(hit), GPUJIT_CACHE_HIT);
  i1 = gpujit_module_image(own, &s1);
  i2 = gpujit_module_image(hit, &s2);
  assert_int_equal(s1, s2);
  assert_memory_equal(i1, i2, s1);
  gpujit_cache_free(cb);
  assert_int_equal(th_run(&out, "printf '#define H 3.0f\\n' >'%s/Y/inc/h.h'", f->root), 0);
  free(out);
  edited = build_text_in(f, "Y", "cb", &cb, true);
  assert_int_equal(gpujit_module_cache_status(edited), GPUJIT_CACHE_MISS);
  gpujit_module_free(edited);
  gpujit_module_free(m);
  gpujit_module_free(hit);
  gpujit_module_free(own);
  gpujit_cache_free(ca);
  gpujit_cache_free(cb);
  free(file);
}

/* Entries an earlier gpujit stored with the header's copy at "src" joined to its relative path
 * ("srcinc/h.h") import, and hit: the name is malformed but stays inside its entry. */
static void test_archive__earlier_relative_dump_imports(void **state)
{
  fx *f = *state;
  char *file = th_path(f->root, "x.tar"), *old = th_path(f->root, "old.tar"), *entry = NULL, *text = NULL;
  char member[4096], from[8192], to[8192];
  gpujit_module *m = build_relative(f, f->a, "inc"), *hit;
  gpujit_cache_import_result r;
  gpujit__buf b = {0};
  cJSON *meta, *files, *item;
  assert_int_equal(gpujit_cache_export(f->a, file, NULL, NULL), 0);
  assert_int_equal(th_run(&entry, "cd '%s' && mkdir -p unpack && tar -xf x.tar -C unpack && printf %%s \"$PWD\"/unpack/entries/*/*",
                          f->root), 0);
  /* the header's member renamed to the earlier form, meta.json's table with it */
  snprintf(member, sizeof(member), "src%s/inc/h.h", f->root);
  snprintf(from, sizeof(from), "%s/%s", entry, member);
  snprintf(to, sizeof(to), "%s/srcinc", entry);
  mkdir(to, 0700);
  snprintf(to, sizeof(to), "%s/srcinc/h.h", entry);
  assert_int_equal(rename(from, to), 0);
  snprintf(from, sizeof(from), "%s/meta.json", entry);
  assert_int_equal(gpujit__file_read(&b, from), 0);
  assert_non_null(meta = cJSON_ParseWithLength(b.data, b.len));
  files = cJSON_GetObjectItemCaseSensitive(meta, "files");
  assert_non_null(item = cJSON_DetachItemFromObjectCaseSensitive(files, member));
  cJSON_AddItemToObject(files, "srcinc/h.h", item);
  cJSON_ReplaceItemInObjectCaseSensitive(item, "file", cJSON_CreateString("srcinc/h.h"));
  assert_int_equal(unlink(from), 0);
  snprintf(from, sizeof(from), "%s/meta.xxh3", entry);
  assert_int_equal(unlink(from), 0);
  assert_int_equal(gpujit__write_meta(entry, meta), 0);
  cJSON_Delete(meta);
  gpujit__buf_free(&b);
  assert_int_equal(th_run(&text, "cd '%s' && tar -cf old.tar -C unpack .", f->root), 0);
  if (gpujit_cache_import(f->b, old, 0, &r) != 0)
    fail_msg("import: %s", gpujit_error_last());
  assert_int_equal(r.entries, 1);
  assert_int_equal(r.rejected, 0);
  hit = build_relative(f, f->b, "inc");
  assert_int_equal(gpujit_module_cache_status(hit), GPUJIT_CACHE_HIT);
  gpujit_module_free(m);
  gpujit_module_free(hit);
  free(text);
  free(entry);
  free(file);
  free(old);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_archive__round_trip, setup, teardown),
    cmocka_unit_test_setup_teardown(test_archive__filters, setup, teardown),
    cmocka_unit_test_setup_teardown(test_archive__hostile, setup, teardown),
    cmocka_unit_test_setup_teardown(test_archive__bad_entry_never_replaces_good, setup, teardown),
    cmocka_unit_test_setup_teardown(test_archive__group_named_by_its_content, setup, teardown),
    cmocka_unit_test_setup_teardown(test_archive__relative_include_dir_travels, setup, teardown),
    cmocka_unit_test_setup_teardown(test_archive__earlier_relative_dump_imports, setup, teardown),
    cmocka_unit_test_setup_teardown(test_archive__source_text_relative_include_travels, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
