/* A library that links the CUDA driver itself and is loaded RTLD_LOCAL by the profiled target, as
 * Python loads an extension module: its call to cuModuleLoadData must reach its own driver. */
#define API __attribute__((visibility("default")))

int cuModuleLoadData(void **m, const void *image);

API int loader_load(const void *image);
int loader_load(const void *image)
{
  void *m = 0;
  return cuModuleLoadData(&m, image);
}
