/* An Nsight Compute report read directly: ncu exports its source page, the parser reads that. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpujit/ncu.h"
#include "base/buf.h"
#include "base/error.h"
#include "base/fs.h"

extern char **environ;

static bool executable(const char *path) { return access(path, X_OK) == 0 && !gpujit__is_dir(path); }

/* $GPUJIT_NCU, else ncu on PATH, else the toolkit's. `tried` says where it looked. */
static bool find_ncu(char *out, size_t size, char *tried, size_t tried_size)
{
  const char *env = getenv("GPUJIT_NCU"), *path = getenv("PATH"), *cuda = getenv("CUDA_PATH");
  if (env && *env) {
    snprintf(out, size, "%s", env);
    snprintf(tried, tried_size, "$GPUJIT_NCU (%s)", env);
    return executable(out);
  }
  for (const char *p = path; p && *p;) {
    const char *colon = strchr(p, ':');
    size_t n = colon ? (size_t)(colon - p) : strlen(p);
    if (n && (size_t)snprintf(out, size, "%.*s/ncu", (int)n, p) < size && executable(out))
      return true;
    p = colon ? colon + 1 : NULL;
  }
  if (cuda && *cuda && (size_t)snprintf(out, size, "%s/bin/ncu", cuda) < size && executable(out))
    return true;
  snprintf(out, size, "/usr/local/cuda/bin/ncu");
  snprintf(tried, tried_size, "PATH, $CUDA_PATH/bin and /usr/local/cuda/bin");
  return executable(out);
}

/* The first "==ERROR==" line ncu wrote, or its first line of output. */
static void first_error(char *out, size_t size, const char *text)
{
  const char *e = text ? strstr(text, "==ERROR==") : NULL, *eol;
  if (!e)
    e = text ? text : "";
  eol = strchr(e, '\n');
  snprintf(out, size, "%.*s", (int)(eol ? (size_t)(eol - e) : strlen(e)), e);
}

int gpujit_ncu_hotspots_from_report(gpujit_ncu_hotspots **out, const char *path, const char *metric,
                                    const char *function)
{
  char ncu[4096], tried[512] = "", errpath[] = "/tmp/gpujit-ncu-XXXXXX", why[512];
  char *argv[] = {ncu, "-i", (char *)path, "--page", "source", "--csv", "--print-source", "cuda,sass", NULL};
  posix_spawn_file_actions_t fa;
  gpujit__buf csv = {0}, err_text = {0};
  int pipefd[2] = {-1, -1}, errfd = -1, status = 0, err = 0;
  pid_t pid;

  if (!out || !path)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_ncu_hotspots_from_report: NULL argument");
  *out = NULL;
  if (access(path, R_OK) < 0)
    return gpujit__error(errno == ENOENT ? GPUJIT_ENOENT : GPUJIT_EIO, "%s: %s", path, strerror(errno));
  if (!find_ncu(ncu, sizeof(ncu), tried, sizeof(tried)))
    return gpujit__error(GPUJIT_ENOENT, "%s: reading a report needs Nsight Compute's ncu, not found in %s", path, tried);
  if (pipe2(pipefd, O_CLOEXEC) < 0 || (errfd = mkostemp(errpath, O_CLOEXEC)) < 0) {
    err = gpujit__error(GPUJIT_EIO, "ncu: %s", strerror(errno));
    goto done;
  }
  unlink(errpath);
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, errfd, STDERR_FILENO);
  err = posix_spawn(&pid, ncu, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(pipefd[1]);
  pipefd[1] = -1;
  if (err != 0) {
    err = gpujit__error(GPUJIT_EIO, "%s: cannot run %s: %s", path, ncu, strerror(err));
    goto done;
  }
  for (;;) { /* the export, whole */
    ssize_t n;
    if ((err = gpujit__buf_reserve(&csv, 65536)) < 0)
      break;
    n = read(pipefd[0], csv.data + csv.len, 65536);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    csv.len += (size_t)n;
  }
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (err < 0)
    goto done;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !csv.len) {
    struct stat st;
    if (fstat(errfd, &st) == 0 && st.st_size > 0 && gpujit__buf_reserve(&err_text, (size_t)st.st_size + 1) == 0) {
      ssize_t n = pread(errfd, err_text.data, (size_t)st.st_size, 0);
      err_text.len = n > 0 ? (size_t)n : 0;
      err_text.data[err_text.len] = '\0';
    }
    if (csv.len && gpujit__buf_reserve(&csv, 1) == 0)
      csv.data[csv.len] = '\0';
    first_error(why, sizeof(why), err_text.len ? err_text.data : csv.data);
    err = gpujit__error(GPUJIT_EIO, "%s: ncu could not export it (%s): %s", path,
                        WIFEXITED(status) ? "exit status" : "killed", why[0] ? why : "no message");
    goto done;
  }
  if ((err = gpujit_ncu_hotspots_parse(out, csv.data, csv.len, metric, function)) < 0) {
    char msg[1024];
    snprintf(msg, sizeof(msg), "%s", gpujit_error_last());
    err = gpujit__error(err, "%s (ncu's export of %s)", msg, path);
  }
done:
  if (pipefd[0] >= 0)
    close(pipefd[0]);
  if (pipefd[1] >= 0)
    close(pipefd[1]);
  if (errfd >= 0)
    close(errfd);
  gpujit__buf_free(&csv);
  gpujit__buf_free(&err_text);
  return err;
}
