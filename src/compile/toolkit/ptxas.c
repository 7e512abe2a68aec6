/*
 * ptxas for the lean path: the toolkit's own executable, in whole-program mode as NVRTC runs it.
 * nvJitLink takes PTX too, but compiles it relocatable (ptxas -c): block_reduce then needs 18
 * registers instead of NVRTC's 14. nvPTXCompiler is a static library this toolkit does not ship.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "compile/toolkit/nvrtc_opts.h"
#include "compile/toolkit/ptxas.h"
#include "compile/toolkit/toolkit.h"

extern char **environ;

static int ptxas_args(gpujit__strvec *a, const char *exe, const char *arch, const gpujit_module_options *o,
                      const char *in, const char *out)
{
  gpujit__nvrtc_opts raw;
  int err;
  if ((err = gpujit__strvec_push(a, exe)) < 0 || (err = gpujit__strvec_pushf(a, "-arch=%s", arch)) < 0 ||
      (err = gpujit__strvec_push(a, "-v")) < 0) /* per-kernel resources, as NVRTC's log has them */
    return err;
  if (o->lineinfo && (err = gpujit__strvec_push(a, "-lineinfo")) < 0)
    return err;
  if (o->device_debug && (err = gpujit__strvec_push(a, "-g")) < 0)
    return err;
  if (o->maxrregcount > 0 && (err = gpujit__strvec_pushf(a, "-maxrregcount=%d", o->maxrregcount)) < 0)
    return err;
  if (o->ofast_compile && (err = gpujit__strvec_pushf(a, "--Ofast-compile=%s", o->ofast_compile)) < 0)
    return err;
  /* what NVRTC would have given its own ptxas goes to the one that runs here, in any spelling */
  if ((err = gpujit__nvrtc_opts_parse(&raw, (const char *const *)o->nvrtc_options, o->nvrtc_options_count)) < 0)
    return err;
  for (size_t i = 0; err == 0 && i < raw.count; i++) {
    const gpujit__nvrtc_opt *it = &raw.items[i];
    if (it->role == GPUJIT__OPT_PTXAS_MAXREG && it->value)
      err = gpujit__strvec_pushf(a, "-maxrregcount=%s", it->value);
    else if (it->role == GPUJIT__OPT_PTXAS_PASS && it->value)
      err = gpujit__strvec_push(a, it->value);
  }
  gpujit__nvrtc_opts_free(&raw);
  if (err < 0)
    return err;
  if ((err = gpujit__strvec_push(a, "-o")) < 0 || (err = gpujit__strvec_push(a, out)) < 0)
    return err;
  return gpujit__strvec_push(a, in);
}

/* Feed the PTX to the child's stdin while reading its stdout (the cubin) and stderr (the log);
 * `in` is closed on return. */
