/* Kernel regions on the CPU: synthetic event buffers as gpujit/regions.cuh writes them, analysed,
 * formatted and traced; the header compiled by NVRTC with regions off gives the same code. */
#include "helpers.h"

#include "gpujit.h"
#include "run/device.h"

#define W GPUJIT_REGIONS_EVENT_WORDS

static const gpujit_region_name names[] = {{0x10, "A"}, {0x20, "B"}, {0x30, "A"}};

/* One event into `ev` at index i, of launch `launch` (%gridid's low 15 bits). */
static void put_l(uint64_t *ev, size_t i, uint64_t name, uint64_t clk, uint64_t gt, uint32_t unit, uint32_t sm,
                  uint32_t launch, int end)
{
  ev[W * i + 0] = name, ev[W * i + 1] = clk, ev[W * i + 2] = gt;
  ev[W * i + 3] = (uint64_t)unit | ((uint64_t)sm << 32) | ((uint64_t)(launch & 0x7fffu) << 48) |
                  ((uint64_t)(end != 0) << 63);
}

static void put(uint64_t *ev, size_t i, uint64_t name, uint64_t clk, uint64_t gt, uint32_t unit, uint32_t sm, int end)
{
  put_l(ev, i, name, clk, gt, unit, sm, 0, end);
}

static const gpujit_region_stat *row(const gpujit_region_report *r, const char *name)
{
  for (size_t i = 0; i < r->count; i++)
    if (strcmp(r->regions[i].name, name) == 0)
      return &r->regions[i];
  fail_msg("no region %s", name);
  return NULL;
}

/* Unit 0 on SM 1: A { B B } (B in a loop); unit 1 on SM 2: A, its end by another address of the
 * same literal. The two units' events interleave in the buffer, as concurrent warps write them. */
static size_t nested_events(uint64_t *ev)
{
  size_t n = 0;
  put(ev, n++, 0x10, 100, 1000, 0, 1, 0);
  put(ev, n++, 0x10, 0, 2000, 1, 2, 0);
  put(ev, n++, 0x20, 110, 1010, 0, 1, 0);
  put(ev, n++, 0x20, 150, 1050, 0, 1, 1);
  put(ev, n++, 0x30, 100, 2100, 1, 2, 1);
  put(ev, n++, 0x20, 160, 1060, 0, 1, 0);
  put(ev, n++, 0x20, 200, 1100, 0, 1, 1);
  put(ev, n++, 0x10, 300, 1200, 0, 1, 1);
  return n;
}

static void test_kregions__nested_and_looped(void **state)
{
  uint64_t ev[W * 8];
  size_t n = nested_events(ev);
  gpujit_region_report *r = NULL;
  const gpujit_region_stat *a, *b;
  (void)state;
  assert_int_equal(gpujit_regions_analyze(&r, ev, n, 0, names, 3, 1000, 1, GPUJIT_REGION_SCOPE_WARP), 0);
  assert_int_equal(r->count, 2);
  assert_int_equal(r->nslices, 4);
  assert_int_equal(r->unmatched, 0);
  a = row(r, "A"), b = row(r, "B");
  assert_int_equal(a->calls, 2);
  assert_int_equal(a->depth, 0);
  assert_true(a->cycles_mean == 150 && a->cycles_median == 100 && a->cycles_max == 200);
  assert_true(a->ns_mean == 150 && a->ns_max == 200 && a->total_ns == 300);
  assert_int_equal(a->sms, 2);
  assert_int_equal(a->units, 2);
  assert_true(a->sm_imbalance > 1.333 && a->sm_imbalance < 1.334); /* 200 over the mean 150 */
  assert_true(a->share > 0.1499 && a->share < 0.1501);             /* 150 ns per unit of 1000 */
  assert_int_equal(b->calls, 2);
  assert_int_equal(b->depth, 1);
  assert_true(b->cycles_mean == 40 && b->cycles_p99 == 40);
  assert_int_equal(b->units, 1);
  assert_true(b->unit_imbalance == 1);
  assert_int_equal(r->min_call_cycles, 40);
  gpujit_region_report_free(r);
}

/* Two launches of one kernel: unit 0 of each writes through whichever hardware slot it got, so
 * their events interleave in the buffer (A of launch 1 begins, A of launch 2 begins, then each
 * ends). Paired per launch, each call is 100 cycles at depth 0; paired by unit alone, the first
 * end would close launch 2's begin (a negative time, and a false nesting). */
