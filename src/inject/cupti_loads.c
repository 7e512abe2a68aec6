/* Module loads and unloads from CUPTI's driver callbacks (the subscriber is cupti.c's): a load's
 * record — the image's kind, size and hash, wall time, handle, correlation id — written at its
 * exit callback, and the kernel regions of the module bound then (kregions.c); an unload's regions
 * read at its entry, while the module is still there. */
#define _GNU_SOURCE
#include <cupti.h>
#include <stdint.h>

#include "inject/cupti_loads.h"
#include "inject/image.h"
#include "inject/kregions.h"
#include "inject/protocol.h"

/* Per thread: the load under way (its enter callback; the exit callback writes the record). */
static __thread uint64_t load_t0;

void gji_cupti_load(CUpti_CallbackId id, const CUpti_CallbackData *cb)
{
  const void *p = cb->functionParams, *image = NULL;
  uint64_t handle = 0;
  bool library = false, ok = cb->functionReturnValue && *(const CUresult *)cb->functionReturnValue == CUDA_SUCCESS;
  gji_line l;
  if (cb->callbackSite == CUPTI_API_ENTER) {
    load_t0 = gji_now();
    return;
  }
  gji_begin(&l, GPUJIT_KIND(LOAD));
  gji_str(&l, "api", cb->functionName);
  gji_u64(&l, "corr", cb->correlationId);
  gji_u64(&l, "t0", load_t0);
  gji_u64(&l, "t1", gji_now());
  gji_i64(&l, "result", cb->functionReturnValue ? (int64_t) * (const CUresult *)cb->functionReturnValue : -1);
  switch (id) {
  case CUPTI_DRIVER_TRACE_CBID_cuModuleLoadData:
    gji_image_fields(&l, image = ((const cuModuleLoadData_params *)p)->image);
    handle = (uint64_t)(uintptr_t) * ((const cuModuleLoadData_params *)p)->module;
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuModuleLoadDataEx:
    gji_image_fields(&l, image = ((const cuModuleLoadDataEx_params *)p)->image);
    handle = (uint64_t)(uintptr_t) * ((const cuModuleLoadDataEx_params *)p)->module;
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuModuleLoadFatBinary:
    gji_image_fields(&l, image = ((const cuModuleLoadFatBinary_params *)p)->fatCubin);
    handle = (uint64_t)(uintptr_t) * ((const cuModuleLoadFatBinary_params *)p)->module;
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuModuleLoad:
    gji_file_fields(&l, ((const cuModuleLoad_params *)p)->fname);
    handle = (uint64_t)(uintptr_t) * ((const cuModuleLoad_params *)p)->module;
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuLibraryLoadData:
    gji_image_fields(&l, image = ((const cuLibraryLoadData_params *)p)->code);
    library = true;
    handle = (uint64_t)(uintptr_t) * ((const cuLibraryLoadData_params *)p)->library;
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuLibraryLoadFromFile:
    gji_file_fields(&l, ((const cuLibraryLoadFromFile_params *)p)->fileName);
    library = true;
    handle = (uint64_t)(uintptr_t) * ((const cuLibraryLoadFromFile_params *)p)->library;
    break;
  case CUPTI_DRIVER_TRACE_CBID_cuLinkComplete: {
    const cuLinkComplete_params *lc = p;
    if (lc->cubinOut && lc->sizeOut)
      gji_linked_fields(&l, *lc->cubinOut, *lc->sizeOut);
    break;
  }
  default:
    break;
  }
  if (handle)
    gji_hex(&l, "module", handle);
  gji_end(&l);
  if (handle && ok) /* kernel regions: a buffer bound where the module declares them */
    gji_kregions_loaded(handle, library, image, true);
}

void gji_cupti_unload(CUpti_CallbackId id, const CUpti_CallbackData *cb)
{
  /* both parameter structs hold the handle alone */
  if (!cb->functionParams)
    return;
  if (id == CUPTI_DRIVER_TRACE_CBID_cuModuleUnload)
    gji_kregions_unload((uint64_t)(uintptr_t)((const cuModuleUnload_params *)cb->functionParams)->hmod);
  else
    gji_kregions_unload((uint64_t)(uintptr_t)((const cuLibraryUnload_params *)cb->functionParams)->library);
}
