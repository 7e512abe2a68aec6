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
 * warp (the warp's active lanes then meet again at __syncwarp, so the recording itself never
 * leaves the warp diverged), thread 0 of each block, or every thread. Each event is four 64-bit
 * words: the name's address (a string literal in the module's global memory, read back by the
 * host), clock64(), %globaltimer, and a word holding the recording unit (warp, block or thread of
 * the grid, bits 0-31), the SM (bits 32-47), the launch (%gridid's low 15 bits, 48-62) and whether
 * the event ends a region (bit 63).
 *
 * Where an event goes, without a global atomic per event: the buffer is cut into chunks of
 * `chunk` events. Each hardware warp slot of each SM (%smid, %warpid; times 32 lanes in the thread
 * scope) owns one word of `slots`: the index of its next event, and how many it dropped. A slot
 * writes into its current chunk and claims the next free chunk with one atomicAdd on `claimed`
 * only when that chunk is full, so one atomic per `chunk` events. Only the warp occupying a slot
 * touches its word, so warps of two kernels of one module running at once (two streams) never
 * share a chunk position, and a warp that finds no chunk left drops the event and counts it in its
 * slot: nothing is ever written past the buffer. The layout and the state below are version
 * GPUJIT_REGIONS_ABI; docs/regions.md describes them, src/run/kregions.c binds them and
 * src/timing/kregions_read.c and kregions.c read them.
 *
 * The scope form is a for-loop that runs once: `break` inside it leaves the region unended (use
 * the begin/end form there), `continue` ends it. A module made of several sources linked
 * together defines the state in one of them: define GPUJIT_REGIONS_EXTERN in the others. */
#ifndef GPUJIT_REGIONS_CUH
#define GPUJIT_REGIONS_CUH

#define GPUJIT_REGIONS_ABI 2
#define GPUJIT_REGIONS_WARP 0
#define GPUJIT_REGIONS_BLOCK 1
#define GPUJIT_REGIONS_THREAD 2

#if defined(GPUJIT_REGIONS) && (defined(__CUDACC__) || defined(__CUDACC_RTC__))

#ifndef GPUJIT_REGIONS_SCOPE
#define GPUJIT_REGIONS_SCOPE GPUJIT_REGIONS_WARP
#endif

/* What the host finds with cuModuleGetGlobal("gpujit_regions") and fills in. */
struct gpujit_regions_state {
  unsigned int abi;             /* GPUJIT_REGIONS_ABI, so a host refuses a layout it does not know */
  unsigned int scope;           /* GPUJIT_REGIONS_SCOPE of the module */
  unsigned long long *events;   /* 4 words per event; 0 until the host binds a buffer */
  unsigned long long capacity;  /* events: a whole number of chunks */
  unsigned long long claimed;   /* chunks claimed (one atomicAdd each); past capacity / chunk, none left */
  unsigned long long *slots;    /* per hardware slot: next event index (low 32 bits; ~0u: no chunk
                                   left), events dropped (high 32 bits) */
  unsigned long long lost;      /* events of a slot past nslots (counted, never written) */
  unsigned int nslots;
  unsigned int chunk;           /* events per chunk, a power of two */
};

/* The definition inside a linkage block: nvcc's host side of `extern "C" __device__ T x = {...};`
 * declares its shadow of x without defining it, and a program built with nvcc then fails to link
 * ("undefined reference to `gpujit_regions'" from __cudaRegisterAll). */
#ifdef GPUJIT_REGIONS_EXTERN
extern "C" __device__ struct gpujit_regions_state gpujit_regions;
#else
extern "C" {
__device__ struct gpujit_regions_state gpujit_regions = {GPUJIT_REGIONS_ABI, GPUJIT_REGIONS_SCOPE, 0, 0, 0, 0, 0, 0, 0};
}
#endif

#define GPUJIT__REGIONS_FULL 0xffffffffu
#define GPUJIT__REGIONS_WARP_SLOTS 64u /* hardware warp slots per SM (%warpid < 64 on every GPU so far) */

static __device__ __forceinline__ unsigned int gpujit__regions_unit(void)
{
  unsigned int block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
#if GPUJIT_REGIONS_SCOPE == GPUJIT_REGIONS_BLOCK
  return block;
#else
  unsigned int tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
#if GPUJIT_REGIONS_SCOPE == GPUJIT_REGIONS_THREAD
  return block * (blockDim.x * blockDim.y * blockDim.z) + tid;
#else
  unsigned int warps = (blockDim.x * blockDim.y * blockDim.z + 31u) / 32u;
  return block * warps + tid / 32u;
#endif
#endif
}

/* The hardware slot the recording thread occupies: unique among the warps resident at one time
 * on the whole GPU, whichever kernel or stream they belong to. ~0u where %warpid is out of range. */
static __device__ __forceinline__ unsigned int gpujit__regions_slot(unsigned int sm)
{
  unsigned int w;
  asm volatile("mov.u32 %0, %%warpid;" : "=r"(w));
  if (w >= GPUJIT__REGIONS_WARP_SLOTS)
    return 0xffffffffu;
#if GPUJIT_REGIONS_SCOPE == GPUJIT_REGIONS_THREAD
  unsigned int lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return (sm * GPUJIT__REGIONS_WARP_SLOTS + w) * 32u + lane;
#else
  return sm * GPUJIT__REGIONS_WARP_SLOTS + w;
#endif
}

/* %globaltimer as two halves read high, low, high: a carry between them gives the later high
 * with a low of 0 (the 64-bit read is two 32-bit reads anyway). */
static __device__ __forceinline__ unsigned long long gpujit__regions_globaltimer(void)
{
  unsigned int hi, lo, hi2;
  asm volatile("mov.u32 %0, %%globaltimer_hi;" : "=r"(hi));
  asm volatile("mov.u32 %0, %%globaltimer_lo;" : "=r"(lo));
  asm volatile("mov.u32 %0, %%globaltimer_hi;" : "=r"(hi2));
  return ((unsigned long long)hi2 << 32) | (hi2 == hi ? lo : 0u);
}

/* One event of the recording thread. An end reads the clocks first; a begin finds its position
 * first (the slot's load, and at a chunk's end the claim) and reads them last, so a region's
 * cycles hold as little of the recording as can be. */
static __device__ __noinline__ void gpujit__regions_store(const char *name, bool end)
{
  unsigned long long clk = 0, t = 0, s, grid, *sp, *e;
  unsigned int sm, slot, pos;
  if (end)
    clk = clock64(), t = gpujit__regions_globaltimer();
  if (!gpujit_regions.events)
    return;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  slot = gpujit__regions_slot(sm);
  if (slot >= gpujit_regions.nslots) { /* a GPU with more SMs or warp slots than the host allowed for */
    atomicAdd(&gpujit_regions.lost, 1ull);
    return;
  }
  sp = gpujit_regions.slots + slot;
  s = *sp;
  pos = (unsigned int)s;
  if (pos != GPUJIT__REGIONS_FULL && (pos & (gpujit_regions.chunk - 1u)) == 0u) { /* chunk used up */
    unsigned long long c = atomicAdd(&gpujit_regions.claimed, 1ull);
    pos = (c + 1ull) * gpujit_regions.chunk <= gpujit_regions.capacity ? (unsigned int)(c * gpujit_regions.chunk)
                                                                       : GPUJIT__REGIONS_FULL;
  }
  if (pos == GPUJIT__REGIONS_FULL) { /* no room: counted in the slot, never written */
    *sp = (((s >> 32) + 1ull) << 32) | GPUJIT__REGIONS_FULL;
    return;
  }
  if (!end)
    t = gpujit__regions_globaltimer(), clk = clock64();
  asm volatile("mov.u64 %0, %%gridid;" : "=l"(grid));
  e = gpujit_regions.events + 4ull * pos;
  e[0] = (unsigned long long)name;
  e[1] = clk;
  e[2] = t;
  e[3] = (unsigned long long)gpujit__regions_unit() | ((unsigned long long)(sm & 0xffffu) << 32) |
         ((grid & 0x7fffull) << 48) | ((unsigned long long)end << 63);
  *sp = (s & 0xffffffff00000000ull) | (pos + 1u);
}

/* A begin: who records is the lowest active lane, and the warp's active lanes wait for it (without
 * the __syncwarp the other lanes run ahead into the region, the body runs twice, once without the
 * recording lane and once with it, and the next event finds the recorder missing from the active
 * mask and is recorded twice); thread 0 of the block; or every thread. Returns the lanes that
 * began together, for the end of the scope form. */
static __device__ __forceinline__ unsigned int gpujit__regions_begin(const char *name)
{
#if GPUJIT_REGIONS_SCOPE == GPUJIT_REGIONS_BLOCK
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0)
    gpujit__regions_store(name, false);
  return 1u;
#elif GPUJIT_REGIONS_SCOPE == GPUJIT_REGIONS_THREAD
  gpujit__regions_store(name, false);
  return 1u;
#else
  unsigned int m = __activemask(), lt;
  asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
  if ((m & lt) == 0u)
    gpujit__regions_store(name, false);
  __syncwarp(m);
  return m;
#endif
}

