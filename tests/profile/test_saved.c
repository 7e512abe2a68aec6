/* Saved profiles (gpujit_profile_save / gpujit_profile_open) and the HTML page, from records as
 * the injection library writes them: a saved profile reads back as the same profile; a file cut
 * anywhere, changed, of another version or no saved profile at all is refused with ECORRUPT or
 * EVERSION and leaves nothing unpacked behind; the page escapes what the records name. */
#include <fcntl.h>
#include <sys/stat.h>

#include "helpers.h"

#include "gpujit.h"
#include "profile/tar.h"

#define H1 "11111111111111111111111111111111"
#define EVIL "</script><img src=x onerror=alert(1)>&"

static const char *const MAIN[] = {
    "{\"k\":\"proc\",\"v\":1,\"pid\":700,\"tid\":700,\"ppid\":1,\"exe\":\"/usr/bin/python3\",\"cmd\":\"python3 app.py\","
    "\"t\":1000000000000}",
    "{\"k\":\"clock\",\"pid\":700,\"tid\":700,\"cupti\":0,\"host\":1000000000000}",
    "{\"k\":\"nvrtc\",\"pid\":700,\"tid\":700,\"name\":\"" EVIL ".cu\",\"src_hash\":\"aa\",\"options\":[],\"result\":0,"
    "\"t0\":1000001000000,\"t1\":1000021000000,\"cubin_bytes\":10,\"cubin_hash\":\"" H1 "\"}",
    "{\"k\":\"load\",\"pid\":700,\"tid\":700,\"api\":\"cuModuleLoadData\",\"t0\":1000022000000,\"t1\":1000023000000,"
    "\"result\":0,\"image\":\"cubin\",\"bytes\":10,\"hash\":\"" H1 "\",\"module\":\"0xa\"}",
    "{\"k\":\"kernel\",\"pid\":700,\"name\":\"" EVIL "\",\"module\":\"0xa\",\"device\":0,\"stream\":7,\"corr\":1,"
    "\"s\":24000000,\"e\":25000000}",
    "{\"k\":\"ksum\",\"pid\":700,\"module\":\"0xa\",\"name\":\"" EVIL "\",\"device\":0,\"n\":1,\"ns\":1000000}",
    "{\"k\":\"exit\",\"pid\":700,\"tid\":700,\"t\":1000030000000,\"lost\":0}",
};

typedef struct fixture {
  char *dir, *tmp, *out, *saved; /* the records, TMPDIR (where gpujit_profile_open unpacks), outputs */
} fixture;

static int setup(void **state)
{
  fixture *f = calloc(1, sizeof(*f));
  f->dir = th_tmpdir();
  f->tmp = th_tmpdir();
  f->out = th_tmpdir();
  setenv("TMPDIR", f->tmp, 1);
  th_write_lines(f->dir, "p700-1000000000000.jsonl", MAIN, sizeof(MAIN) / sizeof(MAIN[0]));
  f->saved = th_path(f->out, "saved.gjprof");
  *state = f;
  return 0;
}

static int teardown(void **state)
{
  fixture *f = *state;
  unsetenv("TMPDIR");
  th_rmrf(f->dir), th_rmrf(f->tmp), th_rmrf(f->out);
  free(f->dir), free(f->tmp), free(f->out), free(f->saved), free(f);
  return 0;
}

static char *json(const gpujit_profile *p)
{
  char *text = NULL;
  assert_int_equal(gpujit_profile_json(p, &text), 0);
  return text;
}

static bool tmp_empty(const fixture *f)
{
  char *out = NULL;
  th_run(&out, "ls -A '%s'", f->tmp);
  bool empty = !out || !*out;
  free(out);
  return empty;
}

static void save(fixture *f)
{
  gpujit_profile *p = NULL;
  assert_int_equal(gpujit_profile_open(&p, f->dir), 0); /* a records directory opens too */
  assert_int_equal(gpujit_profile_save(p, f->saved), 0);
  gpujit_profile_free(p);
}

static void test_saved__reads_back_the_same(void **state)
{
  fixture *f = *state;
  gpujit_profile *a = NULL, *b = NULL;
  char *ja, *jb;
  gpujit_profile_totals t;
  assert_int_equal(gpujit_profile_open(&a, f->dir), 0);
  assert_string_equal(gpujit_profile_command(a), "python3 app.py"); /* a directory: its first process's */
  assert_int_equal(gpujit_profile_save(a, f->saved), 0);
  assert_int_equal(gpujit_profile_open(&b, f->saved), 0);
  ja = json(a), jb = json(b);
  assert_string_equal(ja, jb);
  assert_string_equal(gpujit_profile_command(b), "python3 app.py");
  gpujit_profile_totals_get(b, &t);
  assert_int_equal(t.launches, 1);
  assert_true(t.wall_ms > 29 && t.wall_ms < 31); /* its first record to its last */
  free(ja), free(jb);
  gpujit_profile_free(a);
  gpujit_profile_free(b);
  assert_true(tmp_empty(f)); /* what was unpacked went with the profile */
}

