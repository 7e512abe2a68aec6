/* Lock files safe at fork: flock descriptors a forked child can neither keep locked nor wait on. */
#ifndef GPUJIT_BASE_LOCKFILE_H
#define GPUJIT_BASE_LOCKFILE_H

#include <sys/types.h>

/** Open `path` (open(2)'s `flags` and `mode`; O_CLOEXEC is added) to take an flock on. The
 *  descriptor is noted until gpujit__lockfile_close(): a child forked meanwhile by another thread
 *  closes its copy at once, never unlocking it. @return the descriptor, or -1 with errno set. */
int gpujit__lockfile_open(const char *path, int flags, mode_t mode);

/** flock(fd, op), retried when a signal interrupts it. @return 0, or -1 with errno set. */
int gpujit__lockfile_lock(int fd, int op);

/** Let go of a descriptor from gpujit__lockfile_open(): its lock released explicitly (LOCK_UN),
 *  then closed. Closing alone would not release it while a forked child still holds a copy of
 *  the descriptor: the lock would outlive the holder's use, and block every other process's
 *  builds (and the child's own) until the child exits. In a child forked by the thread that took
 *  the lock, the copy is only closed: the lock is the parent's. A negative `fd` is a no-op. */
void gpujit__lockfile_close(int fd);

#endif
