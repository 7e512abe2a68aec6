/* Compilers inside compilers, from records as the injection library and the Python adapters
 * write them: a Triton compile (an adapter's unit) that ran ptxas (a toolchain process), its module
 * tied by the handle Triton bound and by the bytes ptxas wrote; an XLA function tied to the next
 * module its process loads; kernels launched while a framework compiled (autotuning) kept apart;
 * each millisecond counted once, per compiler. */
#include <sys/stat.h>

#include "helpers.h"

#include "base/fs.h"

#include "gpujit.h"

#define H1 "11111111111111111111111111111111" /* what ptxas wrote */
#define H2 "22222222222222222222222222222222" /* an image Triton loaded, bound to its compile */
#define H3 "33333333333333333333333333333333" /* XLA's module */

/* host ns = CUPTI ns + 1e12; times below are 1e12 + microseconds * 1000 */
static const char *const MAIN[] = {
    "{\"k\":\"proc\",\"v\":1,\"pid\":500,\"tid\":500,\"ppid\":1,\"exe\":\"/usr/bin/python3\",\"cmd\":\"python3 app.py\",\"t\":1000000000000}",
    "{\"k\":\"clock\",\"pid\":500,\"tid\":500,\"cupti\":0,\"host\":1000000000000}",
    "{\"k\":\"load\",\"pid\":500,\"tid\":500,\"api\":\"cuModuleLoadData\",\"t0\":1000006000000,\"t1\":1000006100000,"
    "\"result\":0,\"image\":\"cubin\",\"bytes\":200,\"hash\":\"" H2 "\",\"module\":\"0xaa\"}",
    "{\"k\":\"load\",\"pid\":500,\"tid\":500,\"api\":\"cuModuleLoadData\",\"t0\":1000021000000,\"t1\":1000021500000,"
    "\"result\":0,\"image\":\"cubin\",\"bytes\":300,\"hash\":\"" H3 "\",\"module\":\"0xbb\"}",
    "{\"k\":\"load\",\"pid\":500,\"tid\":500,\"api\":\"cuModuleLoadData\",\"t0\":1000030000000,\"t1\":1000030100000,"
    "\"result\":0,\"image\":\"cubin\",\"bytes\":100,\"hash\":\"" H1 "\",\"module\":\"0xcc\"}",
    /* one launch of Triton's kernel while Triton compiled (the program's: Triton benchmarks nothing), then the program's */
    "{\"k\":\"kernel\",\"pid\":500,\"name\":\"k1\",\"module\":\"0xaa\",\"device\":0,\"stream\":7,\"corr\":1,"
    "\"s\":4000000,\"e\":4100000}",
    "{\"k\":\"kernel\",\"pid\":500,\"name\":\"k1\",\"module\":\"0xaa\",\"device\":0,\"stream\":7,\"corr\":2,"
    "\"s\":7000000,\"e\":7100000}",
    "{\"k\":\"kernel\",\"pid\":500,\"name\":\"k1\",\"module\":\"0xaa\",\"device\":0,\"stream\":7,\"corr\":3,"
    "\"s\":8200000,\"e\":8300000}",
    "{\"k\":\"ksum\",\"pid\":500,\"module\":\"0xaa\",\"name\":\"k1\",\"device\":0,\"n\":10,\"ns\":1000000}",
    "{\"k\":\"ksum\",\"pid\":500,\"module\":\"0xbb\",\"name\":\"loop_add_fusion\",\"device\":0,\"n\":4,\"ns\":400000}",
    "{\"k\":\"exit\",\"pid\":500,\"tid\":500,\"t\":1000040000000,\"lost\":0}",
};

static const char *const ADAPTER[] = {
    "{\"k\":\"proc\",\"v\":1,\"pid\":500,\"tid\":500,\"ppid\":1,\"writer\":\"python\",\"t\":1000000001000}",
    "{\"k\":\"unit\",\"pid\":500,\"tid\":500,\"fw\":\"triton\",\"name\":\"k1\",\"key\":\"hk\",\"t0\":1000000001000,"
    "\"t1\":1000005001000,\"cache\":\"miss\",\"stages\":[[\"ttir\",1000000001000,1000001001000],"
    "[\"cubin\",1000001001000,1000005001000]]}",
    "{\"k\":\"bind\",\"pid\":500,\"tid\":500,\"fw\":\"triton\",\"key\":\"hk\",\"module\":\"0xaa\"}",
    "{\"k\":\"unit\",\"pid\":500,\"tid\":500,\"fw\":\"xla\",\"name\":\"jit(f)\",\"key\":\"\",\"t0\":1000010000000,"
    "\"t1\":1000020000000,\"cache\":\"hit\",\"stages\":[[\"backend_compile\",null,9000000]]}",
    /* Inductor's autotuner benchmarking k1 at its first call: compile work, in k1's row */
    "{\"k\":\"unit\",\"pid\":500,\"tid\":500,\"fw\":\"inductor\",\"name\":\"autotune k1\",\"key\":\"k1\","
    "\"t0\":1000008000000,\"t1\":1000009000000,\"cache\":\"\",\"stages\":[],\"autotune\":true}",
};

