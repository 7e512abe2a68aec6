/* What a compile is seen to read (compile/observe/observe.c): NVRTC's probes in search order with their
 * answers, nothing of the host program's own file activity, one compile's probes apart from a
 * concurrent one's, and a compile that cannot be observed not cached, saying why. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>

#include "helpers.h"
#include "gpujit.h"
#include "compile/nvrtc/nvrtc.h"
#include "compile/observe/observe.h"

/* Where NVRTC cannot be observed (another architecture), say so and skip. */
#define skip_msg(...)        \
  do {                       \
    print_message(__VA_ARGS__); \
    print_message("\n");     \
    skip();                  \
  } while (0)

static const gpujit__probe *probe(const gpujit__observed *o, const char *path)
{
  for (size_t i = 0; i < o->count; i++)
    if (!strcmp(o->items[i].path, path))
      return &o->items[i];
  return NULL;
}

/* One NVRTC compile of `source` named `name`, with these -I directories; its record in `out`. */
static void compile(gpujit__observed *out, const char *name, const char *source, const char *const *dirs, size_t n)
{
  gpujit__strvec flags = {0};
  gpujit__nvrtc_result res = {0};
  gpujit__nvrtc_request req = {0};
  assert_int_equal(gpujit__strvec_push(&flags, "-arch=compute_90"), 0);
  for (size_t i = 0; i < n; i++)
    assert_int_equal(gpujit__strvec_pushf(&flags, "-I%s", dirs[i]), 0);
  req.source = source;
  req.program_name = name;
  req.flags = &flags;
  req.output = GPUJIT_OUTPUT_PTX;
  if (gpujit__nvrtc_compile(&res, &req) != 0)
    fail_msg("compile failed: %s\n%s", gpujit_error_last(), gpujit_error_log());
  assert_int_equal(gpujit__observed_copy(out, &res.observed), 0);
  gpujit__nvrtc_result_free(&res);
  gpujit__strvec_free(&flags);
}

/* A found header (read), the candidates before it (absent), a __has_include that failed
 * everywhere: each with its answer, in the order NVRTC made them. */
static void test_observe__probes_in_search_order(void **state)
{
  char *dir = th_tmpdir(), *a = th_path(dir, "a"), *b = th_path(dir, "b"), *src = th_path(dir, "k.cu");
  char *h = NULL, path[4096];
  const char *dirs[] = {a, b};
  gpujit__observed o = {0};
  const gpujit__probe *p;
  size_t at_a = 0, at_b = 0;
  (void)state;
  assert_int_equal(mkdir(a, 0755), 0);
  assert_int_equal(mkdir(b, 0755), 0);
  h = th_write(b, "h.h", "#define V 3\n");
  compile(&o, src, "#include \"h.h\"\n#if __has_include(<nope.h>)\n#error\n#endif\n"
                   "extern \"C\" __global__ void k(int *x) { x[0] = V; }\n", dirs, 2);
  if (gpujit__observe_unavailable())
    skip_msg("observing NVRTC is not possible here: %s", gpujit__observe_unavailable());
  assert_string_equal(o.why, "");
  snprintf(path, sizeof(path), "%s/h.h", dir); /* the includer's directory first */
  assert_non_null(p = probe(&o, path));
  assert_int_equal(p->kind, GPUJIT__PROBE_ABSENT);
  snprintf(path, sizeof(path), "%s/h.h", a);
  assert_non_null(p = probe(&o, path));
  assert_int_equal(p->kind, GPUJIT__PROBE_ABSENT);
  at_a = (size_t)(p - o.items);
  assert_non_null(p = probe(&o, h));
  assert_int_equal(p->kind, GPUJIT__PROBE_FILE);
  assert_true(p->read);
  assert_int_equal(p->size, strlen("#define V 3\n"));
  at_b = (size_t)(p - o.items);
  assert_true(at_a < at_b); /* search order */
  snprintf(path, sizeof(path), "%s/nope.h", b); /* every -I directory for the failed probe */
  assert_non_null(p = probe(&o, path));
  assert_int_equal(p->kind, GPUJIT__PROBE_ABSENT);
  assert_false(p->read);
  gpujit__observed_free(&o);
  th_rmrf(dir);
  free(a);
  free(b);
  free(h);
  free(src);
  free(dir);
}

/* The host program's own stats and opens during a compile are not NVRTC's: never recorded. */
typedef struct host_loop {
  const char *path;
  volatile int stop;
  unsigned long calls;
} host_loop;

static void *host_stats(void *arg)
{
  host_loop *l = arg;
  struct stat st;
  while (!l->stop) {
    FILE *f = fopen(l->path, "r");
    if (f)
      fclose(f);
    stat(l->path, &st);
    l->calls++;
  }
  return NULL;
}

