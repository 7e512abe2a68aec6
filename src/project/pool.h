/* Worker processes of a project build: finding the executable, starting one with its channels,
 * ending it, and saying how it ended. */
#ifndef GPUJIT_PROJECT_POOL_H
#define GPUJIT_PROJECT_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/buf.h"
#include "project/wire.h"

typedef struct gpujit__worker {
  int index; /* 1-based, in start order (replacements get new numbers) */
  pid_t pid;
  int job_fd, result_fd, err_fd; /* -1 when closed */
  gpujit__frame_reader reader;
  gpujit__buf err_tail; /* the last of what it wrote to stderr */
  long job;             /* the module it compiles, -1 when idle */
  double job_start_us;
  uint64_t block;       /* the include block of its job */
  bool has_block;
  bool creating;        /* its job was told to make a PCH */
  uint64_t pch_blocks[8]; /* include blocks it holds a PCH for (the last 8) */
  size_t pch_count;
  struct cJSON *result; /* a result waiting for its image frame */
  int64_t track;        /* its trace track */
  double last_end_us;   /* when its last job ended: the critical path is the worker that ended last */
  bool remote;          /* a connection to a build server for one job (pid: the server's), not a process */
  bool acked;           /* remote: the server took the job */
  bool tracked;         /* `track` is made */
} gpujit__worker;

/** The worker executable: `hint`, else $GPUJIT_WORKER, else gpujit-worker beside the library (or
 *  the program it is linked into), else in ../libexec/gpujit/ from there.
 *  @return 0, or GPUJIT_ENOENT naming the places tried. */
int gpujit__worker_locate(char *out, size_t size, const char *hint);

/** Start a worker. @return 0 or GPUJIT_EWORKER with the reason. */
int gpujit__worker_spawn(gpujit__worker *w, const char *path, int index);

/** Read what the worker wrote to stderr (keeps the last 4 KiB). */
void gpujit__worker_drain_stderr(gpujit__worker *w);

/** End a worker: close its jobs channel (it exits), or with `kill` send SIGKILL first; reap it.
 *  `why` receives how it ended ("exited 0", "killed by signal 9 (Killed)"). */
void gpujit__worker_stop(gpujit__worker *w, bool kill, char *why, size_t why_size);

#endif
