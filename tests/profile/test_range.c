/* A range of a process's profile (what gpujit.profile reports for a block of Python): records of
 * that process that began inside it, kernels counted from their own records, other processes and
 * the process's whole-run sums left out; nothing partial. Records written here as the injection
 * library writes them. */
#include <sys/stat.h>

#include "helpers.h"

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "gpujit.h"

/* host ns = CUPTI ns + 1e12 in this process */
static const char *const LINES[] = {
    "{\"k\":\"proc\",\"v\":1,\"pid\":100,\"ppid\":1,\"exe\":\"/usr/bin/python3\",\"cmd\":\"python3 app.py\",\"t\":1000000000000}",
    "{\"k\":\"clock\",\"pid\":100,\"cupti\":0,\"host\":1000000000000}",
    /* before the range: a compile and its load */
    "{\"k\":\"nvrtc\",\"pid\":100,\"tid\":100,\"name\":\"early.cu\",\"src_hash\":\"aa\",\"options\":[],\"result\":0,"
    "\"t0\":1000000001000,\"t1\":1000000002000,\"cubin_bytes\":10,\"cubin_hash\":\"11111111111111111111111111111111\"}",
    "{\"k\":\"load\",\"pid\":100,\"tid\":100,\"api\":\"cuModuleLoadData\",\"t0\":1000000003000,\"t1\":1000000004000,"
    "\"result\":0,\"image\":\"cubin\",\"bytes\":10,\"hash\":\"11111111111111111111111111111111\",\"module\":\"0xa\"}",
    "{\"k\":\"kernel\",\"pid\":100,\"name\":\"early_k\",\"module\":\"0xa\",\"device\":0,\"stream\":7,\"corr\":1,"
    "\"s\":5000,\"e\":6000}",
    /* inside [1e12 + 10000, 1e12 + 90000]: two compiles of one source, a load, three launches, a copy */
    "{\"k\":\"nvrtc\",\"pid\":100,\"tid\":100,\"name\":\"mid.cu\",\"src_hash\":\"bb\",\"options\":[],\"result\":0,"
    "\"t0\":1000000011000,\"t1\":1000000013000,\"cubin_bytes\":20,\"cubin_hash\":\"22222222222222222222222222222222\"}",
    "{\"k\":\"nvrtc\",\"pid\":100,\"tid\":100,\"name\":\"mid.cu\",\"src_hash\":\"bb\",\"options\":[],\"result\":0,"
    "\"t0\":1000000014000,\"t1\":1000000016000,\"cubin_bytes\":20,\"cubin_hash\":\"22222222222222222222222222222222\"}",
    "{\"k\":\"load\",\"pid\":100,\"tid\":100,\"api\":\"cuModuleLoadData\",\"t0\":1000000017000,\"t1\":1000000019000,"
    "\"result\":0,\"image\":\"cubin\",\"bytes\":20,\"hash\":\"22222222222222222222222222222222\",\"module\":\"0xb\"}",
    /* an active step from 19500 ns, open at the range's end, and the host side of a launch in it */
    "{\"k\":\"step\",\"pid\":100,\"tid\":100,\"n\":7,\"t\":1000000019500,\"phase\":\"active\",\"cycle\":0,\"src\":\"api\"}",
    "{\"k\":\"launch\",\"pid\":100,\"tid\":100,\"corr\":2,\"api\":\"cuLaunchKernel\",\"t0\":1000000019600,"
    "\"t1\":1000000019700}",
    "{\"k\":\"kernel\",\"pid\":100,\"name\":\"mid_k\",\"module\":\"0xb\",\"device\":0,\"stream\":7,\"corr\":2,"
    "\"s\":20000,\"e\":21000}",
    "{\"k\":\"kernel\",\"pid\":100,\"name\":\"mid_k\",\"module\":\"0xb\",\"device\":0,\"stream\":7,\"corr\":3,"
    "\"s\":22000,\"e\":23000}",
    "{\"k\":\"kernel\",\"pid\":100,\"name\":\"early_k\",\"module\":\"0xa\",\"device\":1,\"stream\":7,\"corr\":4,"
    "\"s\":24000,\"e\":26000}",
    "{\"k\":\"copy\",\"pid\":100,\"what\":\"HtoD\",\"device\":0,\"stream\":7,\"corr\":5,\"bytes\":4096,"
    "\"s\":27000,\"e\":28000}",
    /* kernel regions read inside the range (at a step's end) */
    "{\"k\":\"kregions\",\"pid\":100,\"tid\":100,\"t\":1000000060000,\"read\":1,\"at\":\"step\",\"module\":\"0xb\","
    "\"scope\":\"block\",\"events\":2,\"dropped\":0,\"unmatched\":0,\"launches\":1,\"min_cycles\":90,\"regions\":1,"
    "\"i\":0,\"name\":\"phase\",\"depth\":0,\"calls\":1,\"cyc\":[90,90,90,90],\"ns\":[60,60,60,60],\"total_ns\":60,"
    "\"sm_imb\":1,\"unit_imb\":1,\"sms\":1,\"units\":1}",
    /* the whole run's sums: not a range's */
    "{\"k\":\"ksum\",\"pid\":100,\"module\":\"0xb\",\"name\":\"mid_k\",\"device\":0,\"n\":1000,\"ns\":999999}",
    /* after the range */
    "{\"k\":\"kernel\",\"pid\":100,\"name\":\"mid_k\",\"module\":\"0xb\",\"device\":0,\"stream\":7,\"corr\":6,"
    "\"s\":95000,\"e\":96000}",
    "{\"k\":\"nvrtc\",\"pid\":100,\"tid\":100,\"name\":\"late.cu\",\"src_hash\":\"cc\",\"options\":[],\"result\":0,"
    "\"t0\":1000000097000,\"t1\":1000000098000}",
};

