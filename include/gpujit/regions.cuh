/* Timed regions inside CUDA C kernels: GPUJIT_REGION("name") { ... } records where each launch
 * spent its cycles, into a buffer gpujit binds to the module after it loads it.
 *
 *   #include <gpujit/regions.cuh>
 *   __global__ void k(...) {
 *     GPUJIT_REGION("load") { ... }            // a scope; may nest, may sit in a loop
 *     GPUJIT_REGION_BEGIN("reduce");           // or begin/end where code cannot be scoped
 *     ...
 *     GPUJIT_REGION_END("reduce");
 *   }
 *
 * Regions are on only where GPUJIT_REGIONS is defined (gpujit build --regions, Python
 * regions=True, or -DGPUJIT_REGIONS by hand); otherwise every macro expands to nothing and the
 * kernel compiles to the same SASS as without the header.
 *
 * Who records (GPUJIT_REGIONS_SCOPE, default GPUJIT_REGIONS_WARP): the lowest active lane of each
 * warp, thread 0 of each block, or every thread. Each event is four 64-bit words: the name's
 * address (a string literal in the module's global memory, read back by the host), clock64(),
 * %globaltimer, and a word holding the recording unit (warp, block or thread, bits 0-31), the SM
 * (bits 32-47) and whether the event ends a region (bit 63). The layout and the state below are
 * version GPUJIT_REGIONS_ABI; docs/regions.md describes them, src/timing/kregions.c reads them.
 *
 * The scope form is a for-loop that runs once: `break` inside it leaves the region unended (use
 * the begin/end form there), `continue` ends it. A module made of several sources linked
 * together defines the state in one of them: define GPUJIT_REGIONS_EXTERN in the others. */
#ifndef GPUJIT_REGIONS_CUH
#define GPUJIT_REGIONS_CUH

#define GPUJIT_REGIONS_ABI 1
#define GPUJIT_REGIONS_WARP 0
#define GPUJIT_REGIONS_BLOCK 1
#define GPUJIT_REGIONS_THREAD 2

#if defined(GPUJIT_REGIONS) && (defined(__CUDACC__) || defined(__CUDACC_RTC__))

#ifndef GPUJIT_REGIONS_SCOPE
#define GPUJIT_REGIONS_SCOPE GPUJIT_REGIONS_WARP
#endif

/* What the host finds with cuModuleGetGlobal("gpujit_regions") and fills in: where events go,
 * how many fit, and the running count (past capacity: the number dropped). */
struct gpujit_regions_state {
  unsigned int abi;             /* GPUJIT_REGIONS_ABI, so a host refuses a layout it does not know */
  unsigned int scope;           /* GPUJIT_REGIONS_SCOPE of the module */
  unsigned long long *events;   /* 4 words per event; 0 until the host binds a buffer */
  unsigned long long capacity;  /* events */
  unsigned long long count;     /* events attempted; those past capacity were dropped */
};

#ifdef GPUJIT_REGIONS_EXTERN
extern "C" __device__ struct gpujit_regions_state gpujit_regions;
#else
extern "C" __device__ struct gpujit_regions_state gpujit_regions = {GPUJIT_REGIONS_ABI, GPUJIT_REGIONS_SCOPE, 0, 0, 0};
#endif

static __device__ __forceinline__ unsigned int gpujit__regions_unit(void)
{
  unsigned int block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  unsigned int tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
#if GPUJIT_REGIONS_SCOPE == GPUJIT_REGIONS_BLOCK
  (void)tid;
  return block;
#elif GPUJIT_REGIONS_SCOPE == GPUJIT_REGIONS_THREAD
  return block * (blockDim.x * blockDim.y * blockDim.z) + tid;
#else
  unsigned int warps = (blockDim.x * blockDim.y * blockDim.z + 31u) / 32u;
  return block * warps + tid / 32u;
#endif
}

/* Whether this thread records: the lowest active lane (a lane 0 that took another branch must
 * not lose the warp's event), thread 0 of the block, or every thread. */
static __device__ __forceinline__ bool gpujit__regions_recorder(void)
{
#if GPUJIT_REGIONS_SCOPE == GPUJIT_REGIONS_BLOCK
  return threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0;
#elif GPUJIT_REGIONS_SCOPE == GPUJIT_REGIONS_THREAD
  return true;
#else
  unsigned int lt;
  asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
  return (__activemask() & lt) == 0u;
#endif
}

static __device__ __noinline__ void gpujit__regions_store(const char *name, unsigned long long clk, bool end)
{
  unsigned long long t, i;
  unsigned int sm;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  if (!gpujit_regions.events)
    return;
  i = atomicAdd(&gpujit_regions.count, 1ull);
  if (i >= gpujit_regions.capacity) /* full: counted, never written */
    return;
  unsigned long long *e = gpujit_regions.events + 4 * i;
  e[0] = (unsigned long long)name;
  e[1] = clk;
  e[2] = t;
  e[3] = (unsigned long long)gpujit__regions_unit() | ((unsigned long long)(sm & 0xffffu) << 32) |
         ((unsigned long long)end << 63);
}

/* The clock is read first on begin and as late as possible on end, so the region's cycles
 * include as little of the recording as can be. */
static __device__ __forceinline__ void gpujit_region_begin(const char *name)
{
  if (gpujit__regions_recorder())
    gpujit__regions_store(name, clock64(), false);
}

static __device__ __forceinline__ void gpujit_region_end(const char *name)
{
  if (gpujit__regions_recorder())
    gpujit__regions_store(name, clock64(), true);
}

#define GPUJIT__REGIONS_CAT2(a, b) a##b
#define GPUJIT__REGIONS_CAT(a, b) GPUJIT__REGIONS_CAT2(a, b)
#define GPUJIT_REGION(name)                                                                           \
  for (int GPUJIT__REGIONS_CAT(gpujit__region_once_, __LINE__) = (gpujit_region_begin(name), 0);    \
       GPUJIT__REGIONS_CAT(gpujit__region_once_, __LINE__) < 1;                                      \
       gpujit_region_end(name), ++GPUJIT__REGIONS_CAT(gpujit__region_once_, __LINE__))
#define GPUJIT_REGION_BEGIN(name) gpujit_region_begin(name)
#define GPUJIT_REGION_END(name) gpujit_region_end(name)

#else /* regions off: nothing at all, so the kernel's code is what it was without the header */

#define GPUJIT_REGION(name)
#define GPUJIT_REGION_BEGIN(name) ((void)0)
#define GPUJIT_REGION_END(name) ((void)0)

#endif
#endif
