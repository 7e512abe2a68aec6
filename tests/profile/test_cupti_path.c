/* The injection library's GPU path without a GPU (src/inject/cupti.c, launch_modules.c, buffers.c), driven
 * through a stand-in CUPTI (fake_cupti.c) and a stand-in libcuda.so.1 (fake_libcuda_functions.c):
 * every launch is counted in the sums of its own module, in any order and from any thread; the
 * driver is asked once per function, not per launch; a record whose launch slot was reused is
 * tied by a name only one module launched, never by order; a graph's node is not tied by name.
 *
 * `test_cupti_path --measuring` checks the measuring words of $GPUJIT_BENCH_LAUNCH_CALLBACKS that
 * bench/profile_overhead.py compares (src/inject/cupti.c): no CUPTI callbacks, kernel records alone,
 * buffers given back unread, each said in the report's measuring note.
 *
 * `test_cupti_path --bench [N]` prints what the library's own code costs per launch (the launch
 * callback, enter and exit) and per kernel record (the buffer callback), on this CPU. */
#include "helpers.h"

#include <cupti.h>
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>

typedef struct fake_fn { /* as fake_libcuda_functions.c has it */
  void *module;
  const char *name;
  int kernel;
} fake_fn;

static struct {
  char *dir;
  void (*launch)(CUpti_CallbackId, uint32_t, CUfunction);
  void (*call)(CUpti_CallbackId, uint32_t);
  void (*resource)(CUpti_CallbackId);
  int (*kernel)(uint32_t, const char *, uint32_t, uint64_t, uint64_t, uint64_t);
  int (*enabled)(CUpti_CallbackId);
  int (*kind_enabled)(CUpti_ActivityKind);
  void (*stats)(uint64_t *, uint64_t *, uint32_t *);
  uint64_t (*asked)(void);
  void (*flush)(void);
} F;
static uint32_t next_corr = 100;

#define MODULE(n) ((void *)(uintptr_t)(0xa0000 + (n) * 0x100))

static int setup(void **state, const char *settings, const char *budget)
{
  void *inject, *cupti, *cuda;
  int (*init)(void);
  (void)state;
  F.dir = th_tmpdir();
  setenv("GPUJIT_PROFILE_DIR", F.dir, 1);
  setenv("GPUJIT_CUPTI_LIBRARY", GPUJIT_FAKE_CUPTI, 1);
  setenv("GPUJIT_PROFILE_MAX_EVENTS", budget, 1);
  if (settings)
    setenv("GPUJIT_BENCH_LAUNCH_CALLBACKS", settings, 1);
  if (!(cuda = dlopen(GPUJIT_FAKE_LIBCUDA, RTLD_NOW | RTLD_LOCAL)) || !(inject = dlopen(getenv("GPUJIT_TEST_INJECT") ? getenv("GPUJIT_TEST_INJECT") : GPUJIT_INJECT, RTLD_NOW | RTLD_LOCAL)))
    return -1;
  *(void **)&init = dlsym(inject, "InitializeInjection");
  *(void **)&F.flush = dlsym(inject, "gpujit_inject_flush");
  if (!init || !F.flush || init() != 1 || !(cupti = dlopen(GPUJIT_FAKE_CUPTI, RTLD_NOW | RTLD_NOLOAD)))
    return -1;
  *(void **)&F.launch = dlsym(cupti, "fake_cupti_launch");
  *(void **)&F.call = dlsym(cupti, "fake_cupti_call");
  *(void **)&F.resource = dlsym(cupti, "fake_cupti_resource");
  *(void **)&F.kernel = dlsym(cupti, "fake_cupti_kernel");
  *(void **)&F.enabled = dlsym(cupti, "fake_cupti_enabled");
  *(void **)&F.kind_enabled = dlsym(cupti, "fake_cupti_kind_enabled");
  *(void **)&F.stats = dlsym(cupti, "fake_cupti_stats");
  *(void **)&F.asked = dlsym(cuda, "fake_driver_asked");
  return F.launch && F.call && F.resource && F.kernel && F.enabled && F.kind_enabled && F.stats && F.asked ? 0 : -1;
}

