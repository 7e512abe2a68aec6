/* Memory, copies, launches and graphs on a device's stream, each announced to the activity
 * hooks (a branch when none are on). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/demangle.h"
#include "base/error.h"
#include "run/device.h"

int gpujit_mem_alloc(gpujit_devptr *out, gpujit_device *g, size_t bytes)
{
  CUdeviceptr p = 0;
  int err;
  if (!out || !g)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_mem_alloc: NULL argument");
  gpujit__ctx_use(g);
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
  gpujit__ctx_use(g);
  return CU(g->d->cuMemFree((CUdeviceptr)p), "cuMemFree");
}

/* Announce an activity to the hooks: a branch when they are off. */
static inline void *watch_begin(gpujit_device *g, gpujit_activity_kind kind, const char *name, uint64_t bytes,
                                struct gpujit_loaded *owner, double *t0)
{
  void *token;
  if (!g->hooks_on)
    return NULL;
  token = g->hooks->before(g, g->hooks_payload, kind, name, bytes, owner);
  if (token) /* unwatched (a benchmark's hooks, on only for kernel regions): no clock read */
    *t0 = gpujit__now_us();
  return token;
}

/* The clock read before the call is both when it was issued and where its host time starts. */
static inline void watch_end(gpujit_device *g, void *token, double t0)
{
  if (token)
    g->hooks->after(g, g->hooks_payload, token, t0, gpujit__now_us() - t0);
}

/* One driver call, watched. */
#define WATCHED(g, kind, name, bytes, call, what)                 \
  do {                                                            \
    double t0_ = 0;                                               \
    void *token_ = watch_begin((g), (kind), (name), (bytes), NULL, &t0_); \
    int err_ = CU((call), (what));                                \
    watch_end((g), token_, t0_);                                  \
    return err_;                                                  \
  } while (0)

int gpujit_memcpy_htod(gpujit_device *g, gpujit_devptr dst, const void *src, size_t bytes)
{
  gpujit__ctx_use(g);
  WATCHED(g, GPUJIT_ACTIVITY_MEMCPY_HTOD, "memcpy HtoD", bytes,
        g->d->cuMemcpyHtoDAsync((CUdeviceptr)dst, src, bytes, g->stream), "copy to the device");
}

int gpujit_memcpy_dtoh(gpujit_device *g, void *dst, gpujit_devptr src, size_t bytes)
{
  int err;
  gpujit__ctx_use(g);
  {
    double t0 = 0;
    void *token = watch_begin(g, GPUJIT_ACTIVITY_MEMCPY_DTOH, "memcpy DtoH", bytes, NULL, &t0);
    err = CU(g->d->cuMemcpyDtoHAsync(dst, (CUdeviceptr)src, bytes, g->stream), "copy from the device");
    watch_end(g, token, t0);
  }
  /* The host buffer is the caller's as soon as this returns. */
  return err < 0 ? err : gpujit_synchronize(g);
}

int gpujit_memcpy_dtod(gpujit_device *g, gpujit_devptr dst, gpujit_devptr src, size_t bytes)
{
  gpujit__ctx_use(g);
  WATCHED(g, GPUJIT_ACTIVITY_MEMCPY_DTOD, "memcpy DtoD", bytes,
        g->d->cuMemcpyDtoDAsync((CUdeviceptr)dst, (CUdeviceptr)src, bytes, g->stream), "device copy");
}

int gpujit_memset_d32(gpujit_device *g, gpujit_devptr dst, uint32_t value, size_t count)
{
  gpujit__ctx_use(g);
  WATCHED(g, GPUJIT_ACTIVITY_MEMSET, "memset", count * 4,
        g->d->cuMemsetD32Async((CUdeviceptr)dst, value, count, g->stream), "memset");
}

/* The message for a launch outside the limits (limits_ok said no): only here is the name
 * demangled, never on a launch that goes ahead. */