static void test_kregions__launches_pair_apart(void **state)
{
  uint64_t ev[W * 4];
  size_t n = 0;
  gpujit_region_report *r = NULL;
  (void)state;
  put_l(ev, n++, 0x10, 100, 1000, 0, 1, 7, 0);
  put_l(ev, n++, 0x10, 5000, 9000, 0, 2, 8, 0);
  put_l(ev, n++, 0x10, 200, 1100, 0, 1, 7, 1);
  put_l(ev, n++, 0x10, 5100, 9100, 0, 2, 8, 1);
  assert_int_equal(gpujit_regions_analyze(&r, ev, n, 0, names, 3, 2000, 2, GPUJIT_REGION_SCOPE_WARP), 0);
  assert_int_equal(r->unmatched, 0);
  assert_int_equal(row(r, "A")->calls, 2);
  assert_true(row(r, "A")->cycles_max == 100 && row(r, "A")->cycles_median == 100);
  assert_true(row(r, "A")->ns_max == 100);
  assert_int_equal(row(r, "A")->depth, 0);
  /* one unit, 100 ns in each of two launches of 1000 ns: 10 %, not 20 % (units counted once) */
  assert_true(row(r, "A")->share > 0.0999 && row(r, "A")->share < 0.1001);
  gpujit_region_report_free(r);
}

/* Events dropped: the share stays a unit's time per launch over a launch's time, over the
 * (launch, unit) pairs that were recorded; it is never over 1 for a region that fills each unit's
 * whole launch. Launch 1 recorded units 0 and 1, launch 2 only unit 0 (unit 1's were dropped). */
static void test_kregions__share_per_unit_launch(void **state)
{
  uint64_t ev[W * 6];
  size_t n = 0;
  gpujit_region_report *r = NULL;
  (void)state;
  put_l(ev, n++, 0x10, 0, 0, 0, 1, 1, 0);
  put_l(ev, n++, 0x10, 0, 0, 1, 2, 1, 0);
  put_l(ev, n++, 0x10, 900, 900, 0, 1, 1, 1);
  put_l(ev, n++, 0x10, 900, 900, 1, 2, 1, 1);
  put_l(ev, n++, 0x10, 0, 2000, 0, 1, 2, 0);
  put_l(ev, n++, 0x10, 900, 2900, 0, 1, 2, 1);
  assert_int_equal(gpujit_regions_analyze(&r, ev, n, 2, names, 3, 2000, 2, GPUJIT_REGION_SCOPE_WARP), 0);
  assert_true(r->kernel_ns == 2000);
  assert_true(row(r, "A")->share > 0.8999 && row(r, "A")->share < 0.9001);
  gpujit_region_report_free(r);
}

/* Where the device's events lie (gpujit__regions_layout): 4 chunks of 4 events, 6 claims (2 found
 * none left), a slot in chunk 1 with 2 written, a slot past its full chunk 2, a slot with 1 in
 * chunk 3, a full slot that dropped 3, one never used, and 2 lost (a slot past the table). */
static void test_kregions__layout_of_chunks(void **state)
{
  uint64_t slots[5] = {6, 12, 13, (3ull << 32) | 0xffffffffu, 0};
  uint32_t fill[4] = {0, 0, 0, 0};
  uint64_t used = 0, kept = 0, dropped = 0;
  (void)state;
  gpujit__regions_layout(slots, 5, 6, 2, 16, 4, fill, &used, &kept, &dropped);
  assert_int_equal(used, 4);
  assert_int_equal(fill[0], 4);
  assert_int_equal(fill[1], 2);
  assert_int_equal(fill[2], 4);
  assert_int_equal(fill[3], 1);
  assert_int_equal(kept, 11);
  assert_int_equal(dropped, 5);
  /* nothing claimed yet: nothing read, whatever a slot says */
  gpujit__regions_layout(slots, 5, 0, 0, 16, 4, fill, &used, &kept, &dropped);
  assert_int_equal(used, 0);
  assert_int_equal(kept, 0);
  assert_int_equal(dropped, 3);
}

/* An end with no begin, a begin never ended (a break out of a region), an end of another
 * region inside: counted as unmatched; the rest still pair. */
