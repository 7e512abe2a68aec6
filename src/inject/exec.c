/* A profiled program that runs another: the exec family and posix_spawn wrapped, so that (1) an
 * image that execs records that it ended by exec (not "did not end normally"), and (2) a child
 * whose environment dropped gpujit's variables (env -i, a program's own LD_PRELOAD) gets them
 * back and is recorded too, and notes so in the report once it runs. An exec may run in a vfork
 * child (Python's subprocess), which shares its parent's memory: it allocates nothing and opens
 * no file. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "inject/protocol.h"
#include "inject/record.h"

extern char **environ;

/* The variables `gpujit profile` gave this process (inject/protocol.h), as they were at its start.
 * REINJECTED is the one this file sets itself. */
#define NNAMES GPUJIT_RECORD_ENV_COUNT
#define start_of(id) start[GPUJIT_RECORD_ENV_##id]
static char *start[NNAMES];
static char self[4096];

__attribute__((constructor)) static void remember(void)
{
  Dl_info info;
  const char *back = getenv(GPUJIT_ENV(REINJECTED));
  (void)gji_active(); /* read the profile's directory now: a program may unset it before it execs */
  for (size_t i = 0; i < NNAMES; i++) {
    const char *v = i == GPUJIT_RECORD_ENV_REINJECTED ? NULL : getenv(gpujit_record_env_names[i]);
    start[i] = v ? strdup(v) : NULL;
  }
  if (dladdr((void *)remember, &info) && info.dli_fname)
    snprintf(self, sizeof(self), "%s", info.dli_fname);
  if (back) {
    gji_note("reinject", "a process (%s) was started with gpujit's variables dropped from its environment (env -i, "
                         "its own LD_PRELOAD): they were put back, and it is recorded",
             back);
    unsetenv(GPUJIT_ENV(REINJECTED));
  }
}

/* `entry` ("NAME=value") sets `name`: its value, else NULL. */
static const char *is_var(const char *entry, const char *name)
{
  size_t n = strlen(name);
  return !strncmp(entry, name, n) && entry[n] == '=' ? entry + n + 1 : NULL;
}

static const char *find(char *const *env, const char *name)
{
  const char *v = NULL;
  for (char *const *e = env; e && *e && !v; e++)
    v = is_var(*e, name);
  return v;
}

/* An environment rebuilt on the caller's stack. An exec may run in a vfork child, which shares
 * the parent's memory: nothing here takes the heap's lock. A longer environment than the stack
 * array holds gets its pointers in pages of its own (mmap, a system call: safe there too), given
 * back when the exec fails or the spawn is made. */
#define MAX_ENV 512
typedef struct env_buf {
  char *inline_ptrs[MAX_ENV + NNAMES + 2];
  char **ptrs;
  size_t mapped; /* bytes of ptrs' own pages, or 0 */
  char pool[8192]; /* the variables put back, one after another */
  size_t used;
} env_buf;

static void env_buf_release(env_buf *b)
{
  if (b->mapped)
    munmap(b->ptrs, b->mapped);
  b->mapped = 0;
}

