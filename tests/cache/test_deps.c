/* Never a stale hit: each way a compile can read a file — computed includes, __has_include and
 * its wrappers, an earlier -I directory, what only NVRTC's own record shows, the toolkit's
 * headers — edited after a build must miss and give the bytes a fresh compile gives; the
 * same-timestamp race; damaged manifests. */
#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <xxhash.h>

#include "fixture.h"
#include "helpers.h"

#include "cache/records/deps.h"
#include "compile/includes/includes.h"
#include "cache/store/files.h"
#include "cache/store/handle.h"
#include "cache/records/groups.h"
#include "cache/records/manifests.h"
#include "cache/store/store.h"
#include "gpujit.h"

typedef struct fx {
  TH_CACHE_FIXTURE;
  char *src;
} fx;

static int setup(void **state)
{
  fx *f = calloc(1, sizeof(*f));
  char *p;
  th_cache_setup(f);
  f->src = th_path(f->root, "src");
  mkdir(f->src, 0755);
  p = th_path(f->src, "inc");
  mkdir(p, 0755);
  free(p);
  *state = f;
  return 0;
}

static int teardown(void **state)
{
  fx *f = *state;
  th_cache_teardown(f);
  free(f->src);
  free(f);
  return 0;
}

static void put(const fx *f, const char *rel, const char *text) { free(th_write(f->src, rel, text)); }

/* Build src/k.cu (cached or not) with options `base` (NULL: defaults) and return the module. */
static gpujit_module *build_opts(const fx *f, bool cached, const gpujit_module_options *base)
{
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  char *path = th_path(f->src, "k.cu");
  const char *p = path;
  gpujit_module *m = NULL;
  if (base)
    o = *base;
  o.arch = "sm_90";
  o.cache = cached ? f->cache : NULL;
  if (gpujit_module_build_files(&m, &p, 1, &o) != 0)
    fail_msg("build failed: %s\n%s", gpujit_error_last(), gpujit_error_log());
  free(path);
  return m;
}

static gpujit_module *build_with(const fx *f, bool cached, const char *const *dirs, size_t ndirs)
{
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  o.include_dirs = dirs;
  o.include_dirs_count = ndirs;
  return build_opts(f, cached, &o);
}

/* A cached build with options `o`: its status, its image equal to a fresh uncached compile's. */
static gpujit_cache_status check_opts(const fx *f, const gpujit_module_options *o, char **image_copy)
{
  gpujit_module *m = build_opts(f, true, o), *fresh = build_opts(f, false, o);
  size_t a, b;
  const void *ia = gpujit_module_image(m, &a), *ib = gpujit_module_image(fresh, &b);
  gpujit_cache_status s = gpujit_module_cache_status(m);
  assert_int_equal(a, b);
  assert_memory_equal(ia, ib, a); /* never the bytes of an older input */
  if (image_copy) {
    *image_copy = malloc(a);
    memcpy(*image_copy, ia, a);
  }
  gpujit_module_free(m);
  gpujit_module_free(fresh);
  return s;
}

static gpujit_cache_status check(const fx *f, const char *const *dirs, size_t ndirs, char **image_copy)
{
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  o.include_dirs = dirs;
  o.include_dirs_count = ndirs;
  return check_opts(f, &o, image_copy);
}

static gpujit_cache_status status(const fx *f) { return check(f, NULL, 0, NULL); }

#define KERNEL "extern \"C\" __global__ void k(int *x) { x[0] = V; }\n"

static void test_deps__computed_include(void **state)
{
  fx *f = *state;
  put(f, "inc/h.h", "#define V 1\n");
  put(f, "k.cu", "#define HDR \"inc/h.h\"\n#include HDR\n" KERNEL);
  assert_int_equal(status(f), GPUJIT_CACHE_MISS);
  assert_int_equal(status(f), GPUJIT_CACHE_HIT);
  put(f, "inc/h.h", "#define V 2\n"); /* same size */
  assert_int_equal(status(f), GPUJIT_CACHE_MISS);
  assert_int_equal(status(f), GPUJIT_CACHE_HIT);
}

static void test_deps__computed_include_nested_in_header(void **state)
{
  fx *f = *state;
  put(f, "inc/cfg.h", "#define V 3\n");
  put(f, "inc/a.h", "#define CFG \"cfg.h\"\n#include CFG\n");
  put(f, "k.cu", "#include \"inc/a.h\"\n" KERNEL);
  assert_int_equal(status(f), GPUJIT_CACHE_MISS);
  assert_int_equal(status(f), GPUJIT_CACHE_HIT);
  put(f, "inc/cfg.h", "#define V 4\n");
  assert_int_equal(status(f), GPUJIT_CACHE_MISS);
}

/* A header name built by a function-like macro: the scan cannot follow it, so the compile's own
 * record (NVRTC's time trace) says what was opened. */
static void test_deps__include_only_nvrtc_can_name(void **state)
{
  fx *f = *state;
  put(f, "inc/t.h", "#define V 5\n");
  put(f, "k.cu", "#define STR2(x) #x\n#define STR(x) STR2(x)\n#include STR(inc/t.h)\n" KERNEL);
  assert_int_equal(status(f), GPUJIT_CACHE_MISS);
  assert_int_equal(status(f), GPUJIT_CACHE_HIT);
  put(f, "inc/t.h", "#define V 6\n");
  assert_int_equal(status(f), GPUJIT_CACHE_MISS);
  assert_int_equal(status(f), GPUJIT_CACHE_HIT);
}

