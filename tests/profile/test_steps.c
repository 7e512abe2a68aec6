/* The active steps of a profile through the C API (gpujit_profile_steps and the step tables):
 * the cases tests/cli/cases/profile_steps.sh does not draw — overlapping operations on a stream
 * (a gap of 0), a step where the GPU mostly sat idle though nothing waited on a launch
 * (host-bound), a step with launches and no GPU work in a process that died without an exit
 * record (it ends at its last record, incomplete), and a range that takes its process's steps.
 * Records written here as the injection library writes them; host ns = CUPTI ns + 1e12. */
#include "helpers.h"

#include <stdbool.h>

#include "gpujit.h"

static const char *const LINES[] = {
    "{\"k\":\"proc\",\"v\":1,\"pid\":300,\"ppid\":1,\"exe\":\"/bin/app\",\"cmd\":\"app\",\"t\":1000000000000}",
    "{\"k\":\"clock\",\"pid\":300,\"cupti\":0,\"host\":1000000000000}",
    /* step 0, 1000-11000 ns: two launches, their kernels overlapping on stream 1 (200 ns busy) */
    "{\"k\":\"step\",\"pid\":300,\"tid\":300,\"n\":0,\"t\":1000000001000,\"phase\":\"active\",\"cycle\":0,\"src\":\"kernel\"}",
    "{\"k\":\"launch\",\"pid\":300,\"tid\":300,\"corr\":1,\"api\":\"cuLaunchKernel\",\"t0\":1000000001100,\"t1\":1000000001110}",
    "{\"k\":\"launch\",\"pid\":300,\"tid\":300,\"corr\":2,\"api\":\"cuLaunchKernel\",\"t0\":1000000001120,\"t1\":1000000001130}",
    "{\"k\":\"kernel\",\"pid\":300,\"name\":\"first\",\"module\":\"0x1\",\"device\":0,\"stream\":1,\"corr\":1,\"s\":1200,\"e\":1300}",
    "{\"k\":\"kernel\",\"pid\":300,\"name\":\"second\",\"module\":\"0x1\",\"device\":0,\"stream\":1,\"corr\":2,\"s\":1250,\"e\":1400}",
    /* step 1 from 11000 ns: a launch whose kernel never came; the process dies after it */
    "{\"k\":\"step\",\"pid\":300,\"tid\":300,\"n\":1,\"t\":1000000011000,\"phase\":\"active\",\"cycle\":0,\"src\":\"kernel\"}",
    "{\"k\":\"launch\",\"pid\":300,\"tid\":300,\"corr\":9,\"api\":\"cuLaunchKernel\",\"t0\":1000000015000,\"t1\":1000000016000}",
};

static bool near(double a, double b) { return a > b - 1e-9 && a < b + 1e-9; }

