/* Fuzz target: images as a cache or another machine hands them back — a cubin's kernels and
 * parameter tables, its line table moved to another checkout (longer and shorter), the same for
 * PTX — and ptxas's resource lines in a build log. */
#include "fuzz.h"

#include "compile/image/image.h"
#include "compile/image/relocate.h"

static void rebase(const uint8_t *data, size_t size, gpujit_output_kind kind, const char *from, const char *to)
{
  gpujit__buf img = {0};
  if (gpujit__buf_put(&img, data, size) < 0)
    abort();
  gpujit__image_rebase(&img, kind, from, to);
  gpujit__buf_free(&img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  gpujit__strvec kernels = {0};
  gpujit__kernel_resources res;
  int sizes[64];
  char *log = fz_str(data, size);
  fz_dir();
  if (gpujit__image_kernels(&kernels, data, size, GPUJIT_OUTPUT_CUBIN) == 0)
    for (size_t i = 0; i < kernels.count; i++)
      gpujit__cubin_params(data, size, kernels.items[i], sizes, 64);
  gpujit__strvec_free(&kernels);
  gpujit__cubin_params(data, size, "saxpy", sizes, 64);
  memset(&kernels, 0, sizeof(kernels));
  if (gpujit__image_kernels(&kernels, data, size, GPUJIT_OUTPUT_PTX) == 0)
    gpujit__strvec_free(&kernels);
  rebase(data, size, GPUJIT_OUTPUT_CUBIN, "/tmp/exp", "/a/much/longer/checkout/directory");
  rebase(data, size, GPUJIT_OUTPUT_CUBIN, "/work/main/examples", "/w");
  rebase(data, size, GPUJIT_OUTPUT_PTX, "/tmp/exp", "/somewhere/else");
  gpujit__ptxas_resources(&res, log, "saxpy");
  gpujit__ptxas_resources(&res, log, "_Z5scaleIfEviT_PS0_");
  free(log);
  gpujit_error_clear();
  return 0;
}
