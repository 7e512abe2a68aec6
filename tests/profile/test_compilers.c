/* Compilers inside compilers, from records as the injection library and the Python adapters
 * write them: a Triton compile (an adapter's unit) that ran ptxas (a toolchain process), its module
 * tied by the handle Triton bound and by the bytes ptxas wrote; an XLA function tied to the module
 * of the bytes its ptxas wrote, never to the next module its process loads; kernels launched while
 * a framework compiled (autotuning) kept apart; each millisecond counted once, per compiler. */
#include <math.h>
#include <sys/stat.h>

#include "helpers.h"

#include "base/fs.h"

#include "gpujit.h"

#define H1 "11111111111111111111111111111111" /* what ptxas wrote */
#define H2 "22222222222222222222222222222222" /* an image Triton loaded, bound to its compile */
#define H3 "33333333333333333333333333333333" /* XLA's module, written by its ptxas */
#define H4 "44444444444444444444444444444444" /* a library's prebuilt fatbin, loaded after XLA compiled */

/* host ns = CUPTI ns + 1e12; times below are 1e12 + microseconds * 1000 */
static const char *const MAIN[] = {
    "{\"k\":\"proc\",\"v\":1,\"pid\":500,\"tid\":500,\"ppid\":1,\"exe\":\"/usr/bin/python3\",\"cmd\":\"python3 app.py\",\"t\":1000000000000}",
    "{\"k\":\"clock\",\"pid\":500,\"tid\":500,\"cupti\":0,\"host\":1000000000000}",
    "{\"k\":\"load\",\"pid\":500,\"tid\":500,\"api\":\"cuModuleLoadData\",\"t0\":1000006000000,\"t1\":1000006100000,"
    "\"result\":0,\"image\":\"cubin\",\"bytes\":200,\"hash\":\"" H2 "\",\"module\":\"0xaa\"}",
    /* the first load after XLA's compile is another library's (PyTorch's, lazily): not XLA's */
    "{\"k\":\"load\",\"pid\":500,\"tid\":500,\"api\":\"cuLibraryLoadData\",\"t0\":1000020500000,\"t1\":1000020600000,"
    "\"result\":0,\"image\":\"fatbin\",\"bytes\":900,\"hash\":\"" H4 "\",\"module\":\"0xdd\"}",
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

/* XLA runs ptxas as a process inside its backend compile: the module it loads later is those bytes */
static const char *const PTXAS_XLA[] = {
    "{\"k\":\"proc\",\"v\":1,\"pid\":502,\"tid\":502,\"ppid\":500,\"ancestors\":[],\"exe\":\"/x/ptxas\",\"cmd\":\"ptxas\",\"t\":1000012000000}",
    "{\"k\":\"tool\",\"pid\":502,\"tid\":502,\"tool\":\"ptxas\",\"proper\":1,\"pre\":0,\"arch\":\"sm_90\",\"input\":\"/tmp/x.ptx\","
    "\"inputs\":1,\"output\":\"/tmp/x.cubin\",\"t0\":1000012000000,\"paths\":[\"/tmp/x.ptx\",\"/tmp/x.cubin\"],"
    "\"args\":[\"/tmp/x.ptx\",\"-o\",\"/tmp/x.cubin\"]}",
    "{\"k\":\"tool_end\",\"pid\":502,\"tid\":502,\"t1\":1000013000000,\"cpu_ns\":800000,\"output_bytes\":300,"
    "\"output_hash\":\"" H3 "\"}",
    "{\"k\":\"exit\",\"pid\":502,\"tid\":502,\"t\":1000013000100,\"status\":0,\"lost\":0}",
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
  WRITE(dir, "p502-1000012000000.jsonl", PTXAS_XLA);
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
  /* XLA's function: the module of the bytes its ptxas wrote, its cache hit; the library loaded
   * in between is prebuilt, tied to nothing, and said to be */
  assert_string_equal(xla->name, "jit(f)");
  assert_true(xla->compile_ms > 9.99 && xla->compile_ms < 10.01);
  assert_int_equal(xla->loads, 1);
  assert_int_equal(xla->launches, 4);
  assert_int_equal(xla->cache_hits, 1);
  /* once each: the two frameworks' compiles; ptxas inside Triton's */
  gpujit_profile_totals_get(p, &t);
  assert_int_equal(t.compiles, 3);
  assert_true(t.compile_ms > 15.99 && t.compile_ms < 16.01);
  assert_int_equal(t.processes, 3); /* the adapter's file is not a process */
  assert_int_equal(t.untied, 1);
  for (size_t i = 0; i < nm; i++)
    if (!strcmp(m[i].image, "fatbin"))
      assert_string_equal(m[i].origin, "prebuilt");
  nc = gpujit_profile_compiles(p, &c);
  assert_int_equal(nc, 5);
  for (size_t i = 0; i < nc; i++)
    if (!strcmp(c[i].kind, "ptxas") && c[i].pid == 501) {
      assert_string_equal(c[c[i].within].kind, "triton");
      assert_string_equal(c[i].module, "k1");
      assert_true(c[i].cpu_ms > 0.89 && c[i].cpu_ms < 0.91);
    } else if (!strcmp(c[i].kind, "ptxas")) {
      assert_string_equal(c[c[i].within].kind, "xla");
      assert_string_equal(c[i].module, "jit(f)");
    }
  nk = gpujit_profile_table_rows(p, GPUJIT_PROFILE_COMPILERS, (const void **)&k, NULL);
  assert_int_equal(nk, 4);
  assert_string_equal(k[0].compiler, "xla"); /* the longest first */
  assert_string_equal(k[1].compiler, "triton");
  assert_string_equal(k[2].compiler, "inductor");
  assert_string_equal(k[3].compiler, "ptxas");
  assert_int_equal(k[3].compiles, 0);
  assert_int_equal(k[3].within, 2);
  assert_int_equal(gpujit_profile_format(p, "app", 0, &text), 0);
  assert_non_null(strstr(text, "by compiler: xla: 1 compile, 10.0 ms (1 cache hit); triton: 1 compile, 5.0 ms; inductor: 1 compile, 1.0 ms; ptxas: 2 inside others, 2.0 ms"));
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

/* Autotuning is compile work, for every autotuner, as the adapters declare it: a Triton-style
 * autotuner's "span" (two configs benchmarked, a cache-flush kernel of another library between
 * runs) and an XLA-style compile that "benchmarks" inside its span (a check kernel of a module
 * made by nothing seen). The program's own launches are what is left: break-even from them, the
 * autotuning's GPU time counted in the cost. */
static void test_compilers__autotuning_spans(void **state)
{
  static const char *const main_lines[] = {
      "{\"k\":\"proc\",\"v\":1,\"pid\":700,\"tid\":700,\"ppid\":1,\"exe\":\"/usr/bin/python3\",\"cmd\":\"python3 t.py\",\"t\":1000000000000}",
      "{\"k\":\"clock\",\"pid\":700,\"tid\":700,\"cupti\":0,\"host\":1000000000000}",
      /* a: config A's module, b: config B's (the chosen), f: the flush kernel's library, z: a check kernel's */
      "{\"k\":\"load\",\"pid\":700,\"tid\":700,\"api\":\"cuModuleLoadData\",\"t0\":1000001000000,\"t1\":1000001100000,\"result\":0,\"image\":\"cubin\",\"bytes\":10,\"hash\":\"a1\",\"module\":\"0xa\"}",
      "{\"k\":\"load\",\"pid\":700,\"tid\":700,\"api\":\"cuModuleLoadData\",\"t0\":1000003000000,\"t1\":1000003100000,\"result\":0,\"image\":\"cubin\",\"bytes\":20,\"hash\":\"b1\",\"module\":\"0xb\"}",
      "{\"k\":\"load\",\"pid\":700,\"tid\":700,\"api\":\"cuLibraryLoadData\",\"t0\":1000000500000,\"t1\":1000000600000,\"result\":0,\"image\":\"fatbin\",\"bytes\":30,\"hash\":\"f1\",\"module\":\"0xf\"}",
      "{\"k\":\"load\",\"pid\":700,\"tid\":9,\"api\":\"cuModuleLoadData\",\"t0\":1000021000000,\"t1\":1000021100000,\"result\":0,\"image\":\"cubin\",\"bytes\":40,\"hash\":\"z1\",\"module\":\"0xz\"}",
      /* benchmarking A (2 launches, 1 flush), then B (2 launches, 1 flush): inside the span */
      "{\"k\":\"kernel\",\"pid\":700,\"name\":\"tuned\",\"module\":\"0xa\",\"device\":0,\"stream\":7,\"corr\":1,\"s\":2000000,\"e\":2100000}",
      "{\"k\":\"kernel\",\"pid\":700,\"name\":\"flush\",\"module\":\"0xf\",\"device\":0,\"stream\":7,\"corr\":2,\"s\":2200000,\"e\":2700000}",
      "{\"k\":\"kernel\",\"pid\":700,\"name\":\"tuned\",\"module\":\"0xa\",\"device\":0,\"stream\":7,\"corr\":3,\"s\":2800000,\"e\":2900000}",
      "{\"k\":\"kernel\",\"pid\":700,\"name\":\"tuned\",\"module\":\"0xb\",\"device\":0,\"stream\":7,\"corr\":4,\"s\":4000000,\"e\":4050000}",
      "{\"k\":\"kernel\",\"pid\":700,\"name\":\"flush\",\"module\":\"0xf\",\"device\":0,\"stream\":7,\"corr\":5,\"s\":4100000,\"e\":4600000}",
      "{\"k\":\"kernel\",\"pid\":700,\"name\":\"tuned\",\"module\":\"0xb\",\"device\":0,\"stream\":7,\"corr\":6,\"s\":4700000,\"e\":4750000}",
      /* the program's own: 3 launches of the chosen config, one flush-library launch of its own */
      "{\"k\":\"kernel\",\"pid\":700,\"name\":\"tuned\",\"module\":\"0xb\",\"device\":0,\"stream\":7,\"corr\":7,\"s\":6000000,\"e\":6050000}",
      "{\"k\":\"kernel\",\"pid\":700,\"name\":\"tuned\",\"module\":\"0xb\",\"device\":0,\"stream\":7,\"corr\":8,\"s\":6100000,\"e\":6150000}",
      "{\"k\":\"kernel\",\"pid\":700,\"name\":\"tuned\",\"module\":\"0xb\",\"device\":0,\"stream\":7,\"corr\":9,\"s\":6200000,\"e\":6250000}",
      "{\"k\":\"kernel\",\"pid\":700,\"name\":\"flush\",\"module\":\"0xf\",\"device\":0,\"stream\":7,\"corr\":10,\"s\":6300000,\"e\":6800000}",
      /* the XLA-style compile's check kernel, on its own thread's module, inside its span */
      "{\"k\":\"kernel\",\"pid\":700,\"name\":\"redzone_check\",\"module\":\"0xz\",\"device\":0,\"stream\":7,\"corr\":11,\"s\":22000000,\"e\":22010000}",
      "{\"k\":\"ksum\",\"pid\":700,\"module\":\"0xa\",\"name\":\"tuned\",\"device\":0,\"n\":2,\"ns\":200000}",
      "{\"k\":\"ksum\",\"pid\":700,\"module\":\"0xb\",\"name\":\"tuned\",\"device\":0,\"n\":5,\"ns\":250000}",
      "{\"k\":\"ksum\",\"pid\":700,\"module\":\"0xf\",\"name\":\"flush\",\"device\":0,\"n\":5,\"ns\":1700000}",
      "{\"k\":\"ksum\",\"pid\":700,\"module\":\"0xz\",\"name\":\"redzone_check\",\"device\":0,\"n\":1,\"ns\":10000}",
      /* a graph compile that benchmarks, an autotuner unit inside it: the graph's module (loaded in
       * its span) and a flush launched while the inner autotuner ran are the graph's autotuning */
      "{\"k\":\"load\",\"pid\":700,\"tid\":700,\"api\":\"cuModuleLoadData\",\"t0\":1000030500000,\"t1\":1000030600000,\"result\":0,\"image\":\"cubin\",\"bytes\":50,\"hash\":\"c1\",\"module\":\"0xc\"}",
      "{\"k\":\"kernel\",\"pid\":700,\"name\":\"fused\",\"module\":\"0xc\",\"device\":0,\"stream\":7,\"corr\":12,\"s\":30800000,\"e\":30810000}",
      "{\"k\":\"kernel\",\"pid\":700,\"name\":\"flush\",\"module\":\"0xf\",\"device\":0,\"stream\":7,\"corr\":13,\"s\":31500000,\"e\":31600000}",
      "{\"k\":\"ksum\",\"pid\":700,\"module\":\"0xc\",\"name\":\"fused\",\"device\":0,\"n\":1,\"ns\":10000}",
      /* an autotuner unit on its own, its key naming the kernel it tunes; only a flush ran in its span */
      "{\"k\":\"load\",\"pid\":700,\"tid\":700,\"api\":\"cuModuleLoadData\",\"t0\":1000035500000,\"t1\":1000035600000,\"result\":0,\"image\":\"cubin\",\"bytes\":60,\"hash\":\"s1\",\"module\":\"0x5\"}",
      "{\"k\":\"kernel\",\"pid\":700,\"name\":\"flush\",\"module\":\"0xf\",\"device\":0,\"stream\":7,\"corr\":14,\"s\":36500000,\"e\":36600000}",
      /* a library the autotuner's benchmark loads lazily, on its thread: not made by the autotuner */
      "{\"k\":\"load\",\"pid\":700,\"tid\":700,\"api\":\"cuLibraryLoadData\",\"t0\":1000036200000,\"t1\":1000036300000,\"result\":0,\"image\":\"fatbin\",\"bytes\":70,\"hash\":\"l1\",\"module\":\"0x9\"}",
      "{\"k\":\"ksum\",\"pid\":700,\"module\":\"0x5\",\"name\":\"solo\",\"device\":0,\"n\":5,\"ns\":50000}",
      "{\"k\":\"exit\",\"pid\":700,\"tid\":700,\"t\":1000040000000,\"status\":0,\"lost\":0}",
  };
  static const char *const adapter[] = {
      "{\"k\":\"proc\",\"v\":1,\"pid\":700,\"tid\":700,\"ppid\":1,\"writer\":\"python\",\"t\":1000000001000}",
      "{\"k\":\"unit\",\"pid\":700,\"tid\":700,\"fw\":\"fwA\",\"name\":\"tuned\",\"key\":\"ka\",\"t0\":1000000700000,\"t1\":1000000900000,\"cache\":\"miss\",\"stages\":[]}",
      "{\"k\":\"bind\",\"pid\":700,\"tid\":700,\"fw\":\"fwA\",\"key\":\"ka\",\"module\":\"0xa\"}",
      "{\"k\":\"unit\",\"pid\":700,\"tid\":700,\"fw\":\"fwA\",\"name\":\"tuned\",\"key\":\"kb\",\"t0\":1000002950000,\"t1\":1000002990000,\"cache\":\"miss\",\"stages\":[]}",
      "{\"k\":\"bind\",\"pid\":700,\"tid\":700,\"fw\":\"fwA\",\"key\":\"kb\",\"module\":\"0xb\"}",
      "{\"k\":\"span\",\"pid\":700,\"tid\":700,\"role\":\"autotune\",\"fw\":\"fwA\",\"name\":\"tuned\",\"t0\":1000001900000,\"t1\":1000003000000}",
      "{\"k\":\"span\",\"pid\":700,\"tid\":700,\"role\":\"autotune\",\"fw\":\"fwA\",\"name\":\"tuned\",\"t0\":1000003950000,\"t1\":1000004800000}",
      "{\"k\":\"unit\",\"pid\":700,\"tid\":700,\"fw\":\"fwC\",\"name\":\"autotune fused\",\"key\":\"fused\",\"t0\":1000031000000,\"t1\":1000032000000,\"cache\":\"\",\"stages\":[],\"autotune\":true}",
      "{\"k\":\"unit\",\"pid\":700,\"tid\":700,\"fw\":\"fwC\",\"name\":\"graph\",\"key\":\"gr\",\"t0\":1000030000000,\"t1\":1000035000000,\"cache\":\"miss\",\"stages\":[],\"benchmarks\":true}",
      "{\"k\":\"unit\",\"pid\":700,\"tid\":700,\"fw\":\"fwC\",\"name\":\"autotune solo\",\"key\":\"solo\",\"t0\":1000036000000,\"t1\":1000037000000,\"cache\":\"\",\"stages\":[],\"autotune\":true}",
      "{\"k\":\"unit\",\"pid\":700,\"tid\":700,\"fw\":\"fwB\",\"name\":\"jit(g)\",\"key\":\"\",\"t0\":1000020000000,\"t1\":1000023000000,\"cache\":\"miss\",\"stages\":[],\"benchmarks\":true}",
  };
  char dir[] = "/tmp/gpujit-autotune-XXXXXX";
  gpujit_profile *p = NULL;
  const gpujit_profile_module *m, *a = NULL, *b = NULL, *f = NULL, *g = NULL, *graph = NULL, *solo = NULL;
  gpujit_profile_totals t;
  size_t nm;
  (void)state;
  assert_non_null(mkdtemp(dir));
  WRITE(dir, "p700-1000000000000.jsonl", main_lines);
  WRITE(dir, "p700-1000000001000.jsonl", adapter);
  assert_int_equal(gpujit_profile_load(&p, dir), 0);
  nm = gpujit_profile_modules(p, &m);
  for (size_t i = 0; i < nm; i++) {
    if (!strcmp(m[i].kernel, "tuned") && m[i].image_bytes == 10)
      a = &m[i];
    else if (!strcmp(m[i].kernel, "tuned"))
      b = &m[i];
    else if (!strcmp(m[i].kernel, "flush"))
      f = &m[i];
    else if (!strcmp(m[i].name, "jit(g)"))
      g = &m[i];
    else if (!strcmp(m[i].name, "graph"))
      graph = &m[i];
    else if (!strcmp(m[i].kernel, "solo"))
      solo = &m[i];
  }
  assert_non_null(a), assert_non_null(b), assert_non_null(f), assert_non_null(g), assert_non_null(graph), assert_non_null(solo);
  /* config A: benchmarked only; its flush is its autotuning too */
  assert_int_equal(a->launches, 0);
  assert_int_equal(a->autotune_launches, 3);
  assert_true(a->autotune_ms > 0.699 && a->autotune_ms < 0.701);
  assert_true(a->break_even == 0);
  /* config B, the chosen: the program's 3 launches; break-even from them, autotuning in the cost */
  assert_int_equal(b->launches, 3);
  assert_true(b->gpu_ms > 0.149 && b->gpu_ms < 0.151);
  assert_int_equal(b->autotune_launches, 3);
  assert_true(b->autotune_ms > 0.599 && b->autotune_ms < 0.601);
  assert_true(fabs(b->break_even - (b->compile_ms + b->load_ms + b->autotune_ms) / 0.05) < 1e-6);
  /* the flush library: the program's one launch of it, none of the autotuner's */
  assert_int_equal(f->launches, 1);
  assert_int_equal(f->autotune_launches, 0);
  /* the benchmarking compile: its check kernel (a module it did not make, loaded on another
   * thread: untied) is its autotuning */
  assert_int_equal(g->autotune_launches, 1);
  /* the graph compile: its kernel and the flush, run while its inner autotuner benchmarked */
  assert_int_equal(graph->launches, 0);
  assert_int_equal(graph->autotune_launches, 2);
  assert_int_equal(graph->compiles, 1); /* the autotuner unit's time is inside the graph's */
  /* the lone autotuner: its compile and its flush are the row of the kernel its key names */
  assert_int_equal(solo->launches, 5);
  assert_int_equal(solo->compiles, 1);
  assert_int_equal(solo->autotune_launches, 1);
  gpujit_profile_totals_get(p, &t);
  assert_int_equal(t.launches, 9);
  assert_int_equal(t.autotune_launches, 10);
  assert_int_equal(t.untied, 3); /* the flush library, the check kernels' module, the lazy library */
  for (size_t i = 0; i < nm; i++)
    if (m[i].image_bytes == 70)
      assert_string_equal(m[i].origin, "prebuilt");
  gpujit_profile_free(p);
  th_rmrf(dir);
}

/* A compile is what a compiler proper does, recorded as the outermost process that names its
 * files: a `#!/bin/sh` g++ that execs g++-real (one process, two images) running cc1plus and as,
 * under a build tool that names no file; ccache running `g++ -E` then `g++ -c`; nvcc whose object
 * embeds the fatbin a library later loads. Preprocessing, the build tool and the shell are no
 * compiles; a driver named like no compiler is one when it runs one. */
static void test_compilers__toolchain_by_what_runs(void **state)
{
#define TOOL(pid, name, proper, pre, script, t0, paths) \
  "{\"k\":\"tool\",\"pid\":" #pid ",\"tid\":" #pid ",\"tool\":\"" name "\",\"proper\":" #proper ",\"pre\":" #pre \
  ",\"script\":" #script ",\"arch\":\"\",\"input\":\"\",\"inputs\":0,\"output\":\"\",\"t0\":" #t0 ",\"paths\":" paths ",\"args\":[]}"
#define PROC(pid, ppid, anc, t) \
  "{\"k\":\"proc\",\"v\":1,\"pid\":" #pid ",\"tid\":" #pid ",\"ppid\":" #ppid ",\"ancestors\":" anc ",\"exe\":\"/x\",\"cmd\":\"x\",\"t\":" #t "}"
#define END(pid, t1, cpu, status) \
  "{\"k\":\"tool_end\",\"pid\":" #pid ",\"tid\":" #pid ",\"t1\":" #t1 ",\"cpu_ns\":" #cpu "}", \
  "{\"k\":\"exit\",\"pid\":" #pid ",\"tid\":" #pid ",\"t\":" #t1 ",\"status\":" #status ",\"lost\":0}"
  static const char *const ninja[] = {PROC(800, 1, "[]", 1000000000000), "{\"k\":\"exit\",\"pid\":800,\"tid\":800,\"t\":1000090000000,\"status\":0,\"lost\":0}"};
  /* the wrapper script's image, then g++-real's (exec: the same pid) */
  static const char *const wrap[] = {PROC(801, 800, "[1]", 1000001000000),
                                     TOOL(801, "g++", 0, 0, 1, 1000001000000, "[\"x.cpp\",\"x.o\"]"),
                                     "{\"k\":\"exec\",\"pid\":801,\"tid\":801,\"t\":1000001500000}"};
  static const char *const real[] = {PROC(801, 800, "[1]", 1000001600000),
                                     TOOL(801, "g++-real", 0, 0, 0, 1000001600000, "[\"/opt/inc\",\"x.cpp\",\"x.o\"]"),
                                     END(801, 1000009000000, 7000000, 0)};
  static const char *const cc1plus[] = {PROC(802, 801, "[800,1]", 1000002000000),
                                        TOOL(802, "cc1plus", 1, 0, 0, 1000002000000, "[\"/opt/inc\",\"x.cpp\",\"/tmp/cc1.s\"]"),
                                        END(802, 1000007000000, 5000000, 0)};
  static const char *const as[] = {PROC(803, 801, "[800,1]", 1000007100000),
                                   TOOL(803, "as", 1, 0, 0, 1000007100000, "[\"x.o\",\"/tmp/cc1.s\"]"),
                                   END(803, 1000008000000, 900000, 0)};
  /* ccache: g++ -E (cc1plus -E), then g++ -c (cc1plus) */
  static const char *const ccache[] = {PROC(810, 800, "[1]", 1000010000000),
                                       TOOL(810, "ccache", 0, 0, 0, 1000010000000, "[\"y.cpp\",\"y.o\"]"),
                                       END(810, 1000019000000, 8000000, 0)};
  static const char *const pre_drv[] = {PROC(811, 810, "[800,1]", 1000010100000),
                                        TOOL(811, "g++", 0, 1, 0, 1000010100000, "[\"y.cpp\"]"), END(811, 1000011000000, 1, 0)};
  static const char *const pre_cc1[] = {PROC(812, 811, "[810,800,1]", 1000010200000),
                                        TOOL(812, "cc1plus", 1, 1, 0, 1000010200000, "[\"y.cpp\"]"), END(812, 1000010900000, 1, 0)};
  static const char *const drv[] = {PROC(813, 810, "[800,1]", 1000011100000),
                                    TOOL(813, "g++", 0, 0, 0, 1000011100000, "[\"y.cpp\",\"y.o\"]"), END(813, 1000018000000, 1, 0)};
  static const char *const cc1[] = {PROC(814, 813, "[810,800,1]", 1000011200000),
                                    TOOL(814, "cc1plus", 1, 0, 0, 1000011200000, "[\"y.cpp\",\"/tmp/cc2.s\"]"), END(814, 1000017000000, 1, 0)};
  /* nvcc: cicc through a shell that names no file; its object embeds fatbin e1, which is loaded */
  static const char *const nvcc[] = {PROC(820, 800, "[1]", 1000020000000),
                                     TOOL(820, "nvcc", 0, 0, 0, 1000020000000, "[\"k.cu\",\"k.o\"]"),
                                     "{\"k\":\"tool_end\",\"pid\":820,\"tid\":820,\"t1\":1000029000000,\"cpu_ns\":9000000,\"output_bytes\":5000,\"output_hash\":\"0e\",\"fatbins\":[\"e1\"]}",
                                     "{\"k\":\"exit\",\"pid\":820,\"tid\":820,\"t\":1000029000000,\"status\":0,\"lost\":0}"};
  static const char *const sh[] = {PROC(821, 820, "[800,1]", 1000020100000),
                                   TOOL(821, "sh", 0, 0, 0, 1000020100000, "[]"), END(821, 1000028000000, 1, 0)};
  static const char *const cicc[] = {PROC(822, 821, "[820,800,1]", 1000020200000),
                                     TOOL(822, "cicc", 1, 0, 0, 1000020200000, "[\"k.cu\",\"/tmp/k.ptx\"]"), END(822, 1000027000000, 1, 0)};
  /* the link of a library from nvcc's object: it embeds the same fatbin, copied, not made */
  static const char *const link[] = {PROC(840, 800, "[1]", 1000030000000),
                                     TOOL(840, "g++", 0, 0, 0, 1000030000000, "[\"k.o\",\"k.so\"]"),
                                     "{\"k\":\"tool_end\",\"pid\":840,\"tid\":840,\"t1\":1000031000000,\"cpu_ns\":900000,\"output_bytes\":9000,\"output_hash\":\"0f\",\"fatbins\":[\"e1\"]}",
                                     "{\"k\":\"exit\",\"pid\":840,\"tid\":840,\"t\":1000031000000,\"status\":0,\"lost\":0}"};
  static const char *const ld[] = {PROC(841, 840, "[800,1]", 1000030100000),
                                   TOOL(841, "ld", 1, 0, 0, 1000030100000, "[\"k.o\",\"k.so\"]"), END(841, 1000030900000, 1, 0)};
  static const char *const app[] = {PROC(830, 800, "[1]", 1000050000000),
                                    "{\"k\":\"load\",\"pid\":830,\"tid\":830,\"api\":\"cuLibraryLoadData\",\"t0\":1000051000000,\"t1\":1000051100000,\"result\":0,\"image\":\"fatbin\",\"bytes\":70,\"hash\":\"e1\",\"module\":\"0xe\"}",
                                    "{\"k\":\"exit\",\"pid\":830,\"tid\":830,\"t\":1000060000000,\"status\":0,\"lost\":0}"};
  char dir[] = "/tmp/gpujit-toolchain-XXXXXX";
  gpujit_profile *p = NULL;
  const gpujit_profile_compile *c;
  const gpujit_profile_module *m;
  gpujit_profile_totals t;
  size_t nc, nm, tops = 0;
  bool wrapper = false, cache = false, cuda = false;
  (void)state;
  assert_non_null(mkdtemp(dir));
  WRITE(dir, "p800-1000000000000.jsonl", ninja);
  WRITE(dir, "p801-1000001000000.jsonl", wrap);
  WRITE(dir, "p801-1000001600000.jsonl", real);
  WRITE(dir, "p802-1000002000000.jsonl", cc1plus);
  WRITE(dir, "p803-1000007100000.jsonl", as);
  WRITE(dir, "p810-1000010000000.jsonl", ccache);
  WRITE(dir, "p811-1000010100000.jsonl", pre_drv);
  WRITE(dir, "p812-1000010200000.jsonl", pre_cc1);
  WRITE(dir, "p813-1000011100000.jsonl", drv);
  WRITE(dir, "p814-1000011200000.jsonl", cc1);
  WRITE(dir, "p820-1000020000000.jsonl", nvcc);
  WRITE(dir, "p821-1000020100000.jsonl", sh);
  WRITE(dir, "p822-1000020200000.jsonl", cicc);
  WRITE(dir, "p830-1000050000000.jsonl", app);
  WRITE(dir, "p840-1000030000000.jsonl", link);
  WRITE(dir, "p841-1000030100000.jsonl", ld);
  assert_int_equal(gpujit_profile_load(&p, dir), 0);
  nc = gpujit_profile_compiles(p, &c);
  for (size_t i = 0; i < nc; i++) {
    if (c[i].within >= 0)
      continue;
    tops++;
    if (!strcmp(c[i].kind, "g++") && c[i].pid == 801) { /* the script, named as called; g++-real's end and CPU time */
      wrapper = true;
      assert_true(c[i].ms > 7.99 && c[i].ms < 8.01);
      assert_true(c[i].cpu_ms > 6.99 && c[i].cpu_ms < 7.01);
      assert_int_equal(c[i].result, 0);
    }
    cache |= !strcmp(c[i].kind, "ccache");
    if (!strcmp(c[i].kind, "nvcc")) {
      cuda = true;
      assert_string_equal(c[i].module, c[i].name); /* its module: the fatbin its object embeds */
    }
  }
  assert_int_equal(tops, 4); /* the link too */
  assert_true(wrapper && cache && cuda);
  for (size_t i = 0; i < nc; i++) /* inside: the compilers proper (and ccache's real driver) */
    if (c[i].within >= 0)
      assert_true(!strcmp(c[i].kind, "cc1plus") || !strcmp(c[i].kind, "as") || !strcmp(c[i].kind, "g++") ||
                  !strcmp(c[i].kind, "cicc") || !strcmp(c[i].kind, "ld"));
  assert_int_equal(nc, 4 + 2 + 2 + 1 + 1); /* tops; cc1plus, as; g++ -c, cc1plus; cicc; ld */
  nm = gpujit_profile_modules(p, &m);
  for (size_t i = 0; i < nm; i++)
    if (!strcmp(m[i].image, "fatbin")) {
      assert_string_equal(m[i].origin, "nvcc");
      assert_int_equal(m[i].compiles, 1);
    }
  gpujit_profile_totals_get(p, &t);
  assert_int_equal(t.compiles, 4);
  assert_int_equal(t.untied, 0);
  gpujit_profile_free(p);
  th_rmrf(dir);
#undef TOOL
#undef PROC
#undef END
}

/* Records the Python adapters could not write (a full disk) are in the totals' `lost`, beside the
 * injection library's own, and said in a note: each note counts the losses since the last one. */
static void test_compilers__adapter_losses_counted(void **state)
{
  static const char *const LOST[] = {
      "{\"k\":\"proc\",\"v\":1,\"pid\":500,\"tid\":500,\"ppid\":1,\"writer\":\"python\",\"t\":1000000001000}",
      "{\"k\":\"note\",\"pid\":500,\"tid\":500,\"what\":\"python-records-lost\",\"t\":1000000002000,\"lost\":2,"
      "\"msg\":\"2 records of the Python framework adapters could not be written (ENOSPC)\"}",
      "{\"k\":\"note\",\"pid\":500,\"tid\":500,\"what\":\"python-records-lost\",\"t\":1000000003000,\"lost\":1,"
      "\"msg\":\"3 records of the Python framework adapters could not be written (ENOSPC)\"}",
  };
  static const char *const MAIN_LOST[] = {
      "{\"k\":\"proc\",\"v\":1,\"pid\":500,\"tid\":500,\"ppid\":1,\"exe\":\"/usr/bin/python3\",\"cmd\":\"python3 app.py\",\"t\":1000000000000}",
      "{\"k\":\"exit\",\"pid\":500,\"tid\":500,\"t\":1000040000000,\"lost\":4}",
  };
  char dir[] = "/tmp/gpujit-compilers-XXXXXX";
  gpujit_profile *p = NULL;
  gpujit_profile_totals t;
  (void)state;
  assert_non_null(mkdtemp(dir));
  WRITE(dir, "p500-1000000000000.jsonl", MAIN_LOST);
  WRITE(dir, "p500-1000000001000.jsonl", LOST);
  assert_int_equal(gpujit_profile_load(&p, dir), 0);
  gpujit_profile_totals_get(p, &t);
  assert_int_equal(t.lost, 4 + 3);
  assert_non_null(strstr(gpujit_profile_notes(p), "3 records of the Python framework adapters could not be written"));
  gpujit_profile_free(p);
  th_rmrf(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_compilers__nested_tied_counted_once),
      cmocka_unit_test(test_compilers__kernel_names_demangled),
      cmocka_unit_test(test_compilers__autotuning_spans),
      cmocka_unit_test(test_compilers__toolchain_by_what_runs),
      cmocka_unit_test(test_compilers__adapter_losses_counted),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