static void test_deps__has_include(void **state)
{
  fx *f = *state;
  char *first = NULL, *again = NULL, *opt = th_path(f->src, "opt.h");
  size_t n;
  gpujit_module *m;
  put(f, "k.cu", "#if __has_include(\"opt.h\")\n#include \"opt.h\"\n#else\n#define V 7\n#endif\n" KERNEL);
  assert_int_equal(check(f, NULL, 0, &first), GPUJIT_CACHE_MISS);
  assert_int_equal(status(f), GPUJIT_CACHE_HIT);
  put(f, "opt.h", "#define V 8\n"); /* appears: the answer to __has_include changes */
  assert_int_equal(status(f), GPUJIT_CACHE_MISS);
  assert_int_equal(status(f), GPUJIT_CACHE_HIT);
  unlink(opt); /* gone again: the first record holds again, with its bytes */
  assert_int_equal(check(f, NULL, 0, &again), GPUJIT_CACHE_HIT);
  m = build_with(f, true, NULL, 0);
  gpujit_module_image(m, &n);
  assert_memory_equal(first, again, n);
  gpujit_module_free(m);
  free(first);
  free(again);
  free(opt);
}

/* CCCL's way: __has_include behind a macro (#define _CCCL_HAS_INCLUDE(x) __has_include(x)). */
static void test_deps__has_include_through_a_macro(void **state)
{
  fx *f = *state;
  char *inc = th_path(f->src, "inc");
  const char *dirs[] = {inc};
  put(f, "k.cu", "#define MY_HAS(x) __has_include(x)\n#if MY_HAS(<wrapped.h>)\n#include <wrapped.h>\n#else\n"
                 "#define V 9\n#endif\n" KERNEL);
  assert_int_equal(check(f, dirs, 1, NULL), GPUJIT_CACHE_MISS);
  assert_int_equal(check(f, dirs, 1, NULL), GPUJIT_CACHE_HIT);
  put(f, "inc/wrapped.h", "#define V 10\n");
  assert_int_equal(check(f, dirs, 1, NULL), GPUJIT_CACHE_MISS);
  free(inc);
}

/* A header created in an -I directory searched before the one it was found in. */
static void test_deps__earlier_include_directory(void **state)
{
  fx *f = *state;
  char *d1 = th_path(f->src, "d1"), *d2 = th_path(f->src, "d2");
  const char *dirs[] = {d1, d2};
  mkdir(d1, 0755);
  mkdir(d2, 0755);
  put(f, "d2/h.h", "#define V 11\n");
  put(f, "k.cu", "#include <h.h>\n" KERNEL);
  assert_int_equal(check(f, dirs, 2, NULL), GPUJIT_CACHE_MISS);
  assert_int_equal(check(f, dirs, 2, NULL), GPUJIT_CACHE_HIT);
  put(f, "d1/h.h", "#define V 12\n");
  assert_int_equal(check(f, dirs, 2, NULL), GPUJIT_CACHE_MISS);
  /* and the includer's own directory before any -I, for "…" */
  put(f, "k.cu", "#include \"h.h\"\n" KERNEL);
  assert_int_equal(check(f, dirs, 2, NULL), GPUJIT_CACHE_MISS);
  put(f, "h.h", "#define V 13\n");
  assert_int_equal(check(f, dirs, 2, NULL), GPUJIT_CACHE_MISS);
  free(d1);
  free(d2);
}

/* #include_next resumes the search after the includer's directory: the header it reaches is a
 * dependency, with relative -I directories (NVRTC names what it opened relative to the working
 * directory) and absolute ones, from a user's header and from a header of an -I directory. */
