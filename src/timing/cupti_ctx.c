/* CUPTI's callbacks of the calls that change a thread's current context, while gpujit holds
 * CUPTI's subscriber: they keep run's note of the current context true (gpujit__ctx_use), so a
 * timed launch makes no cuCtxSetCurrent of its own while the program leaves the context alone. */
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#include <stddef.h>

#include "base/error.h"
#include "run/device.h"
#include "timing/cupti.h"

/* The driver's calls that make another context current on the calling thread (CTX_THREAD), or
 * end a context, whichever thread has it current (CTX_ALL: every thread's note goes). */
enum { CTX_THREAD = 1, CTX_ALL = 2 };
static const unsigned char ctx_role[CUPTI_DRIVER_TRACE_CBID_SIZE] = {
    [CUPTI_DRIVER_TRACE_CBID_cuCtxSetCurrent] = CTX_THREAD,
    [CUPTI_DRIVER_TRACE_CBID_cuCtxPushCurrent] = CTX_THREAD,
    [CUPTI_DRIVER_TRACE_CBID_cuCtxPushCurrent_v2] = CTX_THREAD,
    [CUPTI_DRIVER_TRACE_CBID_cuCtxPopCurrent] = CTX_THREAD,
    [CUPTI_DRIVER_TRACE_CBID_cuCtxPopCurrent_v2] = CTX_THREAD,
    [CUPTI_DRIVER_TRACE_CBID_cuCtxCreate] = CTX_THREAD,
    [CUPTI_DRIVER_TRACE_CBID_cuCtxCreate_v2] = CTX_THREAD,
    [CUPTI_DRIVER_TRACE_CBID_cuCtxCreate_v3] = CTX_THREAD,
    [CUPTI_DRIVER_TRACE_CBID_cuCtxCreate_v4] = CTX_THREAD,
    [CUPTI_DRIVER_TRACE_CBID_cuCtxAttach] = CTX_THREAD,
    [CUPTI_DRIVER_TRACE_CBID_cuCtxDetach] = CTX_THREAD,
    [CUPTI_DRIVER_TRACE_CBID_cuGLCtxCreate] = CTX_THREAD,
    [CUPTI_DRIVER_TRACE_CBID_cuGLCtxCreate_v2] = CTX_THREAD,
    [CUPTI_DRIVER_TRACE_CBID_cuVDPAUCtxCreate] = CTX_THREAD,
    [CUPTI_DRIVER_TRACE_CBID_cuVDPAUCtxCreate_v2] = CTX_THREAD,
    [CUPTI_DRIVER_TRACE_CBID_cuCtxDestroy] = CTX_ALL,
    [CUPTI_DRIVER_TRACE_CBID_cuCtxDestroy_v2] = CTX_ALL,
    [CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxRelease] = CTX_ALL,
    [CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxRelease_v2] = CTX_ALL,
    [CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxReset] = CTX_ALL,
    [CUPTI_DRIVER_TRACE_CBID_cuDevicePrimaryCtxReset_v2] = CTX_ALL,
    [CUPTI_DRIVER_TRACE_CBID_cuGreenCtxDestroy] = CTX_ALL,
};
/* The runtime's calls that make a device's context current (the driver calls the runtime makes
 * inside them need not reach a subscriber), and those that end one. Any other runtime call uses
 * the context current on the thread and makes one current only where none is. */
static const CUpti_CallbackId ctx_runtime_calls[] = {CUPTI_RUNTIME_TRACE_CBID_cudaSetDevice_v3020,
                                                     CUPTI_RUNTIME_TRACE_CBID_cudaSetDeviceFlags_v3020,
                                                     CUPTI_RUNTIME_TRACE_CBID_cudaInitDevice_v12000,
                                                     CUPTI_RUNTIME_TRACE_CBID_cudaSetValidDevices_v3020,
                                                     CUPTI_RUNTIME_TRACE_CBID_cudaGLSetGLDevice_v3020,
                                                     CUPTI_RUNTIME_TRACE_CBID_cudaVDPAUSetVDPAUDevice_v3020,
                                                     CUPTI_RUNTIME_TRACE_CBID_cudaD3D9SetDirect3DDevice_v3020,
                                                     CUPTI_RUNTIME_TRACE_CBID_cudaD3D10SetDirect3DDevice_v3020,
                                                     CUPTI_RUNTIME_TRACE_CBID_cudaD3D11SetDirect3DDevice_v3020};
static const CUpti_CallbackId ctx_runtime_ends[] = {CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020,
                                                    CUPTI_RUNTIME_TRACE_CBID_cudaThreadExit_v3020};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

bool gpujit__cupti_ctx_call(int domain, uint32_t id)
{
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    unsigned role = id < CUPTI_DRIVER_TRACE_CBID_SIZE ? ctx_role[id] : 0;
    if (role) /* at the call's entry and exit: after the exit the change is made */
      gpujit__ctx_changed(role == CTX_ALL);
    return role != 0;
  }
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API)
    return false;
  for (size_t i = 0; i < COUNT(ctx_runtime_ends); i++)
    if (ctx_runtime_ends[i] == id) {
      gpujit__ctx_changed(true);
      return true;
    }
  gpujit__ctx_changed(false); /* only ctx_runtime_calls are enabled */
  return true;
}

/* One callback on or off; a refusal said in the debug log (the watch then stays off). */
static bool enable_logged(bool (*enable)(bool on, int domain, uint32_t id), bool on, int domain, uint32_t id)
{
  if (enable(on, domain, id))
    return true;
  if (on)
    gpujit__log(GPUJIT_LOG_DEBUG, "cupti: the callback of %s call %u was refused: the context is set at each launch",
                domain == CUPTI_CB_DOMAIN_DRIVER_API ? "driver" : "runtime", (unsigned)id);
  return false;
}

void gpujit__cupti_ctx_watch(bool on, bool (*enable)(bool on, int domain, uint32_t id))
{
  bool ok = true;
  if (!on) /* no note trusted from here on */
    gpujit__ctx_watch(false);
  for (CUpti_CallbackId id = 0; id < CUPTI_DRIVER_TRACE_CBID_SIZE; id++)
    if (ctx_role[id])
      ok &= enable_logged(enable, on, CUPTI_CB_DOMAIN_DRIVER_API, id);
  for (size_t i = 0; i < COUNT(ctx_runtime_calls); i++)
    ok &= enable_logged(enable, on, CUPTI_CB_DOMAIN_RUNTIME_API, ctx_runtime_calls[i]);
  for (size_t i = 0; i < COUNT(ctx_runtime_ends); i++)
    ok &= enable_logged(enable, on, CUPTI_CB_DOMAIN_RUNTIME_API, ctx_runtime_ends[i]);
  if (on && ok) /* a note is trusted only once every change reaches it; a refusal leaves the watch off */
    gpujit__ctx_watch(true);
}
