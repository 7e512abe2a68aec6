/* Default arch without the driver: a record in the cache keyed by the driver's and GPUs'
 * identity (a fake /proc and /sys), a fake libcuda that logs every cuInit. */
#include "helpers.h"

typedef struct fx {
  char *dir, *root, *log, *cache, *src;
} fx;

static void put(const char *dir, const char *name, const char *text)
{
  char *p = th_path(dir, name), cmd[8192];
  char *out = NULL;
  snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", p);
  assert_int_equal(th_run(&out, "%s", cmd), 0);
  free(out);
  free(th_write(dir, name, text));
  free(p);
}

static int setup(void **state)
{
  fx *f = calloc(1, sizeof(*f));
  f->dir = th_tmpdir();
  f->root = th_path(f->dir, "root");
  f->log = th_path(f->dir, "cuinit.log");
  f->cache = th_path(f->dir, "cache");
  f->src = th_write(f->dir, "k.cu", "extern \"C\" __global__ void k(float *x) { x[0] = 1.0f; }\n");
  put(f->root, "proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04\n");
  put(f->root, "sys/bus/pci/devices/0000:1a:00.0/vendor", "0x10de\n");
  put(f->root, "sys/bus/pci/devices/0000:1a:00.0/class", "0x030200\n");
  put(f->root, "sys/bus/pci/devices/0000:1a:00.0/device", "0x2330\n");
  put(f->root, "sys/bus/pci/devices/0000:1a:00.0/subsystem_device", "0x16c1\n");
  put(f->root, "sys/bus/pci/devices/0000:00:1f.0/vendor", "0x8086\n"); /* not a GPU */
  put(f->root, "sys/bus/pci/devices/0000:00:1f.0/class", "0x060100\n");
  *state = f;
  return 0;
}

static int teardown(void **state)
{
  fx *f = *state;
  th_rmrf(f->dir);
  free(f->dir);
  free(f->root);
  free(f->log);
  free(f->cache);
  free(f->src);
  free(f);
  return 0;
}

/* The string value of "key" in the CLI's JSON (any spacing). */
static void json_str(const char *json, const char *key, char *out, size_t size)
{
  char pat[64];
  const char *p;
  snprintf(pat, sizeof(pat), "\"%s\":", key);
  assert_non_null(p = strstr(json, pat));
  p += strlen(pat);
  p += strspn(p, " \t");
  assert_true(*p == '"');
  snprintf(out, size, "%.*s", (int)strcspn(p + 1, "\""), p + 1);
}

/* One `gpujit build` process: its arch and cache status; the number of cuInit calls so far. */
static int build(fx *f, const char *env, char *arch, size_t size, char *status, size_t ssize)
{
  char *out = NULL, *p;
  size_t len = 0;
  int rc = th_run(&out, "env -u GPUJIT_ARCH -u GPUJIT_DEVICE GPUJIT_SYSFS_ROOT='%s' GPUJIT_LIBCUDA='%s' "
                        "FAKE_CUDA_LOG='%s' %s '%s' build --json --cache-dir '%s' -o '%s/k.cubin' '%s'",
                  f->root, GPUJIT_FAKE_LIBCUDA, f->log, env, GPUJIT_CLI, f->cache, f->dir, f->src);
  int n = 0;
  assert_int_equal(rc, 0);
  json_str(out, "arch", arch, size);
  json_str(out, "status", status, ssize);
  free(out);
  if ((out = th_read(f->log, &len)) != NULL) {
    for (p = out; (p = strstr(p, "cuInit")) != NULL; p++)
      n++;
    free(out);
  }
  return n;
}

static void test_arch__record_spares_the_driver(void **state)
{
  fx *f = *state;
  char arch[32], st[16];
  /* First process: no record; the driver is asked (cuInit) and its answer recorded. */
  assert_int_equal(build(f, "FAKE_CUDA_CC=90", arch, sizeof(arch), st, sizeof(st)), 1);
  assert_string_equal(arch, "sm_90");
  assert_string_equal(st, "built");
  /* Next processes, hit and all: the record answers; the driver is never started. */
  assert_int_equal(build(f, "FAKE_CUDA_CC=90", arch, sizeof(arch), st, sizeof(st)), 1);
  assert_string_equal(arch, "sm_90");
  assert_string_equal(st, "hit");
  assert_int_equal(build(f, "FAKE_CUDA_CC=90", arch, sizeof(arch), st, sizeof(st)), 1);
}

