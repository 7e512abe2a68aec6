/* bench_rebind's large object: a 512 MiB .bss and an 8 MiB .data, as a framework library with large
 * static tables has (libtorch_cuda.so), a few MiB of it touched, and a function pointer held. */
#include <stddef.h>

#define BIG_BSS (512u << 20)
#define BIG_DATA (8u << 20)

char big_bss[BIG_BSS];
char big_data[BIG_DATA] = {1}; /* in the file: .data, read from its pages only where touched */

void big_touch(size_t every, void *real);
/* One page in `every` of the .bss written, and the pointer held in the last page written. */
void big_touch(size_t every, void *real)
{
  size_t last = 0;
  for (size_t at = 0; at < BIG_BSS; at += every * 4096)
    big_bss[at] = 1, last = at;
  *(void **)&big_bss[last + 64] = real;
}

void *big_held(size_t every);
void *big_held(size_t every)
{
  size_t last = (BIG_BSS - 1) / (every * 4096) * (every * 4096);
  return *(void **)&big_bss[last + 64];
}
