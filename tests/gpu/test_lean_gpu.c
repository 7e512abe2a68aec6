/* Lean and whole modules give the same results on the GPU: every example, the GPU tests' module,
 * and a module whose variables the host reads and writes by name. Exit 77 without a GPU. */
#include <math.h>

#include "helpers.h"

#include "gpujit.h"

static gpujit_device *dev;

typedef struct build_pair {
  gpujit_module *m[2]; /* [0] lean, [1] whole */
  gpujit_loaded *l[2];
} build_pair;

static void build_both(build_pair *b, const char *const *paths, size_t count, const char *const *exprs, size_t nexprs)
{
  for (int i = 0; i < 2; i++) {
    gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
    gpujit_module_lean info;
    o.lean = i == 0;
    o.name_expressions = exprs;
    o.name_expressions_count = nexprs;
    if (gpujit_module_build_files(&b->m[i], paths, count, &o) < 0)
      fail_msg("build %s (%s): %s\n%s", paths[0], i ? "whole" : "lean", gpujit_error_last(), gpujit_error_log());
    gpujit_module_lean_get(b->m[i], &info);
    assert_int_equal(info.applied, i == 0);
    assert_int_equal(gpujit_module_load(&b->l[i], dev, b->m[i]), 0);
  }
}

static void free_both(build_pair *b)
{
  for (int i = 0; i < 2; i++) {
    gpujit_loaded_free(b->l[i]);
    gpujit_module_free(b->m[i]);
  }
}

/*
 * Launch `kernel` in both modules on the same inputs and compare every buffer bit for bit.
 * `args`: 'n' the element count (int), 'f' a float (1.5), 'p' a float buffer of n elements.
 */
static void same_results(build_pair *b, const char *kernel, const char *args, int n, unsigned block)
{
  size_t np = strlen(args);
  float *host[2][8] = {{0}};
  for (int side = 0; side < 2; side++) {
    gpujit_devptr bufs[8] = {0};
    void *argv[8];
    int count = n;
    float scalar = 1.5f;
    unsigned grid[3] = {(unsigned)(n + (int)block - 1) / block, 1, 1}, blk[3] = {block, 1, 1};
    gpujit_kernel *k = NULL;
    assert_true(np <= 8);
    if (gpujit_kernel_get(&k, b->l[side], kernel) < 0)
      fail_msg("%s: %s", kernel, gpujit_error_last());
    for (size_t a = 0; a < np; a++) {
      if (args[a] == 'n') {
        argv[a] = &count;
      } else if (args[a] == 'f') {
        argv[a] = &scalar;
      } else {
        float *init = malloc((size_t)n * sizeof(float));
        for (int i = 0; i < n; i++)
          init[i] = (float)((i * 7 + (int)a * 13) % 101) / 50.0f - 1.0f;
        assert_int_equal(gpujit_mem_alloc(&bufs[a], dev, (size_t)n * sizeof(float)), 0);
        assert_int_equal(gpujit_memcpy_htod(dev, bufs[a], init, (size_t)n * sizeof(float)), 0);
        free(init);
        argv[a] = &bufs[a];
      }
    }
    assert_int_equal(gpujit_launch(k, grid, blk, 0, argv), 0);
    assert_int_equal(gpujit_synchronize(dev), 0);
    for (size_t a = 0; a < np; a++)
      if (args[a] == 'p') {
        host[side][a] = malloc((size_t)n * sizeof(float));
        assert_int_equal(gpujit_memcpy_dtoh(dev, host[side][a], bufs[a], (size_t)n * sizeof(float)), 0);
        gpujit_mem_free(dev, bufs[a]);
      }
  }
  for (size_t a = 0; a < np; a++) {
    if (!host[0][a])
      continue;
    if (memcmp(host[0][a], host[1][a], (size_t)n * sizeof(float)) != 0)
      fail_msg("%s: argument %zu differs between the lean and the whole module", kernel, a);
    free(host[0][a]);
    free(host[1][a]);
  }
}

static void test_lean_gpu__examples(void **state)
{
  static const char *const scale_exprs[] = {"scale<float>"};
  const char *saxpy[] = {GPUJIT_EXAMPLES_DIR "/saxpy.cu"};
  const char *vecops[] = {GPUJIT_EXAMPLES_DIR "/vecops.cu"};
  const char *scale[] = {GPUJIT_EXAMPLES_DIR "/scale.cu"};
  const char *reduce[] = {GPUJIT_EXAMPLES_DIR "/block_reduce.cu"};
  const char *lto[] = {GPUJIT_EXAMPLES_DIR "/lto/main.cu", GPUJIT_EXAMPLES_DIR "/lto/helper.cu"};
  build_pair b = {0};
  (void)state;
  build_both(&b, saxpy, 1, NULL, 0);
  same_results(&b, "saxpy", "nfpp", 100000, 256);
  free_both(&b);
  build_both(&b, vecops, 1, NULL, 0);
  same_results(&b, "vec_add", "nppp", 4096, 128);
  same_results(&b, "vec_mul", "nppp", 4096, 128);
  same_results(&b, "vec_fill", "nfp", 4096, 128);
  free_both(&b);
  build_both(&b, scale, 1, scale_exprs, 1);
  same_results(&b, "scale<float>", "nfp", 5000, 256);
  free_both(&b);
  build_both(&b, reduce, 1, NULL, 0);
  same_results(&b, "block_sum", "npp", 256 * 64, 256);
  free_both(&b);
  build_both(&b, lto, 2, NULL, 0);
  same_results(&b, "polynomial", "npp", 3000, 256);
  same_results(&b, "polynomial_inplace", "np", 3000, 256);
  free_both(&b);
}

