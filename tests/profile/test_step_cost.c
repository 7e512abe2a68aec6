/* What the injection library costs a program's steps (src/inject/steps.c, record_batch.c, cupti.c),
 * counted rather than timed: the writes to the records file a loop of steps makes (inotify counts
 * them), and where CUPTI is loaded when a schedule waits. Each case runs in a child process of its
 * own, which loads the library as `gpujit profile` would have it (its settings in the environment):
 *   - steps with no schedule (every step recorded): 1,000 steps cost no write each; their records
 *     are all there after a flush, and at exit; a line kept waits at most 100 ms for the next step;
 *   - a schedule that waits: CUPTI (the stand-in, fake_cupti.c) is loaded ahead at cuInit, with
 *     nothing of it enabled; the wait steps write nothing; the first warmup step attaches it and
 *     the step after the last active one detaches it;
 *   - `--step nvtx:NAME` (NVTX_INJECTION64_PATH naming the library, as `gpujit profile` sets it):
 *     the program's NVTX calls (nvtx3, compiled into this test) come to the library, which counts
 *     the steps from them with no CUPTI subscriber before the first warmup step, and writes the NVTX
 *     ranges of the recorded steps itself (on the host clock). */
#include "helpers.h"

#include <cupti.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/inotify.h>
#include <wchar.h>
#include <nvtx3/nvToolsExt.h>

#define FAIL(...) (fprintf(stderr, __VA_ARGS__), fputc('\n', stderr), 1)

static char *dir;
static void (*step)(int);

static uint64_t ms_now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* The writes to files of the records directory since the last call (inotify's IN_MODIFY: one each). */
static int writes(int fd)
{
  char buf[4096] __attribute__((aligned(8)));
  int n = 0;
  ssize_t got;
  while ((got = read(fd, buf, sizeof(buf))) > 0)
    for (char *p = buf; p < buf + got; p += sizeof(struct inotify_event) + ((struct inotify_event *)p)->len)
      n += (((struct inotify_event *)p)->mask & IN_MODIFY) != 0;
  return n;
}

static int watch(void)
{
  int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd >= 0 && inotify_add_watch(fd, dir, IN_MODIFY) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* The injection library, as `gpujit profile` preloads it: its settings in the environment. */
static void *load_inject_steps(const char *schedule, const char *source)
{
  void *inject;
  setenv("GPUJIT_PROFILE_DIR", dir, 1);
  setenv("GPUJIT_PROFILE_STEP", source, 1);
  setenv("GPUJIT_PROFILE_SCHEDULE", schedule, 1);
  setenv("GPUJIT_CUPTI_LIBRARY", GPUJIT_FAKE_CUPTI, 1);
  if (!(inject = dlopen(GPUJIT_INJECT, RTLD_NOW | RTLD_LOCAL)))
    return NULL;
  *(void **)&step = dlsym(inject, "gpujit_inject_step");
  return step ? inject : NULL;
}

static void *load_inject(const char *schedule) { return load_inject_steps(schedule, "api"); }

/* This process's records file's text. */
static char *records_text(void)
{
  char *path = NULL, *text = NULL;
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d)))
    if (!strncmp(e->d_name, "p", 1) && strstr(e->d_name, ".jsonl"))
      free(path), path = th_path(dir, e->d_name);
  if (d)
    closedir(d);
  if (path)
    text = th_read(path, NULL);
  free(path);
  return text;
}

static int occurrences(const char *text, const char *needle)
{
  int n = 0;
  for (const char *at = text; at && (at = strstr(at, needle)); at++)
    n++;
  return n;
}

/* The step records in this process's file, in file order: their "n" in `ns` (up to `max`). */
static int step_records(long *ns, int max)
{
  char *text = records_text();
  int n = 0;
  if (!text)
    return -1;
  for (char *at = text; (at = strstr(at, "\"k\":\"step\"")); at++) {
    char *num = strstr(at, "\"n\":");
    if (num && n < max)
      ns[n++] = strtol(num + 4, NULL, 10);
  }
  free(text);
  return n;
}

