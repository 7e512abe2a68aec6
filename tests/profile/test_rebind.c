/* An in-process profile's rebinding by value (inject/rebind_scan.c) without a GPU: a library loaded
 * RTLD_LOCAL (rebind_holder.c) holds NVRTC's nvrtcCompileProgram, resolved before the session, in
 * its .data, its .bss, one far page of a 64 MiB .bss, and a RELRO table a relocation filled. What
 * it checks:
 *   - each of them holds the wrapper during the session (a compile through one is recorded) and
 *     the real function again after it, the RELRO table read-only again;
 *   - the pages of the large .bss the program never touched are not read (they stay unmapped: the
 *     former scan, GPUJIT_BENCH_REBIND=full, faulted each one in), and the full scan rebinds the
 *     same words;
 *   - a pointer on the heap is not reached (the session's note says so), and still calls NVRTC;
 *   - the measuring note says what was read. */
#include "helpers.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <nvrtc.h>
#include <sys/mman.h>

#include "gpujit.h"

typedef nvrtcResult (*compile_fn)(nvrtcProgram, int, const char *const *);

static struct {
  void **data, **bss, **big, ***heap;
  const compile_fn *relro;
  const size_t *big_bytes, *far;
  void (*hold)(void *);
} H;
/* NVRTC's nvrtcCompileProgram, kept scrambled: this program's data is scanned too */
static uintptr_t real_scrambled;
#define SCRAMBLE 0x5a5a5a5a5a5a5a5aull
#define real ((void *)(real_scrambled ^ SCRAMBLE))

static int setup(void **state)
{
  void *h = dlopen(GPUJIT_REBIND_HOLDER, RTLD_NOW | RTLD_LOCAL);
  (void)state;
  if (!h)
    return -1;
  *(void **)&H.data = dlsym(h, "holder_data");
  *(void **)&H.bss = dlsym(h, "holder_bss");
  *(void **)&H.big = dlsym(h, "holder_big");
  *(void **)&H.heap = dlsym(h, "holder_heap");
  *(void **)&H.relro = dlsym(h, "holder_relro");
  *(void **)&H.big_bytes = dlsym(h, "holder_big_bytes");
  *(void **)&H.far = dlsym(h, "holder_far");
  *(void **)&H.hold = dlsym(h, "holder_hold");
  real_scrambled = (uintptr_t)dlsym(RTLD_DEFAULT, "nvrtcCompileProgram") ^ SCRAMBLE;
  if (!H.data || !H.bss || !H.big || !H.heap || !H.relro || !H.big_bytes || !H.far || !H.hold || !real)
    return -1;
  H.hold(real); /* resolved before any session, as CuPy and PyTorch's lazy NVRTC hold it */
  return 0;
}

/* Pages of the large .bss in memory, of those 4 MiB to 32 MiB in (never touched by the program;
 * the word written is 40 MiB in). */
static size_t resident_untouched(void)
{
  size_t pg = (size_t)sysconf(_SC_PAGESIZE), n = (28u << 20) / pg, count = 0;
  uintptr_t at = ((uintptr_t)H.big + (4u << 20) + pg - 1) & ~(uintptr_t)(pg - 1);
  unsigned char *vec = malloc(n);
  assert_non_null(vec);
  assert_int_equal(mincore((void *)at, n * pg, vec), 0);
  for (size_t i = 0; i < n; i++)
    count += vec[i] & 1;
  free(vec);
  return count;
}

static void compile_through(compile_fn f, const char *name)
{
  static const char src[] = "extern \"C\" __global__ void k(float *x) { x[0] = 1; }";
  const char *opts[] = {"--gpu-architecture=compute_75"};
  nvrtcProgram prog;
  assert_int_equal(nvrtcCreateProgram(&prog, src, name, 0, NULL, NULL), NVRTC_SUCCESS);
  assert_int_equal(f(prog, 1, opts), NVRTC_SUCCESS);
  nvrtcDestroyProgram(&prog);
}

