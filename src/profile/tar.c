/* ustar headers of a saved profile's members, as POSIX.1-1988 lays them out: `tar tf` lists a
 * saved profile and `tar xf` unpacks its records. */
#include <stdio.h>
#include <string.h>

#include "profile/tar.h"

enum { NAME = 0, MODE = 100, UID = 108, GID = 116, SIZE = 124, MTIME = 136, CHKSUM = 148, TYPE = 156, PREFIX = 345,
       MAGIC = 257, VERSION = 263, UNAME = 265, GNAME = 297 };

bool gpujit__tar_name_ok(const char *name)
{
  size_t n = strlen(name);
  if (n == 0 || n > 99 || name[0] == '.')
    return false;
  for (const char *c = name; *c; c++)
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
          *c == '_' || *c == '-'))
      return false;
  return true;
}

static void octal(unsigned char *field, size_t width, uint64_t v)
{
  char text[24];
  snprintf(text, sizeof(text), "%0*llo", (int)width - 1, (unsigned long long)v);
  memcpy(field, text, width - 1);
  field[width - 1] = '\0';
}

static unsigned sum(const unsigned char block[GPUJIT__TAR_BLOCK])
{
  unsigned s = 0;
  for (size_t i = 0; i < GPUJIT__TAR_BLOCK; i++)
    s += (i >= CHKSUM && i < CHKSUM + 8) ? ' ' : block[i];
  return s;
}

void gpujit__tar_header(unsigned char block[GPUJIT__TAR_BLOCK], const char *name, uint64_t size, int64_t mtime)
{
  memset(block, 0, GPUJIT__TAR_BLOCK);
  memcpy(block + NAME, name, strlen(name));
  octal(block + MODE, 8, 0644);
  octal(block + UID, 8, 0);
  octal(block + GID, 8, 0);
  octal(block + SIZE, 12, size);
  octal(block + MTIME, 12, mtime > 0 ? (uint64_t)mtime : 0);
  block[TYPE] = '0';
  memcpy(block + MAGIC, "ustar", 6); /* with its NUL */
  memcpy(block + VERSION, "00", 2);
  memcpy(block + UNAME, "gpujit", 6);
  memcpy(block + GNAME, "gpujit", 6);
  octal(block + CHKSUM, 7, sum(block)); /* six digits and a NUL, then the space already there */
  block[CHKSUM + 7] = ' ';
}

/* An octal field: digits, led by spaces or zeros, ended by a NUL or a space. */
static bool read_octal(const unsigned char *field, size_t width, uint64_t *out)
{
  size_t i = 0;
  uint64_t v = 0;
  bool digits = false;
  while (i < width && field[i] == ' ')
    i++;
  for (; i < width && field[i] >= '0' && field[i] <= '7'; i++, digits = true) {
    if (v >> 60)
      return false;
    v = v * 8 + (uint64_t)(field[i] - '0');
  }
  if (!digits || (i < width && field[i] != '\0' && field[i] != ' '))
    return false;
  *out = v;
  return true;
}

gpujit__tar_kind gpujit__tar_parse(const unsigned char block[GPUJIT__TAR_BLOCK], char name[101], uint64_t *size)
{
  uint64_t stored;
  bool zero = true;
  name[0] = '\0';
  *size = 0;
  for (size_t i = 0; i < GPUJIT__TAR_BLOCK && zero; i++)
    zero = block[i] == 0;
  if (zero)
    return GPUJIT__TAR_END;
  if (memcmp(block + MAGIC, "ustar", 5) != 0)
    return GPUJIT__TAR_NOT_TAR;
  if (!read_octal(block + CHKSUM, 8, &stored) || stored != sum(block))
    return GPUJIT__TAR_CHECKSUM;
  memcpy(name, block + NAME, 100);
  name[100] = '\0';
  if (!read_octal(block + SIZE, 12, size))
    return GPUJIT__TAR_CHECKSUM; /* a size no tar writes: as damaged as a wrong sum */
  return (block[TYPE] == '0' || block[TYPE] == '\0') && block[PREFIX] == '\0' ? GPUJIT__TAR_FILE : GPUJIT__TAR_OTHER;
}
