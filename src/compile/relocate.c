/* Relocating the paths line info embeds: a cache entry built in one checkout served to another. */
#define _GNU_SOURCE
#include <elf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "compile/image.h"
#include "compile/relocate.h"

/* The base followed by '/' or the string's end: a whole path prefix, not a longer name. */
static bool has_base(const char *s, const char *base, size_t n)
{
  return strncmp(s, base, n) == 0 && (s[n] == '/' || s[n] == '\0');
}

static int put_rebased(gpujit__buf *out, const char *s, const char *old_base, const char *new_base)
{
  size_t n = strlen(old_base);
  int err;
  if (has_base(s, old_base, n)) {
    if ((err = gpujit__buf_puts(out, new_base)) < 0)
      return err;
    s += n;
  }
  return gpujit__buf_put(out, s, strlen(s) + 1);
}

static const unsigned char *skip_uleb(const unsigned char *p, const unsigned char *end)
{
  while (p < end && (*p & 0x80))
    p++;
  return p < end ? p + 1 : NULL;
}

typedef struct cu_shift {
  size_t old_start, old_end, old_program; /* offsets in the old section */
  long before, delta;                     /* shift of the CU's start, and of its program */
} cu_shift;

/*
 * Rewrite the include directories and file names of every DWARF 2-4 line table in .debug_line
 * from old_base to new_base. The section changes size, so its new contents go to the end of the
 * image and its header points there; relocations into it (set_address in the line programs)
 * move with their bytes. Anything unexpected returns GPUJIT_EUNSUPPORTED and leaves `image` alone.
 */
int gpujit__cubin_rebase(gpujit__buf *image, const char *old_base, const char *new_base)
{
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)image->data;
  const Elf64_Shdr *sh;
  int line = -1, rela = -1, err = 0;
  gpujit__buf sec = {0};
  cu_shift shifts[64];
  size_t nshift = 0;
  const unsigned char *p, *end;

  unsigned nsec;
  if (!(sh = gpujit__elf_sections(image->data, image->len, &nsec)))
    return GPUJIT_EUNSUPPORTED;
  for (unsigned i = 0; i < nsec; i++) {
    const char *name = gpujit__elf_string(image->data, &sh[eh->e_shstrndx], sh[i].sh_name);
    if (!name)
      return GPUJIT_EUNSUPPORTED;
    if (!strcmp(name, ".debug_line"))
      line = (int)i;
  }
  if (line < 0)
    return 0; /* no line info: nothing names a path */
  if (sh[line].sh_type == SHT_NOBITS)
    return GPUJIT_EUNSUPPORTED; /* its size says nothing of the bytes in the image */
  for (unsigned i = 0; i < nsec; i++)
    if (sh[i].sh_type == SHT_RELA && (int)sh[i].sh_info == line)
      rela = i;

  p = (const unsigned char *)image->data + sh[line].sh_offset;
  end = p + sh[line].sh_size;
  while (p < end) {
    const unsigned char *cu = p, *hdr, *program, *q;
    uint32_t unit_length, header_length;
    uint16_t version;
    size_t new_start = sec.len, header_start;
    if (end - p < 10 || nshift == sizeof(shifts) / sizeof(shifts[0])) {
      err = GPUJIT_EUNSUPPORTED;
      goto done;
    }
    memcpy(&unit_length, p, 4);
    memcpy(&version, p + 4, 2);
    memcpy(&header_length, p + 6, 4);
    if (unit_length == 0xffffffffu || unit_length > (size_t)(end - p) - 4 || version < 2 || version > 4) {
      err = GPUJIT_EUNSUPPORTED; /* 64-bit DWARF or DWARF 5: not what NVRTC writes */
      goto done;
    }
    hdr = p + 10;
    /* the unit holds its version and header length (6 bytes) and then the header */
    if (unit_length < 6 || header_length > unit_length - 6) {
      err = GPUJIT_EUNSUPPORTED;
      goto done;
    }
    program = hdr + header_length;
    /* Fixed fields up to and with the standard opcode lengths. */
    q = hdr + (version >= 4 ? 6 : 5); /* min_inst_length, [max_ops], default_is_stmt, line_base, line_range, opcode_base */
    if (q > program || q[-1] == 0 || q[-1] - 1 > program - q) {
      err = GPUJIT_EUNSUPPORTED;
      goto done;
    }
    q += q[-1] - 1; /* opcode_base - 1 lengths */
    if ((err = gpujit__buf_put(&sec, cu, 10)) < 0 || (err = gpujit__buf_put(&sec, hdr, (size_t)(q - hdr))) < 0)
      goto done;
    header_start = new_start + 10;
    /* include_directories: strings up to an empty one */
    while (q < program && *q) {
      const char *s = (const char *)q;
      size_t n = strnlen(s, (size_t)(program - q));
      if (q + n >= program) {
        err = GPUJIT_EUNSUPPORTED;
        goto done;
      }
      if ((err = put_rebased(&sec, s, old_base, new_base)) < 0)
        goto done;
      q += n + 1;
    }
    if (q >= program || (err = gpujit__buf_put(&sec, "", 1)) < 0)
      goto done;
    q++;
    /* file_names: name, then directory index, mtime and length (ULEB128) */
    while (q < program && *q) {
      const char *s = (const char *)q;
      const unsigned char *r;
      size_t n = strnlen(s, (size_t)(program - q));
      if (q + n >= program || !(r = skip_uleb(q + n + 1, program)) || !(r = skip_uleb(r, program)) ||
          !(r = skip_uleb(r, program))) {
        err = GPUJIT_EUNSUPPORTED;
        goto done;
      }
      if ((err = put_rebased(&sec, s, old_base, new_base)) < 0 ||
          (err = gpujit__buf_put(&sec, q + n + 1, (size_t)(r - (q + n + 1)))) < 0)
        goto done;
      q = r;
    }
    if (q >= program || (err = gpujit__buf_put(&sec, "", 1)) < 0)
      goto done;
    q++;
    /* nvJitLink pads the header after the file table: keep whatever lies there. */
    if (q < program && (err = gpujit__buf_put(&sec, q, (size_t)(program - q))) < 0)
      goto done;
    {
      uint32_t new_header_length = (uint32_t)(sec.len - header_start);
      size_t program_len = (size_t)(cu + 4 + unit_length - program);
      uint32_t new_unit_length;
      if ((err = gpujit__buf_put(&sec, program, program_len)) < 0)
        goto done;
      new_unit_length = (uint32_t)(sec.len - new_start - 4);
      memcpy(sec.data + new_start, &new_unit_length, 4);
      memcpy(sec.data + new_start + 6, &new_header_length, 4);
      shifts[nshift].old_start = (size_t)(cu - ((const unsigned char *)image->data + sh[line].sh_offset));
      shifts[nshift].old_end = shifts[nshift].old_start + 4 + unit_length;
      shifts[nshift].old_program = (size_t)(program - ((const unsigned char *)image->data + sh[line].sh_offset));
      shifts[nshift].before = (long)new_start - (long)shifts[nshift].old_start;
      shifts[nshift].delta = (long)(new_start + 10 + new_header_length) - (long)shifts[nshift].old_program;
      nshift++;
    }
    p = cu + 4 + unit_length;
  }

  /* Relocations into the section follow their bytes: all checked first, then written. */
  if (rela >= 0 && sh[rela].sh_offset % 8) {
    err = GPUJIT_EUNSUPPORTED;
    goto done;
  }
  if (rela >= 0) {
    Elf64_Rela *r = (Elf64_Rela *)(image->data + sh[rela].sh_offset);
    size_t count = sh[rela].sh_size / sizeof(Elf64_Rela);
    Elf64_Addr *moved = calloc(count + 1, sizeof(*moved));
    if (!moved) {
      err = GPUJIT_ENOMEM;
      goto done;
    }
    for (size_t k = 0; k < count && err == 0; k++) {
      size_t i;
      for (i = 0; i < nshift && !(r[k].r_offset >= shifts[i].old_start && r[k].r_offset < shifts[i].old_end); i++)
        ;
      if (i == nshift)
        err = GPUJIT_EUNSUPPORTED;
      else
        moved[k] = (Elf64_Addr)((long)r[k].r_offset +
                                (r[k].r_offset >= shifts[i].old_program ? shifts[i].delta : shifts[i].before));
    }
    for (size_t k = 0; k < count && err == 0; k++)
      r[k].r_offset = moved[k];
    free(moved);
    if (err < 0)
      goto done;
  }
  if (nshift == 0)
    goto done; /* an empty line table names no path */
  /* The new section at the end of the image; the header table stays where it is. */
  {
    size_t at = (image->len + 7) & ~(size_t)7;
    Elf64_Shdr *w;
    if ((err = gpujit__buf_reserve(image, at - image->len + sec.len)) < 0)
      goto done;
    memset(image->data + image->len, 0, at - image->len);
    memcpy(image->data + at, sec.data, sec.len);
    image->len = at + sec.len;
    w = (Elf64_Shdr *)(image->data + ((Elf64_Ehdr *)image->data)->e_shoff);
    w[line].sh_offset = at;
    w[line].sh_size = sec.len;
  }
