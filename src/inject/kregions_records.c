/* A bound kernel-regions buffer read back in the profiled program and written as records: the slot
 * table and the claimed chunks copied from the device (synchronous copies: the caller made the
 * module's context current and synchronised it), the names the events point at read from the
 * module's memory, the calls paired and summarised by the library's own analysis
 * (kregions_analyze.h), then one "kregions" record per region — its calls, cycles and ns, never
 * the raw events (32 bytes each) — and, for the trace, the first calls as "kslices" records. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inject/kregions_analyze.h"
#include "inject/kregions_records.h"
#include "inject/protocol.h"

#define SLOT_FULL 0xffffffffu
#define NAME_BYTES 128
#define SLICES_PER_LINE 64
/* The calls kept for the trace, per process: the tables count every call; the trace shows these. */
#define SLICES_MAX 20000u

static uint64_t slices_left = SLICES_MAX;

/* Which chunks hold events and how many each (a slot's current chunk partly; the others full),
 * events kept and dropped: as the library reads its own buffers (run/kregions.c). */
static void layout(const uint64_t *slots, size_t nslots, uint64_t claimed, uint64_t lost, uint64_t capacity,
                   unsigned chunk, uint32_t *fill, uint64_t *used, uint64_t *dropped)
{
  uint64_t chunks = chunk ? capacity / chunk : 0, u = claimed < chunks ? claimed : chunks, d = lost;
  for (uint64_t c = 0; c < u; c++)
    fill[c] = chunk;
  for (size_t i = 0; i < nslots; i++) {
    uint32_t pos = (uint32_t)slots[i];
    d += slots[i] >> 32;
    if (pos != SLOT_FULL && pos % chunk != 0 && pos / chunk < u)
      fill[pos / chunk] = pos % chunk;
  }
  *used = u, *dropped = d;
}

/* The events written, chunk by chunk without their unwritten tails, each slot's in the order it
 * wrote them. @return 0, or -1 (a copy failed, out of memory). */
static int copy_events(const gji_kr_driver *d, const gji_kr_buffer *b, uint64_t **out, uint64_t *n,
                       uint64_t *dropped)
{
  const size_t w = GPUJIT_REGIONS_EVENT_WORDS;
  uint64_t used = 0, k = 0, *ev = NULL, *slots = malloc(((size_t)b->nslots + 2) * 8);
  uint32_t *fill = malloc((size_t)(b->capacity / b->chunk) * sizeof(*fill) + 4);
  int err = -1;
  *out = NULL, *n = 0;
  /* the slots, then the chunks claimed and the events lost */
  if (!slots || !fill || d->dtoh(slots, b->slots, ((size_t)b->nslots + 2) * 8) != CUDA_SUCCESS)
    goto done;
  layout(slots, b->nslots, slots[b->nslots], slots[b->nslots + 1], b->capacity, b->chunk, fill, &used, dropped);
  if (used && (!(ev = malloc((size_t)(used * b->chunk) * w * 8)) ||
               d->dtoh(ev, b->events, (size_t)(used * b->chunk) * w * 8) != CUDA_SUCCESS)) {
    free(ev);
    ev = NULL;
    goto done;
  }
  for (uint64_t c = 0; c < used; c++) {
    memmove(ev + k * w, ev + c * b->chunk * w, (size_t)fill[c] * w * 8);
    k += fill[c];
  }
  *out = ev, *n = k;
  err = 0;
done:
  free(slots), free(fill);
  return err;
}

/* A name the device recorded by address: the string literal, read no further than the end of the
 * allocation holding it; where the range is unknown, byte by byte up to its NUL. */