/* printf into the pool; NULL when it does not fit (that variable is then left out). */
static char *pool_printf(env_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *pool_printf(env_buf *b, const char *fmt, ...)
{
  va_list ap;
  char *t = b->pool + b->used;
  size_t size = sizeof(b->pool) - b->used;
  int w;
  va_start(ap, fmt);
  w = vsnprintf(t, size, fmt, ap);
  va_end(ap);
  if (w < 0 || (size_t)w >= size)
    return NULL;
  b->used += (size_t)w + 1;
  return t;
}

/* `env` with gpujit's variables put back where they are missing (and this library ahead of a
 * program's own LD_PRELOAD), in `b`; `env` itself when nothing is missing (or it will not fit). */
static char *const *with_profile(char *const *env, const char *path, env_buf *b)
{
  size_t n = 0, k = 0;
  bool changed = false;
  if (!gji_active() || !start_of(DIR) || gji_flag(GPUJIT_FLAG_NSIGHT)) /* Nsight's launchers get the environment it chose */
    return env;
  for (size_t i = 0; i < NNAMES; i++) {
    const char *v = find(env, gpujit_record_env_names[i]);
    if (i == GPUJIT_RECORD_ENV_PYTHONPATH ? start_of(HOOK) && (!v || !strstr(v, start_of(HOOK)))
                                          : start[i] && (!v || (i == GPUJIT_RECORD_ENV_PRELOAD && self[0] && !strstr(v, self))))
      changed = true;
  }
  while (env && env[n])
    n++;
  b->mapped = 0;
  b->ptrs = b->inline_ptrs;
  if (!changed)
    return env;
  if (n > MAX_ENV) {
    size_t bytes = (n + NNAMES + 2) * sizeof(char *);
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
      return env; /* the child goes unprofiled, as it would without gpujit */
    b->ptrs = m;
    b->mapped = bytes;
  }
  for (size_t i = 0; i < n; i++)
    if (!is_var(env[i], GPUJIT_ENV(PRELOAD)) && !is_var(env[i], GPUJIT_ENV(PYTHONPATH)))
      b->ptrs[k++] = env[i];
  b->used = 0;
  for (size_t i = 0; i < NNAMES; i++) {
    const char *v = find(env, gpujit_record_env_names[i]);
    char *t;
    if (i == GPUJIT_RECORD_ENV_PRELOAD) /* ours first, then the program's own */
      t = v && self[0] && !strstr(v, self) ? pool_printf(b, "%s=%s %s", GPUJIT_ENV(PRELOAD), self, v)
          : v ? pool_printf(b, "%s=%s", GPUJIT_ENV(PRELOAD), v)
              : pool_printf(b, "%s=%s", GPUJIT_ENV(PRELOAD), start_of(PRELOAD) ? start_of(PRELOAD) : self);
    else if (i == GPUJIT_RECORD_ENV_PYTHONPATH) /* the start-up hook first (only it), then the program's own */
      t = !start_of(HOOK) ? (v ? pool_printf(b, "%s=%s", GPUJIT_ENV(PYTHONPATH), v) : NULL)
          : !v ? pool_printf(b, "%s=%s", GPUJIT_ENV(PYTHONPATH), start_of(HOOK))
          : !strstr(v, start_of(HOOK)) ? pool_printf(b, "%s=%s:%s", GPUJIT_ENV(PYTHONPATH), start_of(HOOK), v)
                                       : pool_printf(b, "%s=%s", GPUJIT_ENV(PYTHONPATH), v);
    else
      t = !v && start[i] ? pool_printf(b, "%s=%s", gpujit_record_env_names[i], start[i]) : NULL;
    if (t)
      b->ptrs[k++] = t;
  }
  if ((b->ptrs[k] = pool_printf(b, "%s=%s", GPUJIT_ENV(REINJECTED), path)))
    k++;
  b->ptrs[k] = NULL;
  return b->ptrs;
}

/* This image ends by exec: say so before it goes (an exec that fails goes on as before). Only a
 * process with its own records file has an image to end; a vfork child has none, and must not
 * open one in memory it shares with its parent. */
static void exec_record(const char *path)
{
  gji_line l;
  if (!gji_active() || !gji_owns_file())
    return;
  gji_begin(&l, GPUJIT_KIND(EXEC));
  gji_u64(&l, "t", gji_now());
  gji_str(&l, "path", path);
  gji_end(&l);
}

typedef int (*execve_t)(const char *, char *const[], char *const[]);
typedef int (*spawn_t)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
                       char *const[], char *const[]);

/* The next definition after this library: another tool's wrapper where one is loaded after us
 * (Nsight's follows a child into its target this way), else libc's. Looked up unversioned (a
 * versioned look-up would match libc's alone and pass the other tool by), once, when the library
 * loads: an exec may come in a vfork child, which should do no more than it must. */
static execve_t next_execve, next_execvpe;
static spawn_t next_spawn, next_spawnp;