done:
  gpujit__buf_free(&sec);
  return err;
}

/* Replace every whole-prefix occurrence of `from` by `to` in a text image (PTX). */
static int rebase_text(gpujit__buf *img, const char *from, const char *to)
{
  gpujit__buf out = {0};
  size_t n = strlen(from);
  const char *p = img->data, *end = img->data + img->len, *hit;
  int err = 0;
  while (err == 0 && (hit = memmem(p, (size_t)(end - p), from, n)) != NULL) {
    bool whole = hit + n < end && (hit[n] == '/' || hit[n] == '"');
    err = gpujit__buf_put(&out, p, (size_t)(hit - p));
    if (err == 0)
      err = whole ? gpujit__buf_puts(&out, to) : gpujit__buf_put(&out, hit, n);
    p = hit + n;
  }
  if (err == 0)
    err = gpujit__buf_put(&out, p, (size_t)(end - p));
  if (err < 0) {
    gpujit__buf_free(&out);
    return err;
  }
  gpujit__buf_free(img);
  *img = out;
  return 0;
}

/* Same length: overwrite whole path components (the base followed by '/' or a NUL) in place. */
static void rebase_in_place(gpujit__buf *img, const char *from, const char *to)
{
  size_t n = strlen(from);
  char *p, *end = img->data + img->len;
  for (p = img->data; p && p + n <= end; p++) {
    p = memmem(p, (size_t)(end - p), from, n);
    if (!p)
      break;
    if (p + n < end && p[n] != '/' && p[n] != '\0')
      continue;
    memcpy(p, to, n);
  }
}

int gpujit__image_rebase(gpujit__buf *image, gpujit_output_kind kind, const char *old_base,
                         const char *new_base)
{
  if (strcmp(old_base, new_base) == 0 || !image->len)
    return 0;
  if (strlen(old_base) == strlen(new_base)) {
    rebase_in_place(image, old_base, new_base);
    return 0;
  }
  return kind == GPUJIT_OUTPUT_PTX ? rebase_text(image, old_base, new_base)
                                   : gpujit__cubin_rebase(image, old_base, new_base);
}