static void test_steps__c_api(void **state)
{
  char dir[] = "/tmp/gpujit-steps-XXXXXX", *text = NULL;
  gpujit_profile *p = NULL;
  const gpujit_profile_step_row *s;
  const gpujit_profile_step_stream *st;
  const char *name;
  size_t stride, n;
  (void)state;
  assert_non_null(mkdtemp(dir));
  th_write_lines(dir, "p300-1.jsonl", LINES, sizeof(LINES) / sizeof(LINES[0]));
  assert_int_equal(gpujit_profile_load(&p, dir), 0);
  assert_int_equal(gpujit_profile_steps(p, &s), 2);
  /* step 0: busy 1200-1400 of 10000 ns, one gap of 0 (they overlap), nothing waited on the host */
  assert_int_equal(s[0].id, 0);
  assert_int_equal(s[0].pid, 300);
  assert_int_equal(s[0].step, 0);
  assert_string_equal(s[0].src, "kernel");
  assert_string_equal(s[0].schedule, "");
  assert_true(s[0].complete);
  assert_true(near(s[0].wall_ms, 0.01) && near(s[0].window_ms, 0.01));
  assert_int_equal(s[0].launches, 2);
  assert_int_equal(s[0].kernels, 2);
  assert_true(near(s[0].gpu_ms, 0.00025) && near(s[0].busy_ms, 0.0002) && near(s[0].busy_pct, 2));
  assert_int_equal(s[0].gaps, 1);
  assert_true(near(s[0].gap_ms, 0) && near(s[0].gap_max_us, 0) && near(s[0].host_wait_ms, 0));
  assert_string_equal(s[0].verdict, "host-bound");
  assert_string_equal(s[0].summary, "host-bound: the GPU idled 98 % of step 0 (0 % waiting for launches): the host's "
                                    "own work (data, synchronization, Python) is the time");
  /* step 1: open when the process died: it ends at its last record (16000 ns) */
  assert_false(s[1].complete);
  assert_int_equal(s[1].step, 1);
  assert_true(near(s[1].wall_ms, 0.005));
  assert_int_equal(s[1].launches, 1);
  assert_int_equal(s[1].kernels, 0);
  assert_string_equal(s[1].verdict, "no-gpu-work");
  /* the tables, as --json and Python read them */
  assert_non_null(gpujit_profile_fields(GPUJIT_PROFILE_STEP_STREAMS, &name, &n));
  assert_string_equal(name, "step_streams");
  assert_int_equal(gpujit_profile_table_rows(p, GPUJIT_PROFILE_STEP_STREAMS, (const void **)&st, &stride), 1);
  assert_int_equal(stride, sizeof(*st));
  assert_int_equal(st[0].step, 0);
  assert_int_equal(st[0].ops, 2);
  assert_true(near(st[0].span_ms, 0.0002) && near(st[0].start_ms, 0.0002));
  assert_int_equal(gpujit_profile_table_rows(p, GPUJIT_PROFILE_STEP_KERNELS, NULL, NULL), 2);
  assert_int_equal(gpujit_profile_format(p, "app", 0, &text), 0);
  assert_non_null(strstr(text, "step 1: wall 0.005 ms, 1 launches, 0 kernels"));
  assert_non_null(strstr(text, "(INCOMPLETE: still open when its process ended)"));
  assert_non_null(strstr(text, "no GPU work: step 1 launched nothing the profile recorded (0.005 ms on the host)"));
  gpujit_free(text);
  gpujit_profile_free(p);
  /* a range takes the steps that began in it */
  assert_int_equal(gpujit_profile_load_range(&p, dir, 300, 1000000000500ull, 1000000010000ull), 0);
  assert_int_equal(gpujit_profile_steps(p, &s), 1);
  assert_int_equal(s[0].step, 0);
  assert_int_equal(s[0].kernels, 2);
  assert_false(s[0].complete);
  assert_true(near(s[0].wall_ms, 0.009)); /* open at the range's end */
  gpujit_profile_free(p);
  assert_int_equal(gpujit_profile_steps(NULL, &s), 0);
  assert_null(s);
  th_rmrf(dir);
}

/* A schedule whose active steps never came (the run ended during warmup): said in a note. */
static void test_steps__scheduled_none_active(void **state)
{
  static const char *const lines[] = {
      "{\"k\":\"proc\",\"v\":1,\"pid\":301,\"ppid\":1,\"exe\":\"/bin/app\",\"cmd\":\"app\",\"t\":1000000000000}",
      "{\"k\":\"note\",\"pid\":301,\"tid\":301,\"what\":\"schedule\",\"msg\":\"wait=5,warmup=1,active=1,repeat=1 "
      "(steps: api)\",\"t\":1000000000001}",
      "{\"k\":\"step\",\"pid\":301,\"tid\":301,\"n\":5,\"t\":1000000001000,\"phase\":\"warmup\",\"cycle\":0,"
      "\"src\":\"api\"}",
      "{\"k\":\"exit\",\"pid\":301,\"tid\":301,\"t\":1000000002000,\"status\":0}",
  };
  char dir[] = "/tmp/gpujit-steps-XXXXXX";
  gpujit_profile *p = NULL;
  (void)state;
  assert_non_null(mkdtemp(dir));
  th_write_lines(dir, "p301-1.jsonl", lines, sizeof(lines) / sizeof(lines[0]));
  assert_int_equal(gpujit_profile_load(&p, dir), 0);
  assert_int_equal(gpujit_profile_steps(p, NULL), 0);
  assert_non_null(strstr(gpujit_profile_notes(p), "process 301: steps scheduled (wait=5,warmup=1,active=1,repeat=1 "
                                                  "(steps: api)), none active recorded"));
  gpujit_profile_free(p);
  th_rmrf(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_steps__c_api),
      cmocka_unit_test(test_steps__scheduled_none_active),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