static const char *const PTXAS[] = {
    "{\"k\":\"proc\",\"v\":1,\"pid\":501,\"tid\":501,\"ppid\":500,\"ancestors\":[],\"exe\":\"/x/ptxas\",\"cmd\":\"ptxas\",\"t\":1000002000000}",
    "{\"k\":\"tool\",\"pid\":501,\"tid\":501,\"tool\":\"ptxas\",\"arch\":\"sm_90\",\"input\":\"/tmp/k1.ptx\",\"inputs\":1,"
    "\"output\":\"/tmp/k1.cubin\",\"args\":[\"-arch=sm_90\",\"/tmp/k1.ptx\",\"-o\",\"/tmp/k1.cubin\"],\"t0\":1000002000000}",
    "{\"k\":\"tool_end\",\"pid\":501,\"tid\":501,\"t1\":1000003000000,\"cpu_ns\":900000,\"output_bytes\":100,"
    "\"output_hash\":\"" H1 "\"}",
    "{\"k\":\"exit\",\"pid\":501,\"tid\":501,\"t\":1000003000100,\"lost\":0}",
};


#define WRITE(dir, name, lines) th_write_lines(dir, name, lines, sizeof(lines) / sizeof(lines[0]))

static void test_compilers__nested_tied_counted_once(void **state)
{
  char dir[] = "/tmp/gpujit-compilers-XXXXXX", *text = NULL;
  gpujit_profile *p = NULL;
  const gpujit_profile_module *m, *tri = NULL, *xla = NULL;
  const gpujit_profile_compile *c;
  const gpujit_profile_compiler *k;
  gpujit_profile_totals t;
  size_t nm, nc, nk;
  (void)state;
  assert_non_null(mkdtemp(dir));
  WRITE(dir, "p500-1000000000000.jsonl", MAIN);
  WRITE(dir, "p500-1000000001000.jsonl", ADAPTER);
  WRITE(dir, "p501-1000002000000.jsonl", PTXAS);
  assert_int_equal(gpujit_profile_load(&p, dir), 0);
  nm = gpujit_profile_modules(p, &m);
  for (size_t i = 0; i < nm; i++) {
    if (!strcmp(m[i].origin, "triton"))
      tri = &m[i];
    if (!strcmp(m[i].origin, "xla"))
      xla = &m[i];
  }
  assert_non_null(tri);
  assert_non_null(xla);
  /* Triton's row: its compile (ptxas inside it), both modules (bound, and ptxas's bytes) */
  assert_string_equal(tri->name, "k1");
  assert_int_equal(tri->compiles, 2); /* its compile, and its autotuning */
  assert_true(tri->compile_ms > 5.99 && tri->compile_ms < 6.01);
  assert_int_equal(tri->loads, 2);
  /* Inductor's autotuning benchmark is compile work; a launch while Triton itself compiled (no
   * benchmarking compiler) is the program's */
  assert_int_equal(tri->launches, 9);
  assert_int_equal(tri->autotune_launches, 1);
  assert_true(tri->autotune_ms > 0.099 && tri->autotune_ms < 0.101);
  assert_true(tri->break_even > 0);
  /* XLA's function: the next module its process loaded, its cache hit */
  assert_string_equal(xla->name, "jit(f)");
  assert_true(xla->compile_ms > 9.99 && xla->compile_ms < 10.01);
  assert_int_equal(xla->loads, 1);
  assert_int_equal(xla->launches, 4);
  assert_int_equal(xla->cache_hits, 1);
  /* once each: the two frameworks' compiles; ptxas inside Triton's */
  gpujit_profile_totals_get(p, &t);
  assert_int_equal(t.compiles, 3);
  assert_true(t.compile_ms > 15.99 && t.compile_ms < 16.01);
  assert_int_equal(t.processes, 2); /* the adapter's file is not a process */
  nc = gpujit_profile_compiles(p, &c);
  assert_int_equal(nc, 4);
  for (size_t i = 0; i < nc; i++)
    if (!strcmp(c[i].kind, "ptxas")) {
      assert_string_equal(c[c[i].within].kind, "triton");
      assert_string_equal(c[i].module, "k1");
      assert_true(c[i].cpu_ms > 0.89 && c[i].cpu_ms < 0.91);
    }
  nk = gpujit_profile_table_rows(p, GPUJIT_PROFILE_COMPILERS, (const void **)&k, NULL);
  assert_int_equal(nk, 4);
  assert_string_equal(k[0].compiler, "xla"); /* the longest first */
  assert_string_equal(k[1].compiler, "triton");
  assert_string_equal(k[2].compiler, "inductor");
  assert_string_equal(k[3].compiler, "ptxas");
  assert_int_equal(k[3].compiles, 0);
  assert_int_equal(k[3].within, 1);
  assert_int_equal(gpujit_profile_format(p, "app", 0, &text), 0);
  assert_non_null(strstr(text, "by compiler: xla 1 × 10.0 ms (1 cache hit); triton 1 × 5.0 ms; inductor 1 × 1.0 ms; ptxas 1 inside others 1.0 ms"));
  gpujit_free(text);
  gpujit_profile_free(p);
  th_rmrf(dir);
}

