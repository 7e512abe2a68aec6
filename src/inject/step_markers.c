/* Steps the program marks without calling gpujit: an NVTX range or mark of a name (Warp's
 * ScopedTimer(use_nvtx=True), PyTorch's record_function, any program's own ranges), seen through
 * CUPTI's NVTX callbacks as it is pushed (only where another tool set NVTX_INJECTION64_PATH: else
 * gpujit's own NVTX injection counts them, nvtx_inject.c, with no CUPTI); a launch of a kernel
 * whose name holds a fragment, seen through the launch callback. Both need CUPTI's subscriber on while no step is recorded (its
 * callbacks only, no activity): the cost of counting steps the program does not mark for gpujit. */
#define _GNU_SOURCE
#define NVTX_NO_IMPL /* the types alone: the program links NVTX, not this library */
#include <nvtx3/nvToolsExt.h>
#include <cupti.h>
#include <generated_nvtx_meta.h>
#include <string.h>

#include "inject/step_markers.h"

static const char *attr_text(const nvtxEventAttributes_t *a)
{
  return a && a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii : NULL;
}

const char *gji_nvtx_message(unsigned id, const void *params)
{
  switch (id) {
  case CUPTI_CBID_NVTX_nvtxMarkA: return ((const nvtxMarkA_params *)params)->message;
  case CUPTI_CBID_NVTX_nvtxRangeStartA: return ((const nvtxRangeStartA_params *)params)->message;
  case CUPTI_CBID_NVTX_nvtxRangePushA: return ((const nvtxRangePushA_params *)params)->message;
  case CUPTI_CBID_NVTX_nvtxMarkEx: return attr_text(((const nvtxMarkEx_params *)params)->eventAttrib);
  case CUPTI_CBID_NVTX_nvtxRangeStartEx: return attr_text(((const nvtxRangeStartEx_params *)params)->eventAttrib);
  case CUPTI_CBID_NVTX_nvtxRangePushEx: return attr_text(((const nvtxRangePushEx_params *)params)->eventAttrib);
  case CUPTI_CBID_NVTX_nvtxDomainMarkEx:
    return attr_text(((const nvtxDomainMarkEx_params *)params)->core.eventAttrib);
  case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx:
    return attr_text(((const nvtxDomainRangeStartEx_params *)params)->core.eventAttrib);
  case CUPTI_CBID_NVTX_nvtxDomainRangePushEx:
    return attr_text(((const nvtxDomainRangePushEx_params *)params)->core.eventAttrib);
  default: return NULL;
  }
}

const unsigned gji_nvtx_begin_ids[] = {CUPTI_CBID_NVTX_nvtxMarkA,           CUPTI_CBID_NVTX_nvtxRangeStartA,
                                       CUPTI_CBID_NVTX_nvtxRangePushA,      CUPTI_CBID_NVTX_nvtxMarkEx,
                                       CUPTI_CBID_NVTX_nvtxRangeStartEx,    CUPTI_CBID_NVTX_nvtxRangePushEx,
                                       CUPTI_CBID_NVTX_nvtxDomainMarkEx,    CUPTI_CBID_NVTX_nvtxDomainRangeStartEx,
                                       CUPTI_CBID_NVTX_nvtxDomainRangePushEx};
const unsigned gji_nvtx_begin_count = sizeof(gji_nvtx_begin_ids) / sizeof(gji_nvtx_begin_ids[0]);
