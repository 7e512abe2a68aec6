/* Relocating the paths line info embeds: a cache entry built in one checkout served to another. */
#define _GNU_SOURCE
#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "compile/image/image.h"
#include "compile/image/relocate.h"

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

/* The include directories and file names of one line table's header, from q to the program,
 * copied into `sec` with old_base made new_base; what follows the file table (nvJitLink pads
 * there) is kept. */
static int rebase_file_tables(gpujit__buf *sec, const unsigned char *q, const unsigned char *program,
                              const char *old_base, const char *new_base)
{
  int err;
  /* include_directories: strings up to an empty one */
  while (q < program && *q) {
    const char *s = (const char *)q;
    size_t n = strnlen(s, (size_t)(program - q));
    if (q + n >= program)
      return GPUJIT_EUNSUPPORTED;
    if ((err = put_rebased(sec, s, old_base, new_base)) < 0)
      return err;
    q += n + 1;
  }
  if (q >= program)
    return GPUJIT_EUNSUPPORTED;
  if ((err = gpujit__buf_put(sec, "", 1)) < 0)
    return err;
  q++;
  /* file_names: name, then directory index, mtime and length (ULEB128) */
  while (q < program && *q) {
    const char *s = (const char *)q;
    const unsigned char *r;
    size_t n = strnlen(s, (size_t)(program - q));
    if (q + n >= program || !(r = skip_uleb(q + n + 1, program)) || !(r = skip_uleb(r, program)) ||
        !(r = skip_uleb(r, program)))
      return GPUJIT_EUNSUPPORTED;
    if ((err = put_rebased(sec, s, old_base, new_base)) < 0 ||
        (err = gpujit__buf_put(sec, q + n + 1, (size_t)(r - (q + n + 1)))) < 0)
      return err;
    q = r;
  }
  if (q >= program)
    return GPUJIT_EUNSUPPORTED;
  if ((err = gpujit__buf_put(sec, "", 1)) < 0)
    return err;
  q++;
  if (q < program && (err = gpujit__buf_put(sec, q, (size_t)(program - q))) < 0)
    return err;
  return 0;
}

/*
 * One unit of the line table at cu (the section's bytes from `start` to `end`) copied into `sec`
 * with its paths rebased and its lengths rewritten; *shift says how its bytes moved, *next where
 * the next unit starts. GPUJIT_EUNSUPPORTED for anything but the 32-bit DWARF 2-4 NVRTC writes.
 */
static int rebase_unit(gpujit__buf *sec, const unsigned char *start, const unsigned char *cu, const unsigned char *end,
                       const char *old_base, const char *new_base, cu_shift *shift, const unsigned char **next)
{
  const unsigned char *hdr = cu + 10, *program, *q;
  uint32_t unit_length, header_length, new_header_length, new_unit_length;
  uint16_t version;
  size_t new_start = sec->len, header_start = new_start + 10, program_len;
  int err;
  if (end - cu < 10)
    return GPUJIT_EUNSUPPORTED;
  memcpy(&unit_length, cu, 4);
  memcpy(&version, cu + 4, 2);
  memcpy(&header_length, cu + 6, 4);
  if (unit_length == 0xffffffffu || unit_length > (size_t)(end - cu) - 4 || version < 2 || version > 4)
    return GPUJIT_EUNSUPPORTED; /* 64-bit DWARF or DWARF 5: not what NVRTC writes */
  /* the unit holds its version and header length (6 bytes) and then the header */
  if (unit_length < 6 || header_length > unit_length - 6)
    return GPUJIT_EUNSUPPORTED;
  program = hdr + header_length;
  /* Fixed fields up to and with the standard opcode lengths. */
  q = hdr + (version >= 4 ? 6 : 5); /* min_inst_length, [max_ops], default_is_stmt, line_base, line_range, opcode_base */
  if (q > program || q[-1] == 0 || q[-1] - 1 > program - q)
    return GPUJIT_EUNSUPPORTED;
  q += q[-1] - 1; /* opcode_base - 1 lengths */
  if ((err = gpujit__buf_put(sec, cu, 10)) < 0 || (err = gpujit__buf_put(sec, hdr, (size_t)(q - hdr))) < 0 ||
      (err = rebase_file_tables(sec, q, program, old_base, new_base)) < 0)
    return err;
  new_header_length = (uint32_t)(sec->len - header_start);
  program_len = (size_t)(cu + 4 + unit_length - program);
  if ((err = gpujit__buf_put(sec, program, program_len)) < 0)
    return err;
  new_unit_length = (uint32_t)(sec->len - new_start - 4);
  memcpy(sec->data + new_start, &new_unit_length, 4);
  memcpy(sec->data + new_start + 6, &new_header_length, 4);
  shift->old_start = (size_t)(cu - start);
  shift->old_end = shift->old_start + 4 + unit_length;
  shift->old_program = (size_t)(program - start);
  shift->before = (long)new_start - (long)shift->old_start;
  shift->delta = (long)(new_start + 10 + new_header_length) - (long)shift->old_program;
  *next = cu + 4 + unit_length;
  return 0;
}