static void test_observe__host_activity_unseen(void **state)
{
  char *dir = th_tmpdir(), *src = th_path(dir, "k.cu"), *mine = th_write(dir, "host_only.txt", "x");
  gpujit__observed o = {0};
  host_loop l = {mine, 0, 0};
  pthread_t t;
  (void)state;
  assert_int_equal(pthread_create(&t, NULL, host_stats, &l), 0);
  compile(&o, src, "extern \"C\" __global__ void k(int *x) { x[0] = 1; }\n", NULL, 0);
  l.stop = 1;
  pthread_join(t, NULL);
  if (gpujit__observe_unavailable())
    skip_msg("observing NVRTC is not possible here: %s", gpujit__observe_unavailable());
  assert_true(l.calls > 0);
  assert_null(probe(&o, mine));
  assert_non_null(probe(&o, src)); /* NVRTC's own look at its program name is there */
  gpujit__observed_free(&o);
  th_rmrf(dir);
  free(mine);
  free(src);
  free(dir);
}

/* Two threads compiling at once: each record holds its own header and not the other's. */
typedef struct job {
  const char *dir, *name, *header;
  gpujit__observed o;
} job;

static void *compile_job(void *arg)
{
  job *j = arg;
  char src[4096], text[256];
  const char *dirs[] = {j->dir};
  snprintf(src, sizeof(src), "%s/%s.cu", j->dir, j->name);
  snprintf(text, sizeof(text), "#include \"%s\"\nextern \"C\" __global__ void k(int *x) { x[0] = V; }\n", j->header);
  compile(&j->o, src, text, dirs, 1);
  return NULL;
}

static void test_observe__concurrent_compiles_apart(void **state)
{
  char *dir = th_tmpdir(), *h1 = th_write(dir, "one.h", "#define V 1\n"), *h2 = th_write(dir, "two.h", "#define V 2\n");
  job a = {dir, "a", "one.h", {0}}, b = {dir, "b", "two.h", {0}};
  pthread_t ta, tb;
  (void)state;
  for (int round = 0; round < 3; round++) {
    assert_int_equal(pthread_create(&ta, NULL, compile_job, &a), 0);
    assert_int_equal(pthread_create(&tb, NULL, compile_job, &b), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    if (gpujit__observe_unavailable())
      skip_msg("observing NVRTC is not possible here: %s", gpujit__observe_unavailable());
    assert_non_null(probe(&a.o, h1));
    assert_null(probe(&a.o, h2));
    assert_non_null(probe(&b.o, h2));
    assert_null(probe(&b.o, h1));
    gpujit__observed_free(&a.o);
    gpujit__observed_free(&b.o);
  }
  th_rmrf(dir);
  free(h1);
  free(h2);
  free(dir);
}

/* A record merged from another (a PCH's maker) and checked again later: a file that changes, or
 * a path that appears, no longer holds. */
static void test_observe__holds_until_a_probe_changes(void **state)
{
  char *dir = th_tmpdir(), *a = th_path(dir, "a"), *src = th_path(dir, "k.cu"), *h = NULL, *early = NULL, why[512];
  const char *dirs[] = {a, dir};
  gpujit__observed o = {0}, merged = {0};
  (void)state;
  assert_int_equal(mkdir(a, 0755), 0);
  h = th_write(dir, "inc.h", "#define V 1\n");
  compile(&o, src, "#include <inc.h>\nextern \"C\" __global__ void k(int *x) { x[0] = V; }\n", dirs, 2);
  if (gpujit__observe_unavailable())
    skip_msg("observing NVRTC is not possible here: %s", gpujit__observe_unavailable());
  assert_int_equal(gpujit__observed_merge(&merged, &o), 0);
  assert_true(gpujit__observed_holds(&merged, why, sizeof(why)));
  early = th_write(a, "inc.h", "#define V 2\n"); /* earlier on the search path now */
  assert_false(gpujit__observed_holds(&merged, why, sizeof(why)));
  assert_non_null(strstr(why, "a/inc.h is a file now"));
  unlink(early);
  assert_true(gpujit__observed_holds(&merged, why, sizeof(why)));
  free(th_write(dir, "inc.h", "#define V 3\n"));
  assert_false(gpujit__observed_holds(&merged, why, sizeof(why)));
  gpujit__observed_free(&o);
  gpujit__observed_free(&merged);
  th_rmrf(dir);
  free(a);
  free(h);
  free(early);
  free(src);
  free(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_observe__probes_in_search_order),
      cmocka_unit_test(test_observe__host_activity_unseen),
      cmocka_unit_test(test_observe__concurrent_compiles_apart),
      cmocka_unit_test(test_observe__holds_until_a_probe_changes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
