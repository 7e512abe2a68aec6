/* Lock files safe at fork (base/lockfile.h).
 *
 * An flock belongs to the open file description, which fork() shares with the child: a child
 * forked by another thread of the program while gpujit held a lock kept it alive after gpujit
 * closed its descriptor — every other process's builds on the cache blocked while the child lived,
 * and the child's own next update of the same file waited on itself for ever. So a lock is always
 * released with LOCK_UN (which releases it for every copy of the descriptor) before its descriptor
 * is closed; and the descriptors are noted here, so that a child closes its copies of them as it
 * starts (closing, unlike LOCK_UN, leaves the parent's lock as it is). The note's mutex is held
 * only around an open and a close, never while a lock is waited for, and across fork() itself, so
 * that a child sees every descriptor noted that it has. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/file.h>
#include <unistd.h>

#include "base/lockfile.h"

#define NOTED 256 /* descriptors open at once; past that one is unnoted (released all the same) */

static struct {
  int fd;          /* -1: free */
  bool inherited;  /* in a child, from the thread that forked: the lock is the parent's */
  pthread_t owner; /* the thread that opened it */
} noted[NOTED];
static int noted_top; /* slots used at most */
static pthread_mutex_t noted_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void before_fork(void) { pthread_mutex_lock(&noted_lock); }
static void after_fork_parent(void) { pthread_mutex_unlock(&noted_lock); }

/* The child has the forking thread alone: another thread's descriptors are closed, unlocked by
 * no one here (their locks are the parent's, released by it); the forking thread's own stay, for
 * the code it was in to close — without unlocking. */
static void after_fork_child(void)
{
  pthread_t self = pthread_self();
  for (int i = 0; i < noted_top; i++) {
    if (noted[i].fd < 0)
      continue;
    if (pthread_equal(noted[i].owner, self)) {
      noted[i].inherited = true;
      continue;
    }
    close(noted[i].fd);
    noted[i].fd = -1;
  }
  pthread_mutex_init(&noted_lock, NULL);
}

static void init(void) { pthread_atfork(before_fork, after_fork_parent, after_fork_child); }

int gpujit__lockfile_open(const char *path, int flags, mode_t mode)
{
  int fd, i;
  pthread_once(&once, init);
  pthread_mutex_lock(&noted_lock);
  if ((fd = open(path, flags | O_CLOEXEC, mode)) >= 0) {
    for (i = 0; i < noted_top && noted[i].fd >= 0; i++)
      ;
    if (i < NOTED) {
      noted[i].fd = fd;
      noted[i].inherited = false;
      noted[i].owner = pthread_self();
      noted_top += i == noted_top;
    }
  }
  pthread_mutex_unlock(&noted_lock);
  return fd;
}

int gpujit__lockfile_lock(int fd, int op)
{
  int rc;
  while ((rc = flock(fd, op)) < 0 && errno == EINTR)
    ;
  return rc;
}

void gpujit__lockfile_close(int fd)
{
  bool inherited = false;
  int saved = errno;
  if (fd < 0)
    return;
  pthread_mutex_lock(&noted_lock);
  for (int i = 0; i < noted_top; i++)
    if (noted[i].fd == fd) {
      inherited = noted[i].inherited;
      noted[i].fd = -1;
      break;
    }
  if (!inherited)
    flock(fd, LOCK_UN);
  close(fd);
  pthread_mutex_unlock(&noted_lock);
  errno = saved;
}
