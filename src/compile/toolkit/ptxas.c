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
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/children.h"
#include "base/error.h"
#include "base/hash.h"
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

/* "GPUJIT_PROFILE_FROM_HASH=" and the hash of the PTX text in `from` as the profile's records
 * hash a compile's PTX (XXH3-128, canonical, hex; the text without its NUL): the variable is
 * inject/protocol.h's FROM_HASH. */
static void from_hash(char *out, size_t cap, const gpujit__buf *from)
{
  char hex[33];
  gpujit__hash_hex(hex, from->data, from->data ? strnlen(from->data, from->len) : 0);
  snprintf(out, cap, "GPUJIT_PROFILE_FROM_HASH=%s", hex);
}

/* A file in memory (memfd), or -1 where the kernel has none: a regular file, unlike a pipe, so
 * the profile's injection library in ptxas can hash what it wrote at its exit. */
static int memory_file(void)
{
#ifdef SYS_memfd_create
  return (int)syscall(SYS_memfd_create, "gpujit-ptxas-cubin", 1u /* MFD_CLOEXEC */);
#else
  return -1;
#endif
}

/* The whole of file `fd` into `out`. */
static int read_back(int fd, gpujit__buf *out)
{
  struct stat st;
  off_t at = 0;
  if (fstat(fd, &st) != 0)
    return gpujit__error(GPUJIT_EIO, "ptxas's output: %s", strerror(errno));
  if (gpujit__buf_reserve(out, (size_t)st.st_size) < 0)
    return GPUJIT_ENOMEM;
  while (at < st.st_size) {
    ssize_t n = pread(fd, out->data + out->len, (size_t)(st.st_size - at), at);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return gpujit__error(GPUJIT_EIO, "ptxas's output: %s", n < 0 ? strerror(errno) : "shorter than it was");
    at += n, out->len += (size_t)n;
  }
  return 0;
}

/* ptxas's environment: ours, less what is preloaded into gpujit — ptxas runs as a step of NVRTC's
 * would, in-process, so a sanitizer's shim or another tool's library is not preloaded into it —
 * but with gpujit profile's injection library kept, so that the profile sees ptxas as a stage of
 * this compile, told by `from_var` what the compile was made from. `*preload` is the kept
 * LD_PRELOAD (NULL where gpujit is not profiled), freed by the caller with the array;
 * `tmpdir_var` ("TMPDIR=" and ptxas's private directory) replaces ours. */
static char **child_env(char **preload, char *from_var, size_t cap, const gpujit__buf *from, char *tmpdir_var)
{
  size_t nenv = 0;
  char **env;
  for (char **e = environ; *e; e++)
    nenv++;
  if (!(env = calloc(nenv + 3, sizeof(*env)))) {
    gpujit__error(GPUJIT_ENOMEM, "out of memory");
    return NULL;
  }
  nenv = 0;
  env[nenv++] = tmpdir_var; /* its temporary files go where we remove them */
  for (char **e = environ; *e; e++)
    if (!strncmp(*e, "TMPDIR=", 7))
      continue;
    else if (strncmp(*e, "LD_PRELOAD=", 11) != 0)
      env[nenv++] = *e;
    else if ((*preload = injection_only(*e + 11)) != NULL)
      env[nenv++] = *preload;
  if (*preload && from) { /* under gpujit profile: what this ptxas compiles was made from */
    from_hash(from_var, cap, from);
    env[nenv++] = from_var;
  }
  return env;
}

/* Feeds `ptx` to the started ptxas and gathers what it writes (`out`: its stdout's bytes). */
static int talk(int in, int out_fd, int err_fd, const gpujit__buf *ptx, gpujit__buf *out, gpujit__buf *log)
{
  /* a child gone before reading all of its input must not kill us with SIGPIPE */
  sigset_t pipe_set, old;
  struct timespec zero = {0, 0};
  int err;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
  err = exchange(in, out_fd, err_fd, ptx, out, log);
  while (sigtimedwait(&pipe_set, NULL, &zero) > 0) /* a SIGPIPE raised meanwhile is ours to drop */
    ;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return err;
}