static void read_name(const gji_kr_driver *d, uint64_t addr, char out[NAME_BYTES])
{
  CUdeviceptr base = 0;
  size_t size = 0, n = NAME_BYTES - 1;
  memset(out, 0, NAME_BYTES);
  if (d->pointer_attr(&base, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, (CUdeviceptr)addr) == CUDA_SUCCESS &&
      d->pointer_attr(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, (CUdeviceptr)addr) == CUDA_SUCCESS && addr >= base &&
      addr < base + size) {
    if (base + size - addr < n)
      n = (size_t)(base + size - addr);
    if (d->dtoh(out, (CUdeviceptr)addr, n) == CUDA_SUCCESS && out[0])
      return;
  }
  memset(out, 0, NAME_BYTES);
  for (size_t i = 0; i + 1 < NAME_BYTES; i++)
    if (d->dtoh(out + i, (CUdeviceptr)(addr + i), 1) != CUDA_SUCCESS || out[i] == '\0') {
      out[i] = '\0';
      break;
    }
  if (!out[0])
    snprintf(out, NAME_BYTES, "0x%llx", (unsigned long long)addr);
}

static void read_name_of(void *d, uint64_t addr, char *out) { read_name(d, addr, out); }

/* How many launches the events came from: distinct %gridid fields. */
static unsigned launches_of(const uint64_t *ev, size_t n)
{
  static const unsigned bits = 1u << 15;
  unsigned char seen[(1u << 15) / 8];
  unsigned count = 0;
  memset(seen, 0, sizeof(seen));
  for (size_t i = 0; i < n; i++) {
    unsigned g = (unsigned)((ev[(size_t)GPUJIT_REGIONS_EVENT_WORDS * i + 3] >> 48) & (bits - 1));
    if (!(seen[g / 8] & (1u << (g % 8))))
      seen[g / 8] |= (unsigned char)(1u << (g % 8)), count++;
  }
  return count;
}

static const char *scope_word(unsigned s) { return s == 1 ? "block" : s == 2 ? "thread" : "warp"; }

/* What every record of one read says first: the module, the read, and the buffer's totals. */
static void head(gji_line *l, const char *kind, const gji_kr_buffer *b, const char *at, uint64_t read)
{
  gji_begin(l, kind);
  gji_u64(l, "t", gji_now());
  gji_u64(l, "read", read);
  gji_str(l, "at", at);
  gji_hex(l, "module", b->handles[0]);
  if (b->handles[1])
    gji_hex(l, "module2", b->handles[1]);
}

static void four(gji_line *l, const char *key, double a, double b, double c, double d)
{
  char text[128];
  snprintf(text, sizeof(text), "[%.10g,%.10g,%.10g,%.10g]", a, b, c, d);
  gji_raw(l, key, text);
}

/* One "kregions" record per region (one without a region where no call was recorded). */
static void write_regions(const gji_kr_buffer *b, const gpujit_region_report *r, const char *at, uint64_t read)
{
  for (size_t i = 0; i < r->count || (i == 0 && r->count == 0); i++) {
    gji_line l;
    head(&l, GPUJIT_KIND(KREGIONS), b, at, read);
    gji_str(&l, "scope", scope_word(b->scope));
    gji_u64(&l, "events", r->events);
    gji_u64(&l, "dropped", r->dropped);
    gji_u64(&l, "unmatched", r->unmatched);
    gji_u64(&l, "launches", r->launches);
    gji_u64(&l, "min_cycles", r->min_call_cycles);
    gji_u64(&l, "regions", r->count);
    if (r->count) {
      const gpujit_region_stat *s = &r->regions[i];
      gji_u64(&l, "i", i);
      gji_str(&l, "name", s->name);
      gji_u64(&l, "depth", s->depth);
      gji_u64(&l, "calls", s->calls);
      four(&l, "cyc", s->cycles_mean, s->cycles_median, s->cycles_p99, s->cycles_max);
      four(&l, "ns", s->ns_mean, s->ns_median, s->ns_p99, s->ns_max);
      gji_dbl(&l, "total_ns", s->total_ns);
      gji_dbl(&l, "sm_imb", s->sm_imbalance);
      gji_dbl(&l, "unit_imb", s->unit_imbalance);
      gji_u64(&l, "sms", s->sms);
      gji_u64(&l, "units", s->units);
    }
    gji_end(&l);
  }
}