static void test_deps__include_next(void **state)
{
  fx *f = *state;
  char cwd[PATH_MAX], *a = th_path(f->src, "A"), *b = th_path(f->src, "B"), *q = th_path(f->src, "B/q.h");
  const char *rel[] = {"A", "B"}, *abs[] = {a, b};
  assert_non_null(getcwd(cwd, sizeof(cwd)));
  assert_int_equal(chdir(f->src), 0);
  mkdir(a, 0755);
  mkdir(b, 0755);
  for (int round = 0; round < 2; round++) {
    /* each round its own kernel: a rewritten source's mtime is in the line table */
    const char *const *dirs = round ? abs : rel, *kernel = round ? KERNEL "// absolute\n" : KERNEL;
    char text[512];
    put(f, "A/h.h", "#include_next <h.h>\n");
    put(f, "B/h.h", "#define V 1\n");
    put(f, "k.cu", (snprintf(text, sizeof(text), "#include <h.h>\n%s", kernel), text));
    assert_int_equal(check(f, dirs, 2, NULL), GPUJIT_CACHE_MISS);
    assert_int_equal(check(f, dirs, 2, NULL), GPUJIT_CACHE_HIT);
    put(f, "B/h.h", "#define V 2\n"); /* reached only through #include_next */
    assert_int_equal(check(f, dirs, 2, NULL), GPUJIT_CACHE_MISS);
    assert_int_equal(check(f, dirs, 2, NULL), GPUJIT_CACHE_HIT);
    /* a user's header in front of an -I directory's (its quoted form too) */
    put(f, "k.cu", (snprintf(text, sizeof(text), "#include \"my.h\"\n%s", kernel), text));
    put(f, "my.h", "#include_next \"my.h\"\n");
    put(f, "B/my.h", "#define V 3\n");
    assert_int_equal(check(f, dirs, 2, NULL), GPUJIT_CACHE_MISS);
    put(f, "B/my.h", "#define V 4\n");
    assert_int_equal(check(f, dirs, 2, NULL), GPUJIT_CACHE_MISS);
    assert_int_equal(check(f, dirs, 2, NULL), GPUJIT_CACHE_HIT);
    /* __has_include_next's answer changes when the header it asks for appears */
    put(f, "A/h.h", "#if __has_include_next(<q.h>)\n#include_next <q.h>\n#else\n#define V 5\n#endif\n");
    put(f, "k.cu", (snprintf(text, sizeof(text), "#include <h.h>\n%s", kernel), text));
    assert_int_equal(check(f, dirs, 2, NULL), GPUJIT_CACHE_MISS);
    assert_int_equal(check(f, dirs, 2, NULL), GPUJIT_CACHE_HIT);
    put(f, "B/q.h", "#define V 6\n");
    assert_int_equal(check(f, dirs, 2, NULL), GPUJIT_CACHE_MISS);
    unlink(q); /* gone: the first record holds again */
    assert_int_equal(check(f, dirs, 2, NULL), GPUJIT_CACHE_HIT);
  }
  assert_int_equal(chdir(cwd), 0);
  free(a);
  free(b);
  free(q);
}

/* Every spelling of a directive the preprocessor reads: comments before, inside and after
 * the directive name (one across lines), %:, backslash-newlines (CRLF too), trigraphs where
 * the standard has them. Editing each header must miss. */
static void test_deps__directive_spellings(void **state)
{
  fx *f = *state;
  static const char *const forms[] = {
      "/**/#include \"h0.h\"\n",        "#/**/include \"h1.h\"\n",      "#include/**/\"h2.h\"\n",
      "%:include \"h3.h\"\n",           "#inc\\\nlude \"h4.h\"\n",     "#include \\\r\n\"h5.h\"\r\n",
      "#/* a\n b */include \"h6.h\"\n", "/* x\n */ #include \"h7.h\"\n", "??=include \"h8.h\"\n",
      "  # \\\n  include \"h9.h\"\n"};
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  o.std = "c++11"; /* trigraphs on */
  for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
    char hdr[16], text[512], def[32];
    snprintf(hdr, sizeof(hdr), "h%zu.h", i);
    snprintf(def, sizeof(def), "#define V %zu\n", i);
    put(f, hdr, def);
    snprintf(text, sizeof(text), "__device__ const char s[] = \"/*\"; // a literal opens no comment\n%s" KERNEL, forms[i]);
    put(f, "k.cu", text);
    assert_int_equal(check_opts(f, &o, NULL), GPUJIT_CACHE_MISS);
    assert_int_equal(check_opts(f, &o, NULL), GPUJIT_CACHE_HIT);
    snprintf(def, sizeof(def), "#define V %zu\n", i + 10);
    put(f, hdr, def);
    if (check_opts(f, &o, NULL) != GPUJIT_CACHE_MISS)
      fail_msg("a stale hit through %s", forms[i]);
  }
}

/* `case'/*':` is a character literal, not a digit separator that opens a comment: the
 * directive split by a backslash-newline after it is read, and its header is a dependency. */
static void test_deps__character_literal_after_identifier(void **state)
{
  fx *f = *state;
  put(f, "w.h", "#define W 1\n");
  put(f, "k.cu", "__device__ int g(int c) { switch (c) { case'/*': return 1; default: return 0; } }\n"
                 "#\\\ninclude \"w.h\"\n"
                 "#define V (W + 1)\n" KERNEL);
  assert_int_equal(status(f), GPUJIT_CACHE_MISS);
  assert_int_equal(status(f), GPUJIT_CACHE_HIT);
  put(f, "w.h", "#define W 7\n");
  assert_int_equal(status(f), GPUJIT_CACHE_MISS);
}

/* Where the directive reading may have gone wrong (a literal open at a line's end, a comment
 * open at the end), the scan asks for NVRTC's own record of what the compile opened. */
static void test_deps__uncertain_reading_asks_nvrtc(void **state)
{
  fx *f = *state;
  static const char *const texts[] = {"#if 0\nit's prose\n#endif\n", "/* never closed\n"};
  for (size_t i = 0; i < 2; i++) {
    gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
    gpujit_source src = {NULL, texts[i], strlen(texts[i])};
    char *path = th_path(f->src, "u.cu");
    const char *p = path, *why = NULL;
    gpujit__includes *inc = NULL;
    assert_int_equal(gpujit__includes_scan(&inc, &src, &p, 1, &o), 0);
    assert_true(gpujit__includes_needs_trace(inc, &why));
    assert_non_null(strstr(why, "not certain of"));
    gpujit__includes_free(inc);
    free(path);
  }
  /* and a certain one does not */
  {
    gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
    const char *text = "int a = 1'000; char c = 'x'; // it's fine\n";
    gpujit_source src = {NULL, text, strlen(text)};
    char *path = th_path(f->src, "c.cu");
    const char *p = path;
    gpujit__includes *inc = NULL;
    assert_int_equal(gpujit__includes_scan(&inc, &src, &p, 1, &o), 0);
    assert_false(gpujit__includes_needs_trace(inc, NULL));
    gpujit__includes_free(inc);
    free(path);
  }
}

