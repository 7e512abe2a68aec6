/* LD_PRELOAD shim for fault tests: the Nth write(2) (GPUJIT_FAIL_WRITE_AT=N, counting from 1)
 * and every later one fails with ENOSPC, as on a full disk. Only writes to regular files count,
 * so the CLI can still report on stdout and stderr. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

ssize_t write(int fd, const void *buf, size_t n)
{
  static ssize_t (*real)(int, const void *, size_t);
  static long count;
  const char *at = getenv("GPUJIT_FAIL_WRITE_AT");
  struct stat st;
  if (!real)
    *(void **)&real = dlsym(RTLD_NEXT, "write");
  if (at && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ++count >= atol(at)) {
    errno = ENOSPC;
    return -1;
  }
  return real(fd, buf, n);
}
