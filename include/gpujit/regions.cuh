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
 * writes into its current chunk and claims the next free chunk with one atomicAdd on the claimed
 * counter only when that chunk is full, so one atomic per `chunk` events. The recording is inlined
 * at each event site and reads the state from the constant bank, so an event costs its clock reads,
 * the slot's load, two 16-byte stores and the slot's store (docs/regions.md, Cost). Only the warp occupying a slot
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

#define GPUJIT_REGIONS_ABI 3
#define GPUJIT_REGIONS_WARP 0
#define GPUJIT_REGIONS_BLOCK 1
#define GPUJIT_REGIONS_THREAD 2

#if defined(GPUJIT_REGIONS) && (defined(__CUDACC__) || defined(__CUDACC_RTC__))

#ifndef GPUJIT_REGIONS_SCOPE
#define GPUJIT_REGIONS_SCOPE GPUJIT_REGIONS_WARP
#endif

/* What the host finds with cuModuleGetGlobal("gpujit_regions") and fills in: read-only while a
 * kernel runs, so it lives in the constant bank (a read costs what a kernel parameter's does). */
struct gpujit_regions_state {
  unsigned int abi;             /* GPUJIT_REGIONS_ABI, so a host refuses a layout it does not know */
  unsigned int scope;           /* GPUJIT_REGIONS_SCOPE of the module */
  unsigned long long *events;   /* 4 words per event; 0 until the host binds a buffer */
  unsigned long long capacity;  /* events: a whole number of chunks */
  unsigned long long *counters; /* [0] chunks claimed (one atomicAdd each; past capacity / chunk, none
                                   left), [1] events of a slot past nslots (counted, never written) */
  unsigned long long *slots;    /* per hardware slot: next event index (low 32 bits; ~0u: no chunk
                                   left), events dropped (high 32 bits) */
  unsigned long long reserved;
  unsigned int nslots;
  unsigned int chunk;           /* events per chunk, a power of two */
};

#ifdef GPUJIT_REGIONS_EXTERN
extern "C" __constant__ struct gpujit_regions_state gpujit_regions;
#else
/* A definition in an extern "C" block (not `extern "C"` before it with an initializer, which nvcc
 * registers on the host without defining: a program built with nvcc then fails to link). */
extern "C" {
__constant__ struct gpujit_regions_state gpujit_regions = {GPUJIT_REGIONS_ABI, GPUJIT_REGIONS_SCOPE, 0, 0, 0, 0, 0, 0, 0};
}
#endif

#define GPUJIT__REGIONS_FULL 0xffffffffu
#define GPUJIT__REGIONS_WARP_SLOTS 64u /* hardware warp slots per SM (%warpid < 64 on every GPU so far) */

/* The special registers below are read without `volatile`: they do not change while a warp runs,
 * so the compiler reads them once per kernel, not once per event (a migrated warp after compute
 * preemption keeps the slot it started on: see docs/regions.md). */
static __device__ __forceinline__ unsigned int gpujit__regions_smid(void)
{
  unsigned int v;
  asm("mov.u32 %0, %%smid;" : "=r"(v));
  return v;
}

static __device__ __forceinline__ unsigned long long gpujit__regions_gridid(void)
{
  unsigned long long v;
  asm("mov.u64 %0, %%gridid;" : "=l"(v));
  return v;
}

static __device__ __forceinline__ unsigned int gpujit__regions_block(void)
{
  return blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
}

static __device__ __forceinline__ unsigned int gpujit__regions_tid(void)
{
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

static __device__ __forceinline__ unsigned int gpujit__regions_unit(void)
{
#if GPUJIT_REGIONS_SCOPE == GPUJIT_REGIONS_BLOCK
  return gpujit__regions_block();
#elif GPUJIT_REGIONS_SCOPE == GPUJIT_REGIONS_THREAD
  return gpujit__regions_block() * (blockDim.x * blockDim.y * blockDim.z) + gpujit__regions_tid();
#else
  return gpujit__regions_block() * ((blockDim.x * blockDim.y * blockDim.z + 31u) / 32u) + gpujit__regions_tid() / 32u;
#endif
}

/* The hardware slot the recording thread occupies: unique among the warps resident at one time
 * on the whole GPU, whichever kernel or stream they belong to. ~0u where %warpid is out of range. */
static __device__ __forceinline__ unsigned int gpujit__regions_slot(unsigned int sm)
{
  unsigned int w;
  asm("mov.u32 %0, %%warpid;" : "=r"(w));
  if (w >= GPUJIT__REGIONS_WARP_SLOTS)
    return 0xffffffffu;
#if GPUJIT_REGIONS_SCOPE == GPUJIT_REGIONS_THREAD
  unsigned int lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
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

/* The recording thread's next event index: its slot's word in global memory, read at every event.
 * (Kept in shared memory for the warp's life it would cost an event less, but nothing a warp can
 * read tells its first event from one left there by a block before it: a CUDA graph's replays run
 * with the same %gridid, measured, so a tag of launch and block matches a stale entry.) Returns
 * ~0u - 1 where the slot is out of range. */
static __device__ __forceinline__ unsigned int gpujit__regions_pos(unsigned int slot)
{
  if (slot >= gpujit_regions.nslots)
    return GPUJIT__REGIONS_FULL - 1u;
  return *(const unsigned int *)(gpujit_regions.slots + slot);
}

/* One event of the recording thread. An end reads the clocks first; a begin finds its position
 * first (and at a chunk's end the claim) and reads them last, so a region's cycles hold as little
 * of the recording as can be. */
static __device__ __forceinline__ void gpujit__regions_store(const char *name, bool end)
{
  unsigned long long clk = 0, t = 0, grid, *e;
  unsigned int sm, slot, pos;
  if (end)
    clk = clock64(), t = gpujit__regions_globaltimer();
  if (!gpujit_regions.events)
    return;
  sm = gpujit__regions_smid(), grid = gpujit__regions_gridid(), slot = gpujit__regions_slot(sm);
  pos = gpujit__regions_pos(slot);
  if (pos == GPUJIT__REGIONS_FULL - 1u) { /* a GPU with more SMs or warp slots than the host allowed for */
    atomicAdd(gpujit_regions.counters + 1, 1ull);
    return;
  }
  if (pos != GPUJIT__REGIONS_FULL && (pos & (gpujit_regions.chunk - 1u)) == 0u) { /* chunk used up */
    unsigned long long c = atomicAdd(gpujit_regions.counters, 1ull);
    pos = (c + 1ull) * gpujit_regions.chunk <= gpujit_regions.capacity ? (unsigned int)(c * gpujit_regions.chunk)
                                                                       : GPUJIT__REGIONS_FULL;
  }
  if (pos == GPUJIT__REGIONS_FULL) { /* no room: counted in the slot's high word, never written */
    unsigned int *word = (unsigned int *)(gpujit_regions.slots + slot);
    word[1] = word[1] + 1u, word[0] = GPUJIT__REGIONS_FULL;
    return;
  }
  if (!end)
    t = gpujit__regions_globaltimer(), clk = clock64();
  e = gpujit_regions.events + 4ull * pos;
  ((ulonglong2 *)e)[0] = make_ulonglong2((unsigned long long)name, clk);
  ((ulonglong2 *)e)[1] = make_ulonglong2(t, (unsigned long long)gpujit__regions_unit() |
                                                ((unsigned long long)(sm & 0xffffu) << 32) |
                                                ((grid & 0x7fffull) << 48) | ((unsigned long long)end << 63));
  ((unsigned int *)(gpujit_regions.slots + slot))[0] = pos + 1u;
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
