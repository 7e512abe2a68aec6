/* The toolkit (src/compile/toolkit): its identity by content, remembered beside the default
 * cache; its root; NVRTC's option grammar; its ptxas through pipes. */
#include "helpers.h"

#include <ctype.h>
#include <glob.h>
#include <sys/stat.h>
#include <limits.h>

#include "base/buf.h"
#include "base/fs.h"
#include "base/hash.h"
#include "compile/toolkit/nvrtc_opts.h"
#include "compile/toolkit/ptxas.h"
#include "compile/toolkit/toolkit.h"
#include "gpujit.h"

static char *cache_dir; /* the default cache directory of this process: a fresh one */

/* The identity names each library by the XXH3-128 of its content and its size, never its path;
 * the hashes are remembered in toolkit-hashes in the default cache directory, under each file's
 * real path. (First: the identity is worked out once per process.) */
static void test_toolkit__identity_by_content(void **state)
{
  const char *id = gpujit__toolkit_id(), *nvrtc = strstr(id, "nvrtc=");
  char real[PATH_MAX], *memo = th_path(cache_dir, "toolkit-hashes");
  gpujit__buf text = {0};
  (void)state;
  assert_non_null(nvrtc);
  for (int i = 0; i < 32; i++)
    assert_true(isxdigit((unsigned char)nvrtc[6 + i]));
  assert_int_equal(nvrtc[6 + 32], ':'); /* then the size */
  assert_null(strstr(id, gpujit__cuda_root()));
  assert_ptr_equal(gpujit__toolkit_id(), id); /* once per process */
  assert_int_equal(gpujit__file_read(&text, memo), 0);
  assert_non_null(realpath(gpujit__nvrtc_library_path(), real));
  assert_non_null(strstr(text.data, real));
  gpujit__buf_free(&text);
  free(memo);
}

/* The hash the id took of a file is handed out only for that very file as it was (a miss's record
 * of NVRTC's builtins takes it instead of reading 4.4 MB again): the content's hash for the stat
 * the id saw; nothing for another stat (the file changed since), another file, a directory. */
static void test_toolkit__known_hash(void **state)
{
  const char *id = gpujit__toolkit_id(), *b = strstr(id, "builtins=");
  char real[PATH_MAX], pattern[PATH_MAX + 32], h[33], want[33];
  struct stat st, moved;
  gpujit__buf text = {0};
  glob_t g;
  (void)state;
  if (!b || !realpath(gpujit__nvrtc_library_path(), real) || !strrchr(real, '/')) {
    print_message("skip: no NVRTC builtins library found beside NVRTC\n");
    skip();
  }
  *strrchr(real, '/') = '\0';
  snprintf(pattern, sizeof(pattern), "%s/libnvrtc-builtins.so.*", real);
  assert_int_equal(glob(pattern, 0, NULL, &g), 0);
  assert_int_equal(stat(g.gl_pathv[0], &st), 0);
  assert_true(gpujit__toolkit_known_hash(g.gl_pathv[0], &st, h));
  assert_int_equal(gpujit__file_read(&text, g.gl_pathv[0]), 0);
  gpujit__hash_hex(want, text.data, text.len);
  assert_string_equal(h, want); /* the content's own hash */
  assert_non_null(strstr(id, want));
  moved = st;
  moved.st_ctim.tv_nsec ^= 1; /* the file changed since the id hashed it */
  assert_false(gpujit__toolkit_known_hash(g.gl_pathv[0], &moved, h));
  moved = st;
  moved.st_size++;
  assert_false(gpujit__toolkit_known_hash(g.gl_pathv[0], &moved, h));
  assert_int_equal(stat(real, &moved), 0); /* a directory */
  assert_false(gpujit__toolkit_known_hash(real, &moved, h));
  assert_false(gpujit__toolkit_known_hash(gpujit__cuda_root(), &st, h)); /* another file, the same stat */
  gpujit__buf_free(&text);
  globfree(&g);
}

/* The root is a real path (one spelling for a toolkit reached through a symlink) holding the
 * headers NVRTC is given. */
