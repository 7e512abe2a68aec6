/* An in-process profile through the public C API (gpujit_profile_start/stop) without a GPU: a
 * stand-in libcuda.so.1 and CUPTI (fake_libcuda_functions.c, fake_cupti.c, as test_cupti_path.c
 * drives them). What it checks:
 *   - NVRTC compiles of this program are seen without its being started by `gpujit profile`:
 *     through its GOT slot (it links NVRTC) and through a function pointer it resolved with dlsym
 *     before the session (rebound by value, put back after it);
 *   - the schedule: CUPTI not set up in the wait step, attached at the first warmup step, its
 *     activity off again after the step that follows the last active one; the active step's
 *     kernel, and only it, in the report's step table;
 *   - the session's notes, and the refusals: a second session while one is on, a stopped
 *     session stopped again, a bad schedule;
 *   - `nvtx:NAME` steps in-process: this program's NVTX (nvtx3, compiled in) makes its first call
 *     after the session began, so it loads the injection library the session named in
 *     NVTX_INJECTION64_PATH, which counts the steps with CUPTI off until the first warmup step;
 *     the variable unset again at the end. */
#include "helpers.h"

#include <cupti.h>
#include <dlfcn.h>
#include <nvrtc.h>
#include <nvtx3/nvToolsExt.h>
#include <time.h>

#include "gpujit.h"

typedef struct fake_fn { /* as fake_libcuda_functions.c has it */
  void *module;
  const char *name;
  int kernel;
} fake_fn;

typedef nvrtcResult (*compile_fn)(nvrtcProgram, int, const char *const *);
/* resolved before the session, kept in this program's data: the session finds it by value */
static compile_fn held_compile;
/* nvJitLink's versioned entry point ("__nvJitLinkCreate_13_0"), resolved before the session too */
static void *held_link_create;

static void *versioned_link_create(void *h)
{
  char name[64];
  void *f = NULL;
  for (int major = 11; major <= 15 && !f; major++)
    for (int minor = 0; minor <= 9 && !f; minor++) {
      snprintf(name, sizeof(name), "__nvJitLinkCreate_%d_%d", major, minor);
      f = h ? dlsym(h, name) : NULL;
    }
  return f;
}

static struct {
  void (*launch)(CUpti_CallbackId, uint32_t, CUfunction);
  int (*kernel)(uint32_t, const char *, uint32_t, uint64_t, uint64_t, uint64_t);
  int (*kind_enabled)(CUpti_ActivityKind);
  int (*enabled)(CUpti_CallbackId);
  CUptiResult (*timestamp)(uint64_t *);
} F;

static void compile(const char *name, bool through_held)
{
  static const char src[] = "extern \"C\" __global__ void k(float *x) { x[0] = 1; }";
  const char *opts[] = {"--gpu-architecture=compute_75"};
  nvrtcProgram prog;
  assert_int_equal(nvrtcCreateProgram(&prog, src, name, 0, NULL, NULL), NVRTC_SUCCESS);
  assert_int_equal(through_held ? held_compile(prog, 1, opts) : nvrtcCompileProgram(prog, 1, opts), NVRTC_SUCCESS);
  nvrtcDestroyProgram(&prog);
}

static int setup(void **state)
{
  void *cupti;
  (void)state;
  setenv("GPUJIT_CUPTI_LIBRARY", GPUJIT_FAKE_CUPTI, 1);
  /* the stand-in driver, found by its name as the injection library asks for it */
  if (!dlopen(GPUJIT_FAKE_LIBCUDA, RTLD_NOW | RTLD_GLOBAL) || !(cupti = dlopen(GPUJIT_FAKE_CUPTI, RTLD_NOW)))
    return -1;
  *(void **)&F.launch = dlsym(cupti, "fake_cupti_launch");
  *(void **)&F.kernel = dlsym(cupti, "fake_cupti_kernel");
  *(void **)&F.kind_enabled = dlsym(cupti, "fake_cupti_kind_enabled");
  *(void **)&F.enabled = dlsym(cupti, "fake_cupti_enabled");
  *(void **)&F.timestamp = dlsym(cupti, "cuptiGetTimestamp");
  *(void **)&held_compile = dlsym(RTLD_DEFAULT, "nvrtcCompileProgram");
  held_link_create = versioned_link_create(dlopen(GPUJIT_NVJITLINK, RTLD_NOW));
  return held_link_create && F.launch && F.kernel && F.kind_enabled && F.enabled && F.timestamp && held_compile ? 0 : -1;
}

/* One launch of `f` and, where CUPTI's kernel records are on, its kernel, 1 us long, starting now
 * on CUPTI's clock. */
static void launch(fake_fn *f, uint32_t corr)
{
  uint64_t now = 0;
  F.timestamp(&now);
  F.launch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, corr, (CUfunction)f);
  if (F.kind_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL))
    F.kernel(corr, f->name, 0, now + 1000, now + 2000, 0);
}

