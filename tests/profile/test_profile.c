/* gpujit profile on the CPU: a program compiling with NVRTC resolved through dlopen + dlsym
 * (profile_target_dl) or linked directly (profile_target_direct) runs under gpujit_profile_run;
 * what it printed and what the profile holds must agree. */
#include <cjson/cJSON.h>
#include <signal.h>

#include "base/buf.h"
#include "base/fs.h"
#include "gpujit.h"
#include "helpers.h"
#include "trace/trace_check.h"

static gpujit_profile *run_with(const char *const *args, const char *keep, int lineinfo, int no_cupti)
{
  gpujit_profile_options o = GPUJIT_PROFILE_OPTIONS_INIT;
  gpujit_profile *p = NULL;
  o.inject_path = GPUJIT_INJECT;
  o.records_dir = keep;
  o.lineinfo = lineinfo;
  o.no_cupti = no_cupti;
  assert_int_equal(gpujit_profile_run(&p, (char *const *)args, &o), 0);
  assert_non_null(p);
  return p;
}

static gpujit_profile *run(const char *const *args, const char *keep, int lineinfo)
{
  return run_with(args, keep, lineinfo, 0);
}

static cJSON *json_of(const gpujit_profile *p)
{
  char *text = NULL;
  cJSON *j;
  assert_int_equal(gpujit_profile_json(p, &text), 0);
  j = cJSON_Parse(text);
  free(text);
  assert_non_null(j);
  return j;
}

/* The compiles named `name` in the JSON. */
static int compiles_named(cJSON *j, const char *name, bool *repeat_seen, const char **log)
{
  cJSON *c;
  int n = 0;
  cJSON_ArrayForEach(c, cJSON_GetObjectItem(j, "compiles"))
  {
    if (strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(c, "name")), name))
      continue;
    n++;
    if (repeat_seen && cJSON_IsTrue(cJSON_GetObjectItem(c, "repeat")))
      *repeat_seen = true;
    if (log && cJSON_GetObjectItem(c, "log"))
      *log = cJSON_GetStringValue(cJSON_GetObjectItem(c, "log"));
  }
  return n;
}

static void dlsym_compiles(const char *target)
{
  const char *args[] = {target, "compile", "a", "compile", "a", "distinct", "c", "fail", "threads", "2", NULL};
  gpujit_profile *p = run(args, NULL, 0);
  gpujit_profile_totals t;
  bool repeat = false;
  const char *log = NULL;
  cJSON *j = json_of(p);
  gpujit_profile_totals_get(p, &t);
  assert_int_equal(t.exit_status, 0);
  assert_int_equal(t.processes, 1);
  assert_false(t.partial);
  assert_int_equal(t.compiles, 6); /* a, a, c, broken, thread0, thread1 */
  assert_int_equal(t.failed, 1);
  assert_int_equal(t.repeats, 1); /* the second "a": same source, same options */
  assert_true(t.compile_ms > 0 && t.repeat_ms > 0 && t.repeat_ms < t.compile_ms);
  assert_int_equal(compiles_named(j, "a", &repeat, NULL), 2);
  assert_true(repeat);
  assert_int_equal(compiles_named(j, "c", NULL, NULL), 1);
  assert_int_equal(compiles_named(j, "thread0", NULL, NULL), 1);
  assert_int_equal(compiles_named(j, "thread1", NULL, NULL), 1);
  assert_int_equal(compiles_named(j, "broken", NULL, &log), 1);
  assert_non_null(log);
  assert_non_null(strstr(log, "undefined_name")); /* the failure's first error line */
  assert_non_null(strstr(log, "broken(2)"));
  {
    cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "compiles"), 0);
    assert_non_null(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(c, "options")), "--gpu-architecture=compute_90"));
    assert_true(cJSON_GetObjectItem(c, "ptx_bytes")->valuedouble > 100);
  }
  cJSON_Delete(j);
  gpujit_profile_free(p);
}

/* An image that execs another program ended normally: the report is not PARTIAL, and the
 * program it became is recorded too. */
static void test_exec_is_a_normal_end(void **state)
{
  const char *args[] = {GPUJIT_TARGET_DL, "compile", "before", "exec", "/bin/true", "true", NULL};
  const char *args2[] = {GPUJIT_TARGET_DL, "compile", "first", "exec", GPUJIT_TARGET_DL, "target", "compile", "second", NULL};
  gpujit_profile *p = run(args, NULL, 0);
  gpujit_profile_totals t;
  (void)state;
  gpujit_profile_totals_get(p, &t);
  assert_int_equal(t.exit_status, 0);
  assert_int_equal(t.compiles, 1);
  assert_false(t.partial);
  gpujit_profile_free(p);
  p = run(args2, NULL, 0);
  gpujit_profile_totals_get(p, &t);
  assert_int_equal(t.compiles, 2);
  assert_false(t.partial);
  gpujit_profile_free(p);
}