static int setup_tests(void **state)
{
  return setup(state, "1,flush=250,buffer=1024", "1000");
}

static int setup_measuring(void **state)
{
  return setup(state, "subscribe=0,kinds=kernel,unread=1", "1000");
}

static int teardown(void **state)
{
  (void)state;
  th_rmrf(F.dir);
  free(F.dir);
  return 0;
}

/* Every record line of this process so far. */
static char *records(void)
{
  char *path = NULL, *text = NULL;
  struct dirent *e;
  DIR *d = opendir(F.dir);
  F.flush();
  while (d && (e = readdir(d)))
    if (!strncmp(e->d_name, "p", 1) && strstr(e->d_name, ".jsonl"))
      path = th_path(F.dir, e->d_name);
  if (d)
    closedir(d);
  assert_non_null(path);
  text = th_read(path, NULL);
  free(path);
  return text;
}

static const char *field(const char *line, const char *key, char *out, size_t size)
{
  char pat[64];
  const char *at, *end;
  snprintf(pat, sizeof(pat), "\"%s\":", key);
  if (!(at = strstr(line, pat)))
    return NULL;
  at += strlen(pat);
  if (*at == '"')
    at++;
  for (end = at; *end && *end != '"' && *end != ',' && *end != '}'; end++)
    ;
  snprintf(out, size, "%.*s", (int)(end - at), at);
  return out;
}

/* Launches and GPU ns summed for (module, kernel name) over every ksum record. */
static uint64_t summed(const char *text, const void *module, const char *name, uint64_t *ns)
{
  char want[32], m[32], k[128], v[32];
  uint64_t n = 0;
  snprintf(want, sizeof(want), "0x%llx", (unsigned long long)(uintptr_t)module);
  if (ns)
    *ns = 0;
  for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
    char one[1024];
    const char *nl = strchr(line, '\n');
    snprintf(one, sizeof(one), "%.*s", (int)(nl ? nl - line : (ptrdiff_t)strlen(line)), line);
    if (!strstr(one, "\"k\":\"ksum\"") || !field(one, "module", m, sizeof(m)) || strcmp(m, want) ||
        !field(one, "name", k, sizeof(k)) || strcmp(k, name))
      continue;
    n += strtoull(field(one, "n", v, sizeof(v)), NULL, 10);
    if (ns)
      *ns += strtoull(field(one, "ns", v, sizeof(v)), NULL, 10);
  }
  return n;
}

static size_t lines_of(const char *text, const char *kind)
{
  char pat[64];
  size_t n = 0;
  snprintf(pat, sizeof(pat), "{\"k\":\"%s\"", kind);
  for (const char *p = text; (p = strstr(p, pat)); p++)
    n++;
  return n;
}

/* Launches through each launch API, interleaved over four functions of three modules (one a
 * library's kernel, one name in two modules): each in its own module's row, exactly. */
static void test_cupti_path__every_launch_in_its_module(void **state)
{
  static const CUpti_CallbackId apis[] = {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
                                          CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
                                          CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel};
  static fake_fn fns[] = {{MODULE(1), "t1_a", 0}, {MODULE(1), "t1_b", 0}, {MODULE(2), "t1_a", 0}, {MODULE(3), "t1_lib", 1}};
  uint64_t want[4] = {0}, asked = F.asked(), ns = 0, requests, completing;
  uint32_t period;
  char *text;
  (void)state;
  for (int i = 0; i < 30000; i++) {
    int f = (i * 7 + i / 13) % 4;
    uint32_t corr = next_corr++;
    F.launch(apis[i % 4], corr, (CUfunction)&fns[f]);
    assert_int_equal(F.kernel(corr, fns[f].name, 0, 1000u * (uint64_t)i, 1000u * (uint64_t)i + 1000, 0), 1);
    want[f]++;
  }
  text = records();
  for (int f = 0; f < 4; f++) {
    assert_int_equal(summed(text, fns[f].module, fns[f].name, &ns), want[f]);
    assert_int_equal(ns, want[f] * 1000);
  }
  assert_int_equal(F.asked() - asked, 4); /* once per function, not 30,000 times */
  assert_int_equal(lines_of(text, "kernel"), 1000); /* the trace budget; the sums hold all */
  F.stats(&requests, &completing, &period);
  assert_int_equal(period, 250);                  /* the measuring settings were read */
  assert_true(requests >= 30000 * 216 / (1 << 20)); /* 1 MiB buffers, handed out zeroed */
  assert_non_null(strstr(text, "\"what\":\"measuring\""));
  assert_true(F.enabled(CUPTI_DRIVER_TRACE_CBID_cuLaunch) && F.enabled(CUPTI_DRIVER_TRACE_CBID_cuModuleUnload));
  free(text);
}

