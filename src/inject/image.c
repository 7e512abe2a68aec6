/*
 * What a module load was given, as record fields: an image's kind (cubin, fatbin, PTX), its
 * length as far as its own header says, and its hash (the report ties it to the compile that
 * made the same bytes); or a file's name and size.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inject/image.h"

/* The image a load was given: its kind and length (as far as its own header says). */
const void *gji_image_extent(const void *p, size_t *size, const char **kind_out)
{
  const unsigned char *b = p;
  size_t n = 0;
  const char *kind = "unknown";
  if (!p)
    return NULL;
  if (b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F') { /* ELF64: its furthest part ends it */
    uint64_t shoff, phoff, off, len;
    uint16_t shentsize, shnum, phentsize, phnum;
    uint32_t type;
    memcpy(&phoff, b + 0x20, 8);
    memcpy(&shoff, b + 0x28, 8);
    memcpy(&phentsize, b + 0x36, 2);
    memcpy(&phnum, b + 0x38, 2);
    memcpy(&shentsize, b + 0x3a, 2);
    memcpy(&shnum, b + 0x3c, 2);
    kind = "cubin";
    n = (size_t)(shoff + (uint64_t)shentsize * shnum);
    if (phoff + (uint64_t)phentsize * phnum > n)
      n = (size_t)(phoff + (uint64_t)phentsize * phnum);
    for (uint16_t i = 0; shentsize >= 40 && i < shnum; i++) { /* sections with bytes in the file */
      const unsigned char *sh = b + shoff + (uint64_t)i * shentsize;
      memcpy(&type, sh + 4, 4);
      memcpy(&off, sh + 24, 8);
      memcpy(&len, sh + 32, 8);
      if (type != 8 /* SHT_NOBITS */ && off + len > n)
        n = (size_t)(off + len);
    }
    for (uint16_t i = 0; phentsize >= 40 && i < phnum; i++) {
      const unsigned char *ph = b + phoff + (uint64_t)i * phentsize;
      memcpy(&off, ph + 8, 8);
      memcpy(&len, ph + 32, 8);
      if (off + len > n)
        n = (size_t)(off + len);
    }
  } else if (b[0] == 0x50 && b[1] == 0xed && b[2] == 0x55 && b[3] == 0xba) { /* fatbin: header + body */
    uint16_t hsize;
    uint64_t fsize;
    memcpy(&hsize, b + 6, 2);
    memcpy(&fsize, b + 8, 8);
    kind = "fatbin";
    n = hsize + (size_t)fsize;
  } else if (b[0] == 0xb1 && b[1] == 0x43 && b[2] == 0x62 && b[3] == 0x46) { /* the fatbin wrapper */
    const void *inner;
    memcpy(&inner, b + 8, sizeof(inner));
    return gji_image_extent(inner, size, kind_out);
  } else {
    kind = "ptx"; /* text */
    n = strlen((const char *)p);
  }
  *size = n;
  *kind_out = kind;
  return p;
}

void gji_image_fields(gji_line *l, const void *p)
{
  size_t n = 0;
  const char *kind = "unknown";
  char h[33];
  if (!(p = gji_image_extent(p, &n, &kind)))
    return;
  gji_str(l, "image", kind);
  gji_u64(l, "bytes", n);
  if (n && n < (1u << 30)) {
    gji_hash(h, p, n);
    gji_str(l, "hash", h);
  }
}

bool gji_file_hash(const char *path, char out[33], uint64_t *bytes)
{
  struct stat st;
  void *m;
  int fd;
  bool ok = false;
  /* only a regular file is opened: opening a FIFO with no writer waits for one (a tool's `-o FIFO`
   * at its exit would hang), opening a device may act on it */
  if (!path || stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
      (fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) < 0)
    return false;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && st.st_size < (1 << 30) &&
      (m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) != MAP_FAILED) {
    gji_hash(out, m, (size_t)st.st_size);
    *bytes = (uint64_t)st.st_size;
    munmap(m, (size_t)st.st_size);
    ok = true;
  }
  close(fd);
  return ok;
}