/* A child started with an empty environment (env -i) keeps being recorded: gpujit's variables
 * are put back, and the report says so. */
static void test_child_with_a_clean_environment(void **state)
{
  const char *args[] = {GPUJIT_TARGET_DL, "compile", "parent", "spawn-clean", GPUJIT_TARGET_DL, "child", "compile", "child", NULL};
  gpujit_profile *p;
  gpujit_profile_totals t;
  cJSON *j;
  char *text;
  (void)state;
  p = run(args, NULL, 0);
  gpujit_profile_totals_get(p, &t);
  j = json_of(p);
  assert_int_equal(compiles_named(j, "parent", NULL, NULL), 1);
  assert_int_equal(compiles_named(j, "child", NULL, NULL), 1);
  text = cJSON_PrintUnformatted(cJSON_GetObjectItem(j, "notes"));
  assert_non_null(strstr(text, "were put back"));
  free(text);
  cJSON_Delete(j);
  gpujit_profile_free(p);
  /* env unsets them, sets its own LD_PRELOAD, and execs: before it recorded anything */
  {
    const char *envargs[] = {"/usr/bin/env", "-u", "GPUJIT_PROFILE_DIR", "-u", "CUDA_INJECTION64_PATH",
                             "LD_PRELOAD=libm.so.6", GPUJIT_TARGET_DL, "compile", "after-env", NULL};
    p = run(envargs, NULL, 0);
    j = json_of(p);
    assert_int_equal(compiles_named(j, "after-env", NULL, NULL), 1);
    cJSON_Delete(j);
    gpujit_profile_free(p);
  }
}

static void test_dlopen_dlsym(void **state)
{
  (void)state;
  dlsym_compiles(GPUJIT_TARGET_DL);
}

static void test_linked_directly(void **state)
{
  (void)state;
  dlsym_compiles(GPUJIT_TARGET_DIRECT);
}

static void test_nvjitlink(void **state)
{
  const char *args[] = {GPUJIT_TARGET_DIRECT, "link", NULL};
  gpujit_profile *p;
  gpujit_profile_totals t;
  cJSON *j, *c;
  int links = 0;
  (void)state;
  p = run(args, NULL, 0);
  gpujit_profile_totals_get(p, &t);
  j = json_of(p);
  assert_true(t.link_ms > 0);
  cJSON_ArrayForEach(c, cJSON_GetObjectItem(j, "compiles"))
  {
    if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(c, "kind")), "nvjitlink")) {
      links++;
      assert_non_null(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(c, "options")), "-arch=sm_90"));
      assert_true(cJSON_GetObjectItem(c, "cubin_bytes")->valuedouble > 1000);
    } else {
      assert_true(cJSON_GetObjectItem(c, "ltoir_bytes")->valuedouble > 100); /* the LTO-IR it linked */
    }
  }
  assert_int_equal(links, 1);
  cJSON_Delete(j);
  gpujit_profile_free(p);
}

static void test_fork(void **state)
{
  const char *args[] = {GPUJIT_TARGET_DL, "compile", "parent", "fork", NULL};
  gpujit_profile *p;
  gpujit_profile_totals t;
  cJSON *j, *c;
  double parent = 0, child = 0;
  (void)state;
  p = run(args, NULL, 0);
  gpujit_profile_totals_get(p, &t);
  j = json_of(p);
  assert_int_equal(t.processes, 2);
  assert_false(t.partial);
  cJSON_ArrayForEach(c, cJSON_GetObjectItem(j, "compiles"))
  {
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(c, "name"));
    double pid = cJSON_GetObjectItem(c, "pid")->valuedouble;
    if (!strcmp(name, "parent"))
      parent = pid;
    else if (!strcmp(name, "child"))
      child = pid;
  }
  assert_true(parent > 0 && child > 0 && parent != child); /* each process's compiles, its own */
  cJSON_Delete(j);
  gpujit_profile_free(p);
}

/* A program that closes every descriptor and opens its own file: the next compile's record goes
 * to the records, never into the program's file. */
