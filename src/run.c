/* Running on the GPU: devices, module loading, kernels, memory, launches and graphs. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "module.h"
#include "run_internal.h"

#define CU(call, what) gpujit__cuda_error((call), (what))

int gpujit_device_count(int *out)
{
  const gpujit__driver *d;
  int err;
  if (!out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_device_count: NULL out");
  *out = 0;
  if ((err = gpujit__driver_get(&d)) < 0)
    return err;
  return CU(d->cuDeviceGetCount(out), "cuDeviceGetCount");
}

static int attr(gpujit_device *g, CUdevice_attribute a, int *out)
{
  return CU(g->d->cuDeviceGetAttribute(out, a, g->dev), "cuDeviceGetAttribute");
}

int gpujit_device_open(gpujit_device **out, int ordinal)
{
  gpujit_device *g;
  const char *env = getenv("GPUJIT_DEVICE");
  int count = 0, err;
  size_t total = 0;

  if (!out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_device_open: NULL out");
  *out = NULL;
  if ((err = gpujit_device_count(&count)) < 0)
    return err;
  if (ordinal < 0)
    ordinal = env && *env ? atoi(env) : 0;
  if (count == 0)
    return gpujit__error(GPUJIT_ENODEVICE, "no CUDA device");
  if (ordinal < 0 || ordinal >= count)
    return gpujit__error(GPUJIT_ENODEVICE, "device %d requested; this machine has %d", ordinal, count);
  if (!(g = calloc(1, sizeof(*g))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  gpujit__driver_get(&g->d);
  g->info.ordinal = ordinal;
  if ((err = CU(g->d->cuDeviceGet(&g->dev, ordinal), "cuDeviceGet")) < 0 ||
      (err = CU(g->d->cuDevicePrimaryCtxRetain(&g->ctx, g->dev), "cuDevicePrimaryCtxRetain")) < 0)
    goto fail;
  if ((err = CU(g->d->cuCtxSetCurrent(g->ctx), "cuCtxSetCurrent")) < 0 ||
      (err = CU(g->d->cuStreamCreate(&g->stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate")) < 0)
    goto fail;
  g->d->cuDeviceGetName(g->info.name, sizeof(g->info.name), g->dev);
  g->d->cuDeviceTotalMem(&total, g->dev);
  g->info.total_memory = total;
  g->d->cuDriverGetVersion(&g->info.driver_version);
  if ((err = attr(g, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &g->info.cc_major)) < 0 ||
      (err = attr(g, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &g->info.cc_minor)) < 0 ||
      (err = attr(g, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &g->info.multiprocessors)) < 0 ||
      (err = attr(g, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &g->info.max_threads_per_block)) < 0 ||
      (err = attr(g, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, &g->info.max_block[0])) < 0 ||
      (err = attr(g, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, &g->info.max_block[1])) < 0 ||
      (err = attr(g, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, &g->info.max_block[2])) < 0 ||
      (err = attr(g, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &g->info.max_grid[0])) < 0 ||
      (err = attr(g, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, &g->info.max_grid[1])) < 0 ||
      (err = attr(g, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, &g->info.max_grid[2])) < 0 ||
      (err = attr(g, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &g->info.max_shared_per_block)) < 0 ||
      (err = attr(g, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &g->info.max_shared_per_block_optin)) < 0 ||
      (err = attr(g, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &g->info.l2_bytes)) < 0)
    goto fail;
  *out = g;
  return 0;
fail:
  gpujit_device_free(g);
  return err;
}

void gpujit_device_free(gpujit_device *g)
{
  if (!g)
    return;
  if (g->ctx) {
    g->d->cuCtxSetCurrent(g->ctx);
    if (g->stream)
      g->d->cuStreamSynchronize(g->stream);
    gpujit__timing_release(g);
    if (g->flush_buf)
      g->d->cuMemFree((CUdeviceptr)g->flush_buf);
    if (g->stream)
      g->d->cuStreamDestroy(g->stream);
    g->d->cuDevicePrimaryCtxRelease(g->dev);
  }
  free(g);
}

int gpujit_device_info_get(gpujit_device *g, gpujit_device_info *out)
{
  if (!g || !out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_device_info_get: NULL argument");
  *out = g->info;
  return 0;
}

int gpujit_device_free_memory(gpujit_device *g, uint64_t *out)
{
  size_t free_b = 0, total = 0;
  int err;
  if (!g || !out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_device_free_memory: NULL argument");
  g->d->cuCtxSetCurrent(g->ctx);
  if ((err = CU(g->d->cuMemGetInfo(&free_b, &total), "cuMemGetInfo")) < 0)
    return err;
  *out = free_b;
  return 0;
}

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
    k->attrs.params = m->output == GPUJIT_OUTPUT_CUBIN
                          ? gpujit__cubin_params(m->image.data, m->image.len, k->name, k->attrs.param_bytes, 64)
                          : -1;
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
  for (size_t i = 0; i < l->count; i++)
    free(l->kernels[i].name);
  free(l->kernels);
  if (l->mod) {
    l->dev->d->cuCtxSetCurrent(l->dev->ctx);
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

const char *gpujit_kernel_name(const gpujit_kernel *k) { return k ? k->name : NULL; }

int gpujit_kernel_attrs_get(const gpujit_kernel *k, gpujit_kernel_attrs *out)
{
  if (!k || !out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_kernel_attrs_get: NULL argument");
  *out = k->attrs;
  return 0;
}

int gpujit_mem_alloc(gpujit_devptr *out, gpujit_device *g, size_t bytes)
{
  CUdeviceptr p = 0;
  int err;
  if (!out || !g)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_mem_alloc: NULL argument");
  g->d->cuCtxSetCurrent(g->ctx);
  if ((err = CU(g->d->cuMemAlloc(&p, bytes ? bytes : 1), "cuMemAlloc")) < 0)
    return gpujit__error(err, "cannot allocate %zu bytes on the device: %s", bytes, gpujit_error_last());
  *out = (gpujit_devptr)p;
  return 0;
}

int gpujit_mem_free(gpujit_device *g, gpujit_devptr p)
{
  if (!g)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_mem_free: NULL device");
  if (!p)
    return 0;
  g->d->cuCtxSetCurrent(g->ctx);
  return CU(g->d->cuMemFree((CUdeviceptr)p), "cuMemFree");
}

/* Each wrapper: timing hooks (a branch when no region is open) around one driver call. */
#define TIMED(g, kind, name, bytes, call, what)                                    \
  do {                                                                              \
    gpujit__record *rec_ = gpujit__timing_pre((g), (kind), (name), (bytes));       \
    double t0_ = rec_ ? gpujit__now_us() : 0;                                       \
    int err_ = CU((call), (what));                                                  \
    if (rec_)                                                                       \
      gpujit__timing_post((g), rec_, gpujit__now_us() - t0_);                       \
    return err_;                                                                    \
  } while (0)

