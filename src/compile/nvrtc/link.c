/* The nvJitLink stage: linking LTO-IR from several sources into one cubin or PTX. */
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "compile/nvrtc/link.h"
#include "compile/toolkit/toolkit.h"

static int link_error(nvJitLinkResult r, const char *what)
{
  int code;
  switch (r) {
  case NVJITLINK_SUCCESS: return 0;
  case NVJITLINK_ERROR_INTERNAL: code = GPUJIT_ELINK; break;
  case NVJITLINK_ERROR_UNRECOGNIZED_OPTION:
  case NVJITLINK_ERROR_MISSING_ARCH:
  case NVJITLINK_ERROR_INVALID_INPUT: code = GPUJIT_EINVAL; break;
  default: code = GPUJIT_ELINK; break;
  }
  return gpujit__error(code, "%s: nvJitLink error %d", what, (int)r);
}

int gpujit__nvjitlink_version(int *major, int *minor)
{
  const gpujit__nvjitlink_api *L;
  unsigned int a = 0, b = 0;
  int err;
  if ((err = gpujit__nvjitlink_api_get(&L)) < 0)
    return err;
  nvJitLinkResult r = L->nvJitLinkVersion(&a, &b);
  if (r != NVJITLINK_SUCCESS)
    return link_error(r, "nvJitLinkVersion");
  *major = (int)a;
  *minor = (int)b;
  return 0;
}

static void append_log(const gpujit__nvjitlink_api *L, nvJitLinkHandle h, gpujit__buf *log, bool info)
{
  size_t size = 0;
  if ((info ? L->nvJitLinkGetInfoLogSize(h, &size) : L->nvJitLinkGetErrorLogSize(h, &size)) !=
          NVJITLINK_SUCCESS ||
      size <= 1)
    return;
  if (gpujit__buf_reserve(log, size) < 0)
    return;
  if ((info ? L->nvJitLinkGetInfoLog(h, log->data + log->len)
            : L->nvJitLinkGetErrorLog(h, log->data + log->len)) == NVJITLINK_SUCCESS)
    log->len += strlen(log->data + log->len);
}

/* nvJitLink's options for the module's. */
static int link_options(gpujit__strvec *opts, const gpujit_module_options *o, const char *arch,
                        gpujit_output_kind output, bool timing)
{
  int err;
  if ((err = gpujit__strvec_pushf(opts, "-arch=%s", arch)) < 0 || (err = gpujit__strvec_push(opts, "-lto")) < 0)
    return err;
  if (o->lineinfo && (err = gpujit__strvec_push(opts, "-lineinfo")) < 0)
    return err;
  if (o->device_debug && (err = gpujit__strvec_push(opts, "-g")) < 0)
    return err;
  if (o->maxrregcount > 0 && (err = gpujit__strvec_pushf(opts, "-maxrregcount=%d", o->maxrregcount)) < 0)
    return err;
  if (o->fast_math && ((err = gpujit__strvec_push(opts, "-ftz=1")) < 0 ||
                       (err = gpujit__strvec_push(opts, "-prec-div=0")) < 0 ||
                       (err = gpujit__strvec_push(opts, "-prec-sqrt=0")) < 0 ||
                       (err = gpujit__strvec_push(opts, "-fma=1")) < 0))
    return err;
  if (output == GPUJIT_OUTPUT_PTX && (err = gpujit__strvec_push(opts, "-ptx")) < 0)
    return err;
  if (timing && (err = gpujit__strvec_push(opts, "-time")) < 0)
    return err;
  return 0;
}

int gpujit__link(gpujit__buf *image, gpujit__buf *info_log, const gpujit__buf *inputs,
                 const char *const *names, size_t count, const gpujit_module_options *o,
                 const char *arch, gpujit_output_kind output, bool timing, gpujit__observed *observed)
{
  const gpujit__nvjitlink_api *L;
  gpujit__strvec opts = {0};
  nvJitLinkHandle h = NULL;
  nvJitLinkResult r;
  size_t size = 0;
  const char *unobservable = NULL;
  int err;

  if ((err = gpujit__nvjitlink_api_get(&L)) < 0)
    return err;
  if ((err = link_options(&opts, o, arch, output, timing)) < 0)
    goto done;

  if (observed && (unobservable = gpujit__observe_link_unavailable()) != NULL && !observed->why[0])
    snprintf(observed->why, sizeof(observed->why), "what nvJitLink reads cannot be observed (%s)", unobservable);
  else if (observed && !unobservable) /* its variables: those of nvJitLinkCreate, AddData and Complete */
    gpujit__observe_begin(observed);
  if ((r = L->nvJitLinkCreate(&h, (uint32_t)opts.count, (const char **)opts.items)) != NVJITLINK_SUCCESS) {
    err = link_error(r, "nvJitLinkCreate");
    goto done;
  }
  for (size_t i = 0; i < count; i++) {
    r = L->nvJitLinkAddData(h, NVJITLINK_INPUT_LTOIR, inputs[i].data, inputs[i].len, names[i]);
    if (r != NVJITLINK_SUCCESS) {
      append_log(L, h, info_log, false);
      gpujit__error_set_log(info_log->data);
      err = gpujit__error(GPUJIT_ELINK, "link failed: cannot add %s (nvJitLink error %d)", names[i], (int)r);
      goto done;
    }
  }
  r = L->nvJitLinkComplete(h);
  append_log(L, h, info_log, true);
  if (r != NVJITLINK_SUCCESS) {
    gpujit__buf errlog = {0};
    char first[512] = "";
    append_log(L, h, &errlog, false);
    if (errlog.data)
      sscanf(errlog.data, "%511[^\n]", first);
    gpujit__error_set_log(errlog.data);
    err = gpujit__error(GPUJIT_ELINK, "link failed: %s", first[0] ? first : "see the nvJitLink log");
    gpujit__buf_free(&errlog);
    goto done;
  }
  r = output == GPUJIT_OUTPUT_PTX ? L->nvJitLinkGetLinkedPtxSize(h, &size) : L->nvJitLinkGetLinkedCubinSize(h, &size);
  if (r != NVJITLINK_SUCCESS) {
    err = link_error(r, "reading the linked image");
    goto done;
  }
  if ((err = gpujit__buf_reserve(image, size)) < 0)
    goto done;
  r = output == GPUJIT_OUTPUT_PTX ? L->nvJitLinkGetLinkedPtx(h, image->data) : L->nvJitLinkGetLinkedCubin(h, image->data);
  if (r != NVJITLINK_SUCCESS) {
    err = link_error(r, "reading the linked image");
    goto done;
  }
  if (output == GPUJIT_OUTPUT_PTX && size && image->data[size - 1] == '\0')
    size--;
  image->len = size;
  image->data[size] = '\0';
done:
  if (h)
    L->nvJitLinkDestroy(&h);
  if (observed && !unobservable) {
    gpujit__observe_end(observed); /* no-op where it was not begun (a bad option) */
    gpujit__observe_add_link_process(observed);
  }
  gpujit__strvec_free(&opts);
  return err;
}
