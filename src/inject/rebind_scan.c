/*
 * The words of a loaded object's writable data that hold a watched function's real address, for
 * rebind.c, found without reading what cannot hold one. A function's address gets into an object's
 * data only by being written there after it was mapped — by a relocation at load, or by the
 * program storing what dlsym gave it — and a page written by the process is, in /proc/self/pagemap,
 * present and anonymous (a private mapping's page copied on write) or swapped out. A page of .bss
 * never touched is not there at all, and one of .data never written is the file's page, which holds
 * what the file holds: neither is read. The pages written are (RELRO's too: relocations wrote
 * them, and a program may have made a page of its own read-only after storing a pointer there).
 * A PyTorch process has hundreds of MB of such segments, little of them written: reading them all
 * (GPUJIT_BENCH_REBIND=full, the former scan) costs a fault per page never touched, and a read of
 * each file page. Where pagemap cannot be read, or does not say that a page this library just wrote
 * was written, or a mapping is shared, every page is read.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inject/rebind_scan.h"

/* ---- the readable mappings ---- */

static gji_region *regions;
static size_t nregions, capregions;

static bool parse_region(const char *line, gji_region *r)
{
  char *end;
  unsigned long a = strtoul(line, &end, 16), b;
  if (*end != '-')
    return false;
  b = strtoul(end + 1, &end, 16);
  if (*end != ' ' || end[1] != 'r' || !end[2] || !end[3] || !end[4])
    return false;
  *r = (gji_region){a, b, end[2] == 'w', end[4] == 'p'};
  return true;
}

void gji_maps_read(void)
{
  FILE *f = fopen("/proc/self/maps", "re");
  char line[512];
  bool rest = false; /* this read is the rest of a line longer than the buffer (a long path) */
  nregions = 0;
  while (f && fgets(line, sizeof(line), f)) {
    bool starts = !rest;
    gji_region r;
    rest = !strchr(line, '\n');
    if (!starts || !parse_region(line, &r))
      continue;
    if (nregions == capregions) {
      gji_region *n = realloc(regions, (capregions ? capregions * 2 : 1024) * sizeof(*n));
      if (!n)
        break;
      regions = n, capregions = capregions ? capregions * 2 : 1024;
    }
    regions[nregions++] = r;
  }
  if (f)
    fclose(f);
}