int gpujit_memcpy_htod(gpujit_device *g, gpujit_devptr dst, const void *src, size_t bytes)
{
  g->d->cuCtxSetCurrent(g->ctx);
  TIMED(g, GPUJIT_ACTIVITY_MEMCPY_HTOD, "memcpy HtoD", bytes,
        g->d->cuMemcpyHtoDAsync((CUdeviceptr)dst, src, bytes, g->stream), "copy to the device");
}

int gpujit_memcpy_dtoh(gpujit_device *g, void *dst, gpujit_devptr src, size_t bytes)
{
  int err;
  g->d->cuCtxSetCurrent(g->ctx);
  {
    gpujit__record *rec = gpujit__timing_pre(g, GPUJIT_ACTIVITY_MEMCPY_DTOH, "memcpy DtoH", bytes);
    double t0 = rec ? gpujit__now_us() : 0;
    err = CU(g->d->cuMemcpyDtoHAsync(dst, (CUdeviceptr)src, bytes, g->stream), "copy from the device");
    if (rec)
      gpujit__timing_post(g, rec, gpujit__now_us() - t0);
  }
  /* The host buffer is the caller's as soon as this returns. */
  return err < 0 ? err : gpujit_synchronize(g);
}

int gpujit_memcpy_dtod(gpujit_device *g, gpujit_devptr dst, gpujit_devptr src, size_t bytes)
{
  g->d->cuCtxSetCurrent(g->ctx);
  TIMED(g, GPUJIT_ACTIVITY_MEMCPY_DTOD, "memcpy DtoD", bytes,
        g->d->cuMemcpyDtoDAsync((CUdeviceptr)dst, (CUdeviceptr)src, bytes, g->stream), "device copy");
}

int gpujit_memset_d32(gpujit_device *g, gpujit_devptr dst, uint32_t value, size_t count)
{
  g->d->cuCtxSetCurrent(g->ctx);
  TIMED(g, GPUJIT_ACTIVITY_MEMSET, "memset", count * 4,
        g->d->cuMemsetD32Async((CUdeviceptr)dst, value, count, g->stream), "memset");
}

static int check_limits(const struct gpujit_kernel *k, const unsigned grid[3], const unsigned block[3],
                        unsigned shared)
{
  const gpujit_device_info *in = &k->owner->dev->info;
  uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
  static const char axis[] = "xyz";
  for (int i = 0; i < 3; i++) {
    if (grid[i] == 0 || block[i] == 0)
      return gpujit__error(GPUJIT_EINVAL, "%s: grid and block dimensions must be at least 1", k->name);
    if (block[i] > (unsigned)in->max_block[i])
      return gpujit__error(GPUJIT_EINVAL, "%s: block.%c = %u exceeds the device's %d", k->name, axis[i],
                           block[i], in->max_block[i]);
    if (grid[i] > (unsigned)in->max_grid[i])
      return gpujit__error(GPUJIT_EINVAL, "%s: grid.%c = %u exceeds the device's %d", k->name, axis[i], grid[i],
                           in->max_grid[i]);
  }
  if (threads > (uint64_t)k->attrs.max_threads_per_block)
    return gpujit__error(GPUJIT_EINVAL, "%s: %llu threads per block exceed the kernel's limit of %d", k->name,
                         (unsigned long long)threads, k->attrs.max_threads_per_block);
  if (shared + (unsigned)k->attrs.shared_bytes > (unsigned)in->max_shared_per_block_optin)
    return gpujit__error(GPUJIT_EINVAL, "%s: %u bytes of dynamic shared memory (+%d static) exceed the device's %d",
                         k->name, shared, k->attrs.shared_bytes, in->max_shared_per_block_optin);
  return 0;
}