static void test_program_descriptors_never_written(void **state)
{
  char *dir = th_tmpdir(), *out = th_path(dir, "out.txt");
  const char *args[] = {GPUJIT_TARGET_DL, "compile", "before", "reuse-fds", out, "distinct", "after", NULL};
  gpujit_profile *p;
  gpujit_profile_totals t;
  gpujit__buf b = {0};
  cJSON *j;
  (void)state;
  p = run(args, NULL, 0);
  gpujit_profile_totals_get(p, &t);
  j = json_of(p);
  assert_int_equal(t.exit_status, 0);
  assert_int_equal(t.compiles, 2);
  assert_int_equal(compiles_named(j, "after", NULL, NULL), 1);
  assert_false(t.partial); /* the exit record too went to the records */
  assert_int_equal(gpujit__file_read(&b, out), 0);
  assert_int_equal(b.len, 0); /* the program's file holds what the program wrote: nothing */
  gpujit__buf_free(&b);
  cJSON_Delete(j);
  gpujit_profile_free(p);
  th_rmrf(dir);
  free(out);
  free(dir);
}

/* Children forked while another thread is inside the library (holding its locks) never wait. */
static void test_fork_while_another_thread_records(void **state)
{
  const char *args[] = {GPUJIT_TARGET_DL, "fork-storm", "300", NULL};
  gpujit_profile *p;
  gpujit_profile_totals t;
  (void)state;
  p = run(args, NULL, 0);
  gpujit_profile_totals_get(p, &t);
  assert_int_equal(t.exit_status, 0); /* 95: children hung */
  gpujit_profile_free(p);
}

static void test_exit_status_and_signal(void **state)
{
  const char *code[] = {GPUJIT_TARGET_DL, "compile", "before", "exit", "7", NULL};
  const char *sig[] = {GPUJIT_TARGET_DL, "compile", "before", "signal", "9", NULL};
  gpujit_profile *p;
  gpujit_profile_totals t;
  (void)state;
  p = run(code, NULL, 0);
  gpujit_profile_totals_get(p, &t);
  assert_int_equal(t.exit_status, 7);
  assert_int_equal(t.signal, 0);
  assert_int_equal(t.compiles, 1);
  assert_false(t.partial);
  gpujit_profile_free(p);
  p = run(sig, NULL, 0);
  gpujit_profile_totals_get(p, &t);
  assert_int_equal(t.signal, SIGKILL);
  assert_int_equal(t.exit_status, 128 + SIGKILL);
  assert_true(t.partial); /* killed: what it recorded until then is kept, and said to be partial */
  assert_int_equal(t.processes_partial, 1);
  assert_int_equal(t.compiles, 1);
  gpujit_profile_free(p);
}

static void test_trace_passes_checks(void **state)
{
  const char *args[] = {GPUJIT_TARGET_DL, "compile", "a", "fail", "threads", "2", NULL};
  char *dir = th_tmpdir(), *path = th_path(dir, "p.json");
  gpujit_profile *p;
  gpujit__buf b = {0};
  size_t tracks = 0;
  cJSON *root;
  (void)state;
  p = run(args, NULL, 0);
  assert_int_equal(gpujit_profile_trace(p, path), 0);
  assert_int_equal(gpujit__file_read(&b, path), 0);
  root = tc_check(b.data, &tracks);
  assert_true(tracks >= 3);                    /* the main thread and the two compiling threads */
  assert_non_null(tc_find(root, "build a"));   /* as trace analyze reads a module build */
  assert_non_null(tc_find(root, "compile a")); /* ... and its compile */
  cJSON_Delete(root);
  gpujit__buf_free(&b);
  gpujit_profile_free(p);
  th_rmrf(dir);
  free(dir);
  free(path);
}

static void test_lineinfo_added(void **state)
{
  const char *args[] = {GPUJIT_TARGET_DL, "compile", "a", NULL};
  char *dir = th_tmpdir(), *keep = th_path(dir, "records");
  gpujit_profile *p;
  gpujit_profile *again;
  (void)state;
  p = run(args, keep, 1);
  assert_non_null(strstr(gpujit_profile_notes(p), "--lineinfo"));
  gpujit_profile_free(p);
  /* the records stayed: the compile ran with -lineinfo added, and they read back the same */
  assert_int_equal(gpujit_profile_load(&again, keep), 0);
  {
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "grep -q '\"added\":\\[\"-lineinfo\"\\]' %s/p*.jsonl", keep);
    assert_int_equal(system(cmd), 0);
  }
  gpujit_profile_free(again);
  th_rmrf(dir);
  free(dir);
  free(keep);
}