static int limits_error(const struct gpujit_kernel *k, const unsigned grid[3], const unsigned block[3],
                        unsigned shared)
{
  const gpujit_device_info *in = &k->owner->dev->info;
  uint64_t threads = (uint64_t)block[0] * block[1] * block[2];
  static const char axis[] = "xyz";
  char who[1024]; /* the kernel as people read it: scale<float>(float*, float, int), not _Z5scale… */
  gpujit__kernel_name(k->name, who, sizeof(who));
  for (int i = 0; i < 3; i++) {
    if (grid[i] == 0 || block[i] == 0)
      return gpujit__error(GPUJIT_EINVAL, "%s: grid and block dimensions must be at least 1", who);
    if (block[i] > (unsigned)in->max_block[i])
      return gpujit__error(GPUJIT_EINVAL, "%s: block.%c = %u exceeds the device's %d", who, axis[i],
                           block[i], in->max_block[i]);
    if (grid[i] > (unsigned)in->max_grid[i])
      return gpujit__error(GPUJIT_EINVAL, "%s: grid.%c = %u exceeds the device's %d", who, axis[i], grid[i],
                           in->max_grid[i]);
  }
  if (threads > (uint64_t)k->attrs.max_threads_per_block)
    return gpujit__error(GPUJIT_EINVAL, "%s: %llu threads per block exceed the kernel's limit of %d", who,
                         (unsigned long long)threads, k->attrs.max_threads_per_block);
  return gpujit__error(GPUJIT_EINVAL, "%s: %u bytes of dynamic shared memory (+%d static) exceed the device's %d",
                       who, shared, k->attrs.shared_bytes, in->max_shared_per_block_optin);
}

/* The same checks as limits_error, without a name: the launch path's. */
static inline bool limits_ok(const struct gpujit_kernel *k, const unsigned grid[3], const unsigned block[3],
                             unsigned shared)
{
  const gpujit_device_info *in = &k->owner->dev->info;
  bool ok = true;
  for (int i = 0; i < 3; i++)
    ok &= grid[i] != 0 && block[i] != 0 && block[i] <= (unsigned)in->max_block[i] &&
          grid[i] <= (unsigned)in->max_grid[i];
  return ok && (uint64_t)block[0] * block[1] * block[2] <= (uint64_t)k->attrs.max_threads_per_block &&
         shared + (unsigned)k->attrs.shared_bytes <= (unsigned)in->max_shared_per_block_optin;
}

static int check_limits(const struct gpujit_kernel *k, const unsigned grid[3], const unsigned block[3],
                        unsigned shared)
{
  return limits_ok(k, grid, block, shared) ? 0 : limits_error(k, grid, block, shared);
}

/* The kernel a later synchronisation's error names: copied only when it changes (a name is
 * compared, not printed, on every launch). */
static inline void note_kernel(gpujit_device *g, const char *name)
{
  size_t n;
  if (g->last_src == name)
    return;
  n = strnlen(name, sizeof(g->last_kernel) - 1);
  memcpy(g->last_kernel, name, n);
  g->last_kernel[n] = '\0';
  g->last_src = name;
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
  void *token;
  double t0 = 0;
  int err;
  if (!k || !grid || !block)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_launch: NULL argument");
  g = k->owner->dev;
  if ((err = check_limits(k, grid, block, shared)) < 0)
    return err;
  gpujit__ctx_use(g);
  if (shared > (unsigned)g->info.max_shared_per_block && (int)shared > k->dyn_shared_set) {
    if ((err = CU(g->d->cuFuncSetAttribute(k->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)shared),
                  "opting in to large shared memory")) < 0)
      return err;
    k->dyn_shared_set = (int)shared;
  }
  note_kernel(g, k->name);
  token = watch_begin(g, GPUJIT_ACTIVITY_KERNEL, k->name, 0, k->owner, &t0);
  err = g->d->cuLaunchKernel(k->fn, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared, g->stream,
                             args, NULL);
  watch_end(g, token, t0);
  if (err != CUDA_SUCCESS) {
    char what[200];
    snprintf(what, sizeof(what), "launching %s", k->name);
    return CU((CUresult)err, what);
  }
  return 0;
}

int gpujit_graph_begin(gpujit_device *g)
{
  int err;
  if (!g)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_graph_begin: NULL device");
  gpujit__ctx_use(g);
  if ((err = CU(g->d->cuStreamBeginCapture(g->stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "begin capture")) < 0)
    return err;
  g->capturing = true; /* the hooks record nothing into a capture */
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
  gpujit__ctx_use(g);
  snprintf(g->last_kernel, sizeof(g->last_kernel), "graph %s", gr->name);
  g->last_src = NULL;
  WATCHED(g, GPUJIT_ACTIVITY_GRAPH, gr->name, 0, g->d->cuGraphLaunch(gr->exec, g->stream), "launching the graph");
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