static void test_kregions__unmatched(void **state)
{
  uint64_t ev[W * 6];
  size_t n = 0;
  gpujit_region_report *r = NULL;
  (void)state;
  put(ev, n++, 0x20, 5, 5, 3, 0, 1);   /* end of B, never begun */
  put(ev, n++, 0x10, 10, 10, 3, 0, 0); /* A */
  put(ev, n++, 0x20, 20, 20, 3, 0, 0); /* B, left by a break */
  put(ev, n++, 0x10, 50, 50, 3, 0, 1); /* A ends: B inside it never did */
  put(ev, n++, 0x10, 60, 60, 4, 0, 0); /* A of unit 4, never ended */
  assert_int_equal(gpujit_regions_analyze(&r, ev, n, 0, names, 3, 0, 1, GPUJIT_REGION_SCOPE_WARP), 0);
  assert_int_equal(r->unmatched, 3);
  assert_int_equal(r->nslices, 1);
  assert_int_equal(row(r, "A")->calls, 1);
  assert_true(row(r, "A")->cycles_max == 40);
  assert_int_equal(row(r, "B")->calls, 0);
  assert_true(row(r, "A")->share < 0); /* no kernel time given */
  gpujit_region_report_free(r);
}

/* A diverged warp: its two lanes groups' regions interleave (X begins, Y begins, X ends, Y ends):
 * both pair, nothing is unmatched. */
static void test_kregions__interleaved_by_divergence(void **state)
{
  uint64_t ev[W * 4];
  size_t n = 0;
  gpujit_region_report *r = NULL;
  (void)state;
  put(ev, n++, 0x10, 10, 10, 0, 0, 0); /* A */
  put(ev, n++, 0x20, 12, 12, 0, 0, 0); /* B */
  put(ev, n++, 0x10, 30, 30, 0, 0, 1); /* A ends first */
  put(ev, n++, 0x20, 52, 52, 0, 0, 1);
  assert_int_equal(gpujit_regions_analyze(&r, ev, n, 0, names, 3, 0, 1, GPUJIT_REGION_SCOPE_WARP), 0);
  assert_int_equal(r->unmatched, 0);
  assert_true(row(r, "A")->cycles_max == 20 && row(r, "B")->cycles_max == 40);
  assert_int_equal(row(r, "A")->depth, 0);
  gpujit_region_report_free(r);
}

/* %globaltimer read as two halves: one event 2^32 ns off (a carry between the reads) is mended by
 * the slice's cycles, either way; a long region (3 s of ns, 6e9 cycles) is left as read. */
static void test_kregions__torn_globaltimer_mended(void **state)
{
  const uint64_t wrap = (uint64_t)1 << 32, t0 = 10 * wrap - 500;
  uint64_t ev[W * 6];
  gpujit_region_report *r = NULL;
  (void)state;
  put(ev, 0, 0x10, 1000, t0 + wrap, 0, 0, 0); /* its begin read high: the carry came between */
  put(ev, 1, 0x10, 3000, t0 + 1000, 0, 0, 1);  /* 2000 cycles, 1000 ns */
  put(ev, 2, 0x20, 1000, t0, 1, 0, 0);
  put(ev, 3, 0x20, 3000, t0 + 1000 - wrap, 1, 0, 1); /* its end read low */
  put(ev, 4, 0x40, 0, t0, 2, 0, 0);
  put(ev, 5, 0x40, 6000000000ull, t0 + 3000000000ull, 2, 0, 1);
  assert_int_equal(gpujit_regions_analyze(&r, ev, 6, 0, names, 3, 0, 1, GPUJIT_REGION_SCOPE_WARP), 0);
  assert_int_equal(r->nslices, 3);
  assert_true(row(r, "A")->ns_max == 1000 && row(r, "B")->ns_max == 1000);
  assert_true(row(r, "0x40")->ns_max == 3000000000ull);
  assert_true(r->slices[0].start_ns == t0); /* placed by its end */
  gpujit_region_report_free(r);
}