/* Relocations into the section follow their bytes: all checked first, then written. */
static int move_relocations(gpujit__buf *image, const Elf64_Shdr *rela, const cu_shift *shifts, size_t nshift)
{
  char *r = image->data + rela->sh_offset; /* Elf64_Rela at any alignment */
  size_t count = rela->sh_size / sizeof(Elf64_Rela);
  Elf64_Addr *moved = calloc(count + 1, sizeof(*moved));
  int err = 0;
  if (!moved)
    return GPUJIT_ENOMEM;
  for (size_t k = 0; k < count && err == 0; k++) {
    Elf64_Addr at;
    size_t i;
    memcpy(&at, r + k * sizeof(Elf64_Rela) + offsetof(Elf64_Rela, r_offset), sizeof(at));
    for (i = 0; i < nshift && !(at >= shifts[i].old_start && at < shifts[i].old_end); i++)
      ;
    if (i == nshift)
      err = GPUJIT_EUNSUPPORTED;
    else
      moved[k] = (Elf64_Addr)((long)at + (at >= shifts[i].old_program ? shifts[i].delta : shifts[i].before));
  }
  for (size_t k = 0; k < count && err == 0; k++)
    memcpy(r + k * sizeof(Elf64_Rela) + offsetof(Elf64_Rela, r_offset), &moved[k], sizeof(moved[k]));
  free(moved);
  return err;
}

/* The new section at the end of the image; the header table stays where it is. */
static int append_section(gpujit__buf *image, const gpujit__elf *elf, int line, const gpujit__buf *sec)
{
  size_t at = (image->len + 7) & ~(size_t)7;
  Elf64_Shdr w = elf->sh[line];
  int err;
  if ((err = gpujit__buf_reserve(image, at - image->len + sec->len)) < 0)
    return err;
  memset(image->data + image->len, 0, at - image->len);
  memcpy(image->data + at, sec->data, sec->len);
  image->len = at + sec->len;
  w.sh_offset = at;
  w.sh_size = sec->len;
  memcpy(image->data + elf->shoff + (size_t)line * sizeof(w), &w, sizeof(w));
  return 0;
}

/* The .debug_line section and the relocations into it (-1: none). */
static int find_line_table(const gpujit__elf *elf, int *line, int *rela)
{
  *line = *rela = -1;
  for (unsigned i = 0; i < elf->count; i++) {
    const char *name = gpujit__elf_section_name(elf, i);
    if (!name)
      return GPUJIT_EUNSUPPORTED;
    if (!strcmp(name, ".debug_line"))
      *line = (int)i;
  }
  if (*line < 0)
    return 0;
  if (elf->sh[*line].sh_type == SHT_NOBITS)
    return GPUJIT_EUNSUPPORTED; /* its size says nothing of the bytes in the image */
  for (unsigned i = 0; i < elf->count; i++)
    if (elf->sh[i].sh_type == SHT_RELA && (int)elf->sh[i].sh_info == *line)
      *rela = (int)i;
  return 0;
}

/*
 * Rewrite the include directories and file names of every DWARF 2-4 line table in .debug_line
 * from old_base to new_base. The section changes size, so its new contents go to the end of the
 * image and its header points there; relocations into it (set_address in the line programs)
 * move with their bytes. Anything unexpected returns GPUJIT_EUNSUPPORTED and leaves `image` alone.
 */