/* "../x.h" from a header reached through a symlink is beside the link's target, as the kernel
 * resolves it, not beside the link. */
static void test_deps__dotdot_through_a_symlink(void **state)
{
  fx *f = *state;
  char *target = th_path(f->src, "real/sub"), *link = th_path(f->src, "link"), *real = th_path(f->src, "real");
  mkdir(real, 0755);
  mkdir(target, 0755);
  assert_int_equal(symlink(target, link), 0);
  put(f, "real/sub/h.h", "#include \"../x.h\"\n");
  put(f, "real/x.h", "#define V 1\n");
  put(f, "x.h", "#define V 2\n"); /* the lexical \"link/../x.h\": never read */
  put(f, "k.cu", "#include \"link/h.h\"\n" KERNEL);
  assert_int_equal(status(f), GPUJIT_CACHE_MISS);
  assert_int_equal(status(f), GPUJIT_CACHE_HIT);
  put(f, "real/x.h", "#define V 3\n");
  assert_int_equal(status(f), GPUJIT_CACHE_MISS);
  put(f, "x.h", "#define V 4\n"); /* not read: still a hit */
  assert_int_equal(status(f), GPUJIT_CACHE_HIT);
  free(target);
  free(link);
  free(real);
}

/* The toolkit's headers are dependencies too (a CCCL update alone changes them). Separate
 * processes through the CLI: a toolkit root of the test's own (CUDA_PATH) with NVRTC's files. */
static void test_deps__toolkit_header(void **state)
{
  fx *f = *state;
  char *out = NULL, *tk = th_path(f->root, "cuda");
  int rc;
  put(f, "k.cu", "#include <mytk.h>\n" KERNEL);
  rc = th_run(&out,
              "set -e; mkdir -p '%s/include/cccl' '%s/lib64'; for l in /usr/local/cuda/lib64/libnvrtc*.so* "
              "/usr/local/cuda/lib64/libnvJitLink.so*; do ln -sf \"$(readlink -f $l)\" '%s/lib64/'\"$(basename $l)\"; done; "
              "printf '#define V 14\\n' > '%s/include/mytk.h'; cd '%s'; export CUDA_PATH='%s'; g='%s'; "
              "$g build --arch sm_90 --cache-dir '%s' -o a.cubin k.cu | head -1; "
              "$g build --arch sm_90 --cache-dir '%s' -o b.cubin k.cu | head -1; cmp a.cubin b.cubin; "
              "printf '#define V 15\\n' > '%s/include/mytk.h'; "
              "$g build --arch sm_90 --cache-dir '%s' -o c.cubin k.cu | head -1; "
              "$g build --arch sm_90 --no-cache -o d.cubin k.cu >/dev/null; cmp c.cubin d.cubin; ! cmp -s a.cubin c.cubin",
              tk, tk, tk, tk, f->src, tk, GPUJIT_CLI, f->cache_dir, f->cache_dir, tk, f->cache_dir);
  if (rc != 0)
    fail_msg("rc %d:\n%s", rc, out);
  /* miss, hit, then a miss after the toolkit header changed */
  assert_non_null(strstr(out, "miss\n"));
  assert_non_null(strstr(out, " hit "));
  assert_non_null(strstr(strstr(out, " hit "), "miss"));
  free(out);
  free(tk);
}

/* A shared group (the toolkit's headers) changed between two lookups of one long-lived process
 * (a build server's worker, a Python session): the second lookup must miss, however soon. */
static void test_deps__shared_group_changed_in_process(void **state)
{
  fx *f = *state;
  char *h = th_write(f->src, "tk.h", "#define V 2\n"), *tmp = th_path(f->src, "tk.h.new");
  char entry_dir[PATH_MAX], found[33], *out = NULL;
  const char *entry = "0123456789abcdef0123456789abcdef", *key = "fedcba9876543210fedcba9876543210";
  gpujit__deps none = {0}, shared = {0};
  FILE *w;
  assert_int_equal(gpujit__deps_add_file(&shared, h, NULL, "#define V 2\n", 12, gpujit__deps_clock()), 0);
  gpujit__cache_entry_path(entry_dir, sizeof(entry_dir), f->cache, entry);
  assert_int_equal(th_run(&out, "mkdir -p '%s'", entry_dir), 0);
  free(out);
  assert_int_equal(gpujit__manifest_add(f->cache, key, NULL, entry, &none, &shared), 0);
  assert_int_equal(gpujit__manifest_find(f->cache, key, found), 0);
  assert_string_equal(found, entry);
  /* the same size, renamed over it */
  assert_non_null(w = fopen(tmp, "w"));
  fputs("#define V 3\n", w);
  fclose(w);
  assert_int_equal(rename(tmp, h), 0);
  assert_int_equal(gpujit__manifest_find(f->cache, key, found), GPUJIT_ENOENT);
  gpujit__deps_free(&shared);
  free(h);
  free(tmp);
}

