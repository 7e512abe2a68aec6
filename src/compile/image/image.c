/* Reading compiled images: kernel (entry function) names from a cubin's ELF symbols or PTX. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/image/image.h"

#define STO_CUDA_ENTRY 0x10

/*
 * The section header table is copied out: NVRTC 13.5 writes it at a 4-aligned offset (and a
 * symbol table may sit anywhere), so nothing in an image is read through a cast pointer.
 */
int gpujit__elf_open(gpujit__elf *elf, const void *image, size_t size)
{
  Elf64_Ehdr eh;
  memset(elf, 0, sizeof(*elf));
  if (size < sizeof(eh))
    return -1;
  memcpy(&eh, image, sizeof(eh));
  if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shoff == 0 ||
      eh.e_shoff > size || eh.e_shentsize != sizeof(Elf64_Shdr) ||
      (size - eh.e_shoff) / sizeof(Elf64_Shdr) < eh.e_shnum || eh.e_shstrndx >= eh.e_shnum)
    return -1;
  if (!(elf->sh = malloc((eh.e_shnum ? eh.e_shnum : 1) * sizeof(Elf64_Shdr))))
    return -1;
  memcpy(elf->sh, (const unsigned char *)image + eh.e_shoff, eh.e_shnum * sizeof(Elf64_Shdr));
  for (unsigned i = 0; i < eh.e_shnum; i++)
    if (elf->sh[i].sh_type != SHT_NOBITS &&
        (elf->sh[i].sh_offset > size || elf->sh[i].sh_size > size - elf->sh[i].sh_offset)) {
      gpujit__elf_close(elf);
      return -1;
    }
  elf->image = image;
  elf->size = size;
  elf->count = eh.e_shnum;
  elf->shoff = eh.e_shoff;
  elf->shstrndx = eh.e_shstrndx;
  return 0;
}

void gpujit__elf_close(gpujit__elf *elf)
{
  free(elf->sh);
  memset(elf, 0, sizeof(*elf));
}

const char *gpujit__elf_section_name(const gpujit__elf *elf, unsigned i)
{
  return gpujit__elf_string(elf->image, &elf->sh[elf->shstrndx], elf->sh[i].sh_name);
}

const char *gpujit__elf_string(const void *image, const Elf64_Shdr *strtab, uint64_t off)
{
  const unsigned char *img = image;
  const char *s;
  if (strtab->sh_type == SHT_NOBITS || off >= strtab->sh_size)
    return NULL;
  s = (const char *)img + strtab->sh_offset + off;
  return memchr(s, '\0', strtab->sh_size - off) ? s : NULL;
}

static int cubin_kernels(gpujit__strvec *out, const unsigned char *img, size_t size)
{
  gpujit__elf elf;
  int err = 0;

  if (size < sizeof(Elf64_Ehdr) || memcmp(img, ELFMAG, SELFMAG) != 0 || img[EI_CLASS] != ELFCLASS64)
    return gpujit__error(GPUJIT_ECORRUPT, "image is not a 64-bit ELF cubin");
  if (gpujit__elf_open(&elf, img, size) < 0)
    return gpujit__error(GPUJIT_ECORRUPT, "cubin section table out of bounds");
  for (unsigned i = 0; i < elf.count && err == 0; i++) {
    const Elf64_Shdr *symtab = &elf.sh[i];
    if (symtab->sh_type != SHT_SYMTAB)
      continue;
    if (symtab->sh_link >= elf.count) {
      err = gpujit__error(GPUJIT_ECORRUPT, "cubin symbol table has a bad string table link");
      break;
    }
    for (size_t k = 0; k < symtab->sh_size / sizeof(Elf64_Sym) && err == 0; k++) {
      Elf64_Sym sym;
      const char *name;
      memcpy(&sym, img + symtab->sh_offset + k * sizeof(sym), sizeof(sym));
      if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || !(sym.st_other & STO_CUDA_ENTRY))
        continue;
      if (!(name = gpujit__elf_string(img, &elf.sh[symtab->sh_link], sym.st_name)))
        err = gpujit__error(GPUJIT_ECORRUPT, "cubin symbol name out of bounds or unterminated");
      else
        err = gpujit__strvec_push(out, name);
    }
  }
  gpujit__elf_close(&elf);
  return err;
}

/* ".visible .entry NAME(" or ".entry NAME(" at the start of a line. */
static int ptx_kernels(gpujit__strvec *out, const char *ptx, size_t size)
{
  const char *p = ptx, *end = ptx + size;
  int err;
  while (p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    const char *q = p, *e;
    if (!eol)
      eol = end;
    while (q < eol && (*q == ' ' || *q == '\t'))
      q++;
    if ((size_t)(eol - q) > 9 && strncmp(q, ".visible ", 9) == 0)
      q += 9;
    if ((size_t)(eol - q) > 7 && strncmp(q, ".entry ", 7) == 0) {
      q += 7;
      for (e = q; e < eol && *e != '(' && *e != ' ' && *e != '\r'; e++)
        ;
      if (e > q) {
        char *name = gpujit__strndup(q, (size_t)(e - q));
        if (!name)
          return gpujit__error(GPUJIT_ENOMEM, "out of memory");
        err = gpujit__strvec_push(out, name);
        free(name);
        if (err < 0)
          return err;
      }
    }
    p = eol + 1;
  }
  return 0;
}