/* The module of test_gpu.c, lean and whole. */
static void test_lean_gpu__gpu_tests_module(void **state)
{
  char *dir = th_tmpdir();
  char *src = th_write(dir, "gpu_test.cu",
                       "extern \"C\" __global__ void saxpy(int n, float a, const float *x, float *y)\n"
                       "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = a * x[i] + y[i]; }\n"
                       "extern \"C\" __global__ void poke(int *p) { *p = 1; }\n");
  const char *paths[] = {src};
  build_pair b = {0};
  (void)state;
  build_both(&b, paths, 1, NULL, 0);
  same_results(&b, "saxpy", "nfpp", 1 << 16, 256);
  free_both(&b);
  th_rmrf(dir);
  free(src), free(dir);
}

/* Variables the host reaches by name survive the lean pass and work: a __device__ counter the
 * kernels bump, a __constant__ table the host fills, a template variable by name expression. */
static void test_lean_gpu__host_reads_variables(void **state)
{
  static const char *const exprs[] = {"&bias<float>"};
  char *dir = th_tmpdir();
  char *src = th_write(dir, "vars.cu",
                       "#include <cub/block/block_reduce.cuh>\n"
                       "__device__ unsigned counter;\n"
                       "__device__ unsigned never_used_by_kernels = 42;\n"
                       "__constant__ float table[4];\n"
                       "template <class T> __device__ T bias = T(0.25);\n"
                       "extern \"C\" __global__ void apply(int n, float *x, float *sums) {\n"
                       "  using R = cub::BlockReduce<float, 128>; __shared__ typename R::TempStorage s;\n"
                       "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                       "  float v = i < n ? x[i] * table[i % 4] + bias<float> : 0.0f;\n"
                       "  float sum = R(s).Sum(v);\n"
                       "  if (i < n) x[i] = v;\n"
                       "  if (threadIdx.x == 0) { atomicAdd(&counter, 1u); sums[blockIdx.x] = sum; }\n"
                       "}\n");
  const char *paths[] = {src};
  const float table[4] = {1.0f, 2.0f, -1.0f, 0.5f};
  build_pair b = {0};
  (void)state;
  build_both(&b, paths, 1, exprs, 1);
  for (int side = 0; side < 2; side++) {
    gpujit_devptr p = 0;
    size_t bytes = 0;
    unsigned value = 0;
    float bias = 0;
    assert_int_equal(gpujit_loaded_global(&p, &bytes, b.l[side], "table"), 0);
    assert_int_equal(bytes, sizeof(table));
    assert_int_equal(gpujit_memcpy_htod(dev, p, table, sizeof(table)), 0);
    assert_int_equal(gpujit_loaded_global(&p, &bytes, b.l[side], "counter"), 0);
    assert_int_equal(bytes, sizeof(unsigned));
    assert_int_equal(gpujit_memset_d32(dev, p, 0, 1), 0);
    /* referenced by no kernel, declared by the user: still there, initialised */
    assert_int_equal(gpujit_loaded_global(&p, &bytes, b.l[side], "never_used_by_kernels"), 0);
    assert_int_equal(gpujit_memcpy_dtoh(dev, &value, p, sizeof(value)), 0);
    assert_int_equal(value, 42);
    assert_int_equal(gpujit_loaded_global(&p, &bytes, b.l[side], "&bias<float>"), 0);
    assert_int_equal(gpujit_memcpy_dtoh(dev, &bias, p, sizeof(bias)), 0);
    assert_true(bias == 0.25f);
  }
  same_results(&b, "apply", "npp", 1000, 128);
  for (int side = 0; side < 2; side++) {
    gpujit_devptr p = 0;
    unsigned value = 0;
    assert_int_equal(gpujit_loaded_global(&p, NULL, b.l[side], "counter"), 0);
    assert_int_equal(gpujit_memcpy_dtoh(dev, &value, p, sizeof(value)), 0);
    assert_int_equal(value, (1000 + 127) / 128); /* one per block */
  }
  /* an unknown name is an error that says so */
  {
    gpujit_devptr p = 0;
    assert_int_equal(gpujit_loaded_global(&p, NULL, b.l[0], "no_such_variable"), GPUJIT_ENOENT);
    assert_non_null(strstr(gpujit_error_last(), "no_such_variable"));
  }
  free_both(&b);
  th_rmrf(dir);
  free(src), free(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lean_gpu__examples),
      cmocka_unit_test(test_lean_gpu__gpu_tests_module),
      cmocka_unit_test(test_lean_gpu__host_reads_variables),
  };
  int rc;
  if (gpujit_device_open(&dev, -1) < 0) {
    printf("SKIPPED: no GPU: %s\n", gpujit_error_last());
    return 77;
  }
  rc = cmocka_run_group_tests(tests, NULL, NULL);
  gpujit_device_free(dev);
  return rc;
}
