/* Lean modules: the PTX pass (what goes, what stays, what it refuses) and lean builds read back
 * from their cubin's symbol table. */
#include "helpers.h"

#include "compile/image/ptx.h"
#include "gpujit.h"

/* ---- the pass on PTX written here ---- */

typedef struct lean_run {
  gpujit__buf out;
  gpujit__lean_stats st;
  gpujit__strvec removed;
} lean_run;

static void run_pass(lean_run *r, const char *ptx, const gpujit__lean_policy *policy)
{
  memset(r, 0, sizeof(*r));
  assert_int_equal(gpujit__ptx_lean(&r->out, ptx, strlen(ptx), policy, &r->st, &r->removed), 0);
}

static void run_free(lean_run *r)
{
  gpujit__buf_free(&r->out);
  gpujit__strvec_free(&r->removed);
}

static bool removed(const lean_run *r, const char *name)
{
  for (size_t i = 0; i < r->removed.count; i++)
    if (strcmp(r->removed.items[i], name) == 0)
      return true;
  return false;
}

/* The user owns nothing: every unreferenced variable may go. */
static int nobody(const char *const *names, size_t count, bool *keep, void *payload)
{
  (void)names, (void)payload;
  for (size_t i = 0; i < count; i++)
    keep[i] = false;
  return 0;
}

static const char *const PTX_HEAD = ".version 9.0\n.target sm_90\n.address_size 64\n\n";

static char *ptx_with(const char *decls, const char *body)
{
  char *s = malloc(strlen(PTX_HEAD) + strlen(decls) + strlen(body) + 512);
  sprintf(s,
          "%s%s\n.visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n\t.reg .b32 %%r<3>;\n\t.loc\t1 3 0\n%s\tret;\n}\n"
          "\t.file\t1 \"/tmp/k.cu\"\n",
          PTX_HEAD, decls, body);
  return s;
}

static void test_lean__reachable_stays(void **state)
{
  gpujit__lean_policy p = {nobody, NULL, NULL, 0};
  lean_run r;
  char *ptx = ptx_with(".global .align 4 .u32 used;\n"
                       ".global .align 8 .u64 via_init = generic(chain_end);\n"
                       ".global .align 4 .u32 chain_end = 3;\n"
                       ".global .align 1 .u8 _ZN4cuda3std3__417integral_constantIbLb0EE5valueE;\n"
                       ".const .align 4 .b8 table[8] = {1, 0, 0, 0, 2, 0, 0, 0};\n"
                       ".visible .global .align 4 .u32 host_visible;\n"
                       ".extern .global .align 4 .u32 from_elsewhere;\n"
                       ".global .texref tex_ref;\n"
                       ".global .attribute(.managed) .align 4 .u32 managed_var;\n"
                       "// unused2 named only in a comment\n"
                       ".global .align 4 .u32 unused2;\n",
                       "\tld.global.u32 %r1, [used];\n\tld.global.u64 %rd1, [via_init];\n");
  (void)state;
  run_pass(&r, ptx, &p);
  assert_int_equal(r.st.variables, 6); /* used, via_init, chain_end, integral_constant, table, unused2 */
  assert_int_equal(r.st.removed, 3);
  assert_true(removed(&r, "_ZN4cuda3std3__417integral_constantIbLb0EE5valueE"));
  assert_true(removed(&r, "table"));
  assert_true(removed(&r, "unused2"));
  assert_non_null(strstr(r.out.data, ".global .align 4 .u32 used;"));
  assert_non_null(strstr(r.out.data, "chain_end = 3;")); /* reached through via_init's initialiser */
  assert_non_null(strstr(r.out.data, ".visible .global .align 4 .u32 host_visible;"));
  assert_non_null(strstr(r.out.data, ".extern .global .align 4 .u32 from_elsewhere;"));
  assert_non_null(strstr(r.out.data, "tex_ref"));
  assert_non_null(strstr(r.out.data, "managed_var"));
  assert_null(strstr(r.out.data, "integral_constant"));
  assert_null(strstr(r.out.data, "table["));
  assert_non_null(strstr(r.out.data, "// unused2 named only in a comment\n\n.visible .entry k("));
  assert_non_null(strstr(r.out.data, "\t.file\t1 \"/tmp/k.cu\"\n"));
  assert_int_equal(r.st.ptx_after, r.out.len);
  assert_int_equal(r.st.ptx_before, strlen(ptx));
  assert_string_equal(r.st.note, "");
  run_free(&r);
  free(ptx);
}

