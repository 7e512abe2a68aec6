/* Option validation, arch resolution, NVRTC flag building and diagnostic parsing. */
#include "helpers.h"

#include "compile/nvrtc/nvrtc.h"
#include "compile/nvrtc/options.h"
#include "compile/toolkit/toolkit.h"
#include "module/build.h"
#include "gpujit.h"

static void test_options__init_defaults(void **state)
{
  gpujit_module_options o;
  (void)state;
  memset(&o, 0x5a, sizeof(o));
  assert_int_equal(gpujit_module_options_init(&o, GPUJIT_MODULE_OPTIONS_VERSION), 0);
  assert_int_equal(o.version, GPUJIT_MODULE_OPTIONS_VERSION);
  assert_int_equal(o.lineinfo, 1);
  assert_int_equal(o.line_directives, 1);
  assert_int_equal(o.device_debug, 0);
  assert_null(o.arch);
  assert_null(o.trace);
  assert_int_equal(gpujit_module_options_init(&o, 99), GPUJIT_EVERSION);
}

static void expect_invalid(gpujit_module_options *o, const char *needle)
{
  assert_int_equal(gpujit_module_options_validate(o), GPUJIT_EINVAL);
  if (!strstr(gpujit_error_last(), needle))
    fail_msg("message '%s' lacks '%s'", gpujit_error_last(), needle);
}

static void test_options__arch(void **state)
{
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  const char *bad[] = {"sm_", "sm_9", "gfx90a", "90", "sm_90x", "compute_", "SM_90", ""};
  const char *good[] = {"sm_90", "sm_90a", "compute_90", "sm_75", "sm_100"};
  (void)state;
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    o.arch = bad[i];
    expect_invalid(&o, "invalid --arch");
  }
  o.arch = "sm_999"; /* well formed: validation passes; the toolkit refuses it before compiling */
  assert_int_equal(gpujit_module_options_validate(&o), 0);
  assert_int_equal(gpujit__check_arch_supported("sm_999"), GPUJIT_EINVAL);
  assert_non_null(strstr(gpujit_error_last(), "does not support arch 999"));
  for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
    o.arch = good[i];
    assert_int_equal(gpujit_module_options_validate(&o), 0);
  }
  o.arch = "compute_90";
  o.output = GPUJIT_OUTPUT_CUBIN;
  expect_invalid(&o, "needs a real arch");
}

static void test_options__values(void **state)
{
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  const char *defs_bad[] = {"1X"}, *defs_ok[] = {"X", "Y=2", "F(a)=a"}, *undef_bad[] = {"A=1"};
  const char *incs_bad[] = {"/definitely/not/here"}, *x_bad[] = {"lineinfo"};
  (void)state;
  o.std = "c++98";
  expect_invalid(&o, "--std 'c++98'");
  o.std = "c++17";
  o.maxrregcount = 8;
  expect_invalid(&o, "--maxrregcount 8");
  o.maxrregcount = 256;
  expect_invalid(&o, "--maxrregcount 256");
  o.maxrregcount = 64;
  o.ofast_compile = "fast";
  expect_invalid(&o, "--Ofast-compile 'fast'");
  o.ofast_compile = "mid";
  o.defines = defs_bad;
  o.defines_count = 1;
  expect_invalid(&o, "define '1X'");
  o.defines = defs_ok;
  o.defines_count = 3;
  o.undefines = undef_bad;
  o.undefines_count = 1;
  expect_invalid(&o, "undefine 'A=1'");
  o.undefines_count = 0;
  o.include_dirs = incs_bad;
  o.include_dirs_count = 1;
  expect_invalid(&o, "'/definitely/not/here' does not exist");
  o.include_dirs_count = 0;
  o.nvrtc_options = x_bad;
  o.nvrtc_options_count = 1;
  expect_invalid(&o, "NVRTC option 'lineinfo'");
  o.nvrtc_options_count = 0;
  assert_int_equal(gpujit_module_options_validate(&o), 0);
  o.version = 7;
  assert_int_equal(gpujit_module_options_validate(&o), GPUJIT_EVERSION);
}

static bool has(const gpujit__strvec *v, const char *s)
{
  for (size_t i = 0; i < v->count; i++)
    if (strcmp(v->items[i], s) == 0)
      return true;
  return false;
}

