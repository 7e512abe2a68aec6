/* A program for test_kregions_inject.c, linked with the stand-in libcuda (fake_regions_cuda.c): it
 * loads a module declaring gpujit_regions (and one that does not) and, acting as the device, writes
 * region events into the buffer the injection library bound, exactly as gpujit/regions.cuh's
 * recording lane does — a chunk of the buffer per warp slot, claimed when the last one is full.
 * Each launch: 4 warps on 2 SMs, each a region "spin" of 1000 cycles (1500 ns) around a region
 * "inner" of 250 cycles.
 *   kregions_target plain       3 launches, then exit
 *   kregions_target gone        3 launches, the context destroyed, then exit
 *   kregions_target schedule    2 launches (step 0), step, 1 launch (step 1), step, 2 launches
 *   kregions_target unbound     3 launches into a module gpujit did not bind (its state untouched)
 *   kregions_target own         the program bound the state itself before the load: left to it
 *                               (exit status 5 where the profile took it over)
 * Prints "bound 1" when the state was bound (its events pointer set). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct fake_state {
  uint32_t abi, scope;
  uint64_t *events, capacity, *counters, *slots, reserved; /* counters: chunks claimed, events lost */
  uint32_t nslots, chunk;
} fake_state;

int cuModuleLoadData(void **m, const void *image);
fake_state *fake_regions_state(void);
void fake_ctx_destroy(void);

#define FULL 0xffffffffu

static uint64_t clock_now = 1000000, launch_id;

/* gpujit__regions_store of the header, on the host. */
static void store(const char *name, int end, uint64_t clk, uint64_t gt, unsigned unit, unsigned sm)
{
  fake_state *g = fake_regions_state();
  unsigned slot = sm * 64 + unit % 64, pos;
  uint64_t s, *e;
  if (!g->events)
    return;
  if (slot >= g->nslots) {
    g->counters[1]++;
    return;
  }
  s = g->slots[slot];
  pos = (unsigned)s;
  if (pos != FULL && (pos & (g->chunk - 1)) == 0) {
    uint64_t c = g->counters[0]++;
    pos = (c + 1) * g->chunk <= g->capacity ? (unsigned)(c * g->chunk) : FULL;
  }
  if (pos == FULL) {
    g->slots[slot] = (((s >> 32) + 1) << 32) | FULL;
    return;
  }
  e = g->events + 4ull * pos;
  e[0] = (uint64_t)(uintptr_t)name, e[1] = clk, e[2] = gt;
  e[3] = unit | ((uint64_t)sm << 32) | ((launch_id & 0x7fff) << 48) | ((uint64_t)(end != 0) << 63);
  g->slots[slot] = (s & 0xffffffff00000000ull) | (pos + 1);
}

static void launch(void)
{
  static const char spin[] = "spin", inner[] = "inner";
  launch_id++;
  for (unsigned u = 0; u < 4; u++) {
    uint64_t c = clock_now + u * 10, t = 2 * c;
    store(spin, 0, c, t, u, u % 2);
    store(inner, 0, c + 100, t + 150, u, u % 2);
    store(inner, 1, c + 350, t + 525, u, u % 2);
    store(spin, 1, c + 1000, t + 1500, u, u % 2);
  }
  clock_now += 5000;
}

static void step(void)
{
  void (*fn)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "gpujit_inject_step");
  if (fn)
    fn(0);
}

int main(int argc, char **argv)
{
  const char *what = argc > 1 ? argv[1] : "plain";
  void *m = NULL, *other = NULL;
  static uint64_t own[64];
  if (!strcmp(what, "own")) /* the program binds the state itself (as gpujit's own loads do) */
    fake_regions_state()->events = own;
  if (cuModuleLoadData(&other, "no regions here") != 0 ||
      cuModuleLoadData(&m, strcmp(what, "unbound") ? "regions module" : "no regions either") != 0)
    return 2;
  printf("bound %d\n", fake_regions_state()->events != NULL);
  if (!strcmp(what, "own")) {
    printf("own buffer kept %d\n", fake_regions_state()->events == own);
    return fake_regions_state()->events == own ? 0 : 5;
  }
  if (!strcmp(what, "schedule")) {
    launch(), launch();
    step();
    launch();
    step();
    launch(), launch();
    return 0;
  }
  launch(), launch(), launch();
  if (!strcmp(what, "gone"))
    fake_ctx_destroy();
  return 0;
}