/* Name expressions and the user's own variables stay, and what they reach. */
static int keeps_mine(const char *const *names, size_t count, bool *keep, void *payload)
{
  (void)payload;
  for (size_t i = 0; i < count; i++)
    keep[i] = strcmp(names[i], "mine") == 0;
  return 0;
}

static void test_lean__kept_names_and_the_users(void **state)
{
  const char *keep[] = {"_Z5tableIfE"};
  gpujit__lean_policy p = {keeps_mine, NULL, keep, 1};
  lean_run r;
  char *ptx = ptx_with(".global .align 4 .f32 _Z5tableIfE = 0f3F800000;\n"
                       ".global .align 8 .u64 mine = generic(mine_target);\n"
                       ".global .align 4 .u32 mine_target;\n"
                       ".global .align 4 .u32 other;\n",
                       "");
  (void)state;
  run_pass(&r, ptx, &p);
  assert_int_equal(r.st.removed, 1);
  assert_true(removed(&r, "other"));
  assert_int_equal(r.st.kept_user, 1);
  assert_non_null(strstr(r.out.data, "_Z5tableIfE"));
  assert_non_null(strstr(r.out.data, "mine_target"));
  run_free(&r);
  /* no policy: nothing unreferenced goes */
  run_pass(&r, ptx, NULL);
  assert_int_equal(r.st.removed, 0);
  assert_int_equal(r.st.kept_user, 4);
  assert_string_equal(r.out.data, ptx);
  run_free(&r);
  free(ptx);
}

/* What the pass does not know leaves the text exactly as it was, and says why. */
static void test_lean__unknown_construct_keeps_all(void **state)
{
  static const struct {
    const char *decls, *why;
  } cases[] = {
      {".global .align 4 .u32 a;\n.alias fa, k;\n", "'.alias'"},
      {".global .align 4 .u32 a, b;\n", "several variables in one declaration"},
      {".global .align 4 .u32 a;\n.blocksareclusters 1;\n", "unknown directive '.blocksareclusters'"},
      {".global .align 4 .u32 a;\n.global .align 4 .u32 a;\n", "'a' is declared twice"},
      {".global .align 4 .u32 a = {1, 2;\n", "a statement without its end"},
      {"/* never closed\n", "an unterminated comment or string"},
      {".global .align 4 .u32 a;\nstray tokens;\n", "'stray' at the top level"},
  };
  gpujit__lean_policy p = {nobody, NULL, NULL, 0};
  (void)state;
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    lean_run r;
    char *ptx = ptx_with(cases[i].decls, "");
    run_pass(&r, ptx, &p);
    if (!strstr(r.st.note, cases[i].why))
      fail_msg("case %zu: note '%s' lacks '%s'", i, r.st.note, cases[i].why);
    assert_non_null(strstr(r.st.note, "PTX kept whole"));
    assert_string_equal(r.out.data, ptx);
    assert_int_equal(r.st.removed, 0);
    run_free(&r);
    free(ptx);
  }
}

static void expect_scope(const char *name, const char *want)
{
  gpujit__strvec v = {0};
  char got[512] = "";
  assert_int_equal(gpujit__ptx_name_scope(&v, name), 0);
  for (size_t i = 0; i < v.count; i++)
    snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? " " : "", v.items[i]);
  if (strcmp(got, want) != 0)
    fail_msg("%s: got '%s', want '%s'", name, got, want);
  gpujit__strvec_free(&v);
}

