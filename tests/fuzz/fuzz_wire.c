/* Fuzz target: what passes between a project build and its worker processes — length-prefixed
 * frames, a job's module options, a worker's result and image — as each side decodes them. */
#include "fuzz.h"

#include "module/module.h"
#include "project/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  gpujit__frame_reader r = {0};
  gpujit__buf frame = {0};
  cJSON *result = NULL;
  uint32_t type;
  fz_dir();
  if (gpujit__buf_put(&r.in, data, size) < 0)
    abort();
  while (gpujit__frame_take(&r, &type, &frame) == 1) {
    cJSON *j = cJSON_ParseWithLength(frame.data, frame.len);
    if (type == GPUJIT__FRAME_JOB && j) {
      gpujit__options_holder h;
      cJSON *merged = gpujit__options_merge(cJSON_GetObjectItemCaseSensitive(j, "options"), j);
      if (gpujit__options_from_json(&h, cJSON_GetObjectItemCaseSensitive(j, "options"), "job") == 0) {
        cJSON *back = gpujit__options_to_json(&h.o);
        cJSON_Delete(back);
        gpujit__options_holder_free(&h);
      }
      cJSON_Delete(merged);
    } else if (type == GPUJIT__FRAME_RESULT && j) {
      cJSON_Delete(result);
      result = j;
      j = NULL;
    } else if (type == GPUJIT__FRAME_IMAGE && result) {
      gpujit_module *m = NULL;
      gpujit__buf image = {0};
      if (gpujit__buf_put(&image, frame.data, frame.len) < 0)
        abort();
      if (gpujit__module_from_json(&m, cJSON_GetObjectItemCaseSensitive(result, "module"), &image) == 0)
        gpujit_module_free(m);
      gpujit__buf_free(&image);
    }
    cJSON_Delete(j);
  }
  cJSON_Delete(result);
  gpujit__buf_free(&frame);
  gpujit__buf_free(&r.in);
  gpujit_error_clear();
  return 0;
}