static void test_options__flags(void **state)
{
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  const char *incs[] = {"/tmp"}, *defs[] = {"N=4"}, *undefs[] = {"M"}, *x[] = {"-default-device"};
  gpujit__strvec v = {0};
  char want[512];
  (void)state;
  o.std = "c++17";
  o.device_debug = 1;
  o.fast_math = 1;
  o.maxrregcount = 32;
  o.ofast_compile = "max";
  o.include_dirs = incs;
  o.include_dirs_count = 1;
  o.defines = defs;
  o.defines_count = 1;
  o.undefines = undefs;
  o.undefines_count = 1;
  o.nvrtc_options = x;
  o.nvrtc_options_count = 1;
  assert_int_equal(gpujit__nvrtc_flags(&v, &o, "sm_90", "/src", true, "/tmp/t"), 0);
  assert_string_equal(v.items[0], "-arch=sm_90");
  assert_true(has(&v, "-std=c++17"));
  assert_true(has(&v, "-lineinfo"));
  assert_true(has(&v, "-G"));
  assert_true(has(&v, "--use_fast_math"));
  assert_true(has(&v, "--maxrregcount=32"));
  assert_true(has(&v, "--Ofast-compile=max"));
  assert_true(has(&v, "-dlto"));
  assert_true(has(&v, "-rdc=true"));
  assert_true(has(&v, "-DN=4"));
  assert_true(has(&v, "-UM"));
  assert_true(has(&v, "-I/tmp"));
  assert_true(has(&v, "-I/src"));
  snprintf(want, sizeof(want), "-I%s/include/cccl", gpujit__cuda_root());
  assert_true(has(&v, want));
  assert_true(has(&v, "--fdevice-time-trace=/tmp/t"));
  /* Passthrough options come last so they can override. */
  assert_string_equal(v.items[v.count - 1], "-default-device");
  gpujit__strvec_free(&v);

  o = (gpujit_module_options)GPUJIT_MODULE_OPTIONS_INIT;
  o.lineinfo = 0;
  assert_int_equal(gpujit__nvrtc_flags(&v, &o, "compute_90", NULL, false, NULL), 0);
  assert_false(has(&v, "-lineinfo"));
  assert_false(has(&v, "-dlto"));
  assert_false(has(&v, "-G"));
  gpujit__strvec_free(&v);
}

static void test_options__default_arch_env(void **state)
{
  char arch[32];
  (void)state;
  setenv("GPUJIT_ARCH", "sm_80", 1);
  assert_int_equal(gpujit__resolve_arch(arch, sizeof(arch), NULL, NULL), 0);
  assert_string_equal(arch, "sm_80");
  assert_string_equal(gpujit_default_arch(), "sm_80");
  assert_int_equal(gpujit__resolve_arch(arch, sizeof(arch), "sm_75", NULL), 0);
  assert_string_equal(arch, "sm_75");
  setenv("GPUJIT_ARCH", "bogus", 1);
  assert_int_equal(gpujit__resolve_arch(arch, sizeof(arch), NULL, NULL), GPUJIT_EINVAL);
  assert_non_null(strstr(gpujit_error_last(), "GPUJIT_ARCH"));
  unsetenv("GPUJIT_ARCH");
  assert_int_equal(gpujit__resolve_arch(arch, sizeof(arch), NULL, NULL), 0);
  assert_true(strncmp(arch, "sm_", 3) == 0);
  assert_int_equal(gpujit__resolve_output("compute_90", GPUJIT_OUTPUT_AUTO), GPUJIT_OUTPUT_PTX);
  assert_int_equal(gpujit__resolve_output("sm_90", GPUJIT_OUTPUT_AUTO), GPUJIT_OUTPUT_CUBIN);
}

static void test_options__first_diagnostic(void **state)
{
  char out[256];
  (void)state;
  gpujit__first_diagnostic(out, sizeof(out),
                           "/a/b.cu(7): warning #177-D: variable \"q\" was declared but never referenced\n"
                           "    int q;\n        ^\n\n"
                           "/a/b.cu(12): error: identifier \"x\" is undefined\n"
                           "      y = x;\n          ^\n\n1 error detected\n");
  assert_string_equal(out, "/a/b.cu:12:9: identifier \"x\" is undefined");
  gpujit__first_diagnostic(out, sizeof(out), "garbage\n");
  assert_string_equal(out, "see the NVRTC log");
}

static void test_options__errors_table(void **state)
{
  (void)state;
  assert_string_equal(gpujit_strerror(GPUJIT_ECOMPILE), "compile error");
  assert_string_equal(gpujit_error_name(GPUJIT_ECOMPILE), "GPUJIT_ECOMPILE");
  assert_string_equal(gpujit_strerror(12345), "unknown error");
  gpujit_error_clear();
  assert_string_equal(gpujit_error_last(), "");
  assert_string_equal(gpujit_error_log(), "");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_options__init_defaults), cmocka_unit_test(test_options__arch),
      cmocka_unit_test(test_options__values),        cmocka_unit_test(test_options__flags),
      cmocka_unit_test(test_options__default_arch_env), cmocka_unit_test(test_options__first_diagnostic),
      cmocka_unit_test(test_options__errors_table),
  };
  if (getenv("TEST_FILTER"))
    cmocka_set_test_filter(getenv("TEST_FILTER"));
  return cmocka_run_group_tests(tests, NULL, NULL);
}
