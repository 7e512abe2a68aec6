/* The miss explanation of a request never built: the fields of the request key that differ from
 * the module's last build (module/explain.c), the toolkit among them. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "helpers.h"
#include "gpujit.h"
#include "module/explain.h"

static cJSON *inputs(const char *toolkit, const char *arch, int lineinfo, const char *define, const char *digest)
{
  cJSON *j = cJSON_CreateObject(), *a;
  cJSON_AddStringToObject(j, "toolkit", toolkit);
  cJSON_AddStringToObject(j, "arch", arch);
  cJSON_AddNumberToObject(j, "lineinfo", lineinfo);
  a = cJSON_AddArrayToObject(j, "defines");
  if (define)
    cJSON_AddItemToArray(a, cJSON_CreateString(define));
  a = cJSON_AddArrayToObject(j, "source_digests");
  cJSON_AddItemToArray(a, cJSON_CreateString(digest));
  return j;
}

static void test_explain__names_each_changed_field(void **state)
{
  char *dir = th_tmpdir(), out[1024], want[1200];
  char *file = th_path(dir, "k.cu"); /* on disk: a changed file is named as changed */
  const char *paths[] = {file}, *other[] = {"/src/other.cu"}, *memory[] = {"/nonexistent/module.cu"};
  FILE *f = fopen(file, "w");
  gpujit_cache_options co = GPUJIT_CACHE_OPTIONS_INIT;
  gpujit_cache *c = NULL;
  cJSON *a = inputs("nvrtc=aa;nvjitlink=bb", "sm_90", 1, "N=1", "d1");
  cJSON *b = inputs("nvrtc=cc;nvjitlink=bb", "sm_90", 1, "N=1", "d1");
  cJSON *d = inputs("nvrtc=aa;nvjitlink=bb", "sm_89", 0, "N=2", "d2");
  (void)state;
  assert_non_null(f);
  fclose(f);
  co.dir = dir;
  assert_int_equal(gpujit_cache_open(&c, &co), 0);
  /* nothing on record: nothing to say (the caller keeps "never built") */
  assert_false(gpujit__explain_diff(c, "k", paths, 1, a, out, sizeof(out)));
  gpujit__explain_put(c, "k", paths, 1, a);
  assert_false(gpujit__explain_diff(c, "k", paths, 1, a, out, sizeof(out))); /* the same request */
  assert_true(gpujit__explain_diff(c, "k", paths, 1, b, out, sizeof(out)));
  assert_string_equal(out, "the toolkit changed (NVRTC, nvJitLink, ptxas or the builtin headers are other files)");
  assert_true(gpujit__explain_diff(c, "k", paths, 1, d, out, sizeof(out)));
  snprintf(want, sizeof(want), "arch sm_90 -> sm_89; lineinfo on -> off; -D N=2 added; -D N=1 gone; %s changed", file);
  assert_string_equal(out, want);
  /* another module's record is not this one's */
  assert_false(gpujit__explain_diff(c, "k", other, 1, d, out, sizeof(out)));
  gpujit__explain_put(c, "k", paths, 1, d); /* the last build is the one compared with */
  assert_true(gpujit__explain_diff(c, "k", paths, 1, a, out, sizeof(out)));
  snprintf(want, sizeof(want), "arch sm_89 -> sm_90; lineinfo off -> on; -D N=1 added; -D N=2 gone; %s changed", file);
  assert_string_equal(out, want);
  /* an in-memory source (Python's source=) names no file that changed */
  gpujit__explain_put(c, "m", memory, 1, a);
  assert_true(gpujit__explain_diff(c, "m", memory, 1, d, out, sizeof(out)));
  assert_non_null(strstr(out, "no build of this source on record (an in-memory source"));
  cJSON_Delete(a);
  cJSON_Delete(b);
  cJSON_Delete(d);
  gpujit_cache_free(c);
  th_rmrf(dir);
  free(file);
  free(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_explain__names_each_changed_field),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