static void test_arch__refreshed_when_driver_changes(void **state)
{
  fx *f = *state;
  char arch[32], st[16];
  assert_int_equal(build(f, "FAKE_CUDA_CC=90", arch, sizeof(arch), st, sizeof(st)), 1);
  /* A new driver: the record no longer applies; asked again, the new answer kept. */
  put(f->root, "proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  590.10\n");
  assert_int_equal(build(f, "FAKE_CUDA_CC=86", arch, sizeof(arch), st, sizeof(st)), 2);
  assert_string_equal(arch, "sm_86");
  assert_int_equal(build(f, "FAKE_CUDA_CC=86", arch, sizeof(arch), st, sizeof(st)), 2);
  assert_string_equal(arch, "sm_86");
  assert_string_equal(st, "hit");
}

static void test_arch__refreshed_when_gpu_changes(void **state)
{
  fx *f = *state;
  char arch[32], st[16];
  assert_int_equal(build(f, "FAKE_CUDA_CC=90", arch, sizeof(arch), st, sizeof(st)), 1);
  /* Another GPU in the same slot. */
  put(f->root, "sys/bus/pci/devices/0000:1a:00.0/device", "0x2684\n");
  assert_int_equal(build(f, "FAKE_CUDA_CC=89", arch, sizeof(arch), st, sizeof(st)), 2);
  assert_string_equal(arch, "sm_89");
  /* Selecting devices differently is another identity too. */
  assert_int_equal(build(f, "FAKE_CUDA_CC=89 CUDA_VISIBLE_DEVICES=0", arch, sizeof(arch), st, sizeof(st)), 3);
  assert_string_equal(arch, "sm_89");
  assert_int_equal(build(f, "FAKE_CUDA_CC=89 CUDA_VISIBLE_DEVICES=0", arch, sizeof(arch), st, sizeof(st)), 3);
}

static void test_arch__honours_gpujit_device(void **state)
{
  fx *f = *state;
  char arch[32], st[16];
  assert_int_equal(build(f, "FAKE_CUDA_CC=90", arch, sizeof(arch), st, sizeof(st)), 1);
  /* Device 1 does not exist on the fake machine: the driver says so, the fallback is used,
   * and nothing is recorded for that identity (so it is asked again next time). */
  assert_int_equal(build(f, "FAKE_CUDA_CC=90 GPUJIT_DEVICE=1", arch, sizeof(arch), st, sizeof(st)), 2);
  assert_string_equal(arch, "sm_90");
  assert_int_equal(build(f, "FAKE_CUDA_CC=90 GPUJIT_DEVICE=1", arch, sizeof(arch), st, sizeof(st)), 3);
}

static void test_arch__damaged_record_asks_the_driver(void **state)
{
  fx *f = *state;
  char arch[32], st[16], *out = NULL;
  assert_int_equal(build(f, "FAKE_CUDA_CC=90", arch, sizeof(arch), st, sizeof(st)), 1);
  assert_int_equal(th_run(&out, "for n in '%s'/notes/arch/*; do printf 'gpujit-note-1 0000000000000000\\nsm_10\\n' > "
                                "\"$n\"; done",
                          f->cache),
                   0);
  free(out);
  assert_int_equal(build(f, "FAKE_CUDA_CC=90", arch, sizeof(arch), st, sizeof(st)), 2);
  assert_string_equal(arch, "sm_90");
  assert_int_equal(build(f, "FAKE_CUDA_CC=90", arch, sizeof(arch), st, sizeof(st)), 2);
}

static void test_arch__no_visible_driver_behaves_as_before(void **state)
{
  fx *f = *state;
  char arch[32], st[16], *p = th_path(f->root, "proc/driver/nvidia/version");
  unlink(p);
  free(p);
  /* No identity: the driver is asked each time and nothing is recorded. */
  assert_int_equal(build(f, "FAKE_CUDA_CC=80", arch, sizeof(arch), st, sizeof(st)), 1);
  assert_string_equal(arch, "sm_80");
  assert_int_equal(build(f, "FAKE_CUDA_CC=80", arch, sizeof(arch), st, sizeof(st)), 2);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_arch__record_spares_the_driver, setup, teardown),
    cmocka_unit_test_setup_teardown(test_arch__refreshed_when_driver_changes, setup, teardown),
    cmocka_unit_test_setup_teardown(test_arch__refreshed_when_gpu_changes, setup, teardown),
    cmocka_unit_test_setup_teardown(test_arch__honours_gpujit_device, setup, teardown),
    cmocka_unit_test_setup_teardown(test_arch__damaged_record_asks_the_driver, setup, teardown),
    cmocka_unit_test_setup_teardown(test_arch__no_visible_driver_behaves_as_before, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
