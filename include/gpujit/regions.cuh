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
 * Who records (GPUJIT_REGIONS_SCOPE, default GPUJIT_REGIONS_WARP): each warp (its active lanes run
 * the recording alike, with no branch and no __syncwarp, and two of them store the event: the
 * recording never leaves the warp diverged), thread 0 of each block, or every thread. Each event is four 64-bit
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

/* %globaltimer in one 64-bit read. The SM reads it as its two 32-bit halves (two CS2R.32 on the
 * H200), so a carry between them, a window of a few cycles once every 4.29 s, can put one event
 * 2^32 ns off: the host mends a slice whose nanoseconds disagree with its cycles by that much
 * (src/inject/kregions_analyze.h). Reading high, low, high instead cost 1.6x the whole event on a
 * full GPU (docs/regions.md, Cost). */
static __device__ __forceinline__ unsigned long long gpujit__regions_globaltimer(void)
{
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/* The recording unit's next event index: its slot's word in global memory, read at every event.
 * (Kept in shared memory for the warp's life it would cost an event less, but nothing a warp can
 * read tells its first event from one left there by a block before it: a CUDA graph's replays run
 * with the same %gridid, measured, so a tag of launch and block matches a stale entry.) Returns
 * ~0u - 1 where the slot is out of range. In the warp scope every active lane loads the same word
 * (one broadcast load), so every lane holds the same position. */
static __device__ __forceinline__ unsigned int gpujit__regions_pos(unsigned int slot)
{
  if (slot >= gpujit_regions.nslots)
    return GPUJIT__REGIONS_FULL - 1u;
  return *(const unsigned int *)(gpujit_regions.slots + slot);
}

/* One event, run alike by every lane of `lanes` (the warp's lanes recording together; a single lane
 * in the block and thread scopes): no lane branches off, so the warp never diverges and needs no
 * __syncwarp. Every lane reads the clocks and the slot's word; the lowest lane of `lanes` stores the
 * event's first half and the slot's word, the highest its second half (both halves where it is
 * alone), and a chunk's claim is the lowest lane's atomicAdd, shared by a shuffle. An end reads the
 * clocks first; a begin finds its position first (and at a chunk's end the claim) and reads them
 * last, so a region's cycles hold as little of the recording as can be. */
static __device__ __forceinline__ void gpujit__regions_store(const char *name, bool end, unsigned int lanes)
{
  unsigned long long clk = 0, t = 0, grid, *e;
  unsigned int sm, slot, pos, lane, first, last;
  if (end)
    clk = clock64(), t = gpujit__regions_globaltimer();
  if (!gpujit_regions.events)
    return;
  sm = gpujit__regions_smid(), grid = gpujit__regions_gridid(), slot = gpujit__regions_slot(sm);
#if GPUJIT_REGIONS_SCOPE == GPUJIT_REGIONS_WARP
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  first = (unsigned int)__ffs(lanes) - 1u, last = 31u - (unsigned int)__clz(lanes);
#else
  lane = first = last = 0u, (void)lanes;
#endif
  pos = gpujit__regions_pos(slot);
  if (pos == GPUJIT__REGIONS_FULL - 1u) { /* a GPU with more SMs or warp slots than the host allowed for */
    if (lane == first)
      atomicAdd(gpujit_regions.counters + 1, 1ull);
    return;
  }
  if (pos != GPUJIT__REGIONS_FULL && (pos & (gpujit_regions.chunk - 1u)) == 0u) { /* chunk used up */
    unsigned long long c = 0;
    if (lane == first)
      c = atomicAdd(gpujit_regions.counters, 1ull);
#if GPUJIT_REGIONS_SCOPE == GPUJIT_REGIONS_WARP
    c = __shfl_sync(lanes, c, first);
#endif
    pos = (c + 1ull) * gpujit_regions.chunk <= gpujit_regions.capacity ? (unsigned int)(c * gpujit_regions.chunk)
                                                                       : GPUJIT__REGIONS_FULL;
  }
  if (pos == GPUJIT__REGIONS_FULL) { /* no room: counted in the slot's high word, never written */
    unsigned int *word = (unsigned int *)(gpujit_regions.slots + slot);
    if (lane == first)
      word[1] = word[1] + 1u, word[0] = GPUJIT__REGIONS_FULL;
    return;
  }
  if (!end)
    t = gpujit__regions_globaltimer(), clk = clock64();
  e = gpujit_regions.events + 4ull * pos;
  if (lane == first)
    ((ulonglong2 *)e)[0] = make_ulonglong2((unsigned long long)name, clk);
  if (lane == last)
    ((ulonglong2 *)e)[1] = make_ulonglong2(t, (unsigned long long)gpujit__regions_unit() |
                                                  ((unsigned long long)(sm & 0xffffu) << 32) |
                                                  ((grid & 0x7fffull) << 48) | ((unsigned long long)end << 63));
  if (lane == first)
    ((unsigned int *)(gpujit_regions.slots + slot))[0] = pos + 1u;
}

/* A begin: the warp's active lanes record together; thread 0 of the block; or every thread.
 * Returns the lanes that began together, for the end of the scope form. */
static __device__ __forceinline__ unsigned int gpujit__regions_begin(const char *name)
{
#if GPUJIT_REGIONS_SCOPE == GPUJIT_REGIONS_BLOCK
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0)
    gpujit__regions_store(name, false, 1u);
  return 1u;
#elif GPUJIT_REGIONS_SCOPE == GPUJIT_REGIONS_THREAD
  gpujit__regions_store(name, false, 1u);
  return 1u;
#else
  unsigned int m = __activemask();
  gpujit__regions_store(name, false, m);
  return m;
#endif
}

/* An end: in the warp scope the lanes that arrive together with the lowest of `began` (the lane
 * whose store began the region) record it, so a warp whose lanes reach the end apart (a
 * data-dependent loop in the region that left them diverged) still writes one end per begin; the
 * other groups skip it, a branch each group takes whole. */
static __device__ __forceinline__ void gpujit__regions_end(const char *name, unsigned int began)
{
#if GPUJIT_REGIONS_SCOPE == GPUJIT_REGIONS_BLOCK
  (void)began;
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0)
    gpujit__regions_store(name, true, 1u);
#elif GPUJIT_REGIONS_SCOPE == GPUJIT_REGIONS_THREAD
  (void)began;
  gpujit__regions_store(name, true, 1u);
#else
  unsigned int m = __activemask();
  if (m & began & (0u - began)) /* the begin's recording lane is among these */
    gpujit__regions_store(name, true, m);
#endif
}

static __device__ __forceinline__ void gpujit_region_begin(const char *name) { (void)gpujit__regions_begin(name); }

/* The begin/end form has nothing to carry the begin's lanes in: the lanes active at the end record it. */
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
