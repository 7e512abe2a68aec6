/* Fuzz target: the cache's small records as another machine or a damaged disk may hand them
 * over: request manifests (JSON), toolkit dependency groups (the binary form; the forms earlier
 * versions wrote are refused by name), and an entry's metadata behind a checksum that the harness
 * computes, so the parser is reached. */
#include <xxhash.h>

#include "fuzz.h"

#include "cache/records/deps.h"
#include "cache/store/files.h"
#include "cache/records/groups.h"
#include "cache/records/manifests.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  cJSON *j = NULL;
  gpujit__deps deps = {0};
  char why[256], sum[17];
  fz_dir();
  if (gpujit__manifest_parse((const char *)data, size, &j, why, sizeof(why)) == 0)
    cJSON_Delete(j);
  if (gpujit__group_parse((const char *)data, size, &deps, why, sizeof(why)) == 0) {
    gpujit__buf bin = {0};
    if (gpujit__deps_to_bin(&deps, &bin) == 0) { /* what was read writes back to the same bytes */
      gpujit__deps again = {0};
      gpujit__buf twice = {0};
      if (gpujit__deps_from_bin(&again, bin.data, bin.len) != 0 || again.count != deps.count ||
          gpujit__deps_to_bin(&again, &twice) != 0 || twice.len != bin.len || memcmp(twice.data, bin.data, bin.len))
        abort();
      gpujit__buf_free(&twice);
      gpujit__deps_free(&again);
    }
    gpujit__buf_free(&bin);
  }
  gpujit__deps_free(&deps);
  memset(&deps, 0, sizeof(deps));
  {
    /* the binary form as the bytes come (no checksum to pass): refused whole or read within them */
    gpujit__deps_view view;
    if (gpujit__deps_from_bin(&deps, (const char *)data, size) == 0)
      gpujit__deps_free(&deps);
    if (gpujit__deps_view_open(&view, (const char *)data, size) == 0)
      for (size_t i = 0; i < view.count; i++) {
        gpujit__deps_rec r;
        gpujit__deps_view_rec(&view, i, &r);
        if (strlen(r.path) == 0)
          abort();
      }
  }
  snprintf(sum, sizeof(sum), "%016llx", (unsigned long long)XXH3_64bits(data, size));
  j = NULL;
  if (gpujit__meta_check((const char *)data, size, sum, 16, &j, why, sizeof(why)) == 0) {
    const cJSON *image = cJSON_GetObjectItemCaseSensitive(j, "image");
    gpujit__payload_check(image, data, size, false, why, sizeof(why));
    cJSON_Delete(j);
  }
  gpujit_error_clear();
  return 0;
}