/* 100 calls of 1..100 cycles: the median and p99 by nearest rank; an address without a name. */
static void test_kregions__percentiles_and_unknown_name(void **state)
{
  uint64_t ev[W * 200];
  gpujit_region_report *r = NULL;
  const gpujit_region_stat *s;
  (void)state;
  for (uint32_t i = 0; i < 100; i++) {
    put(ev, 2 * i, 0x40, 1000, 0, i, i % 4, 0);
    put(ev, 2 * i + 1, 0x40, 1000 + 100 - i, 2 * (100 - i), i, i % 4, 1);
  }
  assert_int_equal(gpujit_regions_analyze(&r, ev, 200, 0, names, 3, 0, 1, GPUJIT_REGION_SCOPE_BLOCK), 0);
  s = row(r, "0x40");
  assert_int_equal(s->calls, 100);
  assert_true(s->cycles_median == 50 && s->cycles_p99 == 99 && s->cycles_max == 100);
  assert_true(s->ns_median == 100 && s->ns_max == 200);
  assert_true(s->cycles_mean == 50.5);
  assert_int_equal(s->sms, 4);
  assert_int_equal(s->units, 100);
  assert_true(s->unit_imbalance > 1.98 && s->unit_imbalance < 1.99); /* 100 over 50.5 */
  gpujit_region_report_free(r);
}

static void test_kregions__format_says_dropped(void **state)
{
  uint64_t ev[W * 8];
  size_t n = nested_events(ev);
  gpujit_region_report *r = NULL;
  char *text = NULL;
  (void)state;
  assert_int_equal(gpujit_regions_analyze(&r, ev, n, 5, names, 3, 1000, 1, GPUJIT_REGION_SCOPE_WARP), 0);
  assert_int_equal(r->dropped, 5);
  /* the kernel's time as given: the share is per (launch, unit) that ran the region */
  assert_true(r->kernel_ns == 1000);
  assert_int_equal(gpujit_region_report_format(&text, r), 0);
  assert_non_null(strstr(text, "regions (one warp records; 1 launch, 8 events)"));
  assert_non_null(strstr(text, "dropped 5 events"));
  assert_non_null(strstr(text, "\n  A "));
  assert_non_null(strstr(text, "\n    B ")); /* nested: indented */
  assert_non_null(strstr(text, " 15.0%")); /* 150 ns a unit of 1000 */
  assert_non_null(strstr(text, "shortest call 40 cycles"));
  gpujit_free(text);
  gpujit_region_report_free(r);
}

static void test_kregions__empty(void **state)
{
  gpujit_region_report *r = NULL;
  char *text = NULL;
  (void)state;
  assert_int_equal(gpujit_regions_analyze(&r, NULL, 0, 0, NULL, 0, 0, 1, GPUJIT_REGION_SCOPE_WARP), 0);
  assert_int_equal(r->count, 0);
  assert_int_equal(gpujit_region_report_format(&text, r), 0);
  assert_non_null(strstr(text, "no region calls recorded"));
  gpujit_free(text);
  gpujit_region_report_free(r);
  assert_int_equal(gpujit_regions_analyze(NULL, NULL, 0, 0, NULL, 0, 0, 1, GPUJIT_REGION_SCOPE_WARP), GPUJIT_EINVAL);
  assert_int_equal(gpujit_regions_analyze(&r, NULL, 3, 0, NULL, 0, 0, 1, GPUJIT_REGION_SCOPE_WARP), GPUJIT_EINVAL);
}

/* The timers' tables without a device or a window: none, and the module out NULL. */
static void test_kregions__timing_regions_without_window(void **state)
{
  gpujit_loaded *l = (gpujit_loaded *)1;
  (void)state;
  assert_null(gpujit_timing_regions(NULL, NULL));
  assert_null(gpujit_timing_regions_at(NULL, 0, &l));
  assert_null(l);
  assert_null(gpujit_timing_regions_at(NULL, 3, NULL));
}

/* A track per SM; units overlapping on one SM on a further track; times from start_us. */
static void test_kregions__trace_tracks_per_sm(void **state)
{
  uint64_t ev[W * 12];
  size_t n = nested_events(ev);
  gpujit_region_report *r = NULL;
  gpujit_trace *t = NULL;
  char *json = NULL;
  size_t len = 0;
  (void)state;
  put(ev, n++, 0x10, 0, 1005, 7, 1, 0); /* unit 7 on SM 1 while unit 0 runs there */
  put(ev, n++, 0x10, 9, 1009, 7, 1, 1);
  assert_int_equal(gpujit_regions_analyze(&r, ev, n, 0, names, 3, 0, 1, GPUJIT_REGION_SCOPE_WARP), 0);
  assert_int_equal(gpujit_trace_create(&t, NULL), 0);
  assert_int_equal(gpujit_region_report_trace(t, r, 500.0, 0), 0);
  assert_int_equal(gpujit_trace_to_json(&json, &len, t), 0);
  assert_non_null(strstr(json, "\"SM 1\""));
  assert_non_null(strstr(json, "\"SM 1 #2\""));
  assert_non_null(strstr(json, "\"SM 2\""));
  assert_non_null(strstr(json, "\"ts\":500")); /* the earliest call, at start_us */
  assert_non_null(strstr(json, "\"cycles\":200"));
  gpujit_free(json);
  gpujit_trace_free(t);
  gpujit_region_report_free(r);
}