static bool compiled(const gpujit_profile *p, const char *name)
{
  const gpujit_profile_compile *c;
  size_t n = gpujit_profile_compiles(p, &c);
  for (size_t i = 0; i < n; i++)
    if (!strcmp(c[i].kind, "nvrtc") && !strcmp(c[i].name, name))
      return true;
  return false;
}

/* One session with GPUJIT_BENCH_REBIND=`how`: every held word rebound, then put back. */
static gpujit_profile *session(const char *how)
{
  gpujit_profile_options o = GPUJIT_PROFILE_OPTIONS_INIT;
  gpujit_profile_session *s = NULL;
  gpujit_profile *p = NULL;
  void *w;
  o.inject_path = GPUJIT_INJECT; /* records: a new directory, removed with the profile */
  o.no_cupti = 1; /* no driver here: rebinding alone */
  setenv("GPUJIT_BENCH_REBIND", how, 1);
  assert_int_equal(gpujit_profile_start(&s, &o), 0);
  w = *H.bss;
  assert_ptr_not_equal(w, real); /* .bss */
  assert_non_null(w);
  assert_ptr_equal(*H.data, w);              /* .data */
  assert_ptr_equal(H.big[*H.far], w);        /* one far page of a large .bss */
  assert_ptr_equal((void *)H.relro[0], w);   /* RELRO, filled by a relocation */
  assert_ptr_equal((*H.heap)[1], real);      /* the heap: not reached */
  compile_through((compile_fn)w, "through_bss.cu");
  compile_through((compile_fn)(*H.heap)[1], "through_heap.cu"); /* still NVRTC's, unrecorded */
  assert_int_equal(gpujit_profile_stop(s, &p), 0);
  assert_ptr_equal(*H.bss, real); /* put back */
  assert_ptr_equal(*H.data, real);
  assert_ptr_equal(H.big[*H.far], real);
  assert_ptr_equal((void *)H.relro[0], real);
  assert_true(compiled(p, "through_bss.cu"));
  assert_false(compiled(p, "through_heap.cu"));
  assert_non_null(strstr(gpujit_profile_notes(p), "(the heap)")); /* what is not reached is said */
  gpujit_profile_session_free(s);
  unsetenv("GPUJIT_BENCH_REBIND");
  return p;
}

/* The measuring note: what was read, and what rebinding and putting back cost. */
static void measured(const gpujit_profile *p, const char *read)
{
  const char *notes = gpujit_profile_notes(p);
  assert_non_null(strstr(notes, "rebinding took"));
  assert_non_null(strstr(notes, "putting back took"));
  assert_non_null(strstr(notes, read));
}

/* Whether this process can read its pagemap's flags (a kernel or sandbox may refuse them; then every
 * page is read, as the note says, and the check below has nothing to check). */
static bool pagemap_readable(void)
{
  static volatile uintptr_t probe;
  uint64_t e = 0;
  int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  bool ok;
  probe = (uintptr_t)&probe;
  ok = fd >= 0 && pread(fd, &e, sizeof(e), (off_t)((uintptr_t)&probe / (uintptr_t)sysconf(_SC_PAGESIZE) * 8)) == 8 &&
       (e >> 63) != 0;
  if (fd >= 0)
    close(fd);
  return ok;
}

static void test_rebind__written_pages_only(void **state)
{
  gpujit_profile *p;
  (void)state;
  if (!pagemap_readable()) {
    print_message("skip: /proc/self/pagemap gives no flags here: every page is read\n");
    skip();
  }
  assert_int_equal(resident_untouched(), 0);
  p = session("v");
  /* the untouched pages were not read: they are still not there */
  assert_int_equal(resident_untouched(), 0);
  measured(p, "(the pages written)");
  gpujit_profile_free(p);
}

static void test_rebind__full_scan_same_words(void **state)
{
  gpujit_profile *p;
  (void)state;
  p = session("full"); /* the former scan: the same words rebound and put back */
  measured(p, "(every page)");
  /* and it read every page: the check above sees the difference */
  assert_true(resident_untouched() > 0);
  gpujit_profile_free(p);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rebind__written_pages_only), /* first: the full scan maps the pages */
      cmocka_unit_test(test_rebind__full_scan_same_words),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
