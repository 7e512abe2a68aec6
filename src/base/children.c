/*
 * The toolkit programs gpujit runs (ptxas) and the private directories they write in. A program
 * killed while one runs cannot let the child leave its temporary files behind: its signal handler
 * calls gpujit_children_abort(), which needs nothing but system calls (async-signal-safe).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/children.h"
#include "base/error.h"
#include "gpujit/common.h"

enum { SLOTS = 64, SLOT_FREE = 0, SLOT_BUSY, SLOT_LIVE };

typedef struct child_slot {
  atomic_int state; /* FREE, BUSY (being set up or torn down by its owner), LIVE (abort may take it) */
  atomic_int pid;   /* 0: none to kill */
  char dir[512];
} child_slot;

static child_slot slots[SLOTS];

/* Removes the files of `dir` (flat: ptxas writes no subdirectories) and `dir`: system calls only. */
static void remove_dir(const char *dir)
{
  _Alignas(8) char buf[4096];
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) {
    for (;;) {
      long n = syscall(SYS_getdents64, fd, buf, sizeof(buf));
      if (n <= 0)
        break;
      for (long at = 0; at < n;) {
        struct {
          unsigned long long ino;
          long long off;
          unsigned short reclen;
          unsigned char type;
          char name[];
        } *d = (void *)(buf + at);
        if (strcmp(d->name, ".") != 0 && strcmp(d->name, "..") != 0)
          unlinkat(fd, d->name, 0);
        at += d->reclen;
      }
    }
    close(fd);
  }
  rmdir(dir);
}

int gpujit__child_dir_make(char *out, size_t cap, int *slot)
{
  const char *tmp = getenv("TMPDIR");
  if (!tmp || tmp[0] != '/')
    tmp = "/tmp";
  *slot = -1;
  if ((size_t)snprintf(out, cap, "%s/gpujit-ptxas-XXXXXX", tmp) >= cap || cap > sizeof(slots[0].dir))
    return gpujit__error(GPUJIT_EIO, "temporary directory name too long: %s", tmp);
  if (!mkdtemp(out))
    return gpujit__error(GPUJIT_EIO, "cannot make a private directory for ptxas in %s: %s", tmp, strerror(errno));
  for (int i = 0; i < SLOTS; i++) {
    int want = SLOT_FREE;
    if (atomic_compare_exchange_strong(&slots[i].state, &want, SLOT_BUSY)) {
      memcpy(slots[i].dir, out, strlen(out) + 1);
      atomic_store(&slots[i].pid, 0);
      atomic_store(&slots[i].state, SLOT_LIVE);
      *slot = i;
      break;
    }
  }
  return 0;
}

void gpujit__child_started(int slot, pid_t pid)
{
  if (slot >= 0)
    atomic_store(&slots[slot].pid, (int)pid);
}

void gpujit__child_wait(int slot, pid_t pid, int *status)
{
  siginfo_t si;
  /* ended but not reaped (WNOWAIT): the pid stays ours while the slot lets go of it */
  while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
    ;
  if (slot >= 0)
    atomic_store(&slots[slot].pid, 0);
  while (waitpid(pid, status, 0) < 0 && errno == EINTR)
    ;
}

void gpujit__child_dir_remove(int slot, const char *dir)
{
  int want = SLOT_LIVE;
  /* an abort that took the slot removes the directory itself, and the process is about to end */
  if (slot >= 0 && !atomic_compare_exchange_strong(&slots[slot].state, &want, SLOT_BUSY))
    return;
  remove_dir(dir);
  if (slot >= 0)
    atomic_store(&slots[slot].state, SLOT_FREE);
}

void gpujit_children_abort(void)
{
  int saved = errno, taken[SLOTS];
  for (int i = 0; i < SLOTS; i++) {
    int want = SLOT_LIVE, pid;
    taken[i] = atomic_compare_exchange_strong(&slots[i].state, &want, SLOT_BUSY);
    if (taken[i] && (pid = atomic_load(&slots[i].pid)) > 0)
      kill(pid, SIGKILL);
  }
  for (int i = 0; i < SLOTS; i++) {
    int pid;
    if (!taken[i])
      continue;
    if ((pid = atomic_exchange(&slots[i].pid, 0)) > 0)
      while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    remove_dir(slots[i].dir);
  }
  errno = saved;
}