int gpujit_launch_check(const gpujit_kernel *k, const unsigned grid[3], const unsigned block[3], unsigned shared)
{
  if (!k || !grid || !block)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_launch_check: NULL argument");
  return check_limits(k, grid, block, shared);
}

int gpujit_launch(gpujit_kernel *k, const unsigned grid[3], const unsigned block[3], unsigned shared, void **args)
{
  gpujit_device *g;
  gpujit__record *rec;
  double t0;
  int err;
  if (!k || !grid || !block)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_launch: NULL argument");
  g = k->owner->dev;
  if ((err = check_limits(k, grid, block, shared)) < 0)
    return err;
  g->d->cuCtxSetCurrent(g->ctx);
  if (shared > (unsigned)g->info.max_shared_per_block && (int)shared > k->dyn_shared_set) {
    if ((err = CU(g->d->cuFuncSetAttribute(k->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)shared),
                  "opting in to large shared memory")) < 0)
      return err;
    k->dyn_shared_set = (int)shared;
  }
  snprintf(g->last_kernel, sizeof(g->last_kernel), "%s", k->name);
  rec = gpujit__timing_pre(g, GPUJIT_ACTIVITY_KERNEL, k->name, 0);
  t0 = rec ? gpujit__now_us() : 0;
  err = g->d->cuLaunchKernel(k->fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared, g->stream,
                             args, NULL);
  if (rec)
    gpujit__timing_post(g, rec, gpujit__now_us() - t0);
  if (err != CUDA_SUCCESS) {
    char what[200];
    snprintf(what, sizeof(what), "launching %s", k->name);
    return CU((CUresult)err, what);
  }
  return 0;
}

int gpujit_synchronize(gpujit_device *g)
{
  CUresult r;
  if (!g)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_synchronize: NULL device");
  g->d->cuCtxSetCurrent(g->ctx);
  r = g->d->cuStreamSynchronize(g->stream);
  if (r != CUDA_SUCCESS) {
    char what[200];
    snprintf(what, sizeof(what), "%s%s", g->last_kernel[0] ? "after kernel " : "synchronising",
             g->last_kernel);
    return CU(r, what);
  }
  return 0;
}

int gpujit_graph_begin(gpujit_device *g)
{
  int err;
  if (!g)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_graph_begin: NULL device");
  g->d->cuCtxSetCurrent(g->ctx);
  if ((err = CU(g->d->cuStreamBeginCapture(g->stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "begin capture")) < 0)
    return err;
  g->capturing = true; /* no timing events inside a capture */
  return 0;
}

int gpujit_graph_end(gpujit_graph **out, gpujit_device *g, const char *name)
{
  gpujit_graph *gr;
  CUgraph graph = NULL;
  int err;
  if (!out || !g)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_graph_end: NULL argument");
  *out = NULL;
  g->capturing = false;
  if ((err = CU(g->d->cuStreamEndCapture(g->stream, &graph), "end capture")) < 0)
    return err;
  if (!(gr = calloc(1, sizeof(*gr)))) {
    g->d->cuGraphDestroy(graph);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  gr->dev = g;
  gr->graph = graph;
  snprintf(gr->name, sizeof(gr->name), "%s", name ? name : "graph");
  if ((err = CU(g->d->cuGraphInstantiate(&gr->exec, graph, 0), "instantiating the graph")) < 0) {
    gpujit_graph_free(gr);
    return err;
  }
  *out = gr;
  return 0;
}

int gpujit_graph_launch(gpujit_graph *gr)
{
  gpujit_device *g;
  if (!gr)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_graph_launch: NULL graph");
  g = gr->dev;
  g->d->cuCtxSetCurrent(g->ctx);
  snprintf(g->last_kernel, sizeof(g->last_kernel), "graph %s", gr->name);
  TIMED(g, GPUJIT_ACTIVITY_GRAPH, gr->name, 0, g->d->cuGraphLaunch(gr->exec, g->stream), "launching the graph");
}

void gpujit_graph_free(gpujit_graph *gr)
{
  if (!gr)
    return;
  if (gr->exec)
    gr->dev->d->cuGraphExecDestroy(gr->exec);
  if (gr->graph)
    gr->dev->d->cuGraphDestroy(gr->graph);
  free(gr);
}