static void test_kregions__include_dir(void **state)
{
  const char *dir = gpujit_include_dir();
  char path[4096];
  (void)state;
  assert_non_null(dir);
  snprintf(path, sizeof(path), "%s/gpujit/regions.cuh", dir);
  assert_true(th_exists(path));
}

/* ---- the header through NVRTC (no GPU needed) -------------------------------------------- */

#define KERNEL_BODY                                                                                     \
  "extern \"C\" __global__ void k(float *x, int n, int reps) {\n"                                       \
  "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"                                                  \
  "  GPUJIT_REGION(\"load\") { if (i < n) x[i] *= 2.0f; }\n"                                            \
  "  for (int r = 0; r < reps; r++) GPUJIT_REGION(\"loop\") { if (i < n) x[i] += r; }\n"                  \
  "  GPUJIT_REGION_BEGIN(\"tail\");\n"                                                                  \
  "  if (i < n) x[i] = x[i] * x[i];\n"                                                                  \
  "  GPUJIT_REGION_END(\"tail\");\n"                                                                    \
  "}\n"

#define PLAIN_BODY                                                                                      \
  "extern \"C\" __global__ void k(float *x, int n, int reps) {\n"                                       \
  "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"                                                  \
  "  { if (i < n) x[i] *= 2.0f; }\n"                                                                    \
  "  for (int r = 0; r < reps; r++) { if (i < n) x[i] += r; }\n"                                        \
  "  ;\n"                                                                                               \
  "  if (i < n) x[i] = x[i] * x[i];\n"                                                                  \
  "  ;\n"                                                                                               \
  "}\n"

/* The bytes of every code section (.text.*) of a cubin, concatenated in section order. */
static char *code_of(const void *img, size_t size, size_t *len)
{
  const Elf64_Ehdr *eh = img;
  const Elf64_Shdr *sh;
  const char *names_s;
  char *out = NULL;
  *len = 0;
  assert_true(size > sizeof(*eh) && memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0);
  sh = (const Elf64_Shdr *)((const char *)img + eh->e_shoff);
  names_s = (const char *)img + sh[eh->e_shstrndx].sh_offset;
  for (unsigned i = 0; i < eh->e_shnum; i++)
    if (strncmp(names_s + sh[i].sh_name, ".text.", 6) == 0) {
      out = realloc(out, *len + sh[i].sh_size + 1);
      memcpy(out + *len, (const char *)img + sh[i].sh_offset, sh[i].sh_size);
      *len += sh[i].sh_size;
    }
  assert_true(*len > 0);
  return out;
}

static gpujit_module *build_text_as(const char *text, int regions, gpujit_output_kind output)
{
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  const char *defs[] = {"GPUJIT_REGIONS"};
  gpujit_source src = {"k.cu", text, strlen(text)};
  gpujit_module *m = NULL;
  int err;
  o.arch = "sm_90";
  o.output = output;
  o.lineinfo = 0; /* lines shift by the #include: compare code, not line tables */
  o.defines = defs, o.defines_count = regions ? 1 : 0;
  err = gpujit_module_build_sources(&m, &src, 1, &o);
  if (err == GPUJIT_ENOTOOLKIT || err == GPUJIT_ENVRTC)
    skip();
  if (err < 0)
    fail_msg("build: %s\n%s", gpujit_error_last(), gpujit_error_log() ? gpujit_error_log() : "");
  return m;
}

/* ---- the event path in PTX: a path to the event's stores with no atomic -------------------- */

#define MAX_BLOCKS 256

typedef struct ptx_block {
  char label[48];
  const char *start, *end;
  int atom, stores, falls; /* falls: runs on into the next block */
  char target[48];         /* the branch at its end, "" none */
} ptx_block;