/* Four threads launching at once, each its own module: correlation ids interleave, callbacks come
 * in any order; every record finds its own launch. */
#define THREADS 4
#define PER_THREAD 20000
static uint32_t corr_base;
static uint32_t corr_fn[THREADS * PER_THREAD];
static uint32_t taken;
static fake_fn thread_fns[THREADS] = {{MODULE(11), "t2_k", 0}, {MODULE(12), "t2_k", 0}, {MODULE(13), "t2_k", 0},
                                      {MODULE(14), "t2_other", 0}};

static void *launcher(void *arg)
{
  int t = (int)(intptr_t)arg;
  for (int i = 0; i < PER_THREAD; i++) {
    uint32_t c = __atomic_fetch_add(&taken, 1, __ATOMIC_RELAXED);
    corr_fn[c] = (uint32_t)t;
    F.launch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, corr_base + c, (CUfunction)&thread_fns[t]);
  }
  return NULL;
}

static void test_cupti_path__threads(void **state)
{
  pthread_t th[THREADS];
  char *text;
  (void)state;
  corr_base = next_corr;
  next_corr += THREADS * PER_THREAD;
  for (int t = 0; t < THREADS; t++)
    assert_int_equal(pthread_create(&th[t], NULL, launcher, (void *)(intptr_t)t), 0);
  for (int t = 0; t < THREADS; t++)
    pthread_join(th[t], NULL);
  for (uint32_t c = 0; c < THREADS * PER_THREAD; c++)
    assert_int_equal(F.kernel(corr_base + c, thread_fns[corr_fn[c]].name, 0, 0, 10, 0), 1);
  text = records();
  for (int t = 0; t < THREADS; t++)
    assert_int_equal(summed(text, thread_fns[t].module, thread_fns[t].name, NULL), PER_THREAD);
  free(text);
}

/* Records that come after their launch's slot was reused: tied by a kernel name one module alone
 * launched; a name two modules launched, and a graph's node, are not tied (module 0). */
static void test_cupti_path__late_records_by_name_only(void **state)
{
  static fake_fn unique = {MODULE(21), "t3_unique", 0}, amb1 = {MODULE(21), "t3_amb", 0},
                 amb2 = {MODULE(22), "t3_amb", 0}, fill = {MODULE(23), "t3_fill", 0};
  uint32_t c = next_corr;
  char *text;
  (void)state;
  F.launch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, c, (CUfunction)&unique);
  F.launch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, c + 1, (CUfunction)&amb1);
  F.launch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, c + 2, (CUfunction)&amb2);
  next_corr += 3;
  for (uint32_t i = 0; i < (1u << 19) + 16; i++) { /* the table of launches goes round once */
    F.launch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, next_corr, (CUfunction)&fill);
    assert_int_equal(F.kernel(next_corr++, fill.name, 0, 0, 1, 0), 1);
  }
  assert_int_equal(F.kernel(c, unique.name, 0, 0, 1, 0), 1);
  assert_int_equal(F.kernel(c + 1, amb1.name, 0, 0, 1, 0), 1);
  assert_int_equal(F.kernel(c + 2, amb2.name, 0, 0, 1, 0), 1);
  assert_int_equal(F.kernel(next_corr++, unique.name, 0, 0, 1, 9), 1); /* a graph's node, no callback */
  text = records();
  assert_int_equal(summed(text, fill.module, fill.name, NULL), (1u << 19) + 16);
  assert_int_equal(summed(text, unique.module, unique.name, NULL), 1);
  assert_int_equal(summed(text, NULL, unique.name, NULL), 1);
  assert_int_equal(summed(text, amb1.module, amb1.name, NULL) + summed(text, amb2.module, amb2.name, NULL), 0);
  assert_int_equal(summed(text, NULL, amb1.name, NULL), 2);
  free(text);
}