int gpujit__image_kernels(gpujit__strvec *out, const void *image, size_t size, gpujit_output_kind kind)
{
  switch (kind) {
  case GPUJIT_OUTPUT_CUBIN: return cubin_kernels(out, image, size);
  case GPUJIT_OUTPUT_PTX: return ptx_kernels(out, image, size);
  default: return 0; /* LTO-IR is NVVM bitcode: kernels are known after the link. */
  }
}

/*
 * ptxas -v writes, per entry function:
 *   ptxas info    : Compiling entry function 'NAME' for 'sm_90'
 *   ptxas info    : Function properties for NAME
 *   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
 *   ptxas info    : Used 10 registers, used 0 barriers, 1024 bytes smem, 380 bytes cmem[0]
 */
int gpujit__ptxas_resources(gpujit__kernel_resources *out, const char *log, const char *kernel)
{
  char needle[1100];
  const char *p, *end, *q;
  memset(out, 0, sizeof(*out));
  if (!log || !kernel || strlen(kernel) > 1000)
    return GPUJIT_ENOENT;
  snprintf(needle, sizeof(needle), "Compiling entry function '%s'", kernel);
  if (!(p = strstr(log, needle)))
    return GPUJIT_ENOENT;
  p += strlen(needle);
  end = strstr(p, "Compiling entry function '");
  if (!end)
    end = p + strlen(p);
  if ((q = strstr(p, "bytes stack frame")) && q < end) {
    const char *s = q;
    while (s > p && s[-1] == ' ')
      s--;
    while (s > p && s[-1] >= '0' && s[-1] <= '9')
      s--;
    out->stack_bytes = atoi(s);
    sscanf(q, "bytes stack frame, %d bytes spill stores, %d bytes spill loads", &out->spill_stores,
           &out->spill_loads);
  }
  if ((q = strstr(p, "Used ")) && q < end) {
    const char *eol = strchr(q, '\n'), *sm;
    out->registers = atoi(q + 5);
    sm = strstr(q, " bytes smem");
    if (sm && (!eol || sm < eol)) {
      while (sm > q && sm[-1] >= '0' && sm[-1] <= '9')
        sm--;
      out->shared_bytes = atoi(sm);
    }
  } else {
    return GPUJIT_ENOENT;
  }
  return 0;
}

/*
 * A kernel's parameters from its .nv.info.NAME section: EIATTR_KPARAM_INFO (0x17) records,
 * EIFMT_SVAL (0x04) with a 12-byte payload {u32 index, u16 ordinal, u16 offset, u32 flags};
 * the parameter's size in bytes is flags >> 18. Other records are skipped by their format.
 */
int gpujit__cubin_params(const void *image, size_t size, const char *kernel, int *sizes, int max)
{
  const unsigned char *img = image;
  gpujit__elf elf;
  char want[512];
  int count = -1;
  if (gpujit__elf_open(&elf, img, size) < 0)
    return -1;
  snprintf(want, sizeof(want), ".nv.info.%s", kernel);
  for (unsigned i = 0; i < elf.count; i++) {
    const unsigned char *p, *end;
    const Elf64_Shdr *sh = elf.sh;
    const char *name = gpujit__elf_section_name(&elf, i);
    if (!name || strcmp(name, want) != 0 || sh[i].sh_type == SHT_NOBITS)
      continue;
    p = img + sh[i].sh_offset;
    end = p + sh[i].sh_size;
    count = 0;
    while (p + 4 <= end) {
      unsigned fmt = p[0], attr = p[1], len = (unsigned)(p[2] | p[3] << 8);
      if (fmt == 0x04) { /* EIFMT_SVAL: a payload of `len` bytes follows */
        if (len > (size_t)(end - p) - 4)
          break;
        if (attr == 0x17 && len >= 12) {
          unsigned ordinal = (unsigned)(p[8] | p[9] << 8);
          uint32_t flags = (uint32_t)p[12] | (uint32_t)p[13] << 8 | (uint32_t)p[14] << 16 | (uint32_t)p[15] << 24;
          if ((int)ordinal < max)
            sizes[ordinal] = (int)(flags >> 18);
          if ((int)ordinal + 1 > count)
            count = (int)ordinal + 1;
        }
        p += 4 + len;
      } else {
        p += 4; /* EIFMT_NVAL, EIFMT_BVAL, EIFMT_HVAL: no payload beyond the header */
      }
    }
    break;
  }
  gpujit__elf_close(&elf);
  return count;
}
