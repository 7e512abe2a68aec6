/* What a compile reads, predicted (src/compile/includes): directive lines as the preprocessor
 * reads them, NVRTC's search order and computed includes. (What a compile read is observed, not
 * predicted: tests/compile/observe.) */
#include "helpers.h"

#include "base/buf.h"
#include "compile/includes/directives.h"
#include "compile/includes/includes.h"
#include "compile/toolkit/toolkit.h"
#include "gpujit.h"

static void test_includes__directive_lines(void **state)
{
  static const char text[] = "/* c */ #include \"a.h\"\n"
                             "%:include <b.h>\n"
                             "#inc\\\nlude \"c.h\"\n"
                             "int x; // #include \"not.h\"\n"
                             "const char *s = R\"(\n#include \"raw.h\"\n)\";\n"
                             "#define Q '\"'\n";
  gpujit__buf out = {0};
  bool unsure = true;
  (void)state;
  assert_int_equal(gpujit__directive_lines(&out, text, sizeof(text) - 1, &unsure), 0);
  assert_false(unsure);
  assert_non_null(strstr(out.data, "#include \"a.h\"\n")); /* the comment before '#' is blank space */
  assert_non_null(strstr(out.data, "#include <b.h>\n"));   /* %: is # */
  assert_non_null(strstr(out.data, "#include \"c.h\"\n"));  /* a backslash-newline joins */
  assert_null(strstr(out.data, "not.h"));                  /* in a comment */
  assert_null(strstr(out.data, "raw.h"));                  /* in a raw string */
  assert_non_null(strstr(out.data, "#define Q '\"'"));    /* a quote in a character literal */
  /* a comment left open at the end: the reading may have missed a directive */
  assert_int_equal(gpujit__directive_lines(&out, "/* open\n#include \"x.h\"\n", 24, &unsure), 0);
  assert_true(unsure);
  gpujit__buf_free(&out);
}

typedef struct scan {
  char *root, *src;
  gpujit__includes *inc;
} scan;

static int run_scan(scan *s, const char *text, const char *const *dirs, size_t ndirs, const char *const *defines,
                    size_t ndefines)
{
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_source src = {NULL, text, strlen(text)};
  const char *path = s->src;
  o.include_dirs = dirs;
  o.include_dirs_count = ndirs;
  o.defines = defines;
  o.defines_count = ndefines;
  return gpujit__includes_scan(&s->inc, &src, &path, 1, &o);
}

static bool found(const gpujit__includes *inc, const char *path)
{
  for (size_t i = 0; i < gpujit__includes_count(inc); i++)
    if (!strcmp(gpujit__includes_path(inc, i, NULL, NULL), path))
      return true;
  return false;
}

static int setup(void **state)
{
  scan *s = calloc(1, sizeof(*s));
  char *d;
  s->root = th_tmpdir();
  s->src = th_path(s->root, "k.cu");
  d = th_path(s->root, "d1");
  mkdir(d, 0755);
  free(d);
  d = th_path(s->root, "d2");
  mkdir(d, 0755);
  free(d);
  *state = s;
  return 0;
}

static int teardown(void **state)
{
  scan *s = *state;
  gpujit__includes_free(s->inc);
  th_rmrf(s->root);
  free(s->root);
  free(s->src);
  free(s);
  return 0;
}

/* NVRTC's order: "q.h" beside the includer first, then each -I in turn: <a.h> is d2's, d1 having
 * none, and what d2/a.h includes is found beside it. */
static void test_includes__search_order(void **state)
{
  scan *s = *state;
  char *d1 = th_path(s->root, "d1"), *d2 = th_path(s->root, "d2");
  char *q = th_write(s->root, "q.h", "int q;\n"), *a = th_write(d2, "a.h", "#include \"b.h\"\n");
  char *b = th_write(d2, "b.h", "int b;\n"), *a1 = th_path(d1, "a.h");
  const char *dirs[] = {d1, d2};
  assert_int_equal(run_scan(s, "#include \"q.h\"\n#include <a.h>\n", dirs, 2, NULL, 0), 0);
  assert_true(found(s->inc, q));
  assert_true(found(s->inc, a));
  assert_true(found(s->inc, b)); /* "b.h" beside its includer, d2/a.h */
  assert_false(found(s->inc, a1));
  assert_int_equal(gpujit__includes_count(s->inc), 3);
  free(d1), free(d2), free(q), free(a), free(b), free(a1);
}

/* A computed include (#include MACRO) is followed through -D; __has_include is a test, not a
 * read: the header it names is no part of the prediction. */
static void test_includes__computed(void **state)
{
  scan *s = *state;
  char *d1 = th_path(s->root, "d1"), *c = th_write(d1, "c.h", "int c;\n"), *maybe = th_write(d1, "maybe.h", "int m;\n");
  const char *dirs[] = {d1}, *defines[] = {"HDR=\"c.h\""};
  assert_int_equal(run_scan(s, "#if __has_include(<maybe.h>)\n#endif\n#include HDR\n", dirs, 1, defines, 1), 0);
  assert_true(found(s->inc, c));
  assert_false(found(s->inc, maybe));
  assert_false(gpujit__includes_needs_trace(s->inc, NULL));
  free(d1), free(c), free(maybe);
}

/* Kept headers (a worker's, gpujit__inc_files_keep): a later scan takes the toolkit's unchanged
 * headers from memory, with the same result; the user's own headers are always read anew. */
static void test_includes__kept_headers(void **state)
{
  scan *s = *state;
  char cccl[4200], inc[4200];
  const char *root = gpujit__cuda_root(), *dirs[2] = {cccl, inc};
  char *q = th_write(s->root, "q.h", "#include \"r.h\"\n"), *r = th_write(s->root, "r.h", "int r;\n");
  char *t = th_write(s->root, "t.h", "int t;\n");
  const char *text = "#include <cuda/std/type_traits>\n#include \"q.h\"\n";
  size_t h0, h1, files;
  if (!root)
    skip();
  snprintf(cccl, sizeof(cccl), "%s/include/cccl", root);
  snprintf(inc, sizeof(inc), "%s/include", root);
  gpujit__inc_files_keep((size_t)64 << 20);
  h0 = gpujit__inc_files_hits();
  assert_int_equal(run_scan(s, text, dirs, 2, NULL, 0), 0);
  files = gpujit__includes_count(s->inc);
  assert_true(files > 10);
  assert_true(found(s->inc, r));
  gpujit__includes_free(s->inc);
  assert_int_equal(run_scan(s, text, dirs, 2, NULL, 0), 0);
  h1 = gpujit__inc_files_hits();
  assert_int_equal(h1 - h0, files - 2); /* every toolkit header from memory; q.h and r.h read */
  assert_int_equal(gpujit__includes_count(s->inc), files);
  assert_true(found(s->inc, r));
  gpujit__includes_free(s->inc);
  free(th_write(s->root, "q.h", "#include \"t.h\"\n")); /* the user's header changed: followed */
  assert_int_equal(run_scan(s, text, dirs, 2, NULL, 0), 0);
  assert_true(found(s->inc, t));
  assert_false(found(s->inc, r));
  gpujit__inc_files_keep(0);
  free(q), free(r), free(t);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_includes__directive_lines),
      cmocka_unit_test_setup_teardown(test_includes__search_order, setup, teardown),
      cmocka_unit_test_setup_teardown(test_includes__computed, setup, teardown),
      cmocka_unit_test_setup_teardown(test_includes__kept_headers, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