static const char *const OTHER[] = {
    "{\"k\":\"proc\",\"v\":1,\"pid\":200,\"ppid\":100,\"exe\":\"/usr/bin/python3\",\"cmd\":\"worker\",\"t\":1000000000000}",
    "{\"k\":\"nvrtc\",\"pid\":200,\"tid\":200,\"name\":\"worker.cu\",\"src_hash\":\"dd\",\"options\":[],\"result\":0,"
    "\"t0\":1000000012000,\"t1\":1000000013000}",
};


static void test_range__one_process_one_block(void **state)
{
  char dir[] = "/tmp/gpujit-range-XXXXXX", *text = NULL;
  gpujit_profile *p = NULL;
  const gpujit_profile_module *m;
  const gpujit_profile_device *d;
  gpujit_profile_totals t;
  size_t nm, nd;
  (void)state;
  assert_non_null(mkdtemp(dir));
  th_write_lines(dir, "p100-1.jsonl", LINES, sizeof(LINES) / sizeof(LINES[0]));
  th_write_lines(dir, "p200-1.jsonl", OTHER, sizeof(OTHER) / sizeof(OTHER[0]));
  assert_int_equal(gpujit_profile_load_range(&p, dir, 100, 1000000010000ull, 1000000090000ull), 0);
  gpujit_profile_totals_get(p, &t);
  assert_int_equal(t.processes, 1);
  assert_false(t.partial);
  assert_int_equal(t.compiles, 2);
  assert_int_equal(t.repeats, 1);
  assert_int_equal(t.loads, 1);
  assert_int_equal(t.launches, 3);
  assert_true(t.wall_ms > 0.079 && t.wall_ms < 0.081);
  nm = gpujit_profile_modules(p, &m);
  assert_true(nm >= 1);
  assert_string_equal(m[0].name, "mid.cu");
  assert_string_equal(m[0].origin, "nvrtc");
  assert_int_equal(m[0].compiles, 2);
  assert_int_equal(m[0].launches, 2); /* the ksum's 1000 are the whole run's */
  assert_true(m[0].gpu_ms > 0.0019 && m[0].gpu_ms < 0.0021);
  for (size_t i = 0; i < nm; i++) {
    assert_string_not_equal(m[i].name, "early.cu"); /* compiled before: its launch in the range is a row */
    assert_string_not_equal(m[i].name, "late.cu");
    assert_string_not_equal(m[i].name, "worker.cu");
  }
  nd = gpujit_profile_devices(p, &d);
  assert_int_equal(nd, 2);
  assert_int_equal(d[0].launches + d[1].launches, 3);
  assert_int_equal(d[0].device == 0 ? d[0].copies : d[1].copies, 1);
  assert_int_equal(gpujit_profile_format(p, "app.py, a block", 0, &text), 0);
  assert_non_null(strstr(text, "gpujit profile: app.py, a block"));
  assert_non_null(strstr(text, "JIT compile 0.0 ms in 2 compiles; 1 identical repeat"));
  assert_null(strstr(text, "PARTIAL"));
  gpujit_free(text);
  gpujit_profile_free(p);
  assert_int_equal(gpujit_profile_load_range(&p, dir, 100, 2, 1), GPUJIT_EINVAL);
  assert_int_equal(gpujit_profile_load_range(&p, "/nonexistent/records", 100, 1, 2), GPUJIT_ENOENT);
  assert_int_equal(gpujit_profile_recording(NULL), 0); /* this test is not run under gpujit profile */
  th_rmrf(dir);
}