/* The first region ending after p. */
static size_t first_after(uintptr_t p)
{
  size_t lo = 0, hi = nregions;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (regions[mid].end <= p)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

const gji_region *gji_maps_find(uintptr_t p)
{
  size_t i = first_after(p);
  return i < nregions && regions[i].start <= p ? &regions[i] : NULL;
}

/* ---- the addresses looked for: sorted, and a few ranges around them that a word is first
 * tested against ---- */

enum { GROUPS = 8 };
static uintptr_t reals[GJI_SCAN_MAX];
static void *wrappers[GJI_SCAN_MAX];
static size_t nknown;
static struct {
  uintptr_t lo;
  unsigned shift; /* the range is [lo, lo + 2^shift) */
} groups[GROUPS];
static size_t ngroups;

static void add_group(size_t first, size_t last)
{
  uintptr_t span = reals[last] - reals[first];
  unsigned shift = 1;
  while (shift < 63 && (span >> shift) != 0)
    shift++;
  groups[ngroups].lo = reals[first], groups[ngroups].shift = shift;
  ngroups++;
}

void gji_scan_set(const uintptr_t *real, void *const *wrapper, size_t n)
{
  size_t cut[GROUPS], ncut = 0, first = 0;
  nknown = ngroups = 0;
  for (size_t i = 0; i < n && nknown < GJI_SCAN_MAX; i++) { /* insertion, in address order */
    size_t at = nknown;
    while (at > 0 && reals[at - 1] > real[i])
      at--;
    if (at > 0 && reals[at - 1] == real[i])
      continue;
    memmove(&reals[at + 1], &reals[at], (nknown - at) * sizeof(reals[0]));
    memmove(&wrappers[at + 1], &wrappers[at], (nknown - at) * sizeof(wrappers[0]));
    reals[at] = real[i], wrappers[at] = wrapper[i], nknown++;
  }
  if (!nknown)
    return;
  /* the widest gaps between neighbours split the addresses into GROUPS ranges at most (they lie
   * in a few libraries: each range stays within one's entry points) */
  while (ncut < GROUPS - 1) {
    size_t best = 0;
    for (size_t i = 1; i < nknown; i++) {
      bool taken = false;
      for (size_t c = 0; c < ncut; c++)
        taken |= cut[c] == i;
      if (!taken && (!best || reals[i] - reals[i - 1] > reals[best] - reals[best - 1]))
        best = i;
    }
    if (!best)
      break;
    cut[ncut++] = best;
  }
  for (size_t i = 1; i < ncut; i++) /* in order */
    for (size_t j = i; j > 0 && cut[j - 1] > cut[j]; j--) {
      size_t t = cut[j];
      cut[j] = cut[j - 1], cut[j - 1] = t;
    }
  for (size_t c = 0; c < ncut; c++)
    add_group(first, cut[c] - 1), first = cut[c];
  add_group(first, nknown - 1);
}

static void *wrapper_of(uintptr_t v)
{
  size_t lo = 0, hi = nknown;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (reals[mid] < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < nknown && reals[lo] == v ? wrappers[lo] : NULL;
}

/* ---- the scan ---- */

enum { CHUNK = 64 }; /* words tested together */

/* Whether a word of w[0..n) may be an address looked for. For v in a group's range,
 * ((v - lo) >> shift) - 1 wraps to all ones, its top bit set; for any other v it is below 2^63
 * (shift >= 1). Branch-free over the words, and over CHUNK words (a count known when compiled)
 * the compiler vectorises it at -O2: SSE2 has the 64-bit subtract, shift and or. */
static bool may_hold(void *const *w, size_t n)
{
  uintptr_t acc = 0;
  for (size_t g = 0; g < ngroups; g++) {
    const uintptr_t lo = groups[g].lo;
    const unsigned shift = groups[g].shift;
    if (n == CHUNK)
      for (size_t i = 0; i < CHUNK; i++)
        acc |= (((uintptr_t)w[i] - lo) >> shift) - 1;
    else
      for (size_t i = 0; i < n; i++)
        acc |= (((uintptr_t)w[i] - lo) >> shift) - 1;
  }
  return acc >> 63;
}

static gji_scan_mode mode;
static gji_scan_stats *stats;
static int pagemap = -1;
static uintptr_t page_size;
static volatile uintptr_t probe; /* a word of this library's data, written to test pagemap */

static void scan_words(uintptr_t a, uintptr_t b, gji_scan_hit_fn hit, void *payload)
{
  stats->scanned += b - a;
  for (void **w = (void **)a; (uintptr_t)w < b; w += CHUNK) {
    size_t n = (b - (uintptr_t)w) / sizeof(void *) < CHUNK ? (b - (uintptr_t)w) / sizeof(void *) : CHUNK;
    if (!may_hold(w, n))
      continue;
    for (size_t i = 0; i < n; i++) {
      void *wrapper = wrapper_of((uintptr_t)w[i]);
      if (wrapper)
        hit(&w[i], wrapper, payload);
    }
  }
}

/* The former scan, word by word against the addresses' whole range (GPUJIT_BENCH_REBIND=full). */
static void scan_every_word(uintptr_t a, uintptr_t b, gji_scan_hit_fn hit, void *payload)
{
  stats->scanned += b - a;
  for (void **w = (void **)a; (uintptr_t)w < b; w++) {
    uintptr_t v = (uintptr_t)*w;
    void *wrapper;
    if (v < reals[0] || v > reals[nknown - 1])
      continue;
    if ((wrapper = wrapper_of(v)) != NULL)
      hit(w, wrapper, payload);
  }
}

/* pagemap's bits: the page is there; swapped out; a file's page (or shared memory) */
#define PM_PRESENT (1ull << 63)
#define PM_SWAP (1ull << 62)
#define PM_FILE (1ull << 61)

static bool written(uint64_t e) { return (e & PM_SWAP) || (e & (PM_PRESENT | PM_FILE)) == PM_PRESENT; }

static void open_pagemap(void)
{
  uint64_t e = 0;
  pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (pagemap < 0)
    return;
  /* a page this library just wrote must read as written, or pagemap is not to be trusted here */
  probe = (uintptr_t)&probe;
  if (pread(pagemap, &e, sizeof(e), (off_t)((uintptr_t)&probe / page_size * sizeof(e))) != (ssize_t)sizeof(e) ||
      !written(e)) {
    close(pagemap);
    pagemap = -1;
  }
}

/* The written pages of [from, to), as e[] says for the pages from p on. */
static void scan_written(uintptr_t from, uintptr_t to, uintptr_t p, const uint64_t *e, gji_scan_hit_fn hit,
                         void *payload)
{
  size_t i = (from - p) / page_size, end = (to - p + page_size - 1) / page_size;
  while (i < end) {
    size_t j = i + 1;
    bool w = written(e[i]);
    uintptr_t a, b;
    while (j < end && written(e[j]) == w)
      j++;
    a = p + i * page_size, b = p + j * page_size;
    if (w)
      scan_words(a > from ? a : from, b < to ? b : to, hit, payload);
    i = j;
  }
}

/* [a, b), a writable segment: what pagemap says of its pages read once for them all (one read for
 * a small object's), then each readable mapping of it (a page not mapped readable is not read). */
static void scan_segment(uintptr_t a, uintptr_t b, gji_scan_hit_fn hit, void *payload)
{
  static uint64_t e[4096]; /* under rebind.c's lock */
  const size_t most = sizeof(e) / sizeof(e[0]);
  for (uintptr_t p = a & ~(page_size - 1); p < b;) {
    size_t n = (b - p + page_size - 1) / page_size;
    uintptr_t lo = p > a ? p : a, hi;
    bool have;
    n = n < most ? n : most;
    hi = p + n * page_size < b ? p + n * page_size : b;
    have = mode == GJI_SCAN_WRITTEN && pagemap >= 0 &&
           pread(pagemap, e, n * sizeof(e[0]), (off_t)(p / page_size * sizeof(e[0]))) == (ssize_t)(n * sizeof(e[0]));
    for (size_t i = first_after(lo); i < nregions && regions[i].start < hi; i++) {
      const gji_region *r = &regions[i];
      uintptr_t from = r->start > lo ? r->start : lo, to = r->end < hi ? r->end : hi;
      if (mode == GJI_SCAN_FULL)
        scan_every_word(from, to, hit, payload);
      else if (have && r->private_map)
        scan_written(from, to, p, e, hit, payload);
      else /* pagemap not read, or shared memory: every page */
        scan_words(from, to, hit, payload);
    }
    p += n * page_size;
  }
}

void gji_scan_begin(gji_scan_mode m, gji_scan_stats *s)
{
  mode = m, stats = s;
  page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
  if (m == GJI_SCAN_WRITTEN)
    open_pagemap();
  s->pagemap = pagemap >= 0;
}

void gji_scan_end(void)
{
  if (pagemap >= 0)
    close(pagemap);
  pagemap = -1;
}

void gji_scan_object(const struct dl_phdr_info *info, gji_scan_hit_fn hit, void *payload)
{
  stats->objects++;
  if (!nknown)
    return;
  for (int s = 0; s < info->dlpi_phnum; s++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[s];
    uintptr_t a, b;
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W))
      continue;
    a = ((uintptr_t)info->dlpi_addr + ph->p_vaddr + 7) & ~(uintptr_t)7;
    b = ((uintptr_t)info->dlpi_addr + ph->p_vaddr + ph->p_memsz) & ~(uintptr_t)7;
    stats->writable += b > a ? b - a : 0;
    if (b > a)
      scan_segment(a, b, hit, payload);
  }
}