/* Steps with no schedule: each one recorded, none a write of its own. */
static int steps_batched(void)
{
  static long ns[2000];
  void (*flush)(void);
  void *inject = load_inject("");
  int fd, w, n;
  uint64_t t0, ms;
  if (!inject || !(*(void **)&flush = dlsym(inject, "gpujit_inject_flush")))
    return FAIL("the injection library %s did not load: %s", GPUJIT_INJECT, dlerror());
  step(0); /* the first record makes the file (its proc record) */
  if ((fd = watch()) < 0)
    return FAIL("inotify: %s", strerror(errno));
  t0 = ms_now();
  for (int i = 0; i < 1000; i++)
    step(0);
  ms = ms_now() - t0;
  /* a write per 100 ms at most (the oldest line kept waited that long), however many steps */
  if ((w = writes(fd)) > 1 + (int)(ms / 100))
    return FAIL("1000 steps in %llu ms made %d writes to the records file (expected at most %d)",
                (unsigned long long)ms, w, 1 + (int)(ms / 100));
  flush();
  if (writes(fd) != 1)
    return FAIL("the flush did not write the steps kept");
  if ((n = step_records(ns, 2000)) != 1001)
    return FAIL("%d step records after the flush, expected 1001", n);
  for (int i = 0; i < n; i++)
    if (ns[i] != i + 1)
      return FAIL("step record %d says step %ld", i, ns[i]);
  step(0);
  if (writes(fd) != 0)
    return FAIL("a step right after a flush was written at once");
  usleep(150000);
  step(0); /* the line kept 150 ms ago goes out with this one's arrival */
  if (writes(fd) != 1)
    return FAIL("a step kept 150 ms was not written at the next step");
  step(0);
  close(fd);
  return 0; /* the parent finds this last step's record, written at exit */
}

static int child(int (*fn)(void))
{
  pid_t pid = fork();
  int status = 0;
  assert_true(pid >= 0);
  if (pid == 0)
    exit(fn());
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status));
  return WEXITSTATUS(status);
}

static void test_step_cost__no_write_a_step(void **state)
{
  static long ns[2000];
  (void)state;
  dir = th_tmpdir();
  assert_int_equal(child(steps_batched), 0);
  /* exit wrote what was kept: every step, the last one too */
  assert_int_equal(step_records(ns, 2000), 1004);
  assert_int_equal(ns[1003], 1004);
  th_rmrf(dir);
  free(dir);
}

/* A schedule that waits: CUPTI loaded ahead and left unset up until the first warmup step. */
static int loaded_ahead(void)
{
  void *cuda, *cupti = NULL, *inject;
  int (*init)(void), (*enabled)(CUpti_CallbackId), (*kind_on)(CUpti_ActivityKind), fd;
  if (!(cuda = dlopen(GPUJIT_FAKE_LIBCUDA, RTLD_NOW | RTLD_LOCAL)) ||
      !(inject = load_inject("wait=20,warmup=1,active=2,repeat=1")) ||
      !(*(void **)&init = dlsym(inject, "InitializeInjection")))
    return FAIL("the stand-in driver or the injection library did not load: %s", dlerror());
  step(0); /* a step before cuInit, as a program may mark one */
  init();  /* cuInit */
  for (int i = 0; i < 300 && !(cupti = dlopen(GPUJIT_FAKE_CUPTI, RTLD_NOW | RTLD_NOLOAD)); i++)
    usleep(10000);
  if (!cupti)
    return FAIL("CUPTI was not loaded ahead within 3 s of cuInit (the first warmup step would load it)");
  *(void **)&enabled = dlsym(cupti, "fake_cupti_enabled");
  *(void **)&kind_on = dlsym(cupti, "fake_cupti_kind_enabled");
  if (!enabled || !kind_on)
    return FAIL("the stand-in CUPTI lacks its test functions");
  usleep(100000); /* the thread that loaded it has let go */
  if (enabled(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel) || kind_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL))
    return FAIL("CUPTI was set up before the first warmup step (callbacks %d, kernel records %d)",
                enabled(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel), kind_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  if ((fd = watch()) < 0)
    return FAIL("inotify: %s", strerror(errno));
  for (int i = 2; i < 20; i++) /* steps 2..19 end: wait steps, nothing written */
    step(0);
  if (writes(fd) != 0)
    return FAIL("the wait steps wrote to the records file");
  step(0); /* step 20, the warmup, begins: CUPTI attached */
  if (!enabled(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel) || !kind_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL))
    return FAIL("the first warmup step did not attach CUPTI");
  for (int i = 21; i <= 24; i++) /* the active steps 21 and 22, the step after them, then its end */
    step(0);
  if (kind_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL))
    return FAIL("CUPTI's kernel records are still on after the step after the last active one");
  close(fd);
  return 0;
}

static void test_step_cost__cupti_loaded_ahead(void **state)
{
  static long ns[16];
  (void)state;
  dir = th_tmpdir();
  assert_int_equal(child(loaded_ahead), 0);
  /* the steps recorded: the warmup (20), the active ones (21, 22) and the one after (23) */
  assert_int_equal(step_records(ns, 16), 4);
  assert_int_equal(ns[0], 20);
  assert_int_equal(ns[3], 23);
  th_rmrf(dir);
  free(dir);
}

/* Boundary `i` (step i begins) through one of NVTX's entry points, in turn; each step also holds
 * ranges and marks of other names, a prefix of the name and one it prefixes among them. */
