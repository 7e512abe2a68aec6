/* Reading cubins laid out as other NVRTC versions write them: NVRTC 13.5 (pip) puts the section
 * header table at a 4-aligned offset, so nothing may assume 8-byte alignment of the table, a
 * symbol table or a relocation table. Each case takes a real NVRTC build, lays the same bytes out
 * at 4-aligned offsets, and compares what gpujit reads from both. */
#include <elf.h>

#include "helpers.h"

#include "compile/image/image.h"
#include "compile/image/relocate.h"
#include "gpujit.h"

static const char SRC[] = "extern \"C\" __global__ void k(float *x, int n) { int i = threadIdx.x; if (i < n) x[i] *= 2; }\n"
                          "extern \"C\" __global__ void k2(double a, const char *s, short t) {}\n";

static void build(gpujit__buf *out, bool lineinfo)
{
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_source s = {"/base/one/img.cu", SRC, sizeof(SRC) - 1};
  gpujit_module *m = NULL;
  const void *img;
  size_t n;
  o.arch = "sm_90";
  o.lineinfo = lineinfo;
  if (gpujit_module_build_sources(&m, &s, 1, &o) < 0)
    fail_msg("build failed: %s\n%s", gpujit_error_last(), gpujit_error_log());
  img = gpujit_module_image(m, &n);
  memset(out, 0, sizeof(*out));
  assert_int_equal(gpujit__buf_put(out, img, n), 0);
  gpujit_module_free(m);
}

/* Pad the image so that its length is 4 more than a multiple of 8. */
static size_t pad_to_4(gpujit__buf *b)
{
  static const char zero[8];
  size_t pad = (12 - b->len % 8) % 8;
  assert_int_equal(gpujit__buf_put(b, zero, pad), 0);
  assert_int_equal(b->len % 8, 4);
  return b->len;
}

static Elf64_Shdr *table(gpujit__buf *b, Elf64_Ehdr *eh)
{
  memcpy(eh, b->data, sizeof(*eh));
  return (Elf64_Shdr *)(b->data + eh->e_shoff); /* still 8-aligned here: NVRTC 13.0's layout */
}

/* Append a copy of [off, off + n) (copied out first: the append may move the buffer). */
static void copy_to_end(gpujit__buf *b, size_t off, size_t n)
{
  char *tmp = malloc(n ? n : 1);
  assert_non_null(tmp);
  memcpy(tmp, b->data + off, n);
  assert_int_equal(gpujit__buf_put(b, tmp, n), 0);
  free(tmp);
}

/* Copy every section of type `type` to the end at a 4-aligned offset, then the header table. */
static void misalign(gpujit__buf *b, unsigned type)
{
  Elf64_Ehdr eh;
  Elf64_Shdr *sh = table(b, &eh);
  size_t at;
  assert_int_equal(eh.e_shoff % 8, 0);
  for (unsigned i = 0; i < eh.e_shnum; i++) {
    Elf64_Shdr s;
    sh = table(b, &eh);
    s = sh[i];
    if (s.sh_type != type)
      continue;
    at = pad_to_4(b);
    copy_to_end(b, s.sh_offset, s.sh_size);
    table(b, &eh)[i].sh_offset = at;
  }
  at = pad_to_4(b);
  copy_to_end(b, eh.e_shoff, eh.e_shnum * sizeof(Elf64_Shdr));
  eh.e_shoff = at;
  memcpy(b->data, &eh, sizeof(eh));
}

static void kernels_of(char *out, size_t cap, const gpujit__buf *b)
{
  gpujit__strvec v = {0};
  out[0] = '\0';
  assert_int_equal(gpujit__image_kernels(&v, b->data, b->len, GPUJIT_OUTPUT_CUBIN), 0);
  for (size_t i = 0; i < v.count; i++)
    snprintf(out + strlen(out), cap - strlen(out), "%s%s", i ? " " : "", v.items[i]);
  gpujit__strvec_free(&v);
}