int gpujit__cubin_rebase(gpujit__buf *image, const char *old_base, const char *new_base)
{
  gpujit__elf elf;
  int line, rela, err;
  gpujit__buf sec = {0};
  cu_shift shifts[64];
  size_t nshift = 0;
  const unsigned char *start, *p, *end;

  if (gpujit__elf_open(&elf, image->data, image->len) < 0)
    return GPUJIT_EUNSUPPORTED;
  if ((err = find_line_table(&elf, &line, &rela)) < 0 || line < 0)
    goto done; /* no line info: nothing names a path */
  start = p = (const unsigned char *)image->data + elf.sh[line].sh_offset;
  end = p + elf.sh[line].sh_size;
  while (p < end && err == 0) {
    if (nshift == sizeof(shifts) / sizeof(shifts[0]))
      err = GPUJIT_EUNSUPPORTED;
    else
      err = rebase_unit(&sec, start, p, end, old_base, new_base, &shifts[nshift++], &p);
  }
  if (err == 0 && rela >= 0)
    err = move_relocations(image, &elf.sh[rela], shifts, nshift);
  if (err == 0 && nshift > 0) /* an empty line table names no path */
    err = append_section(image, &elf, line, &sec);
done:
  gpujit__elf_close(&elf);
  gpujit__buf_free(&sec);
  return err;
}

/* `base` as a whole path prefix at p: followed by '/', a NUL or a quote. */
static bool whole_at(const char *p, const char *end, size_t n)
{
  return p + n == end || p[n] == '/' || p[n] == '\0' || p[n] == '"';
}

/* Whether [p, end) holds `base` as a whole path prefix. */
static bool names_base(const char *p, const char *end, const char *base)
{
  size_t n = strlen(base);
  for (const char *hit; p < end && (hit = memmem(p, (size_t)(end - p), base, n)); p = hit + 1)
    if (whole_at(hit, end, n))
      return true;
  return false;
}

/* The range of a cubin's .debug_line, or false when it has none or cannot be read. */
static bool line_section(const gpujit__buf *image, size_t *off, size_t *size)
{
  gpujit__elf elf;
  bool found = false;
  if (gpujit__elf_open(&elf, image->data, image->len) < 0)
    return false;
  for (unsigned i = 0; i < elf.count && !found; i++) {
    const char *name = gpujit__elf_section_name(&elf, i);
    if (name && strcmp(name, ".debug_line") == 0 && elf.sh[i].sh_type != SHT_NOBITS) {
      *off = elf.sh[i].sh_offset;
      *size = elf.sh[i].sh_size;
      found = true;
    }
  }
  gpujit__elf_close(&elf);
  return found;
}

/* A PTX `.file N "path"` line starting at p (after blanks). */
static bool file_directive(const char *p, const char *eol)
{
  while (p < eol && (*p == ' ' || *p == '\t'))
    p++;
  return eol - p > 6 && memcmp(p, ".file", 5) == 0 && (p[5] == ' ' || p[5] == '\t');
}

/* The bytes PTX spells as numbers on `.b8` lines — an initializer (`= {47, 104, ...}`: a string
 * such as __FILE__) or a debug section's data. Appended to `out`, a NUL after each line. */
static int ptx_data_bytes(gpujit__buf *out, const char *p, const char *end)
{
  int err = 0;
  while (err == 0 && p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p)), *q;
    if (!eol)
      eol = end;
    if ((q = memmem(p, (size_t)(eol - p), ".b8", 3))) {
      const char *brace = memchr(p, '{', (size_t)(eol - p));
      for (q = brace ? brace + 1 : q + 3; err == 0 && q < eol && *q != '}';) {
        char *stop;
        unsigned long v = strtoul(q, &stop, 0);
        if (stop == q) {
          q++;
          continue;
        }
        char c = (char)v;
        err = gpujit__buf_put(out, &c, 1);
        q = stop;
      }
      err = err ? err : gpujit__buf_put(out, "", 1);
    }
    p = eol + 1;
  }
  return err;
}