/* A framework adapter's file of the same process: a unit with its stages, inside the range. */
static const char *const ADAPTER[] = {
    "{\"k\":\"proc\",\"v\":1,\"pid\":100,\"tid\":100,\"ppid\":1,\"writer\":\"python\",\"t\":1000000030000}",
    "{\"k\":\"unit\",\"pid\":100,\"tid\":100,\"fw\":\"xla\",\"name\":\"jit(f)\",\"t0\":1000000030000,"
    "\"t1\":1000000040000,\"cache\":\"miss\",\"stages\":[[\"trace\",1000000030000,1000000032000],"
    "[\"backend_compile\",1000000033000,1000000040000]]}",
};

/* The JSON is the tables of gpujit_profile_fields(): every row of every table, every field under
 * its key with the struct's value (optional fields only when set), and nothing else but notes. */
static void test_range__json_is_the_tables(void **state)
{
  char dir[] = "/tmp/gpujit-range-XXXXXX", *text = NULL;
  gpujit_profile *p = NULL;
  cJSON *j;
  size_t sections = 0;
  (void)state;
  assert_non_null(mkdtemp(dir));
  th_write_lines(dir, "p100-1.jsonl", LINES, sizeof(LINES) / sizeof(LINES[0]));
  th_write_lines(dir, "p100-2.jsonl", ADAPTER, sizeof(ADAPTER) / sizeof(ADAPTER[0]));
  assert_int_equal(gpujit_profile_load_range(&p, dir, 100, 1000000010000ull, 1000000090000ull), 0);
  assert_int_equal(gpujit_profile_json(p, &text), 0);
  assert_non_null(j = cJSON_Parse(text));
  assert_null(gpujit_profile_fields(GPUJIT_PROFILE_NTABLES, NULL, NULL));
  for (int t = 0; t < GPUJIT_PROFILE_NTABLES; t++) {
    const char *name, *rows;
    size_t nf, stride, n = gpujit_profile_table_rows(p, (gpujit_profile_table)t, (const void **)&rows, &stride);
    const gpujit_profile_field *f = gpujit_profile_fields((gpujit_profile_table)t, &name, &nf);
    const cJSON *sec = cJSON_GetObjectItemCaseSensitive(j, name);
    bool one = t == GPUJIT_PROFILE_TOTALS || t == GPUJIT_PROFILE_OPTIONS;
    assert_non_null(f);
    assert_non_null(sec);
    assert_int_equal(one ? 1 : cJSON_GetArraySize(sec), n);
    assert_true(n > 0); /* the fixture has a row in every table */
    sections++;
    for (size_t i = 0; i < n; i++) {
      const cJSON *o = one ? sec : cJSON_GetArrayItem(sec, (int)i);
      const char *row = rows + i * stride;
      int present = 0;
      for (size_t k = 0; k < nf; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, f[k].key);
        const void *at = row + f[k].offset;
        double want = 0;
        if (f[k].type == GPUJIT_FIELD_STR) {
          const char *s = *(const char *const *)at;
          if (f[k].optional && !*s) {
            assert_null(v);
            continue;
          }
          assert_true(cJSON_IsString(v));
          assert_string_equal(v->valuestring, s);
          present++;
          continue;
        }
        switch (f[k].type) {
        case GPUJIT_FIELD_INT: case GPUJIT_FIELD_BOOL: want = *(const int *)at; break;
        case GPUJIT_FIELD_U32: want = *(const uint32_t *)at; break;
        case GPUJIT_FIELD_U64: want = (double)*(const uint64_t *)at; break;
        case GPUJIT_FIELD_F64: want = *(const double *)at; break;
        default: fail();
        }
        if (f[k].optional && want == 0) {
          assert_null(v);
          continue;
        }
        assert_non_null(v);
        present++;
        if (f[k].type == GPUJIT_FIELD_BOOL)
          assert_int_equal(cJSON_IsTrue(v), want != 0);
        else
          assert_true(cJSON_IsNumber(v) && v->valuedouble == want);
      }
      assert_int_equal(cJSON_GetArraySize(o), present); /* no key outside the table */
    }
  }
  assert_int_equal(cJSON_GetArraySize(j), sections + 3); /* and "format", "version", "notes" */
  assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "format")->valuestring, "gpujit-profile");
  assert_int_equal(cJSON_GetObjectItemCaseSensitive(j, "version")->valueint, GPUJIT_PROFILE_JSON_VERSION);
  assert_string_equal(j->child->string, "format"); /* first, so a reader knows the document at once */
  { /* the adapter's file is no process of its own; its unit is a compile with its stages */
    const gpujit_profile_process *pr;
    const gpujit_profile_stage *st;
    gpujit_profile_totals t;
    gpujit_profile_totals_get(p, &t);
    assert_int_equal(gpujit_profile_processes(p, &pr), 1);
    assert_int_equal(t.processes, 1);
    assert_int_equal(gpujit_profile_table_rows(p, GPUJIT_PROFILE_STAGES, (const void **)&st, NULL), 2);
    assert_string_equal(st[1].name, "backend_compile");
    assert_true(st[1].start_ms > 0.0029 && st[1].start_ms < 0.0031 && st[1].ms > 0.0069 && st[1].ms < 0.0071);
  }
  assert_true(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j, "notes")));
  cJSON_Delete(j);
  gpujit_free(text);
  gpujit_profile_free(p);
  th_rmrf(dir);
}