static void test_lean__name_scopes(void **state)
{
  gpujit__strvec v = {0};
  (void)state;
  expect_scope("counter", "counter");
  expect_scope("_ZN2ns7counterE", "ns counter");
  expect_scope("_Z4tvarIiE", "tvar");
  expect_scope("_ZN4cuda3std3__417integral_constantIbLb0EE5valueE", "cuda std __4 integral_constant value");
  expect_scope("_ZN4cuda3std3__417integral_constantImLm2EE5valueE", "cuda std __4 integral_constant value");
  expect_scope("_ZN4cuda3std3__421__numeric_limits_implIbLNS1_21__numeric_limits_typeE1EE14is_specializedE",
               "cuda std __4 __numeric_limits_impl is_specialized");
  expect_scope("_ZN31_INTERNAL_00000000_7_ltob_cu_k24cuda3std3__45__cpo5beginE", "cuda std __4 __cpo begin");
  expect_scope("_ZN12_GLOBAL__N_15localE", "local");
  expect_scope("_ZNSt5arrayIfLm4EE4sizeE", "std array size");
  expect_scope("_ZN3lib6traitsIJifEE5valueE", "lib traits value");
  /* what the reader does not know is refused, so the variable stays */
  assert_int_equal(gpujit__ptx_name_scope(&v, "_ZZ9block_sumE7storage"), GPUJIT_EPARSE);
  assert_int_equal(gpujit__ptx_name_scope(&v, "_ZN1AIXadL_Z1fvEEE1vE"), GPUJIT_EPARSE);
  assert_int_equal(gpujit__ptx_name_scope(&v, "_ZN2ns"), GPUJIT_EPARSE);
  assert_int_equal(gpujit__ptx_name_scope(&v, "_Z999x"), GPUJIT_EPARSE);
  gpujit__strvec_free(&v);
  gpujit_error_clear();
}

/* ---- lean builds, read back from the cubin ---- */

/* Whether the cubin's symbol table has an object named `name` (prefix: any starting so). */
static size_t elf_objects(const void *img, size_t size, const char *name, bool prefix)
{
  const Elf64_Ehdr *eh = img;
  const Elf64_Shdr *sh = (const Elf64_Shdr *)((const char *)img + eh->e_shoff);
  size_t n = 0;
  assert_true(size > sizeof(*eh) && eh->e_shoff + (size_t)eh->e_shnum * sizeof(*sh) <= size);
  for (unsigned i = 0; i < eh->e_shnum; i++) {
    if (sh[i].sh_type != SHT_SYMTAB)
      continue;
    const Elf64_Sym *sym = (const Elf64_Sym *)((const char *)img + sh[i].sh_offset);
    const char *str = (const char *)img + sh[sh[i].sh_link].sh_offset;
    for (size_t k = 0; k < sh[i].sh_size / sizeof(*sym); k++) {
      const char *s = str + sym[k].st_name;
      if (ELF64_ST_TYPE(sym[k].st_info) == STT_OBJECT &&
          (prefix ? strncmp(s, name, strlen(name)) == 0 : strcmp(s, name) == 0))
        n++;
    }
  }
  return n;
}

static gpujit_module *build(const char *path, const char *src, int lean, const char *const *exprs, size_t nexprs)
{
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_source s = {path, src, strlen(src)};
  gpujit_module *m = NULL;
  o.arch = "sm_90";
  o.lean = lean;
  o.name_expressions = exprs;
  o.name_expressions_count = nexprs;
  if (gpujit_module_build_sources(&m, &s, 1, &o) != 0)
    fail_msg("build failed: %s\n%s", gpujit_error_last(), gpujit_error_log());
  return m;
}

#define VARS_CU                                                                                  \
  "#include <cuda/std/limits>\n"                                                                   \
  "constexpr int kN = 4;\n"                                                                      \
  "__device__ int counter;\n"                                                                    \
  "__device__ int unused_dev;\n"                                                                 \
  "__constant__ float table[4] = {1, 2, 3, 4};\n"                                                \
  "namespace ns { __device__ int z; }\n"                                                         \
  "__device__ int *ptr_to = &counter;\n"                                                         \
  "template <class T> __device__ T tvar = T(7);\n"                                               \
  "extern \"C\" __global__ void k(int *out) {\n"                                                 \
  "  out[0] = counter + (int)table[1] + kN + ns::z + tvar<int> + cuda::std::numeric_limits<int>::max();\n" \
  "}\n"