/* An end: in the warp scope the lane that recorded the begin (the lowest of `began`) records it,
 * so a warp whose lanes reach the end apart (a data-dependent loop in the region that left them
 * diverged) still writes one end per begin; then the lanes that arrived together meet again. */
static __device__ __forceinline__ void gpujit__regions_end(const char *name, unsigned int began)
{
#if GPUJIT_REGIONS_SCOPE == GPUJIT_REGIONS_BLOCK
  (void)began;
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0)
    gpujit__regions_store(name, true);
#elif GPUJIT_REGIONS_SCOPE == GPUJIT_REGIONS_THREAD
  (void)began;
  gpujit__regions_store(name, true);
#else
  unsigned int m = __activemask(), lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  if (lane == (unsigned int)(__ffs(began) - 1))
    gpujit__regions_store(name, true);
  __syncwarp(m);
#endif
}

static __device__ __forceinline__ void gpujit_region_begin(const char *name) { (void)gpujit__regions_begin(name); }

/* The begin/end form has nothing to carry the begin's lanes in: the lowest active lane records. */
static __device__ __forceinline__ void gpujit_region_end(const char *name) { gpujit__regions_end(name, __activemask()); }

#define GPUJIT__REGIONS_CAT2(a, b) a##b
#define GPUJIT__REGIONS_CAT(a, b) GPUJIT__REGIONS_CAT2(a, b)
#define GPUJIT_REGION(name)                                                                           \
  for (unsigned int GPUJIT__REGIONS_CAT(gpujit__region_lanes_, __LINE__) = gpujit__regions_begin(name); \
       GPUJIT__REGIONS_CAT(gpujit__region_lanes_, __LINE__) != 0u;                                   \
       gpujit__regions_end(name, GPUJIT__REGIONS_CAT(gpujit__region_lanes_, __LINE__)),              \
                    GPUJIT__REGIONS_CAT(gpujit__region_lanes_, __LINE__) = 0u)
#define GPUJIT_REGION_BEGIN(name) gpujit_region_begin(name)
#define GPUJIT_REGION_END(name) gpujit_region_end(name)

#else /* regions off: nothing at all, so the kernel's code is what it was without the header */

#define GPUJIT_REGION(name)
#define GPUJIT_REGION_BEGIN(name) ((void)0)
#define GPUJIT_REGION_END(name) ((void)0)

#endif
#endif