static int exchange(int in, int out, int err_fd, const gpujit__buf *ptx, gpujit__buf *cubin, gpujit__buf *log)
{
  size_t sent = 0;
  struct pollfd p[3] = {{in, POLLOUT, 0}, {out, POLLIN, 0}, {err_fd, POLLIN, 0}};
  char chunk[65536];
  if (ptx->len == 0) {
    close(in);
    p[0].fd = -1;
  }
  while (p[0].fd >= 0 || p[1].fd >= 0 || p[2].fd >= 0) {
    if (poll(p, 3, -1) < 0) {
      if (errno == EINTR)
        continue;
      if (p[0].fd >= 0)
        close(in);
      return gpujit__error(GPUJIT_EIO, "poll: %s", strerror(errno));
    }
    if (p[0].fd >= 0 && p[0].revents) {
      ssize_t n = (p[0].revents & POLLOUT) ? write(in, ptx->data + sent, ptx->len - sent) : -1;
      if (n > 0)
        sent += (size_t)n;
      if ((n < 0 && errno != EAGAIN && errno != EINTR) || sent == ptx->len) {
        close(in); /* done, or ptxas stopped reading: its exit status says why */
        p[0].fd = -1;
      }
    }
    for (int k = 1; k < 3; k++) {
      if (p[k].fd < 0 || !p[k].revents)
        continue;
      ssize_t n = read(p[k].fd, chunk, sizeof(chunk));
      if (n < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      if (n <= 0) {
        p[k].fd = -1;
        continue;
      }
      if (gpujit__buf_put(k == 1 ? cubin : log, chunk, (size_t)n) < 0) {
        if (p[0].fd >= 0)
          close(in);
        return GPUJIT_ENOMEM;
      }
    }
  }
  return 0;
}

/* "LD_PRELOAD=" with only the entries of `list` that are gpujit profile's injection library
 * (libgpujit_inject.so), or NULL where there is none (or no memory). */
static char *injection_only(const char *list)
{
  char *out = malloc(strlen(list) + sizeof("LD_PRELOAD="));
  size_t len = 0;
  if (!out)
    return NULL;
  len = (size_t)sprintf(out, "LD_PRELOAD=");
  for (const char *p = list; *p;) {
    size_t n = strcspn(p, ": ");
    const char *base = p;
    for (size_t i = 0; i < n; i++)
      if (p[i] == '/')
        base = p + i + 1;
    if (n && (size_t)(p + n - base) >= 16 && !strncmp(base, "libgpujit_inject", 16)) {
      if (out[len - 1] != '=')
        out[len++] = ':';
      memcpy(out + len, p, n);
      len += n;
    }
    p += n + (p[n] != '\0');
  }
  out[len] = '\0';
  if (out[len - 1] == '=') {
    free(out);
    return NULL;
  }
  return out;
}

int gpujit__ptxas(gpujit__buf *cubin, gpujit__buf *log, const gpujit__buf *ptx, const char *arch,
                  const gpujit_module_options *o)
{
  const char *exe = gpujit__ptxas_path();
  gpujit__strvec args = {0};
  char **argv = NULL, **env = NULL, *preload = NULL;
  size_t nenv = 0;
  posix_spawn_file_actions_t fa;
  int fin[2] = {-1, -1}, fout[2] = {-1, -1}, ferr[2] = {-1, -1}, status = 0, err;
  pid_t pid = -1;

  cubin->len = 0;
  if (!exe)
    return gpujit__error(GPUJIT_ENOENT, "no ptxas in the toolkit (%s/bin/ptxas)", gpujit__cuda_root());
  /* through pipes, not files: nothing to clean up, and a full disk cannot get in the way */
  if ((err = ptxas_args(&args, exe, arch, o, "-", "/dev/stdout")) < 0)
    goto done;
  if (!(argv = calloc(args.count + 1, sizeof(*argv)))) {
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
    goto done;
  }
  memcpy(argv, args.items, args.count * sizeof(*argv));
  /* ptxas runs as a step of NVRTC's would, in-process: what is preloaded into gpujit (a
   * sanitizer's shim, another tool's library) is not preloaded into it — but gpujit profile's
   * injection library is kept, so that the profile sees ptxas as a stage of this compile */
  for (char **e = environ; *e; e++)
    nenv++;
  if (!(env = calloc(nenv + 1, sizeof(*env)))) {
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
    goto done;
  }
  nenv = 0;
  for (char **e = environ; *e; e++)
    if (strncmp(*e, "LD_PRELOAD=", 11) != 0)
      env[nenv++] = *e;
    else if ((preload = injection_only(*e + 11)) != NULL)
      env[nenv++] = preload;
  if (pipe2(fin, O_CLOEXEC) < 0 || pipe2(fout, O_CLOEXEC) < 0 || pipe2(ferr, O_CLOEXEC) < 0) {
    err = gpujit__error(GPUJIT_EIO, "pipe: %s", strerror(errno));
    goto done;
  }
  fcntl(fin[1], F_SETFL, O_NONBLOCK);
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fin[0], 0);
  posix_spawn_file_actions_adddup2(&fa, fout[1], 1);
  posix_spawn_file_actions_adddup2(&fa, ferr[1], 2);
  err = posix_spawn(&pid, exe, &fa, NULL, argv, env);
  posix_spawn_file_actions_destroy(&fa);
  close(fin[0]), close(fout[1]), close(ferr[1]);
  fin[0] = fout[1] = ferr[1] = -1;
  if (err != 0) {
    pid = -1;
    err = gpujit__error(GPUJIT_EIO, "cannot start %s: %s", exe, strerror(err));
    goto done;
  }
  {
    /* a child gone before reading all of its input must not kill us with SIGPIPE */
    sigset_t pipe_set, old;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    err = exchange(fin[1], fout[0], ferr[0], ptx, cubin, log);
    fin[1] = -1; /* exchange closed it */
    {
      struct timespec zero = {0, 0};
      while (sigtimedwait(&pipe_set, NULL, &zero) > 0) /* a SIGPIPE raised meanwhile is ours to drop */
        ;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
  }
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  pid = -1;
  if (err < 0)
    goto done;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || cubin->len < 4 || memcmp(cubin->data, "\177ELF", 4) != 0) {
    char first[512] = "";
    if (log->data)
      sscanf(log->data, "%511[^\n]", first);
    gpujit__error_set_log(log->data);
    err = gpujit__error(GPUJIT_ELINK, "ptxas failed (%s %d): %s", WIFEXITED(status) ? "exit" : "signal",
                        WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), first[0] ? first : "see its log");
  }
done:
  for (int i = 0; i < 2; i++) {
    if (fin[i] >= 0)
      close(fin[i]);
    if (fout[i] >= 0)
      close(fout[i]);
    if (ferr[i] >= 0)
      close(ferr[i]);
  }
  if (pid > 0)
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
      ;
  free(argv);
  free(env);
  free(preload);
  gpujit__strvec_free(&args);
  if (err < 0)
    cubin->len = 0;
  return err;
}
