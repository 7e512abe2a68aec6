/* Loading a module onto a device: the driver's module, its kernels and their attributes. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "module/module.h"
#include "run/device.h"

static int func_attr(gpujit_device *g, CUfunction f, CUfunction_attribute a)
{
  int v = 0;
  g->d->cuFuncGetAttribute(&v, a, f);
  return v;
}

int gpujit_module_load(gpujit_loaded **out, gpujit_device *g, const gpujit_module *m)
{
  gpujit_loaded *l;
  double t0;
  int err;
  if (!out || !g || !m)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_module_load: NULL argument");
  *out = NULL;
  if (m->output == GPUJIT_OUTPUT_LTOIR)
    return gpujit__error(GPUJIT_EINVAL, "%s: LTO-IR cannot be loaded; build a cubin or PTX", m->name);
  if (!(l = calloc(1, sizeof(*l))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  l->dev = g;
  g->d->cuCtxSetCurrent(g->ctx);
  t0 = gpujit__now_us();
  if ((err = CU(g->d->cuModuleLoadData(&l->mod, m->image.data), "loading the module")) < 0) {
    free(l);
    return gpujit__error(err, "%s: %s", m->name, gpujit_error_last());
  }
  l->load_ms = (gpujit__now_us() - t0) / 1e3;
  l->kernels = calloc(m->kernels.count + 1, sizeof(*l->kernels));
  if (!l->kernels) {
    gpujit_loaded_free(l);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < m->kernels.count; i++) {
    struct gpujit_kernel *k = &l->kernels[i];
    k->owner = l;
    k->name = gpujit__strdup(m->kernels.items[i]);
    if ((err = CU(g->d->cuModuleGetFunction(&k->fn, l->mod, k->name), k->name)) < 0) {
      gpujit_loaded_free(l);
      return err;
    }
    l->count++;
    k->attrs.registers = func_attr(g, k->fn, CU_FUNC_ATTRIBUTE_NUM_REGS);
    k->attrs.shared_bytes = func_attr(g, k->fn, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    k->attrs.local_bytes = func_attr(g, k->fn, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
    k->attrs.const_bytes = func_attr(g, k->fn, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES);
    k->attrs.max_threads_per_block = func_attr(g, k->fn, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    k->attrs.params = gpujit_module_kernel_params(m, k->name, k->attrs.param_bytes, 64);
  }
  if ((err = gpujit__regions_bind(l)) < 0) {
    gpujit_loaded_free(l);
    return gpujit__error(err, "%s: %s", m->name, gpujit_error_last());
  }
  for (size_t i = 0; i < m->name_exprs.count && i < m->lowered.count; i++) {
    gpujit__strvec_push(&l->exprs, m->name_exprs.items[i]);
    gpujit__strvec_push(&l->lowered, m->lowered.items[i]);
  }
  *out = l;
  return 0;
}

void gpujit_loaded_free(gpujit_loaded *l)
{
  if (!l)
    return;
  if (l->dev)
    l->dev->last_src = NULL; /* the names go: a new one at the same address is not the last kernel */
  for (size_t i = 0; i < l->count; i++)
    free(l->kernels[i].name);
  free(l->kernels);
  if (l->mod) {
    l->dev->d->cuCtxSetCurrent(l->dev->ctx);
    if (l->regions_events && l->dev->hooks && l->dev->hooks->unload) /* a timed window may hold it */
      l->dev->hooks->unload(l->dev, l->dev->hooks_payload, l);
    gpujit__regions_unbind(l);
    l->dev->d->cuModuleUnload(l->mod);
  }
  gpujit__strvec_free(&l->exprs);
  gpujit__strvec_free(&l->lowered);
  free(l);
}

double gpujit_loaded_load_ms(const gpujit_loaded *l) { return l ? l->load_ms : 0; }

int gpujit_kernel_get(gpujit_kernel **out, gpujit_loaded *l, const char *name)
{
  gpujit__buf names = {0};
  int err;
  if (!out || !l || !name)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_kernel_get: NULL argument");
  *out = NULL;
  for (size_t i = 0; i < l->exprs.count; i++)
    if (strcmp(l->exprs.items[i], name) == 0)
      name = l->lowered.items[i];
  for (size_t i = 0; i < l->count; i++)
    if (strcmp(l->kernels[i].name, name) == 0) {
      *out = &l->kernels[i];
      return 0;
    }
  for (size_t i = 0; i < l->count; i++)
    gpujit__buf_printf(&names, "%s%s", i ? ", " : "", l->kernels[i].name);
  err = gpujit__error(GPUJIT_ENOENT, "unknown kernel '%s'; the module has: %s", name,
                      names.data ? names.data : "(none)");
  gpujit__buf_free(&names);
  return err;
}

int gpujit_loaded_global(gpujit_devptr *ptr, size_t *bytes, gpujit_loaded *l, const char *name)
{
  CUdeviceptr p = 0;
  size_t n = 0;
  CUresult r;
  if (!ptr || !l || !name)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_loaded_global: NULL argument");
  for (size_t i = 0; i < l->exprs.count; i++)
    if (strcmp(l->exprs.items[i], name) == 0)
      name = l->lowered.items[i];
  l->dev->d->cuCtxSetCurrent(l->dev->ctx);
  if ((r = l->dev->d->cuModuleGetGlobal(&p, &n, l->mod, name)) == CUDA_ERROR_NOT_FOUND)
    return gpujit__error(GPUJIT_ENOENT, "no module-scope variable '%s' in the module", name);
  if (r != CUDA_SUCCESS)
    return CU(r, name);
  *ptr = (gpujit_devptr)p;
  if (bytes)
    *bytes = n;
  return 0;
}

const char *gpujit_kernel_name(const gpujit_kernel *k) { return k ? k->name : NULL; }

int gpujit_kernel_attrs_get(const gpujit_kernel *k, gpujit_kernel_attrs *out)
{
  if (!k || !out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_kernel_attrs_get: NULL argument");
  *out = k->attrs;
  return 0;
}

