/* Precompiled headers (src/compile/pch): what identifies a source's PCH, NVRTC's PCH messages
 * taken out of the log, the process's private directory made and removed. (PCHs made and used
 * by builds: tests/project, tests/stale.) */
#include "helpers.h"

#include <signal.h>

#include "base/buf.h"
#include "compile/pch/pch.h"
#include "gpujit.h"

static uint64_t key_of(const char *source, const char *prelude, const gpujit__strvec *flags, bool *has_include)
{
  gpujit__pch_block b;
  gpujit__pch_block_of(&b, source, strlen(source), prelude, flags);
  if (has_include)
    *has_include = b.has_include;
  return b.key;
}

/* A PCH is a source's leading include block with the prelude and flags: the code after it does
 * not count, the block, the prelude and the flags do. */
static void test_pch__block(void **state)
{
  gpujit__strvec flags = {0}, other = {0};
  bool has = false;
  uint64_t k;
  (void)state;
  assert_int_equal(gpujit__strvec_push(&flags, "-arch=compute_90"), 0);
  assert_int_equal(gpujit__strvec_push(&other, "-arch=compute_80"), 0);
  k = key_of("#include <cub/cub.cuh>\n// note\n__global__ void f() {}\n", NULL, &flags, &has);
  assert_true(has);
  assert_int_equal(key_of("#include <cub/cub.cuh>\n// note\n__global__ void g(int) {}\n", NULL, &flags, NULL), k);
  assert_int_not_equal(key_of("#include <cub/util_type.cuh>\n__global__ void f() {}\n", NULL, &flags, NULL), k);
  assert_int_not_equal(key_of("#include <cub/cub.cuh>\n// note\n__global__ void f() {}\n", "#define P 1\n", &flags,
                              NULL),
                       k);
  assert_int_not_equal(key_of("#include <cub/cub.cuh>\n// note\n__global__ void f() {}\n", NULL, &other, NULL), k);
  key_of("__global__ void f() {}\n", NULL, &flags, &has);
  assert_false(has);
  gpujit__strvec_free(&flags);
  gpujit__strvec_free(&other);
}

/* NVRTC's PCH messages become the status and the PCH file, and leave the user's log; other lines
 * stay. */
static void test_pch__log(void **state)
{
  gpujit__pch pch = {0};
  gpujit__buf log = {0};
  (void)state;
  assert_int_equal(gpujit__buf_puts(&log, "\"k.cu\": creating precompiled header file \"/tmp/p/k.pch\"\n"
                                          "k.cu(3): warning #177-D: variable \"x\" was declared but never referenced\n"),
                   0);
  gpujit__pch_strip_log(&log, &pch);
  assert_int_equal(pch.status, GPUJIT_PCH_STATUS_CREATED);
  assert_string_equal(pch.file, "/tmp/p/k.pch");
  assert_null(strstr(log.data, "precompiled"));
  assert_non_null(strstr(log.data, "#177-D"));
  gpujit__buf_free(&log);
}

/* A private directory per process under $TMPDIR; those of processes that are gone are removed
 * when the next is made, and a process's own when it exits. */
static void test_pch__directory(void **state)
{
  char *tmp = th_tmpdir(), *stale = th_path(tmp, "gpujit-pch-2147483646-abcdef"), *inside, child_dir[4096] = "";
  int fds[2], status;
  pid_t pid;
  (void)state;
  mkdir(stale, 0700);
  free(th_write(stale, "k.pch", "x"));
  inside = th_path(stale, "k.pch");
  assert_int_equal(pipe(fds), 0);
  if ((pid = fork()) == 0) { /* its own process: the directory is made once per process */
    const char *d;
    setenv("TMPDIR", tmp, 1);
    d = gpujit__pch_dir();
    if (d && gpujit__pch_dir_if_made() == d && write(fds[1], d, strlen(d)) > 0)
      free(th_write(d, "made.pch", "x"));
    exit(d ? 0 : 1); /* exit, not _exit: the directory goes with the process's destructors */
  }
  close(fds[1]);
  assert_true(read(fds[0], child_dir, sizeof(child_dir) - 1) > 0);
  close(fds[0]);
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  assert_non_null(strstr(child_dir, "/gpujit-pch-"));
  assert_false(access(stale, F_OK) == 0 || access(inside, F_OK) == 0); /* the dead process's, gone */
  assert_false(access(child_dir, F_OK) == 0);                           /* its own, gone at exit */
  th_rmrf(tmp);
  free(tmp), free(stale), free(inside);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pch__block),
      cmocka_unit_test(test_pch__log),
      cmocka_unit_test(test_pch__directory),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