static void test_image__table_and_symbols_4_aligned(void **state)
{
  gpujit__buf a, b;
  char ka[256], kb[256];
  int sa[8] = {0}, sb[8] = {0};
  (void)state;
  build(&a, false);
  build(&b, false);
  misalign(&b, SHT_SYMTAB);
  kernels_of(ka, sizeof(ka), &a);
  kernels_of(kb, sizeof(kb), &b);
  assert_string_equal(ka, "k2 k");
  assert_string_equal(kb, ka);
  assert_int_equal(gpujit__cubin_params(a.data, a.len, "k2", sa, 8), 3);
  assert_int_equal(gpujit__cubin_params(b.data, b.len, "k2", sb, 8), 3);
  assert_int_equal(sb[0], 8);
  assert_int_equal(sb[1], 8);
  assert_int_equal(sb[2], 2);
  assert_memory_equal(sa, sb, sizeof(sa));
  gpujit__buf_free(&a);
  gpujit__buf_free(&b);
}

/* The .debug_line section of an image, copied, for comparison. */
static void line_table(gpujit__buf *out, const gpujit__buf *img)
{
  gpujit__elf elf;
  memset(out, 0, sizeof(*out));
  assert_int_equal(gpujit__elf_open(&elf, img->data, img->len), 0);
  for (unsigned i = 0; i < elf.count; i++) {
    const char *name = gpujit__elf_section_name(&elf, i);
    if (name && strcmp(name, ".debug_line") == 0)
      assert_int_equal(gpujit__buf_put(out, img->data + elf.sh[i].sh_offset, elf.sh[i].sh_size), 0);
  }
  gpujit__elf_close(&elf);
  assert_true(out->len > 0);
}

static void test_image__rebase_4_aligned(void **state)
{
  gpujit__buf a, b, la, lb;
  (void)state;
  build(&a, true);
  build(&b, true);
  misalign(&b, SHT_RELA);
  assert_int_equal(gpujit__cubin_rebase(&a, "/base/one", "/elsewhere/two"), 0);
  assert_int_equal(gpujit__cubin_rebase(&b, "/base/one", "/elsewhere/two"), 0);
  line_table(&la, &a);
  line_table(&lb, &b);
  assert_int_equal(la.len, lb.len);
  assert_memory_equal(la.data, lb.data, la.len);
  assert_non_null(memmem(lb.data, lb.len, "/elsewhere/two", 14));
  assert_null(memmem(lb.data, lb.len, "/base/one", 9));
  gpujit__buf_free(&a);
  gpujit__buf_free(&b);
  gpujit__buf_free(&la);
  gpujit__buf_free(&lb);
}

/* A table past the end, or with entries of another size, is still refused. */
static void test_image__bad_tables_refused(void **state)
{
  gpujit__buf a;
  Elf64_Ehdr eh;
  gpujit__elf elf;
  gpujit__strvec v = {0};
  (void)state;
  build(&a, false);
  memcpy(&eh, a.data, sizeof(eh));
  eh.e_shoff = a.len - 4;
  memcpy(a.data, &eh, sizeof(eh));
  assert_int_equal(gpujit__elf_open(&elf, a.data, a.len), -1);
  assert_int_equal(gpujit__image_kernels(&v, a.data, a.len, GPUJIT_OUTPUT_CUBIN), GPUJIT_ECORRUPT);
  eh.e_shoff = 64;
  eh.e_shentsize = 40;
  memcpy(a.data, &eh, sizeof(eh));
  assert_int_equal(gpujit__elf_open(&elf, a.data, a.len), -1);
  gpujit__strvec_free(&v);
  gpujit__buf_free(&a);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_image__table_and_symbols_4_aligned),
      cmocka_unit_test(test_image__rebase_4_aligned),
      cmocka_unit_test(test_image__bad_tables_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