/* The error for a ptxas that exited with `status` and wrote `cubin` to `out_name`, or 0 where it
 * made one. */
static int outcome(int status, const gpujit__buf *cubin, const gpujit__buf *log, const char *out_name)
{
  char first[512] = "";
  bool exited = WIFEXITED(status);
  if (exited && WEXITSTATUS(status) == 0 && cubin->len >= 4 && memcmp(cubin->data, "\177ELF", 4) == 0)
    return 0;
  if (log->data)
    sscanf(log->data, "%511[^\n]", first);
  gpujit__error_set_log(log->data);
  if (exited && WEXITSTATUS(status) == 0)
    return gpujit__error(GPUJIT_ELINK, "ptxas failed (exit 0): no cubin in its output file %s (%zu bytes%s)%s%s",
                         out_name, cubin->len, cubin->len ? ", not ELF" : "", first[0] ? ": " : "", first);
  return gpujit__error(GPUJIT_ELINK, "ptxas failed (%s %d) writing %s: %s", exited ? "exit" : "signal",
                       exited ? WEXITSTATUS(status) : WTERMSIG(status), out_name, first[0] ? first : "see its log");
}

/* Whether "/proc/self/fd/N" names, in a child of ours, the child's own descriptor N: /proc is
 * procfs, and there the path reaches our `fd`. A path under /dev (/dev/stdout, /dev/fd) is no
 * such promise: where it is missing, a ptxas run as root would create a regular file there. */
static bool proc_fd_is_ours(int fd)
{
  struct statfs fs;
  struct stat a, b;
  char path[64];
  snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  return statfs("/proc/self/fd", &fs) == 0 && fs.f_type == 0x9fa0 /* PROC_SUPER_MAGIC */ && stat(path, &a) == 0 &&
         fstat(fd, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Starts `exe` with its stdin, stdout and stderr on the pipes' ends (and fd 3 on `mem`, where
 * there is one), made to die with the thread that starts it, which waits for it: a build, worker
 * or server killed outright (SIGKILL: no handler runs) leaves no ptxas running. posix_spawn
 * cannot ask for that (PR_SET_PDEATHSIG), so this is its vfork and exec, with nothing but
 * system calls in the child, which shares our memory until it execs. */
static int start(pid_t *pid, int slot, const char *exe, char **argv, char **env, int in, int out, int err_fd, int mem)
{
  const int from[4] = {in, out, err_fd, mem};
  sigset_t all, old;
  pid_t parent = getpid();
  volatile int failed = 0; /* the child's errno, written in our memory before it exits */
  int err;
  /* no signal between the start and the slot's pid: a handler's abort must be able to end it
   * (and none may run in the child on our stack; it takes the mask we had just before it execs) */
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  if ((*pid = vfork()) == 0) {
    /* the parent gone before the death signal was asked for: it would never come */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) {
      failed = errno ? errno : ESRCH;
      _exit(127);
    }
    for (int fd = 0; fd < 4; fd++)
      if (from[fd] >= 0 && (from[fd] == fd ? fcntl(fd, F_SETFD, 0) : dup2(from[fd], fd)) < 0) {
        failed = errno;
        _exit(127);
      }
    sigprocmask(SIG_SETMASK, &old, NULL);
    execve(exe, argv, env);
    failed = errno;
    _exit(127);
  }
  err = *pid < 0 ? errno : failed;
  if (*pid > 0 && !err)
    gpujit__child_started(slot, *pid);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (*pid > 0 && err) /* it started, but never became ptxas: reaped here */
    waitpid(*pid, NULL, 0);
  if (*pid > 0 && !err)
    return 0;
  *pid = -1;
  return gpujit__error(GPUJIT_EIO, "cannot start %s: %s", exe, strerror(err));
}

/* Reads the cubin ptxas left in `path` (a file of its private directory). */
static int read_file(const char *path, gpujit__buf *cubin)
{
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), err;
  if (fd < 0)
    return gpujit__error(GPUJIT_ELINK, "ptxas failed (exit 0): no output file %s: %s", path, strerror(errno));
  err = read_back(fd, cubin);
  close(fd);
  return err;
}