static void nvtx_step(int i, nvtxDomainHandle_t domain, nvtxStringHandle_t registered)
{
  nvtxEventAttributes_t a = {.version = NVTX_VERSION, .size = NVTX_EVENT_ATTRIB_STRUCT_SIZE};
  nvtxRangeId_t id = 0;
  switch (i % 5) {
  case 1: nvtxRangePushA("step"); break;
  case 2: nvtxMarkA("step"); break;
  case 3: id = nvtxRangeStartW(L"step"); break;
  case 4:
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED, a.message.registered = registered;
    nvtxRangePushEx(&a);
    break;
  default:
    a.messageType = NVTX_MESSAGE_TYPE_ASCII, a.message.ascii = "step";
    nvtxDomainRangePushEx(domain, &a);
  }
  nvtxRangePushA("inner");
  nvtxMarkA("stepper");
  nvtxRangePushA("ste");
  nvtxRangePop();
  nvtxRangePop();
  if (i % 5 == 1 || i % 5 == 4)
    nvtxRangePop();
  else if (i % 5 == 3)
    nvtxRangeEnd(id);
  else if (i % 5 == 0)
    nvtxDomainRangePop(domain);
}

/* --step nvtx:step with gpujit's own NVTX injection: no CUPTI subscriber until the warmup. */
static int nvtx_own(void)
{
  void *cuda, *cupti = NULL, *inject;
  int (*init)(void), (*subscribed)(void), (*kind_on)(CUpti_ActivityKind);
  nvtxDomainHandle_t domain;
  nvtxStringHandle_t registered;
  setenv("NVTX_INJECTION64_PATH", GPUJIT_INJECT, 1);
  if (!(cuda = dlopen(GPUJIT_FAKE_LIBCUDA, RTLD_NOW | RTLD_LOCAL)) ||
      !(inject = load_inject_steps("wait=5,warmup=1,active=2,repeat=1", "nvtx:step")) ||
      !(*(void **)&init = dlsym(inject, "InitializeInjection")))
    return FAIL("the stand-in driver or the injection library did not load: %s", dlerror());
  domain = nvtxDomainCreateA("d"); /* NVTX's first call: it loads its injection, the library */
  registered = nvtxDomainRegisterStringA(NULL, "step");
  init(); /* cuInit */
  for (int i = 0; i < 300 && !(cupti = dlopen(GPUJIT_FAKE_CUPTI, RTLD_NOW | RTLD_NOLOAD)); i++)
    usleep(10000);
  if (!cupti || !(*(void **)&subscribed = dlsym(cupti, "fake_cupti_subscribed")) ||
      !(*(void **)&kind_on = dlsym(cupti, "fake_cupti_kind_enabled")))
    return FAIL("the stand-in CUPTI was not loaded ahead within 3 s of cuInit, or lacks its test functions");
  usleep(100000); /* the thread that loaded it has let go */
  for (int i = 1; i <= 10; i++) {
    if (i == 5 && subscribed())
      return FAIL("CUPTI was subscribed before the first warmup step (step 5)");
    nvtx_step(i, domain, registered);
    if (i == 5 && (!subscribed() || !kind_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)))
      return FAIL("the first warmup step (the 5th NVTX range named step) did not attach CUPTI");
    if (i == 5 && kind_on(CUPTI_ACTIVITY_KIND_MARKER))
      return FAIL("CUPTI's NVTX records are on though NVTX's calls come to the library");
  }
  if (subscribed() || kind_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL))
    return FAIL("CUPTI is still on after the step after the last active one");
  return 0;
}

static void test_step_cost__nvtx_own_injection(void **state)
{
  static long ns[16];
  char *text;
  (void)state;
  dir = th_tmpdir();
  assert_int_equal(child(nvtx_own), 0);
  /* the steps: the warmup (5), the active ones (6, 7) and the one after (8), from NVTX */
  assert_int_equal(step_records(ns, 16), 4);
  assert_int_equal(ns[0], 5);
  assert_int_equal(ns[3], 8);
  assert_non_null(text = records_text());
  assert_int_equal(occurrences(text, "\"src\":\"nvtx\""), 4);
  /* the NVTX ranges of those four steps, as CUPTI's marker records had them: a step's own range
   * (the mark, the wide start, the domain's push) and each step's inner range and mark */
  assert_int_equal(occurrences(text, "\"k\":\"nvtx\""), 16);
  assert_int_equal(occurrences(text, "\"t1\":"), 16); /* on the host clock: t0, t1 (CUPTI's: s, e) */
  assert_int_equal(occurrences(text, "\"name\":\"step\""), 4);
  assert_int_equal(occurrences(text, "\"name\":\"inner\""), 4);
  assert_int_equal(occurrences(text, "\"name\":\"stepper\""), 4);
  assert_int_equal(occurrences(text, "\"name\":\"ste\""), 4);
  assert_int_equal(occurrences(text, "\"domain\":\"d\""), 1);
  free(text);
  th_rmrf(dir);
  free(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_step_cost__no_write_a_step),
      cmocka_unit_test(test_step_cost__cupti_loaded_ahead),
      cmocka_unit_test(test_step_cost__nvtx_own_injection),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