/* Names people can read: the report's rows and the trace's kernels demangled (as Nsight shows
 * them: no "void "), the symbol kept in the JSON and as the trace event's argument. */
static void test_compilers__kernel_names_demangled(void **state)
{
  static const char *const lines[] = {
      "{\"k\":\"proc\",\"v\":1,\"pid\":600,\"tid\":600,\"ppid\":1,\"exe\":\"/bin/app\",\"cmd\":\"app\",\"t\":1000000000000}",
      "{\"k\":\"clock\",\"pid\":600,\"tid\":600,\"cupti\":0,\"host\":1000000000000}",
      "{\"k\":\"load\",\"pid\":600,\"tid\":600,\"api\":\"cuModuleLoadData\",\"t0\":1000001000000,\"t1\":1000001100000,"
      "\"result\":0,\"image\":\"cubin\",\"bytes\":10,\"hash\":\"" H2 "\",\"module\":\"0xdd\"}",
      "{\"k\":\"kernel\",\"pid\":600,\"name\":\"_Z5scaleIfEvPT_S0_i\",\"module\":\"0xdd\",\"device\":0,\"stream\":7,"
      "\"corr\":1,\"s\":2000000,\"e\":2100000}",
      "{\"k\":\"ksum\",\"pid\":600,\"module\":\"0xdd\",\"name\":\"_Z5scaleIfEvPT_S0_i\",\"device\":0,\"n\":1,\"ns\":100000}",
      "{\"k\":\"exit\",\"pid\":600,\"tid\":600,\"t\":1000003000000,\"lost\":0}",
  };
  char dir[] = "/tmp/gpujit-compilers-XXXXXX", *text = NULL, trace[300];
  gpujit_profile *p = NULL;
  const gpujit_profile_module *m;
  gpujit__buf b = {0};
  (void)state;
  assert_non_null(mkdtemp(dir));
  th_write_lines(dir, "p600-1.jsonl", lines, sizeof(lines) / sizeof(lines[0]));
  assert_int_equal(gpujit_profile_load(&p, dir), 0);
  assert_int_equal(gpujit_profile_modules(p, &m), 1);
  assert_string_equal(m[0].kernel, "_Z5scaleIfEvPT_S0_i"); /* the JSON's and the API's: the symbol */
  assert_int_equal(gpujit_profile_format(p, "app", 0, &text), 0);
  assert_non_null(strstr(text, "scale<float>(float*, float, int)"));
  assert_null(strstr(text, "void scale"));
  snprintf(trace, sizeof(trace), "%s/t.json", dir);
  assert_int_equal(gpujit_profile_trace(p, trace), 0);
  assert_int_equal(gpujit__file_read(&b, trace), 0);
  assert_non_null(strstr(b.data, "\"name\":\"scale<float>(float*, float, int)\""));
  assert_non_null(strstr(b.data, "\"symbol\":\"_Z5scaleIfEvPT_S0_i\""));
  gpujit__buf_free(&b);
  gpujit_free(text);
  gpujit_profile_free(p);
  th_rmrf(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_compilers__nested_tied_counted_once),
      cmocka_unit_test(test_compilers__kernel_names_demangled),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