/* How many fields the manifest's "stat" of a dependency holds: 1 (size: untrusted) or 5. */
static int stat_fields(const char *text, const char *dep)
{
  const char *p = strstr(text, dep), *q;
  int n = 1;
  assert_non_null(p);
  assert_non_null(p = strstr(p, "\"stat\":"));
  assert_non_null(p = strchr(p + 7, '"'));
  for (q = p + 1; *q && *q != '"'; q++)
    n += *q == ' ';
  return n;
}

static char *manifest_text(const fx *f)
{
  char *out = NULL;
  assert_int_equal(th_run(&out, "cat '%s'/manifests/*/*", f->cache_dir), 0);
  return out;
}

/* A header written within the timestamp granularity of its recording cannot be vouched for by
 * its stat: until a later lookup finds it old enough, its content is hashed. */
static void test_deps__same_timestamp_race(void **state)
{
  fx *f = *state;
  char *h = th_path(f->src, "inc/r.h"), *text;
  struct stat st;
  struct timespec times[2];
  put(f, "k.cu", "#include \"inc/r.h\"\n" KERNEL);
  put(f, "inc/r.h", "#define V 16\n");
  assert_int_equal(stat(h, &st), 0);
  assert_int_equal(status(f), GPUJIT_CACHE_MISS); /* within the second: recorded untrusted */
  text = manifest_text(f);
  assert_int_equal(stat_fields(text, "inc/r.h"), 1); /* its size only: no stat to trust */
  free(text);
  /* Same size, same mtime, other content: only the content hash can tell. */
  put(f, "inc/r.h", "#define V 17\n");
  times[0] = st.st_atim;
  times[1] = st.st_mtim;
  assert_int_equal(utimensat(AT_FDCWD, h, times, 0), 0);
  th_settle(h); /* utimensat stamps its ctime: a compile in that tick would not record it */
  assert_int_equal(status(f), GPUJIT_CACHE_MISS);
  /* Old enough later: a hit that hashed it keeps its stat, and the next one reads nothing. */
  sleep(2);
  assert_int_equal(status(f), GPUJIT_CACHE_HIT);
  text = manifest_text(f);
  assert_int_equal(stat_fields(text, "inc/r.h"), 5); /* size, device, inode, mtime, ctime */
  free(text);
  assert_int_equal(status(f), GPUJIT_CACHE_HIT);
  free(h);
}

static void test_deps__damaged_manifest(void **state)
{
  fx *f = *state;
  static const char *const damage[] = {
      "truncate -s 10 \"$m\"",                               /* truncated */
      "printf 'garbage' > \"$m\"",                           /* garbage */
      "printf 'gpujit-manifest-1 0123456789abcdef\\n{}' > \"$m\"", /* wrong checksum */
      ": > \"$m\"",                                          /* empty */
      "printf '\\377' | dd of=\"$m\" bs=1 seek=40 conv=notrunc 2>/dev/null", /* a flipped byte */
      "rm \"$m\"",                                           /* gone */
  };
  put(f, "inc/h.h", "#define V 18\n");
  put(f, "k.cu", "#include \"inc/h.h\"\n" KERNEL);
  assert_int_equal(status(f), GPUJIT_CACHE_MISS);
  for (size_t i = 0; i < sizeof(damage) / sizeof(damage[0]); i++) {
    char *out = NULL;
    assert_int_equal(th_run(&out, "for m in '%s'/manifests/*/*; do %s; done", f->cache_dir, damage[i]), 0);
    free(out);
    assert_int_equal(status(f), GPUJIT_CACHE_MISS); /* a miss, the right bytes, no crash */
    assert_int_equal(status(f), GPUJIT_CACHE_HIT);  /* and rebuilt */
  }
}

/* A large image served from the cache (mapped, not copied) is still a C string: PTX goes to
 * cuModuleLoadData as one. */
static void test_deps__large_ptx_hit_is_a_string(void **state)
{
  fx *f = *state;
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  const char *src = GPUJIT_EXAMPLES_DIR "/block_reduce.cu";
  gpujit_module *m = NULL;
  const char *img;
  size_t size;
  o.arch = "compute_90";
  o.cache = f->cache;
  o.lean = 0; /* NVRTC's whole PTX: lean, it is 19 KB */
  for (int i = 0; i < 2; i++) {
    assert_int_equal(gpujit_module_build_files(&m, &src, 1, &o), 0);
    assert_int_equal(gpujit_module_cache_status(m), i ? GPUJIT_CACHE_HIT : GPUJIT_CACHE_MISS);
    img = gpujit_module_image(m, &size);
    assert_true(size >= 64 * 1024); /* large enough to be mapped on the hit */
    assert_int_equal(img[size], '\0');
    assert_int_equal(strlen(img), size);
    gpujit_module_free(m);
  }
}

