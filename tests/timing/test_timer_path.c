/* The timed launch path on the CPU: devices whose driver table is a fake (a GPU clock that each
 * launch advances by its kernel's duration, events that read it), and for the CUPTI timer a fake
 * libcupti (fake_cupti_timer.c) found as the toolkit's. Each timed launch gets its own time, other
 * work between is nobody's, two devices' windows overlap, CUPTI ties by its callback (no id pushed)
 * or, where another holds CUPTI's subscriber, by ids; and what the launch path costs the host. */
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>

#include "helpers.h"

#include "gpujit.h"
#include "base/clock.h"
#include "compile/toolkit/toolkit.h"
#include "run/device.h"
#include "timing/cupti.h"

typedef struct fake_fn {
  const char *name;
  uint64_t ns;
} fake_fn;

typedef struct fake_event {
  uint64_t ns;
} fake_event;

static uint64_t gpu_ns = 1000000; /* the fake GPU's clock: launches run instantly, in issue order */
static uint32_t next_corr = 100;
static int cupti_records;         /* launches call the fake CUPTI */
static int skip_callback;         /* the next launch's callback does not come */
static unsigned long ctx_sets, launches, event_records;
static unsigned long wrong_ctx; /* launches made while another context than their device's was current */
static _Thread_local CUcontext current; /* the thread's current context, as the fake driver keeps it */
static void (*cupti_call)(CUpti_CallbackId, uint32_t, int);
static void (*cupti_kernel)(uint32_t, const char *, uint32_t, uint64_t, uint64_t);
static void (*cupti_counts)(unsigned long *, unsigned long *);
static unsigned long (*fake_ctx_callbacks)(void);
static void (*fake_refuse_runtime)(int);

static int device_of(CUstream s) { return (int)((uintptr_t)s - 0x200); }

/* What the driver and CUPTI see of one kernel run: its call, its record. */
static void run_kernel(const fake_fn *f, int device)
{
  uint32_t corr = next_corr++;
  uint64_t start = gpu_ns;
  gpu_ns += f->ns;
  if (cupti_records) {
    cupti_call(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, corr, !skip_callback);
    cupti_kernel(corr, f->name, (uint32_t)device, start, gpu_ns);
  }
  skip_callback = 0;
}

static CUresult fk_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                          unsigned bz, unsigned shared, CUstream s, void **params, void **extra)
{
  (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)params, (void)extra;
  launches++;
  wrong_ctx += current != (CUcontext)(uintptr_t)(0x100 + device_of(s)); /* a function runs in its own context */
  run_kernel((const fake_fn *)f, device_of(s));
  return CUDA_SUCCESS;
}

/* The driver reports a context call to CUPTI's subscriber where it enabled that call. */
static CUresult fk_ctx_set(CUcontext c)
{
  ctx_sets++;
  current = c;
  if (cupti_call)
    cupti_call(CUPTI_DRIVER_TRACE_CBID_cuCtxSetCurrent, next_corr++, 1);
  return CUDA_SUCCESS;
}