void gji_file_fields(gji_line *l, const char *path)
{
  char h[33];
  uint64_t n = 0;
  gji_str(l, "file", path ? path : "");
  if (gji_file_hash(path, h, &n)) { /* a module loaded from a file is matched to its maker by content too */
    gji_u64(l, "bytes", n);
    gji_str(l, "hash", h);
  }
}

void gji_linked_fields(gji_line *l, const void *cubin, size_t size)
{
  char h[33];
  if (!cubin || !size)
    return;
  gji_hash(h, cubin, size);
  gji_str(l, "image", "cubin");
  gji_u64(l, "bytes", size);
  gji_str(l, "hash", h);
}

/* The section named `want` of a 64-bit little-endian ELF image of `size` bytes: its offset and
 * size within the file, or false. Every offset is checked against the file's size. */
static bool elf_section(const unsigned char *b, size_t size, const char *want, uint64_t *off, uint64_t *len)
{
  uint64_t shoff, stroff, strsize;
  uint16_t shentsize, shnum, shstrndx;
  if (size < 64 || memcmp(b, "\x7f" "ELF", 4) || b[4] != 2 /* ELFCLASS64 */ || b[5] != 1 /* little-endian */)
    return false;
  memcpy(&shoff, b + 0x28, 8);
  memcpy(&shentsize, b + 0x3a, 2);
  memcpy(&shnum, b + 0x3c, 2);
  memcpy(&shstrndx, b + 0x3e, 2);
  if (shentsize < 64 || shstrndx >= shnum || shoff > size || (uint64_t)shnum * shentsize > size - shoff)
    return false;
  memcpy(&stroff, b + shoff + (uint64_t)shstrndx * shentsize + 24, 8);
  memcpy(&strsize, b + shoff + (uint64_t)shstrndx * shentsize + 32, 8);
  if (stroff > size || strsize > size - stroff)
    return false;
  for (uint16_t i = 0; i < shnum; i++) {
    const unsigned char *sh = b + shoff + (uint64_t)i * shentsize;
    uint32_t name, type;
    memcpy(&name, sh, 4);
    memcpy(&type, sh + 4, 4);
    memcpy(off, sh + 24, 8);
    memcpy(len, sh + 32, 8);
    if (name < strsize && type != 8 /* SHT_NOBITS */ && *off <= size && *len <= size - *off &&
        strnlen((const char *)b + stroff + name, strsize - name) == strlen(want) && !strcmp((const char *)b + stroff + name, want))
      return true;
  }
  return false;
}

void gji_fatbins_fields(gji_line *l, const char *path)
{
  struct stat st;
  void *m = MAP_FAILED;
  char hashes[16][33];
  const char *list[16];
  int n = 0, fd = path && path[0] ? open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY) : -1;
  uint64_t off, len;
  if (fd < 0)
    return;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 64 && st.st_size < (1ll << 31))
    m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (m == MAP_FAILED)
    return;
  if (elf_section(m, (size_t)st.st_size, ".nv_fatbin", &off, &len)) {
    const unsigned char *s = (const unsigned char *)m + off;
    uint64_t at = 0;
    while (at + 16 <= len && n < 16) { /* fatbins one after another, each 8-aligned */
      uint16_t hsize;
      uint64_t fsize;
      if (memcmp(s + at, "\x50\xed\x55\xba", 4)) {
        at += 8;
        continue;
      }
      memcpy(&hsize, s + at + 6, 2);
      memcpy(&fsize, s + at + 8, 8);
      if (hsize < 16 || fsize > len - at - hsize)
        break;
      gji_hash(hashes[n], s + at, hsize + (size_t)fsize);
      list[n] = hashes[n];
      n++;
      at += (hsize + fsize + 7) & ~7ull;
    }
  }
  munmap(m, (size_t)st.st_size);
  if (n)
    gji_strs(l, "fatbins", list, n);
}