/* Kernels, copies and memsets come by the hundred thousand and are read by a scan of their flat
 * fields; a line the scan does not follow (an escaped name, a cut mark) is parsed whole. Both
 * read the same, nanosecond times exact at today's clock values (a double would round them). */
static const char *const VOLUME[] = {
    "{\"k\":\"proc\",\"v\":1,\"pid\":300,\"ppid\":1,\"exe\":\"/usr/bin/python3\",\"cmd\":\"python3 v.py\",\"t\":1795503594000000000}",
    "{\"k\":\"clock\",\"pid\":300,\"cupti\":1795503594329114863,\"host\":1795503594329134816}",
    "{\"k\":\"nvrtc\",\"pid\":300,\"tid\":300,\"name\":\"vol.cu\",\"src_hash\":\"ee\",\"options\":[],\"result\":0,"
    "\"t0\":1795503594330000000,\"t1\":1795503594331000000,\"cubin_bytes\":30,\"cubin_hash\":\"33333333333333333333333333333333\"}",
    "{\"k\":\"load\",\"pid\":300,\"tid\":300,\"api\":\"cuModuleLoadData\",\"t0\":1795503594332000000,\"t1\":1795503594333000000,"
    "\"result\":0,\"image\":\"cubin\",\"bytes\":30,\"hash\":\"33333333333333333333333333333333\",\"module\":\"0xc0ffee\"}",
    "{\"k\":\"kernel\",\"pid\":300,\"tid\":301,\"name\":\"vol_k\",\"module\":\"0xc0ffee\",\"device\":0,\"stream\":7,\"corr\":9,"
    "\"s\":1795503594400000001,\"e\":1795503594400001002}",
    "{\"k\":\"kernel\",\"pid\":300,\"tid\":301,\"name\":\"vol\\\"q\",\"module\":\"0xc0ffee\",\"device\":0,\"stream\":7,\"corr\":10,"
    "\"s\":1795503594400002001,\"e\":1795503594400004003}",
    "{\"k\":\"kernel\",\"pid\":300,\"tid\":301,\"name\":\"vol_k\",\"module\":\"0xc0ffee\",\"device\":0,\"stream\":7,\"corr\":11,"
    "\"s\":1795503594400005001,\"e\":1795503594400006002,\"cut\":true}",
    "{\"k\":\"copy\",\"pid\":300,\"tid\":301,\"what\":\"HtoD\",\"device\":0,\"stream\":7,\"corr\":12,\"bytes\":4096,"
    "\"s\":1795503594400007000,\"e\":1795503594400010000}",
    "{\"k\":\"memset\",\"pid\":300,\"tid\":301,\"what\":\"memset\",\"device\":1,\"stream\":8,\"corr\":13,\"bytes\":64,"
    "\"s\":1795503594400011000,\"e\":1795503594400011500}",
    "{\"k\":\"kernel\",\"pid\":300,\"tid\":301,\"name\":\"vol_k\",\"module\":\"0xc0ffee\",\"device\":0,\"stream\":7,\"corr\":14,"
    "\"s\":1795503599000000000,\"e\":1795503599000001000}", /* after the range */
};