__attribute__((constructor)) static void resolve_next(void)
{
  next_execve = (execve_t)dlsym(RTLD_NEXT, "execve");
  next_execvpe = (execve_t)dlsym(RTLD_NEXT, "execvpe");
  next_spawn = (spawn_t)dlsym(RTLD_NEXT, "posix_spawn");
  next_spawnp = (spawn_t)dlsym(RTLD_NEXT, "posix_spawnp");
}

static int run_exec(execve_t *next, const char *path, char *const argv[], char *const envp[])
{
  env_buf b;
  b.mapped = 0; /* with_profile may return before it looks */
  execve_t real;
  if (!*next) /* another library's constructor, before ours */
    resolve_next();
  if (!(real = *next)) {
    errno = ENOSYS;
    return -1;
  }
  exec_record(path);
  {
    int rc = real(path, argv, with_profile(envp, path, &b)), e = errno; /* returns only when it failed */
    env_buf_release(&b);
    errno = e;
    return rc;
  }
}

__attribute__((visibility("default"))) int execve(const char *path, char *const argv[], char *const envp[])
{
  return run_exec(&next_execve, path, argv, envp);
}

__attribute__((visibility("default"))) int execvpe(const char *file, char *const argv[], char *const envp[])
{
  return run_exec(&next_execvpe, file, argv, envp);
}

__attribute__((visibility("default"))) int execv(const char *path, char *const argv[])
{
  return run_exec(&next_execve, path, argv, environ);
}

__attribute__((visibility("default"))) int execvp(const char *file, char *const argv[])
{
  return run_exec(&next_execvpe, file, argv, environ);
}

/* execl, execlp, execle: their arguments gathered into an array. */
static int execl_common(execve_t *next, const char *path, const char *arg, va_list ap, bool with_env)
{
  size_t n = 1, cap = 16;
  char **argv = malloc(cap * sizeof(*argv)), *const *envp = environ;
  int rc;
  if (!argv) {
    errno = ENOMEM;
    return -1;
  }
  argv[0] = (char *)arg;
  for (char *a; arg && (a = va_arg(ap, char *)) != NULL;) {
    if (n + 1 >= cap) {
      char **grown = realloc(argv, (cap *= 2) * sizeof(*argv));
      if (!grown) {
        free(argv);
        errno = ENOMEM;
        return -1;
      }
      argv = grown;
    }
    argv[n++] = a;
  }
  argv[arg ? n : 0] = NULL;
  if (with_env)
    envp = va_arg(ap, char *const *);
  rc = run_exec(next, path, argv, envp);
  free(argv);
  return rc;
}

__attribute__((visibility("default"))) int execl(const char *path, const char *arg, ...)
{
  va_list ap;
  int rc;
  va_start(ap, arg);
  rc = execl_common(&next_execve, path, arg, ap, false);
  va_end(ap);
  return rc;
}

__attribute__((visibility("default"))) int execlp(const char *file, const char *arg, ...)
{
  va_list ap;
  int rc;
  va_start(ap, arg);
  rc = execl_common(&next_execvpe, file, arg, ap, false);
  va_end(ap);
  return rc;
}

__attribute__((visibility("default"))) int execle(const char *path, const char *arg, ...)
{
  va_list ap;
  int rc;
  va_start(ap, arg);
  rc = execl_common(&next_execve, path, arg, ap, true);
  va_end(ap);
  return rc;
}

static int run_spawn(spawn_t *next, pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                     const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
  env_buf b;
  b.mapped = 0; /* with_profile may return before it looks */
  spawn_t real;
  if (!*next)
    resolve_next();
  if (!(real = *next))
    return ENOSYS;
  {
    int rc = real(pid, path, fa, attr, argv, with_profile(envp, path, &b)); /* the child has its copy */
    env_buf_release(&b);
    return rc;
  }
}

__attribute__((visibility("default"))) int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                                                       const posix_spawnattr_t *attr, char *const argv[],
                                                       char *const envp[])
{
  return run_spawn(&next_spawn, pid, path, fa, attr, argv, envp);
}

__attribute__((visibility("default"))) int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                                                        const posix_spawnattr_t *attr, char *const argv[],
                                                        char *const envp[])
{
  return run_spawn(&next_spawnp, pid, file, fa, attr, argv, envp);
}