static CUresult fk_event_create(CUevent *e, unsigned flags)
{
  (void)flags;
  *e = (CUevent)calloc(1, sizeof(fake_event));
  return *e ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult fk_event_destroy(CUevent e)
{
  free(e);
  return CUDA_SUCCESS;
}

static CUresult fk_event_record(CUevent e, CUstream s)
{
  (void)s;
  event_records++;
  ((fake_event *)e)->ns = gpu_ns;
  return CUDA_SUCCESS;
}

static CUresult fk_event_elapsed(float *ms, CUevent a, CUevent b)
{
  *ms = (float)((double)(((fake_event *)b)->ns - ((fake_event *)a)->ns) / 1e6);
  return CUDA_SUCCESS;
}

static CUresult fk_event_sync(CUevent e)
{
  (void)e;
  return CUDA_SUCCESS;
}

static CUresult fk_stream(CUstream s)
{
  (void)s;
  return CUDA_SUCCESS;
}

static CUresult fk_ctx_release(CUdevice d)
{
  (void)d;
  return CUDA_SUCCESS;
}

static gpujit__driver fake;

/* Device `ordinal` on the fake driver, with one loaded module holding `n` kernels. */
static gpujit_device *fake_device(int ordinal, gpujit_loaded **out, const fake_fn *fns, size_t n)
{
  gpujit_device *g = calloc(1, sizeof(*g));
  gpujit_loaded *l = calloc(1, sizeof(*l));
  fake.cuLaunchKernel = fk_launch;
  fake.cuCtxSetCurrent = fk_ctx_set;
  fake.cuEventCreate = fk_event_create;
  fake.cuEventDestroy = fk_event_destroy;
  fake.cuEventRecord = fk_event_record;
  fake.cuEventElapsedTime = fk_event_elapsed;
  fake.cuEventSynchronize = fk_event_sync;
  fake.cuStreamSynchronize = fk_stream;
  fake.cuStreamDestroy = fk_stream;
  fake.cuDevicePrimaryCtxRelease = fk_ctx_release;
  g->d = &fake;
  g->dev = ordinal;
  g->ctx = (CUcontext)(uintptr_t)(0x100 + ordinal);
  g->own = g->stream = (CUstream)(uintptr_t)(0x200 + ordinal);
  g->info.ordinal = ordinal;
  g->info.max_block[0] = g->info.max_block[1] = 1024, g->info.max_block[2] = 64;
  g->info.max_grid[0] = 0x7fffffff, g->info.max_grid[1] = g->info.max_grid[2] = 65535;
  g->info.max_shared_per_block = 49152;
  g->info.max_shared_per_block_optin = 232448;
  l->dev = g;
  l->kernels = calloc(n, sizeof(*l->kernels));
  for (size_t i = 0; i < n; i++) {
    l->kernels[i].owner = l;
    l->kernels[i].fn = (CUfunction)(uintptr_t)&fns[i];
    l->kernels[i].name = strdup(fns[i].name);
    l->kernels[i].attrs.max_threads_per_block = 1024;
  }
  l->count = n;
  *out = l;
  return g;
}

static void free_device(gpujit_device *g, gpujit_loaded *l)
{
  gpujit_loaded_free(l);
  gpujit_device_free(g);
}

static int launch(gpujit_kernel *k)
{
  unsigned grid[3] = {1, 1, 1}, block[3] = {32, 1, 1};
  return gpujit_launch(k, grid, block, 0, NULL);
}

static const fake_fn fns[] = {{"gj_short", 1500}, {"gj_long", 42000}, {"_Z5scaleIfEvPT_S0_i", 700}};
static const fake_fn foreign = {"other_framework_kernel", 9000};

/* Events: each launch's pair times it alone; other work on the stream between is nobody's. */
static void test_timer__events_each_launch_own_time(void **state)
{
  gpujit_loaded *l;
  gpujit_device *g = fake_device(0, &l, fns, 3);
  gpujit_timing_result *res = NULL;
  size_t n = 0;
  double t0 = gpujit__now_us();
  (void)state;
  assert_int_equal(gpujit_timing_begin(g, GPUJIT_TIMING_KERNEL), 0);
  for (int i = 0; i < 6; i++) {
    assert_int_equal(launch(&l->kernels[i % 3]), 0);
    run_kernel(&foreign, 0); /* another framework's kernel on the same stream */
  }
  assert_int_equal(gpujit_timing_end(&res, &n, g), 0);
  assert_int_equal(n, 6);
  for (size_t i = 0; i < n; i++) {
    assert_string_equal(res[i].name, fns[i % 3].name);
    assert_float_equal(res[i].elapsed_ms, (double)fns[i % 3].ns / 1e6, 1e-7);
    assert_int_equal(res[i].order, i);
    assert_int_equal(res[i].missing, 0);
    assert_true(res[i].host_us >= t0 && res[i].host_us <= gpujit__now_us());
    assert_true(res[i].launch_us >= 0 && res[i].launch_us < 1e6);
    assert_true(i == 0 || res[i].host_us >= res[i - 1].host_us);
  }
  gpujit_free(res);
  free_device(g, l);
}

/* A synchronisation's error names the last kernel launched, also after its module went and a
 * new name took the old one's place. */
static void test_timer__last_kernel_after_unload(void **state)
{
  gpujit_loaded *l, *l2;
  gpujit_device *g = fake_device(0, &l, fns, 1);
  gpujit_device *g2 = fake_device(0, &l2, fns + 1, 1);
  (void)state;
  assert_int_equal(launch(&l->kernels[0]), 0);
  assert_string_equal(g->last_kernel, "gj_short");
  /* the same device, another module: its kernel is now the last */
  l2->dev = g;
  assert_int_equal(launch(&l2->kernels[0]), 0);
  assert_string_equal(g->last_kernel, "gj_long");
  assert_int_equal(launch(&l->kernels[0]), 0);
  assert_string_equal(g->last_kernel, "gj_short");
  gpujit_loaded_free(l);
  assert_null(g->last_src); /* the name it copied from is gone */
  l2->dev = g2;
  free_device(g2, l2);
  gpujit_device_free(g);
}

/* A launch beyond the limits still names the kernel as people read it. */
static void test_timer__limits_error_demangled(void **state)
{
  gpujit_loaded *l;
  gpujit_device *g = fake_device(0, &l, fns, 3);
  unsigned grid[3] = {1, 1, 1}, block[3] = {2048, 1, 1};
  (void)state;
  launches = 0;
  assert_int_equal(gpujit_launch(&l->kernels[2], grid, block, 0, NULL), GPUJIT_EINVAL);
  assert_non_null(strstr(gpujit_error_last(), "scale<float>(float*, float, int): block.x = 2048 exceeds"));
  block[0] = 32, grid[1] = 0;
  assert_int_equal(gpujit_launch(&l->kernels[2], grid, block, 0, NULL), GPUJIT_EINVAL);
  assert_non_null(strstr(gpujit_error_last(), "grid and block dimensions must be at least 1"));
  grid[1] = 1, block[0] = 512, block[1] = 4;
  assert_int_equal(gpujit_launch(&l->kernels[2], grid, block, 0, NULL), GPUJIT_EINVAL);
  assert_non_null(strstr(gpujit_error_last(), "2048 threads per block exceed the kernel's limit of 1024"));
  block[1] = 1;
  assert_int_equal(gpujit_launch(&l->kernels[2], grid, block, 300000, NULL), GPUJIT_EINVAL);
  assert_non_null(strstr(gpujit_error_last(), "300000 bytes of dynamic shared memory"));
  assert_int_equal(launches, 0);
  free_device(g, l);
}

/* Host µs per launch, the least of `batches` batches (the machine is shared: the least is the
 * path's own cost). */
static double per_launch_us(gpujit_kernel *k, bool timed)
{
  double best = 1e9;
  for (int b = 0; b < 15; b++) {
    gpujit_timing_result *res = NULL;
    size_t n = 0;
    double t0;
    if (timed)
      assert_int_equal(gpujit_timing_begin(k->owner->dev, GPUJIT_TIMING_KERNEL), 0);
    t0 = gpujit__now_us();
    for (int i = 0; i < 2000; i++)
      launch(k);
    t0 = (gpujit__now_us() - t0) / 2000;
    best = t0 < best ? t0 : best;
    if (timed) {
      assert_int_equal(gpujit_timing_end(&res, &n, k->owner->dev), 0);
      assert_int_equal(n, 2000);
      gpujit_free(res);
    }
  }
  return best;
}

/* What gpujit's launch path costs the host against a driver that costs nothing: no demangling
 * of a C++ name per launch (it was about 1 µs), no printf, two clock reads for a timed one. The
 * bounds are several times what the path takes here, far under what it took before. */
static void test_timer__launch_path_host_cost(void **state)
{
  gpujit_loaded *l;
  gpujit_device *g;
  double off, on, clock_us, t0;
  (void)state;
#if defined(__SANITIZE_ADDRESS__)
  skip(); /* instrumented code is many times slower: the bounds are the plain build's */
#endif
  if (getenv("GPUJIT_TEST_NO_TIMING")) /* under valgrind, as above */
    skip();
  g = fake_device(0, &l, fns, 3);
  clock_us = 1e9;
  for (int b = 0; b < 15; b++) { /* the least of 15 batches, as the launches' */
    t0 = gpujit__now_us();
    for (int i = 0; i < 2000; i++)
      (void)gpujit__now_us();
    t0 = (gpujit__now_us() - t0) / 2000;
    clock_us = t0 < clock_us ? t0 : clock_us;
  }
  off = per_launch_us(&l->kernels[2], false);
  on = per_launch_us(&l->kernels[2], true);
  print_message("launch path, fake driver: timing off %.3f µs, events timing on %.3f µs (a clock read %.3f µs)\n", off,
                on, clock_us);
  assert_true(off < 0.15);
  assert_true(on < 0.2 + 2 * clock_us);
  free_device(g, l);
}

static int cupti_ready(void)
{
  return cupti_call != NULL;
}

/* CUPTI, tied by its callback: no id pushed; each launch its own record; others' are not ours. */
static void test_timer__cupti_callback_ties(void **state)
{
  gpujit_loaded *l;
  gpujit_device *g = fake_device(0, &l, fns, 3);
  gpujit_timing_result *res = NULL;
  size_t n = 0;
  unsigned long pushed0, pushed1, called0, called1;
  (void)state;
  if (!cupti_ready())
    skip();
  assert_int_equal(gpujit_timing_set_source(g, GPUJIT_TIMER_CUPTI), 0);
  assert_true(gpujit__cupti_by_callback());
  cupti_records = 1;
  cupti_counts(&pushed0, &called0);
  assert_int_equal(gpujit_timing_begin(g, GPUJIT_TIMING_KERNEL), 0);
  for (int i = 0; i < 9; i++) {
    assert_int_equal(launch(&l->kernels[i % 3]), 0);
    run_kernel(&foreign, 0);
  }
  assert_int_equal(gpujit_timing_end(&res, &n, g), 0);
  cupti_counts(&pushed1, &called1);
  assert_int_equal(pushed1 - pushed0, 0);   /* no CUPTI call per launch */
  assert_int_equal(called1 - called0, 18); /* CUPTI's callback at every launch, ours and others' */
  assert_int_equal(n, 9);
  for (size_t i = 0; i < n; i++) {
    assert_string_equal(res[i].name, fns[i % 3].name);
    assert_int_equal(res[i].missing, 0);
    assert_float_equal(res[i].elapsed_ms, (double)fns[i % 3].ns / 1e6, 1e-9);
  }
  gpujit_free(res);
  cupti_records = 0;
  assert_int_equal(gpujit_timing_set_source(g, GPUJIT_TIMER_EVENTS), 0);
  free_device(g, l);
}

/* Driver calls made so far: what the fake driver counts of those a launch path makes. */
static unsigned long driver_calls(void) { return ctx_sets + launches + event_records; }

/* The launches on another thread: a context it makes current is its own, not the launching one's. */
static void *other_thread_sets_context(void *arg)
{
  (void)arg;
  fake.cuCtxSetCurrent((CUcontext)(uintptr_t)0x999);
  return NULL;
}

/* A context ends on another thread: every thread's note of it goes. */
static void *other_thread_destroys_context(void *arg)
{
  (void)arg;
  cupti_call(CUPTI_DRIVER_TRACE_CBID_cuCtxDestroy_v2, next_corr++, 1);
  return NULL;
}

/* `n` launches of `k`; the driver calls they made, each checked to have run in its context. */
static unsigned long calls_for(gpujit_kernel *k, int n)
{
  unsigned long c0 = driver_calls(), bad0 = wrong_ctx;
  for (int i = 0; i < n; i++)
    assert_int_equal(launch(k), 0);
  assert_int_equal(wrong_ctx - bad0, 0);
  return driver_calls() - c0;
}

/* CUPTI, tied by its callback (gpujit holds the subscriber, so CUPTI reports every change of a
 * thread's current context): a timed launch makes one driver call, the launch; the device's
 * context is made current again only after the program changed it — on this thread, or ended a
 * context anywhere. Events (no such watch): each launch sets the context, then the events and
 * the launch (4 calls). Every launch still runs in its device's context and is timed. */
static void test_timer__cupti_launch_one_driver_call(void **state)
{
  gpujit_loaded *l, *l1;
  gpujit_device *g = fake_device(0, &l, fns, 3), *g1 = fake_device(1, &l1, fns, 3);
  gpujit_timing_result *res = NULL;
  size_t n = 0;
  pthread_t th;
  unsigned long ctx0;
  (void)state;
  if (!cupti_ready() || !fake_ctx_callbacks)
    skip();
  assert_int_equal(gpujit_timing_set_source(g, GPUJIT_TIMER_CUPTI), 0);
  assert_true(gpujit__cupti_by_callback());
  cupti_records = 1;
  ctx0 = fake_ctx_callbacks();
  assert_int_equal(gpujit_timing_begin(g, GPUJIT_TIMING_KERNEL), 0);
  assert_int_equal(calls_for(&l->kernels[0], 50), 50); /* the launches alone */
  /* the program makes another context current: set again, once */
  fake.cuCtxSetCurrent((CUcontext)(uintptr_t)0x999);
  assert_int_equal(calls_for(&l->kernels[1], 10), 11);
  /* another device's kernel on this thread: its context, then back */
  assert_int_equal(calls_for(&l1->kernels[0], 1), 2);
  assert_int_equal(calls_for(&l->kernels[0], 3), 4);
  /* another thread's current context is its own business */
  assert_int_equal(pthread_create(&th, NULL, other_thread_sets_context, NULL), 0);
  assert_int_equal(pthread_join(th, NULL), 0);
  assert_int_equal(calls_for(&l->kernels[0], 5), 5);
  /* a context destroyed on another thread: every thread sets its own again */
  assert_int_equal(pthread_create(&th, NULL, other_thread_destroys_context, NULL), 0);
  assert_int_equal(pthread_join(th, NULL), 0);
  assert_int_equal(calls_for(&l->kernels[0], 5), 6);
  /* every cuCtxSetCurrent reached the subscriber: gpujit's at the region's start, the program's
   * on each thread, gpujit's after the program's, to the other device and back, after the destroy */
  assert_int_equal(fake_ctx_callbacks() - ctx0, 7);
  assert_int_equal(gpujit_timing_end(&res, &n, g), 0);
  assert_int_equal(n, 73);
  for (size_t i = 0; i < n; i++)
    assert_int_equal(res[i].missing, 0);
  gpujit_free(res);
  assert_int_equal(gpujit_timing_set_source(g, GPUJIT_TIMER_EVENTS), 0);
  /* no watch now (CUPTI stopped): every launch sets the context */
  assert_int_equal(gpujit_timing_begin(g, GPUJIT_TIMING_KERNEL), 0);
  assert_int_equal(calls_for(&l->kernels[0], 10), 40);
  assert_int_equal(gpujit_timing_end(&res, &n, g), 0);
  assert_int_equal(n, 10);
  gpujit_free(res);
  assert_int_equal(calls_for(&l->kernels[0], 10), 20); /* untimed */
  cupti_records = 0;
  free_device(g, l);
  free_device(g1, l1);
}

/* CUPTI refuses a context call's callback (here the runtime's): the note cannot be trusted, so
 * each launch sets the context, as without the watch; still tied by the callback, still timed. */
static void test_timer__cupti_refused_context_callback(void **state)
{
  gpujit_loaded *l;
  gpujit_device *g = fake_device(0, &l, fns, 3);
  gpujit_timing_result *res = NULL;
  size_t n = 0;
  (void)state;
  if (!cupti_ready() || !fake_refuse_runtime)
    skip();
  fake_refuse_runtime(1);
  assert_int_equal(gpujit_timing_set_source(g, GPUJIT_TIMER_CUPTI), 0);
  assert_true(gpujit__cupti_by_callback());
  cupti_records = 1;
  assert_int_equal(gpujit_timing_begin(g, GPUJIT_TIMING_KERNEL), 0);
  assert_int_equal(calls_for(&l->kernels[0], 8), 16);
  assert_int_equal(gpujit_timing_end(&res, &n, g), 0);
  assert_int_equal(n, 8);
  for (size_t i = 0; i < n; i++)
    assert_int_equal(res[i].missing, 0);
  gpujit_free(res);
  cupti_records = 0;
  assert_int_equal(gpujit_timing_set_source(g, GPUJIT_TIMER_EVENTS), 0);
  fake_refuse_runtime(0);
  free_device(g, l);
}

/* A launch whose callback did not come is missing, not given the call before it. */
static void test_timer__cupti_missing_callback(void **state)
{
  gpujit_loaded *l;
  gpujit_device *g = fake_device(0, &l, fns, 3);
  gpujit_timing_result *res = NULL;
  size_t n = 0;
  (void)state;
  if (!cupti_ready())
    skip();
  assert_int_equal(gpujit_timing_set_source(g, GPUJIT_TIMER_CUPTI), 0);
  cupti_records = 1;
  assert_int_equal(gpujit_timing_begin(g, GPUJIT_TIMING_KERNEL), 0);
  assert_int_equal(launch(&l->kernels[0]), 0);
  run_kernel(&foreign, 0); /* its callback comes: this thread's last id is the foreign call's */
  skip_callback = 1;
  assert_int_equal(launch(&l->kernels[1]), 0);
  assert_int_equal(gpujit_timing_end(&res, &n, g), 0);
  assert_int_equal(n, 2);
  assert_int_equal(res[0].missing, 0);
  assert_float_equal(res[0].elapsed_ms, 1500 / 1e6, 1e-9);
  assert_int_equal(res[1].missing, 1);
  assert_float_equal(res[1].elapsed_ms, 0, 0);
  gpujit_free(res);
  cupti_records = 0;
  assert_int_equal(gpujit_timing_set_source(g, GPUJIT_TIMER_EVENTS), 0);
  free_device(g, l);
}

/* Another subscriber, from the stand-in itself (NULL: none); returns its handle. */
static void *other_subscriber(bool take, void *held)
{
  static CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
  static CUptiResult (*unsubscribe)(CUpti_SubscriberHandle);
  CUpti_SubscriberHandle other = NULL;
  void *h = dlopen(gpujit__cupti_library_path(), RTLD_NOW | RTLD_NOLOAD);
  assert_non_null(h);
  *(void **)&subscribe = dlsym(h, "cuptiSubscribe");
  *(void **)&unsubscribe = dlsym(h, "cuptiUnsubscribe");
  if (take)
    assert_int_equal(subscribe(&other, (CUpti_CallbackFunc)(void (*)(void))fk_stream, NULL), CUPTI_SUCCESS);
  else
    unsubscribe((CUpti_SubscriberHandle)held);
  dlclose(h);
  return other;
}

/* Two devices' windows overlap: the first to close leaves the other's records for it. */
static void two_devices(bool by_ids)
{
  gpujit_loaded *la, *lb;
  gpujit_device *a = fake_device(0, &la, fns, 3), *b = fake_device(1, &lb, fns, 3);
  gpujit_timing_result *ra = NULL, *rb = NULL;
  size_t na = 0, nb = 0;
  void *other = by_ids ? other_subscriber(true, NULL) : NULL;
  assert_int_equal(gpujit_timing_set_source(a, GPUJIT_TIMER_CUPTI), 0);
  assert_int_equal(gpujit_timing_set_source(b, GPUJIT_TIMER_CUPTI), 0);
  assert_int_equal(gpujit__cupti_by_callback(), !by_ids);
  cupti_records = 1;
  assert_int_equal(gpujit_timing_begin(a, GPUJIT_TIMING_KERNEL), 0);
  assert_int_equal(gpujit_timing_begin(b, GPUJIT_TIMING_KERNEL), 0);
  for (int i = 0; i < 4; i++) {
    assert_int_equal(launch(&la->kernels[0]), 0); /* a: short ones */
    assert_int_equal(launch(&lb->kernels[1]), 0); /* b: long ones */
  }
  assert_int_equal(gpujit_timing_end(&ra, &na, a), 0);
  assert_int_equal(launch(&lb->kernels[1]), 0);
  assert_int_equal(gpujit_timing_end(&rb, &nb, b), 0);
  assert_int_equal(na, 4);
  assert_int_equal(nb, 5);
  for (size_t i = 0; i < na; i++) {
    assert_int_equal(ra[i].device, 0);
    assert_string_equal(ra[i].name, "gj_short");
    assert_int_equal(ra[i].missing, 0);
    assert_float_equal(ra[i].elapsed_ms, 1500 / 1e6, 1e-9);
  }
  for (size_t i = 0; i < nb; i++) {
    assert_int_equal(rb[i].device, 1);
    assert_int_equal(rb[i].missing, 0);
    assert_float_equal(rb[i].elapsed_ms, 42000 / 1e6, 1e-9);
  }
  gpujit_free(ra);
  gpujit_free(rb);
  cupti_records = 0;
  assert_int_equal(gpujit_timing_set_source(a, GPUJIT_TIMER_EVENTS), 0);
  assert_int_equal(gpujit_timing_set_source(b, GPUJIT_TIMER_EVENTS), 0);
  if (other)
    other_subscriber(false, other);
  free_device(a, la);
  free_device(b, lb);
}

static void test_timer__cupti_two_devices(void **state)
{
  (void)state;
  if (!cupti_ready())
    skip();
  two_devices(false);
}

/* The same tied by ids: each window's block of ids is its own. */
static void test_timer__cupti_two_devices_ids(void **state)
{
  (void)state;
  if (!cupti_ready())
    skip();
  two_devices(true);
}

/* Another holds CUPTI's subscriber: ids pushed around each launch tie them, as before. */
static void test_timer__cupti_ids_when_subscriber_taken(void **state)
{
  gpujit_loaded *l;
  gpujit_device *g = fake_device(0, &l, fns, 3);
  gpujit_timing_result *res = NULL;
  size_t n = 0;
  unsigned long pushed0, pushed1, called;
  void *other;
  (void)state;
  if (!cupti_ready())
    skip();
  other = other_subscriber(true, NULL);
  assert_int_equal(gpujit_timing_set_source(g, GPUJIT_TIMER_CUPTI), 0);
  assert_false(gpujit__cupti_by_callback());
  assert_non_null(strstr(gpujit__cupti_no_callback_why(), "another subscriber"));
  cupti_records = 1;
  cupti_counts(&pushed0, &called);
  assert_int_equal(gpujit_timing_begin(g, GPUJIT_TIMING_KERNEL), 0);
  for (int i = 0; i < 6; i++) {
    assert_int_equal(launch(&l->kernels[i % 3]), 0);
    run_kernel(&foreign, 0);
  }
  assert_int_equal(gpujit_timing_end(&res, &n, g), 0);
  cupti_counts(&pushed1, &called);
  assert_int_equal(pushed1 - pushed0, 6);
  assert_int_equal(n, 6);
  for (size_t i = 0; i < n; i++) {
    assert_string_equal(res[i].name, fns[i % 3].name);
    assert_int_equal(res[i].missing, 0);
    assert_float_equal(res[i].elapsed_ms, (double)fns[i % 3].ns / 1e6, 1e-9);
  }
  gpujit_free(res);
  cupti_records = 0;
  assert_int_equal(gpujit_timing_set_source(g, GPUJIT_TIMER_EVENTS), 0);
  other_subscriber(false, other);
  free_device(g, l);
}

/* A process-wide capture starts CUPTI but never takes its one subscriber: a profiler the program
 * starts later may; a timer selected then ties by ids. */
static void test_timer__capture_leaves_the_subscriber(void **state)
{
  gpujit_loaded *l;
  gpujit_device *g;
  gpujit_capture *cap = NULL;
  gpujit_timing_result *res = NULL;
  size_t n = 0;
  void *other;
  (void)state;
  if (!cupti_ready())
    skip();
  assert_int_equal(gpujit_capture_begin(&cap, GPUJIT_TIMING_ALL), 0);
  other = other_subscriber(true, NULL); /* fails the test where the capture subscribed */
  g = fake_device(0, &l, fns, 3);
  assert_int_equal(gpujit_timing_set_source(g, GPUJIT_TIMER_CUPTI), 0);
  assert_false(gpujit__cupti_by_callback());
  assert_int_equal(gpujit_timing_set_source(g, GPUJIT_TIMER_EVENTS), 0);
  gpujit_capture_end(cap, &res, &n, NULL); /* no driver to wait for here: it ends all the same */
  gpujit_free(res);
  other_subscriber(false, other);
  free_device(g, l);
}

/* The fake libcupti as the toolkit's: $CUDA_PATH/lib64/libcupti.so, looked for before any use. */
static void use_fake_cupti(void)
{
  static char dir[] = "/tmp/gpujit-timer-XXXXXX";
  char lib[sizeof(dir) + 32];
  void *h;
  if (!mkdtemp(dir))
    return;
  snprintf(lib, sizeof(lib), "%s/lib64", dir);
  mkdir(lib, 0755);
  snprintf(lib, sizeof(lib), "%s/lib64/libcupti.so", dir);
  if (symlink(GPUJIT_FAKE_CUPTI_TIMER, lib) != 0)
    return;
  setenv("CUDA_PATH", dir, 1);
  if (!(h = dlopen(lib, RTLD_NOW)))
    return;
  *(void **)&cupti_call = dlsym(h, "fake_timer_call");
  *(void **)&cupti_kernel = dlsym(h, "fake_timer_kernel");
  *(void **)&cupti_counts = dlsym(h, "fake_timer_counts");
  *(void **)&fake_ctx_callbacks = dlsym(h, "fake_timer_ctx_callbacks");
  *(void **)&fake_refuse_runtime = dlsym(h, "fake_timer_refuse_runtime");
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_timer__events_each_launch_own_time),
      cmocka_unit_test(test_timer__last_kernel_after_unload),
      cmocka_unit_test(test_timer__limits_error_demangled),
      cmocka_unit_test(test_timer__launch_path_host_cost),
      cmocka_unit_test(test_timer__cupti_callback_ties),
      cmocka_unit_test(test_timer__cupti_missing_callback),
      cmocka_unit_test(test_timer__cupti_launch_one_driver_call),
      cmocka_unit_test(test_timer__cupti_refused_context_callback),
      cmocka_unit_test(test_timer__cupti_two_devices),
      cmocka_unit_test(test_timer__cupti_two_devices_ids),
      cmocka_unit_test(test_timer__cupti_ids_when_subscriber_taken),
      cmocka_unit_test(test_timer__capture_leaves_the_subscriber),
  };
  use_fake_cupti();
  return cmocka_run_group_tests(tests, NULL, NULL);
}