static void test_toolkit__root(void **state)
{
  const char *root = gpujit__cuda_root();
  char real[PATH_MAX], *inc = th_path(root, "include/nvrtc.h");
  (void)state;
  assert_non_null(realpath(root, real));
  assert_string_equal(real, root);
  assert_true(gpujit__exists(inc));
  free(inc);
}

/* Raw options read with NVRTC's grammar: a path made absolute, the options meant for ptxas and
 * those the cache cannot stand for told apart. */
static void test_toolkit__nvrtc_options(void **state)
{
  const char *opts[] = {"-I", "rel/dir", "--define-macro=X=1", "-Xptxas", "-v", "--maxrregcount=32",
                        "--fdevice-time-trace=t.json"};
  const char *unknown[] = {"--no-such-option"}, *dangling[] = {"-I"};
  gpujit__nvrtc_opts o = {0};
  const gpujit__nvrtc_opt *inc;
  char why[256] = "";
  (void)state;
  assert_int_equal(gpujit__nvrtc_opts_parse(&o, opts, 7), 0);
  assert_non_null(inc = gpujit__nvrtc_opts_find(&o, GPUJIT__OPT_INCLUDE_DIR));
  assert_int_equal(inc->value[0], '/');
  assert_non_null(strstr(inc->value, "/rel/dir"));
  assert_non_null(gpujit__nvrtc_opts_find(&o, GPUJIT__OPT_DEFINE));
  assert_string_equal(gpujit__nvrtc_opts_find(&o, GPUJIT__OPT_PTXAS_PASS)->value, "-v");
  assert_string_equal(gpujit__nvrtc_opts_find(&o, GPUJIT__OPT_PTXAS_MAXREG)->value, "32");
  assert_non_null(gpujit__nvrtc_opts_find(&o, GPUJIT__OPT_TRACE));
  assert_true(gpujit__nvrtc_opts_cacheable(&o, why, sizeof(why)));
  gpujit__nvrtc_opts_free(&o);
  assert_int_equal(gpujit__nvrtc_opts_parse(&o, unknown, 1), 0);
  assert_false(gpujit__nvrtc_opts_cacheable(&o, why, sizeof(why)));
  assert_non_null(strstr(why, "--no-such-option"));
  gpujit__nvrtc_opts_free(&o);
  assert_int_equal(gpujit__nvrtc_opts_parse(&o, dangling, 1), GPUJIT_EINVAL);
  gpujit__nvrtc_opts_free(&o);
}

/* The toolkit's ptxas assembles PTX through pipes into a cubin; bad PTX is ptxas's error, with
 * its output as the long log. */
static void test_toolkit__ptxas(void **state)
{
  static const char good[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
                             ".visible .entry k()\n{\n\tret;\n}\n";
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit__buf ptx = {0}, cubin = {0}, log = {0};
  (void)state;
  if (!gpujit__ptxas_path())
    skip();
  assert_int_equal(gpujit__buf_put(&ptx, good, sizeof(good) - 1), 0);
  assert_int_equal(gpujit__ptxas(&cubin, &log, &ptx, NULL, "sm_90", &o), 0);
  assert_true(cubin.len > 4 && memcmp(cubin.data, "\177ELF", 4) == 0);
  ptx.len = 0;
  assert_int_equal(gpujit__buf_puts(&ptx, ".version 8.0\n.target sm_90\nnot ptx\n"), 0);
  assert_int_equal(gpujit__ptxas(&cubin, &log, &ptx, NULL, "sm_90", &o), GPUJIT_ELINK);
  assert_true(strlen(gpujit_error_log()) > 0);
  gpujit__buf_free(&ptx);
  gpujit__buf_free(&cubin);
  gpujit__buf_free(&log);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_toolkit__identity_by_content),
      cmocka_unit_test(test_toolkit__known_hash),
      cmocka_unit_test(test_toolkit__root),
      cmocka_unit_test(test_toolkit__nvrtc_options),
      cmocka_unit_test(test_toolkit__ptxas),
  };
  int rc;
  cache_dir = th_tmpdir();
  setenv("GPUJIT_CACHE_DIR", cache_dir, 1);
  unsetenv("GPUJIT_TOOLKIT_HASHES");
  rc = cmocka_run_group_tests(tests, NULL, NULL);
  th_rmrf(cache_dir);
  free(cache_dir);
  return rc;
}
