/* What a compile is seen to read (compile/observe/observe.c): NVRTC's probes in search order with their
 * answers, nothing of the host program's own file activity, one compile's probes apart from a
 * concurrent one's, and a compile that cannot be observed not cached, saying why. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"
#include "gpujit.h"
#include "compile/nvrtc/nvrtc.h"
#include "compile/observe/observe.h"
#include "compile/observe/observe_note.h"
#include "compile/toolkit/toolkit.h"

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


/* ---- the host program's own compiles through the same NVRTC ---- */

typedef int (*create_fn)(void **, const char *, const char *, int, const char *const *, const char *const *);
typedef int (*compile_fn)(void *, int, const char *const *);
typedef int (*destroy_fn)(void **);

typedef struct foreign {
  const char *dir;
  volatile int stop;
  int compiles, failed;
} foreign;

/* The program compiling with raw NVRTC — the very library gpujit loaded — on its own thread, a
 * header of its own, until told to stop. */
static void *foreign_compiles(void *arg)
{
  foreign *f = arg;
  void *h = dlopen(gpujit__nvrtc_library_path(), RTLD_NOW | RTLD_NOLOAD);
  create_fn create = h ? (create_fn)dlsym(h, "nvrtcCreateProgram") : NULL;
  compile_fn comp = h ? (compile_fn)dlsym(h, "nvrtcCompileProgram") : NULL;
  destroy_fn destroy = h ? (destroy_fn)dlsym(h, "nvrtcDestroyProgram") : NULL;
  char inc[4200];
  const char *opts[] = {"-arch=compute_90", inc};
  snprintf(inc, sizeof(inc), "-I%s", f->dir);
  if (!create || !comp || !destroy) {
    f->failed = -1;
    return NULL;
  }
  while (!f->stop) {
    void *prog = NULL;
    create(&prog, "#include \"foreign_only.h\"\nextern \"C\" __global__ void g(int *x) { x[0] = F; }\n", "g.cu", 0,
           NULL, NULL);
    if (comp(prog, 2, opts) != 0)
      f->failed++;
    destroy(&prog);
    f->compiles++;
  }
  dlclose(h);
  return NULL;
}

/* Compiles the program makes through the same NVRTC at the same time are never gpujit's: none of
 * their probes is in its records, and none makes a record unfit. */
static void test_observe__foreign_compiles_not_ours(void **state)
{
  char *dir = th_tmpdir(), *fh = th_write(dir, "foreign_only.h", "#define F 3\n"),
       *mine_h = th_write(dir, "mine.h", "#define V 1\n"), *src = th_path(dir, "k.cu");
  const char *dirs[] = {dir};
  foreign f = {dir, 0, 0, 0};
  gpujit__observed o = {0};
  pthread_t t;
  int overlapped = 0;
  (void)state;
  compile(&o, src, "extern \"C\" __global__ void k(int *x) { x[0] = 0; }\n", NULL, 0); /* NVRTC loaded */
  gpujit__observed_free(&o);
  if (gpujit__observe_unavailable())
    skip_msg("observing NVRTC is not possible here: %s", gpujit__observe_unavailable());
  assert_int_equal(pthread_create(&t, NULL, foreign_compiles, &f), 0);
  for (int round = 0; round < 6; round++) {
    int before = f.compiles;
    compile(&o, src, "#include \"mine.h\"\nextern \"C\" __global__ void k(int *x) { x[0] = V; }\n", dirs, 1);
    overlapped += f.compiles > before;
    assert_string_equal(o.why, "");
    assert_string_equal(o.refused, "");
    assert_null(probe(&o, fh));
    assert_non_null(probe(&o, mine_h));
    gpujit__observed_free(&o);
  }
  f.stop = 1;
  pthread_join(t, NULL);
  assert_int_equal(f.failed, 0);
  assert_true(f.compiles > 0);
  print_message("foreign compiles: %d, during %d of 6 of gpujit's\n", f.compiles, overlapped);
  th_rmrf(dir);
  free(fh);
  free(mine_h);
  free(src);
  free(dir);
}

static const gpujit__env_read *env_of(const gpujit__observed *o, const char *name)
{
  for (size_t i = 0; i < o->env_count; i++)
    if (!strcmp(o->env[i].name, name))
      return &o->env[i];
  return NULL;
}

/* What NVRTC reads besides files: each variable it reads in the compile, set or not, with its
 * value; those it read when it was loaded; the builtins library it mapped (found among the
 * process's mapped objects, not guessed from a name); never PWD. */
