/* Worker processes (project/pool.h). Spawned with posix_spawn, never fork alone: the calling
 * program may have threads, a CUDA context or NVRTC loaded, none of which survive a fork. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/error.h"
#include "gpujit/project.h"
#include "project/pool.h"
#include "project/worker.h"

extern char **environ;

static bool executable(const char *path) { return access(path, X_OK) == 0; }

int gpujit__worker_locate(char *out, size_t size, const char *hint)
{
  const char *env = getenv("GPUJIT_WORKER");
  char tried[2048] = "", dir[PATH_MAX];
  const char *froms[2] = {NULL, NULL};
  Dl_info info;
  char self[PATH_MAX];
  ssize_t n;

  if (hint || (env && *env)) {
    const char *p = hint ? hint : env;
    if (executable(p)) {
      snprintf(out, size, "%s", p);
      return 0;
    }
    return gpujit__error(GPUJIT_ENOENT, "worker executable '%s'%s is missing or not executable", p,
                         hint ? "" : " ($GPUJIT_WORKER)");
  }
  if (dladdr((void *)gpujit__worker_locate, &info) && info.dli_fname)
    froms[0] = info.dli_fname;
  if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) > 0) {
    self[n] = '\0';
    froms[1] = self;
  }
  for (int i = 0; i < 2; i++) {
    static const char *const rel[] = {"gpujit-worker", "../libexec/gpujit/gpujit-worker"};
    char real[PATH_MAX], *slash;
    if (!froms[i] || !realpath(froms[i], real))
      continue;
    if ((slash = strrchr(real, '/')))
      *slash = '\0';
    snprintf(dir, sizeof(dir), "%s", real);
    for (int k = 0; k < 2; k++) {
      char cand[PATH_MAX + 64];
      snprintf(cand, sizeof(cand), "%s/%s", dir, rel[k]);
      if (executable(cand)) {
        snprintf(out, size, "%s", cand);
        return 0;
      }
      if (strlen(tried) + strlen(cand) + 3 < sizeof(tried))
        snprintf(tried + strlen(tried), sizeof(tried) - strlen(tried), "%s%s", tried[0] ? ", " : "", cand);
    }
  }
  return gpujit__error(GPUJIT_ENOENT, "gpujit-worker not found (tried %s; set GPUJIT_WORKER)", tried[0] ? tried : "nothing");
}

/* A socket pair: the parent's end (close-on-exec) and the child's end moved above fd 9. */
static int channel(int *parent, int *child)
{
  int sv[2], hi;
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
    return -1;
  hi = fcntl(sv[1], F_DUPFD_CLOEXEC, 10);
  close(sv[1]);
  if (hi < 0) {
    close(sv[0]);
    return -1;
  }
  *parent = sv[0];
  *child = hi;
  return 0;
}

static void close_channels(gpujit__worker *w)
{
  int *fds[] = {&w->job_fd, &w->result_fd, &w->err_fd};
  for (size_t i = 0; i < 3; i++)
    if (*fds[i] >= 0) {
      close(*fds[i]);
      *fds[i] = -1;
    }
}

int gpujit__worker_spawn(gpujit__worker *w, const char *path, int index)
{
  posix_spawn_file_actions_t fa;
  char *argv[] = {(char *)"gpujit-worker", NULL};
  int jc = -1, rc = -1, ec = -1, err;

  memset(w, 0, sizeof(*w));
  w->index = index;
  w->job = -1;
  w->job_fd = w->result_fd = w->err_fd = -1;
  if (channel(&w->job_fd, &jc) < 0 || channel(&w->result_fd, &rc) < 0 || channel(&w->err_fd, &ec) < 0) {
    err = errno;
    goto fail;
  }
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, jc, GPUJIT__WORKER_IN_FD);
  posix_spawn_file_actions_adddup2(&fa, rc, GPUJIT__WORKER_OUT_FD);
  posix_spawn_file_actions_adddup2(&fa, ec, 2);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  err = posix_spawn(&w->pid, path, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (err)
    goto fail;
  close(jc);
  close(rc);
  close(ec);
  fcntl(w->result_fd, F_SETFL, O_NONBLOCK);
  fcntl(w->err_fd, F_SETFL, O_NONBLOCK);
  return 0;
fail:
  close_channels(w);
  if (jc >= 0)
    close(jc);
  if (rc >= 0)
    close(rc);
  if (ec >= 0)
    close(ec);
  return gpujit__error(GPUJIT_EWORKER, "cannot start worker %s: %s", path, strerror(err));
}

void gpujit__worker_drain_stderr(gpujit__worker *w)
{
  char chunk[4096];
  ssize_t n;
  while (w->err_fd >= 0 && (n = read(w->err_fd, chunk, sizeof(chunk))) > 0) {
    gpujit__buf_put(&w->err_tail, chunk, (size_t)n);
    if (w->err_tail.len > 4096) {
      memmove(w->err_tail.data, w->err_tail.data + w->err_tail.len - 4096, 4096);
      w->err_tail.len = 4096;
    }
  }
  if (w->err_tail.data)
    w->err_tail.data[w->err_tail.len] = '\0';
}

void gpujit__worker_stop(gpujit__worker *w, bool kill_it, char *why, size_t why_size)
{
  int status = 0;
  if (w->remote) { /* a server's connection: closed, never the server killed */
    if (why)
      snprintf(why, why_size, "closed the connection");
    w->pid = 0;
    w->remote = w->acked = false;
  } else if (w->pid > 0) {
    if (kill_it)
      kill(w->pid, SIGKILL);
    if (w->job_fd >= 0)
      close(w->job_fd), w->job_fd = -1; /* end of jobs: the worker exits */
    while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
      ;
    if (why && WIFSIGNALED(status))
      snprintf(why, why_size, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else if (why)
      snprintf(why, why_size, "exited with status %d", WEXITSTATUS(status));
    w->pid = 0;
  }
  gpujit__worker_drain_stderr(w);
  close_channels(w);
  gpujit__buf_free(&w->reader.in);
}