/* A declaration whose __device__ a macro of the user's hides: every variable the user's files
 * name stays (the rule before the declaration was read), so the host still finds it by name. */
static void test_lean__qualifier_in_a_macro(void **state)
{
  static const char src[] = "#include <cuda/std/limits>\n#define DEV __device__\nDEV int hidden;\n"
                            "constexpr int kM = 3;\n"
                            "extern \"C\" __global__ void k(int *o) { o[0] = kM + cuda::std::numeric_limits<int>::max(); }\n";
  gpujit_module *m = build("/virtual/lean/macro.cu", src, 1, NULL, 0);
  size_t size;
  const void *img = gpujit_module_image(m, &size);
  (void)state;
  assert_int_equal(elf_objects(img, size, "hidden", false), 1);
  assert_int_equal(elf_objects(img, size, "kM", false), 1);
  assert_int_equal(elf_objects(img, size, "_ZN4cuda3std", true), 0); /* the toolkit's still go */
  gpujit_module_free(m);
}

static void test_lean__users_variables_stay(void **state)
{
  const char *exprs[] = {"&tvar<float>"};
  gpujit_module *m = build("/virtual/lean/vars.cu", VARS_CU, 1, exprs, 1), *whole;
  gpujit_module_lean l;
  size_t size, wsize;
  const void *img = gpujit_module_image(m, &size), *wimg;
  static const char *const kept[] = {"counter", "unused_dev", "table", "_ZN2ns1zE", "ptr_to", "_Z4tvarIiE",
                                     "_Z4tvarIfE"};
  (void)state;
  for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
    if (elf_objects(img, size, kept[i], false) != 1)
      fail_msg("lean cubin lost '%s'", kept[i]);
  /* a host constexpr NVRTC emits for the device is no variable of the user's device code (nvcc
   * folds it away): gone, the kernel reads its value all the same */
  assert_int_equal(elf_objects(img, size, "kN", false), 0);
  whole = build("/virtual/lean/vars.cu", VARS_CU, 0, exprs, 1);
  wimg = gpujit_module_image(whole, &wsize);
  /* the toolkit's static members were there, and are gone */
  assert_true(elf_objects(wimg, wsize, "_ZN4cuda3std", true) > 20);
  assert_int_equal(elf_objects(img, size, "_ZN4cuda3std", true), 0);
  assert_true(size * 2 < wsize);
  gpujit_module_lean_get(m, &l);
  assert_int_equal(l.applied, 1);
  assert_true(l.removed > 20);
  assert_true(l.kept_unreferenced >= 2); /* unused_dev, kN: nothing uses them, the user declared them */
  assert_true(l.ptx_bytes_after < l.ptx_bytes_before);
  assert_string_equal(l.note, "");
  gpujit_module_lean_get(whole, &l);
  assert_int_equal(l.applied, 0);
  /* ptxas's per-kernel lines stay in the log */
  assert_non_null(strstr(gpujit_module_log(m), "ptxas info    : Used"));
  gpujit_module_free(m);
  gpujit_module_free(whole);
}


/* ptxas's "Used N registers, ..." line of the whole build is in the lean build's log too (the
 * same kernel either way); both logs are printed where not. Returns N. The figures themselves
 * belong to the toolkit's ptxas (14 registers for block_sum with CUDA 13.0's here), so they are
 * compared, not written down. */
static int same_kernel(gpujit_module *lean, gpujit_module *whole)
{
  const char *used = strstr(gpujit_module_log(whole), "Used ");
  char line[160];
  int regs = -1;
  assert_non_null(used);
  snprintf(line, sizeof(line), "%.*s", (int)strcspn(used, "\n"), used);
  if (!strstr(gpujit_module_log(lean), line))
    fprintf(stderr, "lean log:\n%s\nwhole log:\n%s\n", gpujit_module_log(lean), gpujit_module_log(whole));
  assert_non_null(strstr(gpujit_module_log(lean), line));
  assert_int_equal(sscanf(line, "Used %d registers", &regs), 1);
  return regs;
}