/* The basic blocks of the function whose name contains `name`: cut at labels and after branches. */
static int ptx_blocks(const char *ptx, const char *name, ptx_block *b)
{
  const char *f = strstr(ptx, name), *p, *end;
  int n = 0;
  assert_non_null(f);
  f = strstr(f, "\n{");
  assert_non_null(f);
  end = strstr(f, "\n}");
  assert_non_null(end);
  memset(&b[0], 0, sizeof(b[0]));
  b[0].start = f, b[0].falls = 1;
  for (p = strchr(f + 1, '\n'); p && p < end; p = strchr(p + 1, '\n')) {
    const char *l = p + 1;
    while (*l == ' ' || *l == '\t')
      l++;
    if (*l == '$' && n + 1 < MAX_BLOCKS) { /* a label starts a block */
      const char *c = strchr(l, ':');
      b[n].end = l;
      n++;
      memset(&b[n], 0, sizeof(b[n]));
      snprintf(b[n].label, sizeof(b[n].label), "%.*s", (int)(c - l), l);
      b[n].start = l, b[n].falls = 1;
      continue;
    }
    const char *eol = strchr(l, '\n');
    if (!strncmp(l, "atom.global", 11))
      b[n].atom++;
    if (!strncmp(l, "st.global.v2.u64", 16) || !strncmp(l, "st.v2.u64", 9)) /* an event is two 16-byte stores */
      b[n].stores++;
    if (!strncmp(l, "ret", 3) || !strncmp(l, "bra", 3) || (*l == '@' && strstr(l, " bra") && strstr(l, " bra") < eol)) {
      const char *t = strchr(l, '$');
      if (t && t < eol)
        snprintf(b[n].target, sizeof(b[n].target), "%.*s", (int)strcspn(t, ";\n"), t);
      b[n].falls = *l == '@'; /* a predicated branch may fall through */
      if (n + 1 < MAX_BLOCKS) {
        b[n].end = eol;
        n++;
        memset(&b[n], 0, sizeof(b[n]));
        b[n].start = eol, b[n].falls = 1;
      }
    }
  }
  b[n].end = end;
  return n + 1;
}

/* Whether an event's two stores are reached from the entry through blocks with no atom.global
 * (the stores' own blocks included). */
static int stores_without_atomic(const ptx_block *b, int n)
{
  int seen[MAX_BLOCKS] = {0}, stack[MAX_BLOCKS], top = 0, stores = 0;
  if (b[0].atom)
    return 0;
  stack[top++] = 0, seen[0] = 1;
  while (top) {
    int i = stack[--top];
    if ((stores += b[i].stores) >= 2) /* the two halves: one block, or one block each (warp scope) */
      return 1;
    for (int j = 0; j < n; j++) {
      int edge = (j == i + 1 && b[i].falls) || (b[i].target[0] && !strcmp(b[j].label, b[i].target));
      if (edge && !seen[j] && !b[j].atom)
        seen[j] = 1, stack[top++] = j;
    }
  }
  return 0;
}

/* With regions on, each event is inlined into the kernel (no call: the special registers and the
 * state's words are read once, not at every event), the kernel has a path from its entry to the
 * first event's stores that runs no atomic (a warp's event in its current chunk), and its atomics
 * (a chunk's claim, a slot past the table: two per event site, as many as its stores) are on other
 * paths. In every scope. No scope makes a warp wait at a __syncwarp: in the warp scope the lanes
 * run the recording alike (a chunk's claim is shared by a shuffle). */