/* After an unload a function handle may be another module's: the driver is asked again — also
 * where no unload call was made (a context's end unloads its modules). */
static void test_cupti_path__unload_asks_again(void **state)
{
  static fake_fn f = {MODULE(31), "t4_k", 0};
  uint64_t asked = F.asked();
  char *text;
  (void)state;
  for (int i = 0; i < 100; i++, next_corr++) {
    F.launch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, next_corr, (CUfunction)&f);
    F.kernel(next_corr, f.name, 0, 0, 1, 0);
  }
  assert_int_equal(F.asked() - asked, 1);
  F.call(CUPTI_DRIVER_TRACE_CBID_cuModuleUnload, next_corr++);
  f.module = MODULE(32);
  for (int i = 0; i < 50; i++, next_corr++) {
    F.launch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, next_corr, (CUfunction)&f);
    F.kernel(next_corr, f.name, 0, 0, 1, 0);
  }
  assert_int_equal(F.asked() - asked, 2);
  F.resource(CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
  f.module = MODULE(33);
  for (int i = 0; i < 25; i++, next_corr++) {
    F.launch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, next_corr, (CUfunction)&f);
    F.kernel(next_corr, f.name, 0, 0, 1, 0);
  }
  assert_int_equal(F.asked() - asked, 3);
  text = records();
  assert_int_equal(summed(text, MODULE(31), f.name, NULL), 100);
  assert_int_equal(summed(text, MODULE(32), f.name, NULL), 50);
  assert_int_equal(summed(text, MODULE(33), f.name, NULL), 25);
  free(text);
}