static void test_inproc__schedule_and_compiles(void **state)
{
  gpujit_profile_options o = GPUJIT_PROFILE_OPTIONS_INIT;
  gpujit_profile_session *s = NULL, *second = NULL;
  gpujit_profile *p = NULL, *again = NULL;
  const gpujit_profile_compile *c;
  const gpujit_profile_step_row *st;
  fake_fn fn = {(void *)0xa100, "scaled_kernel", 0};
  compile_fn before = held_compile;
  void *link_before = held_link_create;
  size_t n, seen = 0;
  char *dir = th_tmpdir();
  (void)state;
  o.inject_path = GPUJIT_INJECT;
  o.records_dir = dir;
  o.schedule = "wait=1,warmup=1,active=1,repeat=1";
  compile("outside_before.cu", false);
  assert_int_equal(gpujit_profile_start(&s, &o), 0);
  assert_string_equal(gpujit_profile_session_dir(s), dir);
  assert_int_equal(gpujit_profile_start(&second, &o), GPUJIT_EBUSY); /* one at a time */
  assert_null(second);
  assert_ptr_not_equal(held_compile, before); /* rebound by value */
  assert_ptr_not_equal(held_link_create, link_before);
  /* step 0 waits: CUPTI not set up at all */
  assert_false(F.kind_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  assert_false(F.enabled(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
  compile("wait_step.cu", false);
  launch(&fn, 1); /* not recorded: nothing is on */
  gpujit_profile_step(); /* step 1: warmup, CUPTI on */
  assert_true(F.kind_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  launch(&fn, 2);
  gpujit_profile_step(); /* step 2: active */
  launch(&fn, 3);
  compile("active_step.cu", true);
  gpujit_profile_step(); /* step 3: after it; CUPTI goes at the next boundary */
  assert_true(F.kind_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  gpujit_profile_step(); /* step 4 */
  assert_false(F.kind_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  launch(&fn, 4);
  assert_int_equal(gpujit_profile_stop(s, &p), 0);
  assert_int_equal(gpujit_profile_stop(s, &again), GPUJIT_EINVAL); /* once */
  assert_null(again);
  assert_ptr_equal(held_compile, before); /* put back */
  assert_ptr_equal(held_link_create, link_before);
  compile("outside_after.cu", false);
  /* the session's compiles, through the GOT slot and the pointer held from before it */
  n = gpujit_profile_compiles(p, &c);
  for (size_t i = 0; i < n; i++)
    if (!strcmp(c[i].kind, "nvrtc"))
      seen |= !strcmp(c[i].name, "wait_step.cu") ? 1u : !strcmp(c[i].name, "active_step.cu") ? 2u : 4u;
  assert_int_equal(seen, 3);
  /* the one active step, its one kernel (launch 3): not the warmup's, not the ones CUPTI was off for */
  assert_int_equal(gpujit_profile_steps(p, &st), 1);
  assert_int_equal(st[0].step, 2);
  assert_int_equal(st[0].kernels, 1);
  assert_true(st[0].complete);
  assert_non_null(strstr(gpujit_profile_notes(p), "in-process profile"));
  assert_null(strstr(gpujit_profile_notes(p), "no CUDA driver"));
  gpujit_profile_free(p);
  gpujit_profile_session_free(s);
  /* checked before anything is loaded */
  o.schedule = "wait=2";
  assert_int_equal(gpujit_profile_start(&s, &o), GPUJIT_EINVAL);
  assert_null(s);
  th_rmrf(dir);
  free(dir);
}

/* A step marked by an NVTX range, as Warp's ScopedTimer(use_nvtx=True) or record_function marks it. */
static void nvtx_step(fake_fn *f, uint32_t corr)
{
  struct timespec work = {0, 200000}; /* the step's own work: its kernel (1 us after the launch) ends within it */
  nvtxRangePushA("sim_step");
  launch(f, corr);
  nanosleep(&work, NULL);
  nvtxRangePop();
}

static void test_inproc__nvtx_steps_without_cupti_before_the_warmup(void **state)
{
  gpujit_profile_options o = GPUJIT_PROFILE_OPTIONS_INIT;
  gpujit_profile_session *s = NULL;
  gpujit_profile *p = NULL;
  const gpujit_profile_step_row *st;
  fake_fn fn = {(void *)0xa200, "nvtx_kernel", 0};
  const char *named;
  char *dir = th_tmpdir();
  (void)state;
  setenv("NVTX_INJECTION64_PATH", "", 1); /* set, empty: NVTX reads that as none, and so does the session */
  o.inject_path = GPUJIT_INJECT;
  o.records_dir = dir;
  o.steps = "nvtx:sim_step";
  o.schedule = "wait=1,warmup=1,active=1,repeat=1";
  assert_int_equal(gpujit_profile_start(&s, &o), 0);
  assert_non_null(named = getenv("NVTX_INJECTION64_PATH")); /* this library, for NVTX's first call */
  assert_non_null(strstr(named, "gpujit_inject"));
  /* step 0: nothing on, though NVTX's calls are counted (not CUPTI's marker records) */
  launch(&fn, 11);
  assert_false(F.kind_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  assert_false(F.kind_enabled(CUPTI_ACTIVITY_KIND_MARKER));
  nvtx_step(&fn, 12); /* the range begins step 1, the warmup: CUPTI on */
  assert_true(F.kind_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  nvtx_step(&fn, 13); /* step 2, active */
  nvtx_step(&fn, 14); /* step 3, after it */
  nvtx_step(&fn, 15); /* step 4: CUPTI gone */
  assert_false(F.kind_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  assert_int_equal(gpujit_profile_stop(s, &p), 0);
  assert_non_null(named = getenv("NVTX_INJECTION64_PATH")); /* as the program had it: empty */
  assert_string_equal(named, "");
  unsetenv("NVTX_INJECTION64_PATH");
  assert_int_equal(gpujit_profile_steps(p, &st), 1);
  assert_int_equal(st[0].step, 2);
  assert_string_equal(st[0].src, "nvtx");
  assert_int_equal(st[0].kernels, 1); /* launch 13's kernel */
  assert_non_null(strstr(gpujit_profile_notes(p), "whose first NVTX call"));
  gpujit_profile_free(p);
  gpujit_profile_session_free(s);
  th_rmrf(dir);
  free(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_inproc__schedule_and_compiles),
      cmocka_unit_test(test_inproc__nvtx_steps_without_cupti_before_the_warmup),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
