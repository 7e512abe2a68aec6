/* Kernel parameter types: from C++ kernels' mangled symbols (real NVRTC builds), checked against
 * the cubin's sizes; extern "C" kernels give sizes only; written signatures. */
#include "helpers.h"

#include "gpujit.h"

static const char SRC[] =
    "#include <cuda_fp16.h>\n"
    "struct P { float a; int b; };\n"
    "namespace ns { __global__ void nested(const float *__restrict__ x, unsigned n, double d) {} }\n"
    "__global__ void scalars(bool b, char c, signed char sc, unsigned char uc, short s, unsigned short us,\n"
    "  int i, unsigned u, long l, unsigned long ul, long long ll, unsigned long long ull, float f, double d) {}\n"
    "__global__ void ptrs(float *a, float *b, const float *c, int **pp, P *p, P byval, float2 v) {}\n"
    "template <typename T> __global__ void scale(T *x, T a, int n) {}\n"
    "template <typename T, int N> __global__ void tk(const T *in, T *out, T s, size_t n) {}\n"
    "__global__ void halfk(__half h, __half *hp, __half2 h2) {}\n"
    "__global__ void none() {}\n"
    "extern \"C\" __global__ void plain(int n, float a, const float *x, double *y, char c) {}\n";

static gpujit_module *build(const char *const *exprs, size_t nexprs)
{
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_source s = {"params.cu", SRC, sizeof(SRC) - 1};
  gpujit_module *m = NULL;
  o.arch = "sm_90";
  o.name_expressions = exprs;
  o.name_expressions_count = nexprs;
  if (gpujit_module_build_sources(&m, &s, 1, &o) < 0)
    fail_msg("build failed: %s\n%s", gpujit_error_last(), gpujit_error_log());
  return m;
}

/* The kernel's types as "name/size ..." for one comparison per kernel. */
static void types_of(char *out, size_t cap, const gpujit_module *m, const char *sym)
{
  gpujit_param_type t[64];
  int sizes[64], n = -2;
  out[0] = '\0';
  assert_int_equal(gpujit_module_kernel_param_types(m, sym, t, sizes, 64, &n), 0);
  for (int i = 0; i < n; i++)
    snprintf(out + strlen(out), cap - strlen(out), "%s%s/%d", i ? " " : "", gpujit_param_type_name(t[i]),
             sizes[i]);
  if (n < 0)
    snprintf(out, cap, "unknown");
}

static void test_params__cpp_kernels(void **state)
{
  static const char *const exprs[] = {"scale<float>", "scale<double>", "tk<int, 4>", "tk<__half, 8>",
                                      "ns::nested", "scalars", "ptrs", "halfk", "none"};
  static const char *const want[] = {
      "pointer/8 float32/4 int32/4",
      "pointer/8 float64/8 int32/4",
      "pointer/8 pointer/8 int32/4 uint64/8",
      "pointer/8 pointer/8 float16/2 uint64/8",
      "pointer/8 uint32/4 float64/8",
      "bool/1 int8/1 int8/1 uint8/1 int16/2 uint16/2 int32/4 uint32/4 int64/8 uint64/8 int64/8 uint64/8 "
      "float32/4 float64/8",
      "pointer/8 pointer/8 pointer/8 pointer/8 pointer/8 record/8 record/8",
      "float16/2 pointer/8 record/4",
      ""};
  gpujit_module *m = build(exprs, 9);
  char got[512];
  (void)state;
  for (size_t i = 0; i < 9; i++) {
    const char *sym = gpujit_module_lowered_name(m, exprs[i]);
    assert_non_null(sym);
    types_of(got, sizeof(got), m, sym);
    if (strcmp(got, want[i]))
      fail_msg("%s (%s): got '%s', want '%s'", exprs[i], sym, got, want[i]);
  }
  gpujit_module_free(m);
}