static void test_kregions__event_path_has_no_atomic(void **state)
{
  static const char *const scopes[] = {"", "#define GPUJIT_REGIONS_SCOPE GPUJIT_REGIONS_BLOCK\n",
                                       "#define GPUJIT_REGIONS_SCOPE GPUJIT_REGIONS_THREAD\n"};
  enum { SITES = 6 }; /* KERNEL_BODY: three regions, a begin and an end each */
  (void)state;
  for (size_t i = 0; i < 3; i++) {
    char text[2048];
    ptx_block *b = calloc(MAX_BLOCKS, sizeof(*b));
    gpujit_module *m;
    const char *ptx, *kernel;
    size_t size = 0, syncs = 0;
    int n, atoms = 0, stores = 0;
    char *copy;
    snprintf(text, sizeof(text), "%s#include <gpujit/regions.cuh>\n%s", scopes[i], KERNEL_BODY);
    m = build_text_as(text, 1, GPUJIT_OUTPUT_PTX);
    ptx = gpujit_module_image(m, &size);
    copy = strndup(ptx, size);
    kernel = strstr(copy, ".entry k(");
    assert_non_null(kernel);
    assert_null(strstr(kernel, "call")); /* the recording is inlined */
    n = ptx_blocks(copy, ".entry k(", b);
    for (int k = 0; k < n; k++)
      atoms += b[k].atom, stores += b[k].stores;
    assert_true(stores >= 2 * SITES); /* the compiler may copy an event site (a loop's peeled first pass) */
    assert_int_equal(atoms, stores);  /* each copy: its two stores, its chunk claim and its lost count */
    assert_true(stores_without_atomic(b, n));
    for (const char *c = strstr(kernel, "bar.warp.sync"); c; c = strstr(c + 1, "bar.warp.sync"))
      syncs++;
    assert_int_equal(syncs, 0);
    assert_true(i == 0 ? strstr(kernel, "shfl.sync") != NULL : strstr(kernel, "shfl.sync") == NULL);
    free(copy), free(b);
    gpujit_module_free(m);
  }
}

static gpujit_module *build_text(const char *text, int regions) { return build_text_as(text, regions, GPUJIT_OUTPUT_CUBIN); }

/* Regions off: the header and its macros leave the kernel's code byte for byte as without
 * them; on, the code changes and the module declares the state gpujit binds. */
static void test_kregions__off_is_the_same_sass(void **state)
{
  gpujit_module *plain, *off, *on;
  const void *ip, *io, *in;
  size_t np, no, nn, lp, lo, ln;
  char *cp, *co, *cn;
  (void)state;
  plain = build_text(PLAIN_BODY, 0);
  off = build_text("#include <gpujit/regions.cuh>\n" KERNEL_BODY, 0);
  on = build_text("#include <gpujit/regions.cuh>\n" KERNEL_BODY, 1);
  ip = gpujit_module_image(plain, &np), io = gpujit_module_image(off, &no), in = gpujit_module_image(on, &nn);
  cp = code_of(ip, np, &lp), co = code_of(io, no, &lo), cn = code_of(in, nn, &ln);
  assert_int_equal(lp, lo);
  assert_memory_equal(cp, co, lp);
  assert_true(ln != lp || memcmp(cp, cn, lp) != 0);
  assert_null(memmem(io, no, "gpujit_regions", 14));
  assert_non_null(memmem(in, nn, "gpujit_regions", 14));
  free(cp), free(co), free(cn);
  gpujit_module_free(plain), gpujit_module_free(off), gpujit_module_free(on);
}

/* Each scope of the header compiles, and every form nests (block and thread scopes). */
static void test_kregions__scopes_compile(void **state)
{
  static const char *const scopes[] = {"#define GPUJIT_REGIONS_SCOPE GPUJIT_REGIONS_BLOCK\n",
                                       "#define GPUJIT_REGIONS_SCOPE GPUJIT_REGIONS_THREAD\n"};
  (void)state;
  for (size_t i = 0; i < 2; i++) {
    char text[2048];
    gpujit_module *m;
    snprintf(text, sizeof(text), "%s#include <gpujit/regions.cuh>\n%s", scopes[i], KERNEL_BODY);
    m = build_text(text, 1);
    assert_non_null(m);
    gpujit_module_free(m);
  }
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_kregions__nested_and_looped),
      cmocka_unit_test(test_kregions__torn_globaltimer_mended),
      cmocka_unit_test(test_kregions__launches_pair_apart),
      cmocka_unit_test(test_kregions__share_per_unit_launch),
      cmocka_unit_test(test_kregions__layout_of_chunks),
      cmocka_unit_test(test_kregions__unmatched),
      cmocka_unit_test(test_kregions__interleaved_by_divergence),
      cmocka_unit_test(test_kregions__percentiles_and_unknown_name),
      cmocka_unit_test(test_kregions__format_says_dropped),
      cmocka_unit_test(test_kregions__empty),
      cmocka_unit_test(test_kregions__timing_regions_without_window),
      cmocka_unit_test(test_kregions__trace_tracks_per_sm),
      cmocka_unit_test(test_kregions__include_dir),
      cmocka_unit_test(test_kregions__off_is_the_same_sass),
      cmocka_unit_test(test_kregions__scopes_compile),
      cmocka_unit_test(test_kregions__event_path_has_no_atomic),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