static void test_bad_input(void **state)
{
  gpujit_profile_options o = GPUJIT_PROFILE_OPTIONS_INIT;
  gpujit_profile *p = NULL;
  char *none[] = {NULL}, *missing[] = {"gpujit-no-such-command", NULL};
  (void)state;
  o.inject_path = GPUJIT_INJECT;
  assert_int_equal(gpujit_profile_run(&p, none, &o), GPUJIT_EINVAL);
  assert_int_equal(gpujit_profile_run(&p, missing, &o), GPUJIT_ENOENT);
  assert_non_null(strstr(gpujit_error_last(), "gpujit-no-such-command"));
  assert_null(p);
  o.inject_path = "/nonexistent/libgpujit_inject.so";
  assert_int_equal(gpujit_profile_run(&p, missing, &o), GPUJIT_ENOENT);
  assert_non_null(strstr(gpujit_error_last(), "injection library"));
}

/* The module row of `image` whose origin is `origin`: its loads and compiles. */
static cJSON *module_row(cJSON *j, const char *image, const char *origin)
{
  cJSON *m;
  cJSON_ArrayForEach(m, cJSON_GetObjectItem(j, "modules"))
  {
    if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(m, "image")), image) &&
        !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(m, "origin")), origin))
      return m;
  }
  return NULL;
}

static double num(cJSON *o, const char *key)
{
  return cJSON_GetNumberValue(cJSON_GetObjectItem(o, key));
}

/* Without CUPTI (--no-cupti: where there is a driver, NVRTC may start it and CUPTI would watch
 * the real driver, not the stand-in) the loads are still recorded, however the program reached
 * the driver, and tied to the compile that made their images. */
static void test_loads_without_cupti(void **state)
{
  const char *dl[] = {GPUJIT_TARGET_DL, "load", NULL}, *direct[] = {GPUJIT_TARGET_DIRECT, "load", NULL};
  gpujit_profile *p;
  gpujit_profile_totals t;
  cJSON *j, *cubin, *ptx;
  (void)state;
  p = run_with(dl, NULL, 0, 1);
  gpujit_profile_totals_get(p, &t);
  assert_int_equal(t.exit_status, 0);
  assert_int_equal(t.compiles, 1);
  assert_int_equal(t.loads, 4); /* dlsym, cuGetProcAddress twice, a library loaded RTLD_LOCAL */
  assert_true(t.load_ms > 0);
  j = json_of(p);
  assert_non_null(cubin = module_row(j, "cubin", "nvrtc"));
  assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(cubin, "name")), "loaded");
  assert_int_equal((int)num(cubin, "loads"), 3);
  assert_int_equal((int)num(cubin, "compiles"), 1);
  assert_non_null(ptx = module_row(j, "ptx", "nvrtc"));
  assert_int_equal((int)num(ptx, "loads"), 1);
  cJSON_Delete(j);
  gpujit_profile_free(p);

  /* another tool owning the driver's injection hook (Nsight): the driver is left alone */
  setenv("CUDA_INJECTION64_PATH", "/bin/true", 1);
  p = run_with(dl, NULL, 0, 0);
  unsetenv("CUDA_INJECTION64_PATH");
  gpujit_profile_totals_get(p, &t);
  assert_int_equal(t.exit_status, 0); /* the program's loads all succeeded */
  assert_int_equal(t.compiles, 1);
  assert_int_equal(t.loads, 0);
  assert_non_null(strstr(gpujit_profile_notes(p), "another tool owns the CUDA driver's injection hook"));
  gpujit_profile_free(p);

  p = run_with(direct, NULL, 0, 1);
  gpujit_profile_totals_get(p, &t);
  assert_int_equal(t.exit_status, 0);
  assert_int_equal(t.loads, 1);
  j = json_of(p);
  assert_non_null(cubin = module_row(j, "cubin", "nvrtc"));
  assert_int_equal((int)num(cubin, "loads"), 1);
  cJSON_Delete(j);
  gpujit_profile_free(p);
}

int main(void)
{
  setenv("PROFILE_TARGET_NVRTC", GPUJIT_NVRTC_PATH, 1); /* the one the dlopen target loads */
  setenv("PROFILE_TARGET_DRIVER", GPUJIT_FAKE_DRIVER, 1);
  setenv("PROFILE_TARGET_LOADER", GPUJIT_LOADER, 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dlopen_dlsym),
      cmocka_unit_test(test_exec_is_a_normal_end),
      cmocka_unit_test(test_child_with_a_clean_environment),
      cmocka_unit_test(test_linked_directly),
      cmocka_unit_test(test_nvjitlink),
      cmocka_unit_test(test_fork),
      cmocka_unit_test(test_exit_status_and_signal),
      cmocka_unit_test(test_program_descriptors_never_written),
      cmocka_unit_test(test_fork_while_another_thread_records),
      cmocka_unit_test(test_trace_passes_checks),
      cmocka_unit_test(test_lineinfo_added),
      cmocka_unit_test(test_bad_input),
      cmocka_unit_test(test_loads_without_cupti),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