/* An array of one field of slices [a, b). */
static void slice_array(gji_line *l, const char *key, const gpujit_region_slice *s, size_t a, size_t b, int field,
                        uint64_t t0)
{
  char text[SLICES_PER_LINE * 22 + 4];
  size_t n = 0;
  text[n++] = '[';
  for (size_t i = a; i < b; i++) {
    uint64_t v = field == 0 ? s[i].region : field == 1 ? s[i].sm : field == 2 ? s[i].unit
               : field == 3 ? s[i].start_ns - t0 : field == 4 ? s[i].dur_ns : s[i].cycles;
    n += (size_t)snprintf(text + n, sizeof(text) - n, "%s%llu", i > a ? "," : "", (unsigned long long)v);
  }
  snprintf(text + n, sizeof(text) - n, "]");
  gji_raw(l, key, text);
}

/* The first calls, for the trace, while the process's budget lasts. */
static void write_slices(const gji_kr_buffer *b, const gpujit_region_report *r, const char *at, uint64_t read)
{
  size_t n = r->nslices < slices_left ? r->nslices : (size_t)slices_left;
  if (n < r->nslices)
    gji_note("kregions-trace", "the trace shows the first %u kernel-region calls of this process; the tables "
             "count them all", SLICES_MAX);
  for (size_t a = 0; a < n; a += SLICES_PER_LINE) {
    size_t e = a + SLICES_PER_LINE < n ? a + SLICES_PER_LINE : n;
    uint64_t t0 = UINT64_MAX;
    gji_line l;
    for (size_t i = a; i < e; i++)
      if (r->slices[i].start_ns < t0)
        t0 = r->slices[i].start_ns;
    head(&l, GPUJIT_KIND(KSLICES), b, at, read);
    gji_u64(&l, "t0", t0); /* globaltimer ns: the rest are offsets from it (a JSON number keeps 53 bits) */
    slice_array(&l, "i", r->slices, a, e, 0, t0);
    slice_array(&l, "sm", r->slices, a, e, 1, t0);
    slice_array(&l, "unit", r->slices, a, e, 2, t0);
    slice_array(&l, "s", r->slices, a, e, 3, t0);
    slice_array(&l, "d", r->slices, a, e, 4, t0);
    slice_array(&l, "c", r->slices, a, e, 5, t0);
    gji_end(&l);
  }
  slices_left -= n;
}

int gji_kregions_read_buffer(const gji_kr_driver *d, gji_kr_buffer *b, const char *at, uint64_t read)
{
  uint64_t bound = 0, n = 0, dropped = 0, *ev = NULL;
  gpujit_region_name *names = NULL;
  gpujit_region_report *r = NULL;
  char *text = NULL;
  long nnames = 0;
  int err = -1;
  if (d->dtoh(&bound, b->state + GJI_KR_OFF_EVENTS, sizeof(bound)) != CUDA_SUCCESS)
    return -1;
  if (bound != (uint64_t)b->events) { /* gpujit's own load bound it after us: the program reads it */
    b->foreign = true;
    return 0;
  }
  if (copy_events(d, b, &ev, &n, &dropped) < 0)
    return -1;
  if ((nnames = kra_names_of(ev, (size_t)n, NAME_BYTES, read_name_of, (void *)d, &names, &text)) >= 0 &&
      kra_analyze(&r, ev, (size_t)n, dropped, names, (size_t)nnames, 0, launches_of(ev, (size_t)n),
                  (gpujit_region_scope)b->scope) == 0) {
    if (r->events || r->dropped) { /* a module that recorded nothing in the window says nothing */
      write_regions(b, r, at, read);
      write_slices(b, r, at, read);
    }
    err = 0;
  }
  kra_report_free(r);
  free(ev), free(names), free(text);
  return err;
}

int gji_kregions_reset_buffer(const gji_kr_driver *d, const gji_kr_buffer *b)
{
  return d->memset32(b->slots, 0, ((size_t)b->nslots + 2) * 2) == CUDA_SUCCESS ? 0 : -1;
}