static void test_observe__environment_and_libraries(void **state)
{
  char *dir = th_tmpdir(), *src = th_path(dir, "k.cu");
  gpujit__observed o = {0};
  const gpujit__env_read *e;
  bool lib = false;
  (void)state;
  setenv("NVRTC_APPEND_FLAGS", "-DFROM_ENV=1", 1);
  unsetenv("NVRTCWIZ");
  compile(&o, src, "extern \"C\" __global__ void k(int *x) { x[0] = 1; }\n", NULL, 0);
  unsetenv("NVRTC_APPEND_FLAGS");
  if (gpujit__observe_unavailable())
    skip_msg("observing NVRTC is not possible here: %s", gpujit__observe_unavailable());
  assert_non_null(e = env_of(&o, "NVRTC_APPEND_FLAGS"));
  assert_string_equal(e->value, "-DFROM_ENV=1");
  assert_non_null(e = env_of(&o, "NVRTCWIZ"));
  assert_null(e->value);
  assert_non_null(env_of(&o, "NVRTC_DISABLE_PCH")); /* read while NVRTC was loaded */
  assert_non_null(env_of(&o, "LD_LIBRARY_PATH"));   /* it chose the builtins */
  assert_null(env_of(&o, "PWD"));
  for (size_t i = 0; i < o.count; i++) /* the builtins, and whatever else the loader mapped for it */
    if (o.items[i].library) {
      struct stat st;
      lib |= strstr(o.items[i].path, "libnvrtc-builtins") != NULL;
      assert_null(strstr(o.items[i].path, "libcuda.so")); /* never the driver */
      assert_int_equal(stat(o.items[i].path, &st), 0);
      assert_int_equal((uint64_t)st.st_ino, o.items[i].ino);
    }
  assert_true(lib);
  gpujit__observed_free(&o);
  th_rmrf(dir);
  free(src);
  free(dir);
}

/* ---- fork while another thread compiles ---- */

typedef struct looping {
  const char *dir;
  volatile int stop;
  int compiles;
} looping;

static void *compile_loop(void *arg)
{
  looping *l = arg;
  char src[4200];
  snprintf(src, sizeof(src), "%s/loop.cu", l->dir);
  while (!l->stop) {
    gpujit__observed o = {0};
    compile(&o, src, "extern \"C\" __global__ void k(int *x) { x[0] = 2; }\n", NULL, 0);
    gpujit__observed_free(&o);
    l->compiles++;
  }
  return NULL;
}

/* A child forked while another thread compiles can observe a compile of its own: no lock of the
 * observer's is held across a compile or inherited locked (a fork pool started beside a build
 * never hangs on gpujit). The child does not call NVRTC itself: NVRTC's own state in a child
 * forked mid-compile is NVRTC's, raw or observed alike. */
static void test_observe__fork_while_compiling(void **state)
{
  char *dir = th_tmpdir();
  looping l = {dir, 0, 0};
  pthread_t t;
  int stuck = 0, bad = 0;
  (void)state;
  assert_int_equal(pthread_create(&t, NULL, compile_loop, &l), 0);
  while (l.compiles < 1)
    usleep(1000);
  for (int i = 0; i < 6; i++) {
    pid_t pid;
    int status = 0;
    usleep(20000 + 37000 * i);
    if ((pid = fork()) == 0) {
      gpujit__observed o = {0};
      char src[4200];
      snprintf(src, sizeof(src), "%s/child.cu", dir);
      gpujit__observe_begin(&o);
      gpujit__observe_note_path("stat", AT_FDCWD, src, ENOENT);
      gpujit__observe_end(&o);
      _exit(probe(&o, src) && o.items[0].kind == GPUJIT__PROBE_ABSENT ? 0 : 3);
    }
    assert_true(pid > 0);
    for (int waited = 0; waited < 100 && waitpid(pid, &status, WNOHANG) == 0; waited++)
      usleep(100000);
    if (waitpid(pid, &status, WNOHANG) == 0) {
      stuck++;
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      bad++;
  }
  l.stop = 1;
  pthread_join(t, NULL);
  assert_int_equal(stuck, 0);
  assert_int_equal(bad, 0);
  th_rmrf(dir);
  free(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_observe__probes_in_search_order),
      cmocka_unit_test(test_observe__host_activity_unseen),
      cmocka_unit_test(test_observe__concurrent_compiles_apart),
      cmocka_unit_test(test_observe__holds_until_a_probe_changes),
      cmocka_unit_test(test_observe__foreign_compiles_not_ours),
      cmocka_unit_test(test_observe__environment_and_libraries),
      cmocka_unit_test(test_observe__fork_while_compiling),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