/* A PTX image names `base` only in its .file directives. */
static int ptx_only_line_info(const gpujit__buf *img, const char *base, bool *only)
{
  const char *p = img->data, *end = img->data + img->len;
  gpujit__buf data = {0};
  int err;
  *only = true;
  while (*only && p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol)
      eol = end;
    if (!file_directive(p, eol) && names_base(p, eol, base))
      *only = false;
    p = eol + 1;
  }
  if (*only && (err = ptx_data_bytes(&data, img->data, end)) < 0)
    return err;
  if (*only && data.len && names_base(data.data, data.data + data.len, base))
    *only = false;
  gpujit__buf_free(&data);
  return 0;
}

/* Every whole-prefix `from` in the PTX's .file lines becomes `to`; nothing else changes. */
static int rebase_ptx(gpujit__buf *img, const char *from, const char *to)
{
  gpujit__buf out = {0};
  size_t n = strlen(from);
  const char *p = img->data, *end = img->data + img->len;
  int err = 0;
  while (err == 0 && p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p)), *q = p, *hit;
    eol = eol ? eol + 1 : end;
    if (file_directive(p, eol))
      while (err == 0 && (hit = memmem(q, (size_t)(eol - q), from, n)) != NULL) {
        err = gpujit__buf_put(&out, q, (size_t)(hit - q));
        if (err == 0)
          err = whole_at(hit, eol, n) ? gpujit__buf_puts(&out, to) : gpujit__buf_put(&out, hit, n);
        q = hit + n;
      }
    if (err == 0)
      err = gpujit__buf_put(&out, q, (size_t)(eol - q));
    p = eol;
  }
  if (err < 0) {
    gpujit__buf_free(&out);
    return err;
  }
  gpujit__buf_free(img);
  *img = out;
  return 0;
}

/* Same length: overwrite whole path prefixes in [from_off, from_off + size) in place. */
static void rebase_in_place(gpujit__buf *img, size_t at, size_t size, const char *from, const char *to)
{
  size_t n = strlen(from);
  char *p, *end = img->data + at + size;
  for (p = img->data + at; p && p + n <= end; p++) {
    if (!(p = memmem(p, (size_t)(end - p), from, n)))
      break;
    if (whole_at(p, end, n))
      memcpy(p, to, n);
  }
}

/*
 * Only what is provably path metadata moves: a cubin's .debug_line directory and file tables, a
 * PTX's .file directives. Where the program's own code or data names the old base (__FILE__ in a
 * device assert or string, -G's debug info, LTO-IR, which cannot be read here), nothing is
 * patched: GPUJIT_EUNSUPPORTED, and the caller compiles for this base instead.
 */
int gpujit__image_rebase(gpujit__buf *image, gpujit_output_kind kind, const char *old_base,
                         const char *new_base)
{
  size_t off = 0, size = 0;
  int err;
  if (strcmp(old_base, new_base) == 0 || !image->len)
    return 0;
  if (kind == GPUJIT_OUTPUT_PTX) {
    bool only;
    if ((err = ptx_only_line_info(image, old_base, &only)) < 0)
      return err;
    return only ? rebase_ptx(image, old_base, new_base) : GPUJIT_EUNSUPPORTED;
  }
  if (kind != GPUJIT_OUTPUT_CUBIN)
    return names_base(image->data, image->data + image->len, old_base) ? GPUJIT_EUNSUPPORTED : 0;
  if (!line_section(image, &off, &size))
    return names_base(image->data, image->data + image->len, old_base) ? GPUJIT_EUNSUPPORTED : 0;
  if (names_base(image->data, image->data + off, old_base) ||
      names_base(image->data + off + size, image->data + image->len, old_base))
    return GPUJIT_EUNSUPPORTED; /* the program's own bytes name the old checkout */
  if (strlen(old_base) == strlen(new_base)) {
    rebase_in_place(image, off, size, old_base, new_base);
    return 0;
  }
  if ((err = gpujit__cubin_rebase(image, old_base, new_base)) == 0)
    memset(image->data + off, 0, size); /* the old table's bytes, now no section's */
  return err;
}
