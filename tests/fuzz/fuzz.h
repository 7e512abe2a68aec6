/* What the fuzz targets share: one entry point each, quiet logs, a scratch directory per process
 * (removed at exit), and the input as a NUL-terminated copy. */
#ifndef GPUJIT_FUZZ_H
#define GPUJIT_FUZZ_H

#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpujit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fz__rm(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

static char fz__dir[64];

static void fz__discard(gpujit_log_level level, const char *message, void *payload)
{
  (void)level;
  (void)payload;
  if (!message)
    abort();
}

static void fz__cleanup(void)
{
  if (fz__dir[0])
    nftw(fz__dir, fz__rm, 16, FTW_DEPTH | FTW_PHYS);
}

/** A scratch directory for this process, made on first use. */
static inline const char *fz_dir(void)
{
  if (!fz__dir[0]) {
    snprintf(fz__dir, sizeof(fz__dir), "/tmp/gpujit-fuzz-XXXXXX");
    if (!mkdtemp(fz__dir))
      abort();
    atexit(fz__cleanup);
    gpujit_log_set(GPUJIT_LOG_DEBUG, fz__discard, NULL); /* every message formatted, none printed */
  }
  return fz__dir;
}

/** Empty the scratch directory (each input starts from nothing). */
static inline void fz_reset(void)
{
  fz__cleanup();
  if (mkdir(fz__dir, 0700) < 0)
    abort();
}

/** The input with a NUL after it; free() it. */
static inline char *fz_str(const uint8_t *data, size_t size)
{
  char *s = malloc(size + 1);
  if (!s)
    abort();
  memcpy(s, data, size);
  s[size] = '\0';
  return s;
}

/** Write the input to `name` in the scratch directory; returns the path (static). */
static inline const char *fz_file(const char *name, const uint8_t *data, size_t size)
{
  static char path[256];
  FILE *f;
  snprintf(path, sizeof(path), "%s/%s", fz_dir(), name);
  if (!(f = fopen(path, "wb")))
    abort();
  if (size && fwrite(data, 1, size, f) != size)
    abort();
  fclose(f);
  return path;
}

#endif