static void test_saved__every_cut_refused(void **state)
{
  fixture *f = *state;
  size_t len, refused = 0;
  char *whole, *cut = th_path(f->out, "cut.gjprof");
  save(f);
  whole = th_read(f->saved, &len);
  assert_true(len > 3 * GPUJIT__TAR_BLOCK && len % GPUJIT__TAR_BLOCK == 0);
  for (size_t n = 0; n < len; n += (n % GPUJIT__TAR_BLOCK == 0 || n % GPUJIT__TAR_BLOCK == 511) ? 1 : 97) {
    gpujit_profile *p = (gpujit_profile *)1;
    int fd = open(cut, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0 && write(fd, whole, n) == (ssize_t)n && close(fd) == 0);
    assert_int_equal(gpujit_profile_open(&p, cut), GPUJIT_ECORRUPT);
    assert_null(p);
    assert_non_null(strstr(gpujit_error_last(), "cut.gjprof: "));
    refused++;
  }
  assert_true(refused > 20);
  assert_true(tmp_empty(f));
  free(cut), free(whole);
}

static void test_saved__changed_byte_refused(void **state)
{
  fixture *f = *state;
  size_t len;
  char *whole, *data;
  gpujit_profile *p = NULL;
  save(f);
  whole = th_read(f->saved, &len);
  data = memmem(whole, len, "\"k\":\"kernel\"", 12); /* inside the records member */
  assert_non_null(data);
  data[6] = 'K';
  {
    char *path = th_path(f->out, "changed.gjprof");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0 && write(fd, whole, len) == (ssize_t)len && close(fd) == 0);
    assert_int_equal(gpujit_profile_open(&p, path), GPUJIT_ECORRUPT);
    assert_non_null(strstr(gpujit_error_last(), "does not hold what was saved"));
    free(path);
  }
  assert_true(tmp_empty(f));
  free(whole);
}

/* A saved profile whose manifest says another version: refused naming both. */
static void test_saved__other_version_refused(void **state)
{
  fixture *f = *state;
  static const char man[] = "{\"format\":\"gpujit-saved-profile\",\"version\":99,\"members\":[]}";
  unsigned char block[GPUJIT__TAR_BLOCK], zero[3 * GPUJIT__TAR_BLOCK] = {0};
  char *path = th_path(f->out, "v99.gjprof");
  gpujit_profile *p = NULL;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  gpujit__tar_header(block, "gpujit-profile.json", strlen(man), 0);
  assert_true(write(fd, block, sizeof(block)) == (ssize_t)sizeof(block));
  assert_true(write(fd, man, strlen(man)) == (ssize_t)strlen(man));
  assert_true(write(fd, zero, sizeof(zero) - strlen(man) % GPUJIT__TAR_BLOCK) > 0);
  close(fd);
  assert_int_equal(gpujit_profile_open(&p, path), GPUJIT_EVERSION);
  assert_non_null(strstr(gpujit_error_last(), "version 99; this gpujit reads version 1"));
  free(path);
}

static void test_saved__not_one_refused(void **state)
{
  fixture *f = *state;
  gpujit_profile *p = NULL;
  char *json_file = th_write(f->out, "p.json", "{\"format\": \"gpujit-profile\", \"version\": 1}\n");
  char *missing = th_path(f->out, "missing.gjprof");
  assert_int_equal(gpujit_profile_open(&p, json_file), GPUJIT_ECORRUPT);
  assert_non_null(strstr(gpujit_error_last(), "the JSON of gpujit profile --json"));
  assert_int_equal(gpujit_profile_open(&p, missing), GPUJIT_ENOENT);
  assert_int_equal(gpujit_profile_open(&p, NULL), GPUJIT_EINVAL);
  assert_int_equal(gpujit_profile_save(NULL, json_file), GPUJIT_EINVAL);
  free(json_file), free(missing);
}

static void test_saved__html_escapes_the_records(void **state)
{
  fixture *f = *state;
  gpujit_profile *p = NULL;
  char *page = th_path(f->out, "p.html"), *text;
  size_t len;
  assert_int_equal(gpujit_profile_open(&p, f->dir), 0);
  assert_int_equal(gpujit_profile_html(p, page), 0);
  text = th_read(page, &len);
  assert_null(strstr(text, "<img"));                                   /* nowhere as markup */
  assert_non_null(strstr(text, "\\u003c/script\\u003e\\u003cimg src=x")); /* in the data, escaped */
  assert_non_null(strstr(text, "Content-Security-Policy"));
  assert_null(strstr(text, "@@"));                                     /* every field filled */
  gpujit_profile_free(p);
  free(page), free(text);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_saved__reads_back_the_same, setup, teardown),
      cmocka_unit_test_setup_teardown(test_saved__every_cut_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(test_saved__changed_byte_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(test_saved__other_version_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(test_saved__not_one_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(test_saved__html_escapes_the_records, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