static void test_params__extern_c_sizes_only(void **state)
{
  gpujit_module *m = build(NULL, 0);
  char got[512];
  gpujit_param_type t[4];
  int n = 0;
  (void)state;
  types_of(got, sizeof(got), m, "plain");
  assert_string_equal(got, "unknown/4 unknown/4 unknown/8 unknown/8 unknown/1");
  assert_int_equal(gpujit_module_kernel_param_types(m, "missing", t, NULL, 4, &n), GPUJIT_ENOENT);
  assert_non_null(strstr(gpujit_error_last(), "missing"));
  /* more parameters than room: refused, never cut short */
  assert_int_equal(gpujit_module_kernel_param_types(m, "plain", t, NULL, 4, &n), GPUJIT_EINVAL);
  assert_int_equal(gpujit_module_kernel_param_types(NULL, "plain", t, NULL, 4, &n), GPUJIT_EINVAL);
  gpujit_module_free(m);
}

static void test_params__signatures(void **state)
{
  gpujit_param_type t[16];
  int n = -1;
  (void)state;
  assert_int_equal(gpujit_param_types_parse(t, 16, &n,
                                            "int n, float a, const float *__restrict__ x, double* y, unsigned long long "
                                            "k, size_t m, __half h, unsigned char c, long int q, struct S *s"),
                   0);
  assert_int_equal(n, 10);
  assert_int_equal(t[0], GPUJIT_PARAM_I32);
  assert_int_equal(t[1], GPUJIT_PARAM_F32);
  assert_int_equal(t[2], GPUJIT_PARAM_POINTER);
  assert_int_equal(t[3], GPUJIT_PARAM_POINTER);
  assert_int_equal(t[4], GPUJIT_PARAM_U64);
  assert_int_equal(t[5], GPUJIT_PARAM_U64);
  assert_int_equal(t[6], GPUJIT_PARAM_F16);
  assert_int_equal(t[7], GPUJIT_PARAM_U8);
  assert_int_equal(t[8], GPUJIT_PARAM_I64);
  assert_int_equal(t[9], GPUJIT_PARAM_POINTER);
  assert_int_equal(gpujit_param_types_parse(t, 16, &n, "unsigned, int32_t, uint16_t"), 0);
  assert_int_equal(n, 3);
  assert_int_equal(t[0], GPUJIT_PARAM_U32);
  assert_int_equal(t[1], GPUJIT_PARAM_I32);
  assert_int_equal(t[2], GPUJIT_PARAM_U16);
  assert_int_equal(gpujit_param_types_parse(t, 16, &n, "void"), 0);
  assert_int_equal(n, 0);
  assert_int_equal(gpujit_param_types_parse(t, 16, &n, "  "), 0);
  assert_int_equal(n, 0);
  /* errors name the parameter */
  assert_int_equal(gpujit_param_types_parse(t, 16, &n, "int, float2 v"), GPUJIT_EINVAL);
  assert_non_null(strstr(gpujit_error_last(), "parameter 2"));
  assert_non_null(strstr(gpujit_error_last(), "float2 v"));
  assert_int_equal(gpujit_param_types_parse(t, 16, &n, "int,,float"), GPUJIT_EINVAL);
  assert_non_null(strstr(gpujit_error_last(), "parameter 2 is empty"));
  assert_int_equal(gpujit_param_types_parse(t, 16, &n, "int[4]"), GPUJIT_EINVAL);
  assert_int_equal(gpujit_param_types_parse(t, 2, &n, "int, int, int"), GPUJIT_EINVAL);
  assert_non_null(strstr(gpujit_error_last(), "more than 2"));
  assert_string_equal(gpujit_param_type_name(GPUJIT_PARAM_BF16), "bfloat16");
  assert_int_equal(gpujit_param_type_size(GPUJIT_PARAM_F16), 2);
  assert_int_equal(gpujit_param_type_size(GPUJIT_PARAM_RECORD), 0);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_params__cpp_kernels),
      cmocka_unit_test(test_params__extern_c_sizes_only),
      cmocka_unit_test(test_params__signatures),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