/* Token pasting in the user's file: who declared what cannot be told, so everything stays. */
static void test_lean__token_pasting_keeps_all(void **state)
{
  gpujit_module *m = build("/virtual/lean/paste.cu",
                           "#include <cuda/std/type_traits>\n"
                           "#define DECL(n) __device__ int var_##n;\n"
                           "DECL(1)\n"
                           "extern \"C\" __global__ void k(int *o) { o[0] = cuda::std::is_same_v<int, int>; }\n",
                           1, NULL, 0);
  gpujit_module_lean l;
  size_t size;
  const void *img = gpujit_module_image(m, &size);
  (void)state;
  gpujit_module_lean_get(m, &l);
  assert_int_equal(l.removed, 0);
  assert_non_null(strstr(l.note, "paste tokens"));
  assert_int_equal(elf_objects(img, size, "var_1", false), 1);
  gpujit_module_free(m);
}

static void test_lean__block_reduce(void **state)
{
  const char *path = GPUJIT_EXAMPLES_DIR "/block_reduce.cu";
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_module *lean = NULL, *whole = NULL;
  gpujit_module_lean l;
  size_t size, wsize;
  const void *img, *wimg;
  (void)state;
  o.arch = "sm_90";
  assert_int_equal(gpujit_module_build_files(&lean, &path, 1, &o), 0);
  o.lean = 0;
  assert_int_equal(gpujit_module_build_files(&whole, &path, 1, &o), 0);
  img = gpujit_module_image(lean, &size);
  wimg = gpujit_module_image(whole, &wsize);
  assert_true(wsize > 150 * 1024);
  assert_true(size < 24 * 1024); /* nvcc -cubin -lineinfo: 20,856 bytes */
  assert_true(elf_objects(wimg, wsize, "", true) > 800);
  assert_int_equal(elf_objects(img, size, "_ZN", true), 0);
  assert_string_equal(gpujit_module_kernel(lean, 0), "block_sum");
  /* line info names the user's file, as before (directory and name apart, as DWARF keeps them) */
  assert_true(th_elf_has_section(img, size, ".nv_debug_line_sass"));
  assert_non_null(memmem(img, size, GPUJIT_EXAMPLES_DIR, strlen(GPUJIT_EXAMPLES_DIR)));
  assert_non_null(memmem(img, size, "block_reduce.cu", 16));
  gpujit_module_lean_get(lean, &l);
  assert_true(l.removed > 800);
  assert_int_equal(l.variables, l.removed); /* kThreads too: a host constexpr, not __device__ */
  assert_int_equal(l.kept_unreferenced, 0);
  /* ptxas makes the same kernel either way: whole-program, as NVRTC runs it (nvJitLink's
   * relocatable ptxas would need 18 registers) */
  assert_true(same_kernel(lean, whole) < 18);
  gpujit_module_free(lean);
  gpujit_module_free(whole);
}

/* The options NVRTC would have given its ptxas reach ours: the same kernel either way. */
static void test_lean__ptxas_options(void **state)
{
  char *dir = th_tmpdir();
  char *src = th_write(dir, "opts.cu",
                       "extern \"C\" __global__ void k(float *x, int n) {\n"
                       "  float a = 0; for (int i = 0; i < n; i++) a += x[i] * x[(i * 7) % n] + __sinf(x[i]);\n"
                       "  x[threadIdx.x] = a; }\n");
  const char *paths[] = {src};
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_module *lean = NULL, *whole = NULL;
  (void)state;
  o.arch = "sm_90";
  o.maxrregcount = 16;
  o.ofast_compile = "max";
  o.fast_math = 1;
  assert_int_equal(gpujit_module_build_files(&lean, paths, 1, &o), 0);
  o.lean = 0;
  assert_int_equal(gpujit_module_build_files(&whole, paths, 1, &o), 0);
  assert_true(same_kernel(lean, whole) > 0);
  gpujit_module_free(lean);
  gpujit_module_free(whole);
  th_rmrf(dir);
  free(src), free(dir);
}