static void test_range__volume_records(void **state)
{
  char dir[] = "/tmp/gpujit-range-XXXXXX";
  gpujit_profile *p = NULL;
  const gpujit_profile_module *m;
  const gpujit_profile_device *d;
  gpujit_profile_totals t;
  size_t nm, nd;
  (void)state;
  assert_non_null(mkdtemp(dir));
  th_write_lines(dir, "p300-1.jsonl", VOLUME, sizeof(VOLUME) / sizeof(VOLUME[0]));
  /* host times: CUPTI's + 19953 */
  assert_int_equal(gpujit_profile_load_range(&p, dir, 300, 1795503594329000000ull, 1795503594500000000ull), 0);
  gpujit_profile_totals_get(p, &t);
  assert_int_equal(t.launches, 3);
  nm = gpujit_profile_modules(p, &m);
  assert_int_equal(nm, 1);
  assert_string_equal(m[0].name, "vol.cu");
  assert_string_equal(m[0].kernel, "vol_k");
  assert_int_equal(m[0].kernels, 2); /* vol_k and vol"q */
  assert_int_equal(m[0].launches, 3);
  assert_true(m[0].gpu_ms > 0.0040039 && m[0].gpu_ms < 0.0040041); /* 1001 + 2002 + 1001 ns */
  nd = gpujit_profile_devices(p, &d);
  assert_int_equal(nd, 2);
  assert_int_equal(d[0].device, 0);
  assert_int_equal(d[0].launches, 3);
  assert_int_equal(d[0].copies, 1);
  assert_int_equal(d[0].copy_bytes, 4096);
  assert_true(d[0].copy_ms > 0.0029999 && d[0].copy_ms < 0.0030001);
  assert_int_equal(d[1].memsets, 1);
  assert_true(d[1].memset_ms > 0.0004999 && d[1].memset_ms < 0.0005001);
  gpujit_profile_free(p);
  th_rmrf(dir);
}

/* Records of another format version (an injection library from another build, an older writer
 * before versions) are never misread: the file is left out, named in a note with both versions,
 * and the rest of the directory is reported. */
static bool has_note(const gpujit_profile *p, const char *a, const char *b)
{
  char *text = NULL;
  bool found;
  assert_int_equal(gpujit_profile_format(p, "x", 0, &text), 0);
  found = strstr(text, a) && strstr(text, b);
  gpujit_free(text);
  return found;
}

static void test_range__other_format_version_refused(void **state)
{
  static const char *const v2[] = {
      "{\"k\":\"proc\",\"v\":2,\"pid\":400,\"ppid\":1,\"exe\":\"/bin/x\",\"cmd\":\"x\",\"t\":1000}"};
  static const char *const v0[] = {
      "{\"k\":\"proc\",\"pid\":401,\"ppid\":1,\"exe\":\"/bin/x\",\"cmd\":\"x\",\"t\":1000}"};
  static const char *const v1[] = {
      "{\"k\":\"proc\",\"v\":1,\"pid\":402,\"ppid\":1,\"exe\":\"/bin/y\",\"cmd\":\"y\",\"t\":1000}",
      "{\"k\":\"exit\",\"pid\":402,\"tid\":402,\"t\":2000,\"lost\":0}"};
  char dir[] = "/tmp/gpujit-range-XXXXXX";
  gpujit_profile *p = NULL;
  gpujit_profile_totals t;
  (void)state;
  assert_non_null(mkdtemp(dir));
  th_write_lines(dir, "p400-1.jsonl", v2, 1);
  th_write_lines(dir, "p401-1.jsonl", v0, 1);
  th_write_lines(dir, "p402-1.jsonl", v1, 2);
  assert_int_equal(gpujit_profile_load(&p, dir), 0);
  gpujit_profile_totals_get(p, &t);
  assert_int_equal(t.processes, 1); /* 402's alone */
  assert_true(has_note(p, "p400-1.jsonl is of format version 2;", "this gpujit reads version 1"));
  assert_true(has_note(p, "p401-1.jsonl is of format version 0 (before versions)", "this gpujit reads version 1"));
  gpujit_profile_free(p);
  th_rmrf(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_range__one_process_one_block),
      cmocka_unit_test(test_range__json_is_the_tables),
      cmocka_unit_test(test_range__volume_records),
      cmocka_unit_test(test_range__other_format_version_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