/* The same at the store: a payload of exactly 64 KiB (a page multiple) read back ends in a NUL. */
static void test_deps__page_multiple_payload_is_terminated(void **state)
{
  fx *f = *state;
  static char image[64 * 1024];
  gpujit__cache_put put = {0};
  gpujit__buf got = {0};
  cJSON *meta = cJSON_CreateObject(), *back = NULL;
  memset(image, 'x', sizeof(image));
  put.hex = "0123456789abcdef0123456789abcdef";
  put.meta = meta;
  put.image_name = "image.ptx";
  put.image = image;
  put.image_size = sizeof(image);
  assert_int_equal(gpujit__cache_put_entry(f->cache, &put), 0);
  assert_int_equal(gpujit__cache_get(f->cache, put.hex, &back, &got, NULL), 0);
  assert_int_equal(got.len, sizeof(image));
  assert_memory_equal(got.data, image, sizeof(image));
  assert_int_equal(got.data[got.len], '\0');
  gpujit__buf_free(&got);
  cJSON_Delete(back);
  cJSON_Delete(meta);
}

/* A source dump name no import or remote bundle would take (relative, "." or ".." in it) is
 * refused by the store itself: nothing published, the error naming the path. */
static void test_deps__dump_name_refused_at_the_store(void **state)
{
  fx *f = *state;
  static const char *const bad[] = {"inc/h.h", "/a/../h.h", "/a/./h.h", "/a//h.h", "/"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
    gpujit__cache_file file = {bad[i], "#define H 1\n", 12};
    gpujit__cache_put put = {0};
    cJSON *meta = cJSON_CreateObject(), *back = NULL;
    gpujit__buf got = {0};
    put.hex = "0123456789abcdef0123456789abcdef";
    put.meta = meta;
    put.image_name = "image.ptx";
    put.image = "x";
    put.image_size = 1;
    put.sources = &file;
    put.sources_count = 1;
    assert_int_equal(gpujit__cache_put_entry(f->cache, &put), GPUJIT_EINVAL);
    if (!strstr(gpujit_error_last(), bad[i]))
      fail_msg("'%s' not named in '%s'", bad[i], gpujit_error_last());
    assert_int_not_equal(gpujit__cache_get(f->cache, put.hex, &back, &got, NULL), 0);
    gpujit_error_clear();
    gpujit__buf_free(&got);
    cJSON_Delete(back);
    cJSON_Delete(meta);
  }
}

/* Copies n bytes so that they end where an unreadable page begins: a reader that runs past the
 * record's end (looking for a NUL, say) faults here instead of reading on unnoticed. */