static double seconds(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* CUPTI's thread while the program launches: the records of launches made so far, a buffer at a time. */
static volatile uint32_t bench_launched, bench_done;
static void *bench_consumer(void *arg)
{
  const fake_fn *fns = arg;
  uint32_t c = next_corr;
  while (!__atomic_load_n(&bench_done, __ATOMIC_ACQUIRE) || c != __atomic_load_n(&bench_launched, __ATOMIC_ACQUIRE)) {
    uint32_t upto = __atomic_load_n(&bench_launched, __ATOMIC_ACQUIRE);
    for (; c != upto; c++)
      F.kernel(c, fns[(c - next_corr) % 3].name, 0, 0, 500, 0);
  }
  F.flush();
  return NULL;
}

/* subscribe=0, kinds=kernel, unread=1: no callback of CUPTI's is enabled (loads, unloads and
 * launches alike), CUPTI's kernel records alone are on, their buffers go back unread (no sum, no
 * kernel line), and the report's note says each — a measuring run never passes for a profile. */
static void test_cupti_path__measuring_words(void **state)
{
  static fake_fn fn = {MODULE(51), "m_k", 0};
  uint64_t requests, completing;
  uint32_t period;
  char *text;
  (void)state;
  assert_false(F.enabled(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
  assert_false(F.enabled(CUPTI_DRIVER_TRACE_CBID_cuModuleLoadData));
  assert_false(F.enabled(CUPTI_DRIVER_TRACE_CBID_cuModuleUnload));
  assert_true(F.kind_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  assert_false(F.kind_enabled(CUPTI_ACTIVITY_KIND_MEMCPY));
  assert_false(F.kind_enabled(CUPTI_ACTIVITY_KIND_MARKER));
  for (int i = 0; i < 5000; i++) {
    uint32_t corr = next_corr++;
    F.launch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, corr, (CUfunction)&fn);
    assert_int_equal(F.kernel(corr, fn.name, 0, 10u * (uint64_t)i, 10u * (uint64_t)i + 5, 0), 1);
  }
  text = records();
  F.stats(&requests, &completing, &period);
  assert_true(requests >= 1);                         /* CUPTI had buffers and delivered them */
  assert_int_equal(lines_of(text, "ksum"), 0);        /* unread */
  assert_int_equal(lines_of(text, "kernel"), 0);
  assert_non_null(strstr(text, "no CUPTI callbacks"));
  assert_non_null(strstr(text, "kernel records alone"));
  assert_non_null(strstr(text, "unread (nothing of the GPU's counted)"));
  free(text);
}

/* What the library's own code costs: a launch's callbacks (enter and exit) against the same call
 * of the stand-in for an API nobody watches, and a kernel record's processing. */
static int bench(long n)
{
  static fake_fn fns[] = {{MODULE(41), "b_a", 0}, {MODULE(41), "b_b", 0}, {MODULE(42), "b_c", 0}};
  uint64_t req0, ns0, req1, ns1;
  uint32_t period;
  double t0, t1, t2;
  if (setup(NULL, NULL, "200000") < 0) {
    fprintf(stderr, "test_cupti_path: the stand-ins could not be loaded\n");
    return 1;
  }
  for (int round = 0; round < 3; round++) {
    t0 = seconds();
    for (long i = 0; i < n; i++)
      F.launch(CUPTI_DRIVER_TRACE_CBID_cuMemAlloc, next_corr + (uint32_t)i, (CUfunction)&fns[i % 3]);
    t1 = seconds();
    for (long i = 0; i < n; i++)
      F.launch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, next_corr + (uint32_t)i, (CUfunction)&fns[i % 3]);
    t2 = seconds();
    F.stats(&req0, &ns0, &period);
    for (long i = 0; i < n; i++)
      F.kernel(next_corr + (uint32_t)i, fns[i % 3].name, 0, (uint64_t)i * 1000, (uint64_t)i * 1000 + 500, 0);
    F.flush();
    F.stats(&req1, &ns1, &period);
    next_corr += (uint32_t)n;
    printf("round %d: launch callbacks %.1f ns a launch (enter + exit; the stand-in's own call %.1f ns); "
           "kernel records %.1f ns each (%s), %llu buffers\n",
           round, ((t2 - t1) - (t1 - t0)) / (double)n * 1e9, (t1 - t0) / (double)n * 1e9, (double)(ns1 - ns0) / (double)n,
           round == 0 ? "the first 200,000 drawn in the trace" : "summed only", (unsigned long long)(req1 - req0));
    {
      pthread_t consumer;
      bench_launched = next_corr, bench_done = 0;
      pthread_create(&consumer, NULL, bench_consumer, fns);
      t0 = seconds();
      for (long i = 0; i < n; i++) {
        F.launch(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, next_corr + (uint32_t)i, (CUfunction)&fns[i % 3]);
        __atomic_store_n(&bench_launched, next_corr + (uint32_t)i + 1, __ATOMIC_RELEASE);
      }
      t2 = seconds();
      __atomic_store_n(&bench_done, 1, __ATOMIC_RELEASE);
      pthread_join(consumer, NULL);
      next_corr += (uint32_t)n;
      printf("round %d: while another thread reads the records: launch callbacks and the stand-in's call %.1f ns a launch\n",
             round, (t2 - t0) / (double)n * 1e9);
    }
  }
  th_rmrf(F.dir);
  return 0;
}

int main(int argc, char **argv)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cupti_path__every_launch_in_its_module),
      cmocka_unit_test(test_cupti_path__threads),
      cmocka_unit_test(test_cupti_path__late_records_by_name_only),
      cmocka_unit_test(test_cupti_path__unload_asks_again),
  };
  const struct CMUnitTest measuring[] = {cmocka_unit_test(test_cupti_path__measuring_words)};
  if (argc > 1 && !strcmp(argv[1], "--measuring"))
    return cmocka_run_group_tests(measuring, setup_measuring, teardown);
  if (argc > 1 && !strcmp(argv[1], "--bench"))
    return bench(argc > 2 ? atol(argv[2]) : 1000000);
  return cmocka_run_group_tests(tests, setup_tests, teardown);
}
