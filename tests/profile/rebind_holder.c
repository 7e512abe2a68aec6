/* A library holding NVRTC's nvrtcCompileProgram in each place a program keeps a function pointer
 * it resolved (test_rebind.c, bench/bench_rebind.c): its .data, its .bss, one far page of a large
 * .bss whose other pages are never touched, a table a relocation filled at load (read-only after
 * it: RELRO), and a block on the heap. Loaded RTLD_LOCAL, as Python loads an extension module. */
#include <nvrtc.h>
#include <stdlib.h>

typedef nvrtcResult (*compile_fn)(nvrtcProgram, int, const char *const *);

#define HOLDER_BIG_BYTES (64u << 20)
#define HOLDER_FAR ((40u << 20) / sizeof(void *)) /* the word of holder_big written: 40 MiB in */

static int anchor;
void *holder_data = &anchor; /* .data: a relocation wrote it at load; holder_hold() again */
void *holder_bss;            /* .bss */
void *holder_big[HOLDER_BIG_BYTES / sizeof(void *)];
const size_t holder_big_bytes = HOLDER_BIG_BYTES, holder_far = HOLDER_FAR;
compile_fn const holder_relro[2] = {nvrtcCompileProgram, 0}; /* written by a relocation, then read-only */
void **holder_heap;                                          /* malloc'ed */

void holder_hold(void *real);
void holder_hold(void *real)
{
  holder_data = real;
  holder_bss = real;
  holder_big[HOLDER_FAR] = real;
  if (!holder_heap)
    holder_heap = calloc(4, sizeof(void *));
  if (holder_heap)
    holder_heap[1] = real;
}