static char *at_page_end(void **map, size_t *maplen, const char *s, size_t n)
{
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  char *m;
  assert_true(n <= page);
  *maplen = 2 * page;
  m = mmap(NULL, *maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_true(m != MAP_FAILED);
  assert_int_equal(mprotect(m + page, page, PROT_NONE), 0);
  memset(m, 'x', page);
  memcpy(m + page - n, s, n);
  *map = m;
  return m + page - n;
}

/* A record read from disk or the network need not end in a NUL: an escape or a checksum at its
 * very end is read within its bytes (the fuzzer found sscanf and strtoull reading past both). */
static void test_deps__records_are_read_within_their_bytes(void **state)
{
  static const char *const blob[] = {"m \n 12", "m 12", "m \n"};
  size_t off, maplen;
  char why[128];
  void *map;
  (void)state;
  for (size_t i = 0; i < sizeof(blob) / sizeof(blob[0]); i++) {
    const char *p = at_page_end(&map, &maplen, blob[i], strlen(blob[i]));
    assert_int_equal(gpujit__blob_check(p, strlen(blob[i]), &off, "m", why, sizeof(why)), GPUJIT_ECORRUPT);
    munmap(map, maplen);
  }
  {
    /* and a good one still passes: "m <xxh3 of 'ok'>\nok" */
    char text[64];
    const char *p;
    int n = snprintf(text, sizeof(text), "m %llx\nok", (unsigned long long)XXH3_64bits("ok", 2));
    p = at_page_end(&map, &maplen, text, (size_t)n);
    assert_int_equal(gpujit__blob_check(p, (size_t)n, &off, "m", why, sizeof(why)), 0);
    assert_int_equal(off, (size_t)n - 2);
    munmap(map, maplen);
  }
}

/* A worker's kept include scans (gpujit__includes_memo_enable): used again for an edit outside
 * the directives, never once anything they depend on moved — a header's bytes (same size), a
 * header appearing earlier in the search order, one appearing where a lookup found nothing, a
 * directive edited. */
static size_t scan_of(const char *path, const char *text, const gpujit_module_options *o, const char *want,
                      const char *want_data)
{
  gpujit_source s = {path, text, strlen(text)};
  gpujit__includes *inc = NULL;
  size_t n, found = 0;
  assert_int_equal(gpujit__includes_scan(&inc, &s, &path, 1, o), 0);
  n = gpujit__includes_count(inc);
  for (size_t i = 0; i < n; i++) {
    const char *data;
    size_t size;
    const char *p = gpujit__includes_path(inc, i, &data, &size);
    if (strcmp(p, want) == 0) {
      found++;
      if (want_data)
        assert_true(size == strlen(want_data) && memcmp(data, want_data, size) == 0);
    }
  }
  gpujit__includes_free(inc);
  return found;
}

static void test_deps__kept_scans(void **state)
{
  fx *f = *state;
  char *k = th_path(f->src, "k.cu"), *d1 = th_path(f->src, "d1"), *d2 = th_path(f->src, "d2");
  char *h = (mkdir(d1, 0755), mkdir(d2, 0755), th_write(d2, "h.h", "#define A 1\n"));
  char *h1 = th_path(d1, "h.h"), *maybe = th_path(f->src, "maybe.h");
  const char *dirs[] = {d1, d2};
  const char *text = "#include <h.h>\n#if 0\n#include \"maybe.h\"\n#endif\nint x;\n";
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  size_t hits;
  o.include_dirs = dirs;
  o.include_dirs_count = 2;
  gpujit__includes_memo_enable(4);
  usleep(1200000); /* older than the race window: a scan of them may be kept */
  hits = gpujit__includes_memo_hits();
  assert_int_equal(scan_of(k, text, &o, h, "#define A 1\n"), 1);
  assert_int_equal(gpujit__includes_memo_hits(), hits);
  /* the body edited: the kept scan */
  assert_int_equal(scan_of(k, "#include <h.h>\n#if 0\n#include \"maybe.h\"\n#endif\nint y, z;\n", &o, h, "#define A 1\n"), 1);
  assert_int_equal(gpujit__includes_memo_hits(), hits + 1);
  /* a directive edited: another scan */
  assert_int_equal(scan_of(k, "#include <h.h>\n#define B\nint x;\n", &o, h, NULL), 1);
  assert_int_equal(gpujit__includes_memo_hits(), hits + 1);
  /* the header's bytes, same size: read again */
  free(th_write(d2, "h.h", "#define A 2\n"));
  assert_int_equal(scan_of(k, text, &o, h, "#define A 2\n"), 1);
  assert_int_equal(gpujit__includes_memo_hits(), hits + 1);
  usleep(1200000);
  assert_int_equal(scan_of(k, text, &o, h, "#define A 2\n"), 1); /* kept again */
  assert_int_equal(scan_of(k, text, &o, h, "#define A 2\n"), 1);
  assert_int_equal(gpujit__includes_memo_hits(), hits + 2);
  /* a header found nowhere appears: a dependency now */
  free(th_write(f->src, "maybe.h", "\n"));
  assert_int_equal(scan_of(k, text, &o, maybe, NULL), 1);
  assert_int_equal(gpujit__includes_memo_hits(), hits + 2);
  /* one earlier in the search order: it is the header now */
  usleep(1200000);
  assert_int_equal(scan_of(k, text, &o, h, NULL), 1); /* kept */
  free(th_write(d1, "h.h", "#define A 3\n"));
  assert_int_equal(scan_of(k, text, &o, h1, "#define A 3\n"), 1);
  assert_int_equal(scan_of(k, text, &o, h, NULL), 0);
  assert_int_equal(gpujit__includes_memo_hits(), hits + 2);
  free(k), free(d1), free(d2), free(h), free(h1), free(maybe);
}

/* A damaged toolkit group is a miss with the right bytes, never a crash or a stale hit; a group
 * of a form earlier versions wrote (here the JSON of gpujit-deps-1) is not read: a clean miss —
 * not an error, not counted as damage — and the build stores the group again in this form. */
static void test_deps__damaged_group(void **state)
{
  fx *f = *state;
  static const char *const damage[] = {
      "truncate -s 10 \"$g\"",
      "printf 'gpujit-deps-2 0123456789abcdef\\nf 1 - - - x /y\\n' > \"$g\"",
      ": > \"$g\"",
      "printf '\\377' | dd of=\"$g\" bs=1 seek=60 conv=notrunc 2>/dev/null",
      "rm \"$g\"",
  };
  char *out = NULL, *path = NULL;
  gpujit__deps back;
  char why[128];
  put(f, "k.cu", "#include <cuda/std/cstddef>\n#define V ((int)sizeof(cuda::std::size_t))\n" KERNEL);
  assert_int_equal(status(f), GPUJIT_CACHE_MISS);
  assert_int_equal(status(f), GPUJIT_CACHE_HIT);
  /* separate processes: a process checks a group once a second at most */
  for (size_t i = 0; i < sizeof(damage) / sizeof(damage[0]); i++) {
    int rc = th_run(&out,
                    "exec 2>&1; set -e; cd '%s'; ls '%s'/deps/*/* | wc -l; for g in '%s'/deps/*/*; do %s; done; "
                    "g='%s'; $g build --arch sm_90 --cache-dir '%s' -o a.cubin k.cu | head -1; "
                    "LSAN_OPTIONS=\"$LSAN_OPTIONS:detect_leaks=0\" ASAN_OPTIONS=\"$ASAN_OPTIONS:detect_leaks=0\" $g build --arch sm_90 --no-cache -o b.cubin k.cu >/dev/null; "
                    "cmp a.cubin b.cubin; "
                    "$g build --arch sm_90 --cache-dir '%s' -o c.cubin k.cu | head -1; cmp a.cubin c.cubin",
                    f->src, f->cache_dir, f->cache_dir, damage[i], GPUJIT_CLI, f->cache_dir, f->cache_dir);
    if (rc != 0)
      fail_msg("damage %zu: rc %d:\n%s", i, rc, out);
    assert_int_equal(atoi(out), 1); /* one group: the toolkit's headers */
    assert_non_null(strstr(out, "miss\n"));                /* the damaged group: a miss */
    if (!strstr(strstr(out, "miss\n"), " hit ")) /* then a hit again */
      fail_msg("damage %zu: no hit after the miss:\n%s", i, out);
    free(out);
  }
  /* gpujit-deps-1 (the JSON earlier versions wrote) is not read: a miss, not damage */
  assert_int_equal(th_run(&path, "printf %%s \"$(ls '%s'/deps/*/*)\"", f->cache_dir), 0);
  assert_int_equal(gpujit__group_read(path, &back, why, sizeof(why)), 0);
  {
    cJSON *j = gpujit__deps_to_json(&back);
    char *text = cJSON_PrintUnformatted(j);
    assert_int_equal(gpujit__write_blob(f->cache_dir, path, "gpujit-deps-1", text, strlen(text)), 0);
    free(text);
    cJSON_Delete(j);
  }
  gpujit__deps_free(&back);
  assert_int_equal(gpujit__group_read(path, &back, why, sizeof(why)), GPUJIT_ECORRUPT);
  assert_string_equal(why, "of an earlier form (gpujit-deps-1), no longer read");
  gpujit__deps_free(&back);
  {
    gpujit_cache_stats before, after;
    gpujit_module *m;
    assert_int_equal(gpujit_cache_stats_get(f->cache, &before), 0);
    m = build_with(f, true, NULL, 0); /* no error: a build */
    assert_int_equal(gpujit_module_cache_status(m), GPUJIT_CACHE_MISS);
    if (!strstr(gpujit_module_cache_miss_reason(m), "earlier form (gpujit-deps-1)"))
      fail_msg("miss reason: %s", gpujit_module_cache_miss_reason(m));
    gpujit_module_free(m);
    assert_int_equal(gpujit_cache_stats_get(f->cache, &after), 0);
    assert_int_equal(after.corrupt, before.corrupt); /* a miss, not damage */
  }
  assert_int_equal(th_run(&out, "head -c 14 '%s'", path), 0);
  assert_string_equal(out, "gpujit-deps-4 "); /* stored again in this form */
  free(out);
  assert_int_equal(status(f), GPUJIT_CACHE_HIT);
  free(path);
}

/* `cache clear` leaves no record naming a removed entry: the next build is a plain miss. */
static void test_deps__clear_takes_the_records(void **state)
{
  fx *f = *state;
  char *out = NULL;
  uint64_t removed = 0;
  put(f, "inc/h.h", "#define V 21\n");
  put(f, "k.cu", "#include \"inc/h.h\"\n" KERNEL);
  assert_int_equal(status(f), GPUJIT_CACHE_MISS);
  assert_int_equal(gpujit_cache_clear(f->cache, &removed), 0);
  assert_int_equal(removed, 1);
  assert_int_equal(th_run(&out, "find '%s'/manifests '%s'/deps -type f 2>/dev/null | wc -l", f->cache_dir,
                          f->cache_dir), 0);
  assert_int_equal(atoi(out), 0);
  free(out);
  assert_int_equal(status(f), GPUJIT_CACHE_MISS);
  assert_int_equal(status(f), GPUJIT_CACHE_HIT);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_deps__computed_include, setup, teardown),
    cmocka_unit_test_setup_teardown(test_deps__computed_include_nested_in_header, setup, teardown),
    cmocka_unit_test_setup_teardown(test_deps__include_only_nvrtc_can_name, setup, teardown),
    cmocka_unit_test_setup_teardown(test_deps__has_include, setup, teardown),
    cmocka_unit_test_setup_teardown(test_deps__has_include_through_a_macro, setup, teardown),
    cmocka_unit_test_setup_teardown(test_deps__earlier_include_directory, setup, teardown),
    cmocka_unit_test_setup_teardown(test_deps__include_next, setup, teardown),
    cmocka_unit_test_setup_teardown(test_deps__directive_spellings, setup, teardown),
    cmocka_unit_test_setup_teardown(test_deps__character_literal_after_identifier, setup, teardown),
    cmocka_unit_test_setup_teardown(test_deps__uncertain_reading_asks_nvrtc, setup, teardown),
    cmocka_unit_test_setup_teardown(test_deps__dotdot_through_a_symlink, setup, teardown),
    cmocka_unit_test_setup_teardown(test_deps__toolkit_header, setup, teardown),
    cmocka_unit_test_setup_teardown(test_deps__same_timestamp_race, setup, teardown),
    cmocka_unit_test_setup_teardown(test_deps__shared_group_changed_in_process, setup, teardown),
    cmocka_unit_test_setup_teardown(test_deps__damaged_manifest, setup, teardown),
    cmocka_unit_test_setup_teardown(test_deps__large_ptx_hit_is_a_string, setup, teardown),
    cmocka_unit_test_setup_teardown(test_deps__page_multiple_payload_is_terminated, setup, teardown),
    cmocka_unit_test_setup_teardown(test_deps__damaged_group, setup, teardown),
    cmocka_unit_test(test_deps__records_are_read_within_their_bytes),
    cmocka_unit_test_setup_teardown(test_deps__clear_takes_the_records, setup, teardown),
    cmocka_unit_test_setup_teardown(test_deps__dump_name_refused_at_the_store, setup, teardown),
    cmocka_unit_test_setup_teardown(test_deps__kept_scans, setup, teardown), /* last: it keeps scans */
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