int gpujit__ptxas(gpujit__buf *cubin, gpujit__buf *log, const gpujit__buf *ptx, const gpujit__buf *from,
                  const char *arch, const gpujit_module_options *o)
{
  char from_var[64], dir[512] = "", tmpdir_var[520], out_name[560];
  int mem = -1; /* under gpujit profile: the cubin's file in memory (fd 3 in ptxas) */
  int slot = -1;
  bool to_file = false; /* no /proc to name our descriptor: a file in ptxas's private directory */
  const char *exe = gpujit__ptxas_path();
  gpujit__strvec args = {0};
  char **argv = NULL, **env = NULL, *preload = NULL;
  int fin[2] = {-1, -1}, fout[2] = {-1, -1}, ferr[2] = {-1, -1}, status = 0, err;
  pid_t pid = -1;

  cubin->len = 0;
  if (!exe)
    return gpujit__error(GPUJIT_ENOENT, "no ptxas in the toolkit (%s/bin/ptxas)", gpujit__cuda_root());
  /* ptxas's temporary files (tmpxft_*) go to a directory of its own, removed after it, or by
   * gpujit_children_abort() when we are killed while it runs */
  if ((err = gpujit__child_dir_make(dir, sizeof(dir), &slot)) < 0) {
    dir[0] = '\0';
    goto done;
  }
  snprintf(tmpdir_var, sizeof(tmpdir_var), "TMPDIR=%s", dir);
  if (!(env = child_env(&preload, from_var, sizeof(from_var), from, tmpdir_var))) {
    err = GPUJIT_ENOMEM;
    goto done;
  }
  if (pipe2(fin, O_CLOEXEC) < 0 || pipe2(fout, O_CLOEXEC) < 0 || pipe2(ferr, O_CLOEXEC) < 0) {
    err = gpujit__error(GPUJIT_EIO, "pipe: %s", strerror(errno));
    goto done;
  }
  /* Through a pipe, not a file: a full disk cannot get in the way. Under gpujit profile the cubin
   * goes to a file in memory instead, so that the profile records its hash, and the module loaded
   * from it is tied to this compile. Either is named by /proc/self/fd/N, never by a path that
   * could name something else (/dev/stdout): where /proc cannot promise that, a file of its own. */
  if (preload)
    mem = memory_file();
  if (proc_fd_is_ours(mem >= 0 ? mem : fout[1]))
    snprintf(out_name, sizeof(out_name), "/proc/self/fd/%d", mem >= 0 ? 3 : 1);
  else
    to_file = true, snprintf(out_name, sizeof(out_name), "%s/out.cubin", dir);
  if ((err = ptxas_args(&args, exe, arch, o, "-", out_name)) < 0)
    goto done;
  if (!(argv = calloc(args.count + 1, sizeof(*argv)))) {
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
    goto done;
  }
  memcpy(argv, args.items, args.count * sizeof(*argv));
  fcntl(fin[1], F_SETFL, O_NONBLOCK);
  err = start(&pid, slot, exe, argv, env, fin[0], fout[1], ferr[1], to_file ? -1 : mem);
  close(fin[0]), close(fout[1]), close(ferr[1]);
  fin[0] = fout[1] = ferr[1] = -1;
  if (err < 0)
    goto done;
  err = talk(fin[1], fout[0], ferr[0], ptx, mem >= 0 || to_file ? log : cubin, log);
  fin[1] = -1; /* talk closed it */
  gpujit__child_wait(slot, pid, &status);
  pid = -1;
  if (err == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 && (to_file || mem >= 0))
    err = to_file ? read_file(out_name, cubin) : read_back(mem, cubin);
  if (err == 0)
    err = outcome(status, cubin, log, out_name);
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
    gpujit__child_wait(slot, pid, &status);
  if (dir[0])
    gpujit__child_dir_remove(slot, dir);
  if (mem >= 0)
    close(mem);
  free(argv);
  free(env);
  free(preload);
  gpujit__strvec_free(&args);
  if (err < 0)
    cubin->len = 0;
  return err;
}
