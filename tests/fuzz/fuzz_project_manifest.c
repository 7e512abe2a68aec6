/* Fuzz target: `gpujit build --modules FILE` project manifests (modules, files, outputs, options). */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  gpujit_project *p = NULL;
  const char *path;
  fz_dir();
  fz_reset();
  /* files the manifest may name: a.cu and b.cu beside it */
  fz_file("a.cu", (const uint8_t *)"__global__ void a() {}\n", 23);
  fz_file("b.cu", (const uint8_t *)"__global__ void b() {}\n", 23);
  path = fz_file("modules.json", data, size);
  if (gpujit_project_create(&p) != 0)
    abort();
  gpujit_project_add_manifest(p, path, NULL, NULL, "cubin");
  gpujit_project_count(p);
  gpujit_project_free(p);
  gpujit_error_clear();
  return 0;
}
