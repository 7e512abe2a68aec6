/* Test helpers: temporary directories, files, ELF section lookup, running commands. */
#ifndef GPUJIT_TEST_HELPERS_H
#define GPUJIT_TEST_HELPERS_H

#include <elf.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static int th__rm(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  (void)st; (void)flag; (void)ftw;
  return remove(path);
}

static inline void th_rmrf(const char *dir) { nftw(dir, th__rm, 16, FTW_DEPTH | FTW_PHYS); }

/** A fresh directory per test; free with th_rmrf + free. */
static inline char *th_tmpdir(void)
{
  char *d = strdup("/tmp/gpujit-test-XXXXXX");
  assert_non_null(mkdtemp(d));
  return d;
}

static inline char *th_path(const char *dir, const char *name)
{
  char *p = malloc(strlen(dir) + strlen(name) + 2);
  sprintf(p, "%s/%s", dir, name);
  return p;
}

/** Wait for the clock files are stamped with (CLOCK_REALTIME_COARSE) to pass `ns`: a file
 *  written before then is older than a compile that starts after, so the cache may record it (a
 *  file stamped in the tick a compile first looks at it is too new to record). */
static inline void th_settle_after(long long ns)
{
  struct timespec ts;
  do {
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    if ((long long)ts.tv_sec * 1000000000LL + ts.tv_nsec > ns)
      return;
    nanosleep(&(struct timespec){0, 500000}, NULL);
  } while (1);
}

static inline void th_settle(const char *path)
{
  struct stat st;
  if (lstat(path, &st) == 0)
    th_settle_after((long long)st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec);
}

static inline char *th_write(const char *dir, const char *name, const char *content)
{
  char *p = th_path(dir, name);
  FILE *f = fopen(p, "wb");
  assert_non_null(f);
  fwrite(content, 1, strlen(content), f);
  fclose(f);
  th_settle(p);
  return p;
}

/** Lines written to `dir`/`name`, each ended by a newline (records files, JSON lines). */
static inline void th_write_lines(const char *dir, const char *name, const char *const *lines, size_t n)
{
  char path[4096];
  FILE *f;
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  f = fopen(path, "w");
  assert_non_null(f);
  for (size_t i = 0; i < n; i++)
    fprintf(f, "%s\n", lines[i]);
  fclose(f);
}

static inline bool th_exists(const char *path) { return access(path, F_OK) == 0; }

static inline char *th_read(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  char *buf;
  long n;
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  buf = malloc((size_t)n + 1);
  if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
    fclose(f);
    free(buf);
    return NULL;
  }
  buf[n] = '\0';
  fclose(f);
  if (len)
    *len = (size_t)n;
  return buf;
}

/** Whether a 64-bit ELF image has a section of this exact name. */
static inline bool th_elf_has_section(const void *img, size_t size, const char *name)
{
  const Elf64_Ehdr *eh = img;
  const Elf64_Shdr *sh;
  const char *names;
  if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0)
    return false;
  sh = (const Elf64_Shdr *)((const char *)img + eh->e_shoff);
  names = (const char *)img + sh[eh->e_shstrndx].sh_offset;
  for (unsigned i = 0; i < eh->e_shnum; i++)
    if (strcmp(names + sh[i].sh_name, name) == 0)
      return true;
  return false;
}

/** Run a shell command; its stdout+stderr in *out (malloc'd); returns the exit status. */
static inline int th_run(char **out, const char *fmt, ...)
{
  char cmd[8192];
  va_list ap;
  FILE *p;
  size_t cap = 4096, len = 0;
  int status;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof(cmd), fmt, ap);
  va_end(ap);
  strncat(cmd, " 2>&1", sizeof(cmd) - strlen(cmd) - 1);
  p = popen(cmd, "r");
  assert_non_null(p);
  *out = malloc(cap);
  for (;;) {
    size_t n = fread(*out + len, 1, cap - len - 1, p);
    len += n;
    if (n == 0)
      break;
    if (cap - len < 1024)
      *out = realloc(*out, cap *= 2);
  }
  (*out)[len] = '\0';
  status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

#endif