/* A linked module: the lean pass runs on nvJitLink's linked PTX. */
static void test_lean__lto(void **state)
{
  char *dir = th_tmpdir();
  char *a = th_write(dir, "reduce.cu",
                     "#include <cub/block/block_reduce.cuh>\n"
                     "__device__ int shared_counter;\n"
                     "extern \"C\" __global__ void k2(float *p) {\n"
                     "  using R = cub::BlockReduce<float, 128>; __shared__ typename R::TempStorage s;\n"
                     "  float v = R(s).Sum(p[threadIdx.x]); if (!threadIdx.x) p[0] = v; }\n");
  char *b = th_write(dir, "saxpy.cu", "extern \"C\" __global__ void saxpy(float a, float *x) { x[0] *= a; }\n");
  const char *paths[] = {a, b};
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_module *m = NULL;
  gpujit_module_lean l;
  size_t size;
  const void *img;
  (void)state;
  o.arch = "sm_90";
  assert_int_equal(gpujit_module_build_files(&m, paths, 2, &o), 0);
  img = gpujit_module_image(m, &size);
  gpujit_module_lean_get(m, &l);
  assert_int_equal(l.applied, 1);
  assert_true(l.removed > 20);
  assert_int_equal(elf_objects(img, size, "_ZN31_INTERNAL", true), 0);
  assert_int_equal(elf_objects(img, size, "shared_counter", false), 1); /* .visible in a linked module */
  assert_int_equal(gpujit_module_kernel_count(m), 2);
  gpujit_module_free(m);
  th_rmrf(dir);
  free(a), free(b), free(dir);
}

/* The lean path is part of the key; a hit says what the miss did. */
static void test_lean__cache(void **state)
{
  char *dir = th_tmpdir(), *cdir = th_path(dir, "cache");
  const char *path = GPUJIT_EXAMPLES_DIR "/saxpy.cu";
  gpujit_cache_options co = GPUJIT_CACHE_OPTIONS_INIT;
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_cache *c = NULL;
  gpujit_module *m = NULL;
  gpujit_module_lean l;
  char key[40];
  (void)state;
  co.dir = cdir;
  assert_int_equal(gpujit_cache_open(&c, &co), 0);
  o.arch = "sm_90";
  o.cache = c;
  assert_int_equal(gpujit_module_build_files(&m, &path, 1, &o), 0);
  assert_int_equal(gpujit_module_cache_status(m), GPUJIT_CACHE_MISS);
  snprintf(key, sizeof(key), "%s", gpujit_module_cache_key(m));
  gpujit_module_free(m);
  o.lean = 0;
  assert_int_equal(gpujit_module_build_files(&m, &path, 1, &o), 0);
  assert_int_equal(gpujit_module_cache_status(m), GPUJIT_CACHE_MISS); /* another image: another entry */
  assert_string_not_equal(gpujit_module_cache_key(m), key);
  gpujit_module_free(m);
  o.lean = 1;
  assert_int_equal(gpujit_module_build_files(&m, &path, 1, &o), 0);
  assert_int_equal(gpujit_module_cache_status(m), GPUJIT_CACHE_HIT);
  gpujit_module_lean_get(m, &l);
  assert_int_equal(l.applied, 1);
  assert_true(l.ptx_bytes_before > 0 && l.ptx_bytes_after > 0);
  gpujit_module_free(m);
  gpujit_cache_free(c);
  th_rmrf(dir);
  free(cdir), free(dir);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lean__reachable_stays),
      cmocka_unit_test(test_lean__kept_names_and_the_users),
      cmocka_unit_test(test_lean__unknown_construct_keeps_all),
      cmocka_unit_test(test_lean__name_scopes),
      cmocka_unit_test(test_lean__users_variables_stay),
      cmocka_unit_test(test_lean__qualifier_in_a_macro),
      cmocka_unit_test(test_lean__token_pasting_keeps_all),
      cmocka_unit_test(test_lean__block_reduce),
      cmocka_unit_test(test_lean__ptxas_options),
      cmocka_unit_test(test_lean__lto),
      cmocka_unit_test(test_lean__cache),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
