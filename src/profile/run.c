/*
 * gpujit_profile_run: the command runs as it is, with the injection library preloaded
 * (LD_PRELOAD: NVRTC, nvJitLink, libNVVM and dlsym) and named as the CUDA driver's injection
 * (CUDA_INJECTION64_PATH: CUPTI at cuInit); both pass to its children through the environment.
 * Its exit status comes back as it was; SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to this process
 * go on to it. Then its records are read.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/fs.h"
#include "compile/toolkit/toolkit.h"
#include "inject/protocol.h"
#include "profile/model.h"
#include "profile/saved.h"

extern char **environ;

/* The injection library: asked for, else $GPUJIT_INJECT_LIBRARY, else beside the object this
 * code is in (the library or an executable linking it), in lib/ below it (the Python package's:
 * beside its modules, a .so would be listed as one of them by help()), then in ../lib and
 * ../lib64 of it. */
int gpujit__profile_find_inject(char *out, size_t size, const char *asked)
{
  static const char *const rel[] = {"", "/lib", "/../lib", "/../lib64", "/../lib/x86_64-linux-gnu"};
  const char *env = getenv("GPUJIT_INJECT_LIBRARY");
  Dl_info info;
  char tried[2048] = "", self[PATH_MAX];
  const char *froms[2] = {NULL, NULL};
  size_t len = 0;
  ssize_t n;
  if (asked || (env && *env)) {
    snprintf(out, size, "%s", asked ? asked : env);
    return access(out, R_OK) == 0 ? 0 : gpujit__error(GPUJIT_ENOENT, "%s: no injection library there", out);
  }
  /* the object this code is in; an executable's name there is its argv[0] ("gpujit" when run
   * from PATH), so the executable's own path as well */
  if (dladdr((void *)gpujit__profile_find_inject, &info) && info.dli_fname && strchr(info.dli_fname, '/'))
    froms[0] = info.dli_fname;
  if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) > 0) {
    self[n] = '\0';
    froms[1] = self;
  }
  for (int f = 0; f < 2; f++) {
    char real[PATH_MAX], *dir;
    if (!froms[f] || !realpath(froms[f], real) || !(dir = gpujit__dirname(real)))
      continue;
    for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
      char path[PATH_MAX];
      snprintf(path, sizeof(path), "%s%s/libgpujit_inject.so", dir, rel[i]);
      if (access(path, R_OK) == 0 && realpath(path, out)) {
        free(dir);
        return 0;
      }
      len +=
          (size_t)snprintf(tried + len, len < sizeof(tried) ? sizeof(tried) - len : 0, "%s%s", len ? ", " : "", path);
    }
    free(dir);
  }
  return gpujit__error(GPUJIT_ENOENT,
                       "the injection library libgpujit_inject.so was not found (looked at %s); "
                       "set GPUJIT_INJECT_LIBRARY",
                       tried[0] ? tried : "nothing");
}

static volatile sig_atomic_t child;
static void forward(int sig)
{
  if (child > 0)
    kill((pid_t)child, sig);
}

static void set(char **env, size_t *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set(char **env, size_t *n, const char *fmt, ...)
{
  va_list ap;
  char *s = NULL;
  va_start(ap, fmt);
  if (vasprintf(&s, fmt, ap) >= 0 && s)
    env[(*n)++] = s;
  va_end(ap);
}

/* Nsight Compute or Nsight Systems, attached to this process or run as the command: they take
 * CUPTI and refuse to start when CUDA_INJECTION64_PATH names another tool (measured: ncu, either
 * way round), so then only the preload goes in. @return the reason, or NULL. */
static const char *nsight_attached(char *const argv[])
{
  const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
  if (getenv("NV_NSIGHT_INJECTION_TRANSPORT_TYPE") || getenv("NV_TPS_LAUNCH_TOKEN"))
    return "an Nsight tool runs this profile";
  if (!strcmp(base, "ncu") || !strcmp(base, "nv-nsight-cu-cli") || !strcmp(base, "nsys"))
    return "the command is an Nsight tool";
  return NULL;
}

/* `e` ("NAME=value") sets one of the variables gpujit profile sets (inject/protocol.h): the
 * command gets gpujit's. LAUNCH_CALLBACKS, the measuring switch, and REGIONS, the kernel regions'
 * buffer size, are not set by gpujit: they pass through. */
static bool profile_var(const char *e)
{
  for (int i = 0; i < GPUJIT_RECORD_ENV_COUNT; i++) {
    if (i == GPUJIT_RECORD_ENV_LAUNCH_CALLBACKS || i == GPUJIT_RECORD_ENV_REGIONS)
      continue;
    size_t n = strlen(gpujit_record_env_names[i]);
    if (!strncmp(e, gpujit_record_env_names[i], n) && e[n] == '=')
      return true;
  }
  return false;
}

/* The environment of the command: ours, with the profile's variables set. */
static char **environment(const char *inject, const char *cupti, const char *dir, const gpujit_profile_options *o,
                          gpujit_profile *p, const char *nsight)
{
  size_t n = 0;
  char **env, flags[64];
  const char *old = getenv(GPUJIT_ENV(PRELOAD)), *cuda = getenv(GPUJIT_ENV(CUDA_INJECTION)),
             *nvtx = getenv(GPUJIT_ENV(NVTX_INJECTION));
  bool nvtx_steps = o->steps && !strncmp(o->steps, "nvtx:", 5) && o->steps[5];
  while (environ[n])
    n++;
  if (!(env = calloc(n + GPUJIT_RECORD_ENV_COUNT + 2, sizeof(*env))))
    return NULL;
  n = 0;
  for (char **e = environ; *e; e++)
    if (!profile_var(*e))
      env[n++] = *e;
  set(env, &n, "%s=%s%s%s", GPUJIT_ENV(PRELOAD), inject, old && *old ? " " : "", old ? old : "");
  /* another tool's injection (Nsight Systems sets its own): it stays, and CUPTI is theirs */
  if (nsight) {
    gpujit__profile_note(p, "%s: it owns CUPTI, so kernels, copies and the driver's JIT are not recorded; "
                            "compiles and module loads are",
                         nsight);
  } else if (cuda && *cuda) {
    set(env, &n, "%s=%s", GPUJIT_ENV(CUDA_INJECTION), cuda);
    gpujit__profile_note(p, "%s is set by another tool: it owns the driver, so kernels, copies, module loads and "
                            "the driver's JIT are not recorded; compiles are",
                         GPUJIT_ENV(CUDA_INJECTION));
  } else if (o->no_cupti)
    gpujit__profile_note(p, "--no-cupti: CUPTI was left to the program; kernels, copies and the driver's JIT are "
                            "not recorded, compiles and module loads are");
  else
    set(env, &n, "%s=%s", GPUJIT_ENV(CUDA_INJECTION), inject);
  if (nvtx && *nvtx) {
    set(env, &n, "%s=%s", GPUJIT_ENV(NVTX_INJECTION), nvtx);
    if (nvtx_steps)
      gpujit__profile_note(p, "%s is set by another tool (%s): --step %s counts steps through CUPTI's NVTX "
                              "callbacks, on from cuInit (every driver call pays them, also in the steps not recorded)",
                           GPUJIT_ENV(NVTX_INJECTION), nvtx, o->steps);
  } else if (nvtx_steps && !nsight) /* the steps counted by gpujit's own NVTX injection: no CUPTI before the warmup */
    set(env, &n, "%s=%s", GPUJIT_ENV(NVTX_INJECTION), inject);
  else if (cupti[0] && !o->no_cupti && !nsight)
    set(env, &n, "%s=%s", GPUJIT_ENV(NVTX_INJECTION), cupti);
  if (cupti[0])
    set(env, &n, "%s=%s", GPUJIT_ENV(CUPTI_LIBRARY), cupti);
  set(env, &n, "%s=%s", GPUJIT_ENV(DIR), dir);
  { /* the Python start-up hook (framework adapters) beside the injection library, first on PYTHONPATH */
    char hook[PATH_MAX], probe[PATH_MAX + 32];
    const char *slash = strrchr(inject, '/'), *py = getenv(GPUJIT_ENV(PYTHONPATH));
    snprintf(hook, sizeof(hook), "%.*s/%s", slash ? (int)(slash - inject) : 1, slash ? inject : ".",
             GPUJIT_RECORD_PYTHON_HOOK_DIR);
    snprintf(probe, sizeof(probe), "%s/sitecustomize.py", hook);
    if (o->no_frameworks || access(probe, R_OK) != 0) {
      if (!o->no_frameworks)
        gpujit__profile_note(p, "%s: not found beside the injection library: the compiles of Python frameworks "
                                "(the frameworks the start-up hook adapts) are not recorded as theirs",
                             probe);
      if (py)
        set(env, &n, "%s=%s", GPUJIT_ENV(PYTHONPATH), py);
    } else {
      set(env, &n, "%s=%s", GPUJIT_ENV(HOOK), hook);
      set(env, &n, "%s=%s%s%s", GPUJIT_ENV(PYTHONPATH), hook, py && *py ? ":" : "", py && *py ? py : "");
    }
  }
  /* nsight: Nsight builds its launchers' environments on purpose; children are left as they are */
  snprintf(flags, sizeof(flags), "%s,%s,%s", o->lineinfo ? GPUJIT_FLAG_LINEINFO : "",
           o->nvrtc_trace ? GPUJIT_FLAG_NVRTC_TRACE : "", nsight ? GPUJIT_FLAG_NSIGHT : "");
  set(env, &n, "%s=%s", GPUJIT_ENV(FLAGS), flags);
  set(env, &n, "%s=%llu", GPUJIT_ENV(MAX_EVENTS),
      (unsigned long long)(o->max_trace_events ? o->max_trace_events : 200000));
  set(env, &n, "%s=%s", GPUJIT_ENV(STEP), o->steps ? o->steps : "auto");
  set(env, &n, "%s=%s", GPUJIT_ENV(SCHEDULE), o->schedule ? o->schedule : "");
  return env;
}

static void environment_free(char **env)
{
  size_t n = 0;
  while (environ[n])
    n++;
  for (char **e = env; *e; e++) {
    bool ours = true;
    for (size_t i = 0; i < n && ours; i++)
      ours = *e != environ[i];
    if (ours)
      free(*e);
  }
  free(env);
}

/* The command line, as a shell would take it back: words with anything but [A-Za-z0-9_./=:,+-@%]
 * single-quoted. */
static char *command_line(char *const argv[])
{
  gpujit__buf b = {0};
  for (int i = 0; argv[i]; i++) {
    const char *w = argv[i];
    bool plain = *w != '\0';
    for (const char *c = w; *c && plain; c++)
      plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=:,+-@%", *c) != NULL;
    gpujit__buf_puts(&b, i ? " " : "");
    if (plain) {
      gpujit__buf_puts(&b, w);
      continue;
    }
    gpujit__buf_puts(&b, "'");
    for (const char *c = w; *c; c++)
      gpujit__buf_puts(&b, *c == '\'' ? "'\\''" : (char[]){*c, '\0'});
    gpujit__buf_puts(&b, "'");
  }
  if (gpujit__buf_put(&b, "", 1) < 0) {
    gpujit__buf_free(&b);
    return NULL;
  }
  return b.data;
}

/* A records directory the user keeps gets the run's manifest beside the records: `gpujit profile
 * report DIR` reports it as the run did. The records are kept all the same when it cannot be
 * written; `report DIR` then says what it does not know. */
static gpujit_profile *kept(gpujit_profile *p)
{
  if (!p->own_dir && gpujit__profile_save_manifest(p, p->dir) < 0)
    gpujit_error_clear();
  return p;
}

/* The run's records directory, absolute (a child that changes directory still writes where the
 * report reads): the one the options name, refused before the run rather than found empty after
 * it, else a new one under $TMPDIR that goes with the profile. */
/* The file a process that cannot make its own in the directory (made read-only for it) says so
 * in (inject/protocol.h): made now, while the directory is ours to write. */
static void lost_file(const gpujit_profile *p)
{
  char path[PATH_MAX];
  int fd;
  snprintf(path, sizeof(path), "%s/" GPUJIT_RECORD_LOST_FILE, p->dir);
  if ((fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)) >= 0)
    close(fd);
}

static int records_dir(gpujit_profile *p, const gpujit_profile_options *o)
{
  const char *tmp = getenv("TMPDIR");
  char tmpl[PATH_MAX], *base;
  if (o->records_dir) {
    if (!(p->dir = gpujit__abspath(o->records_dir)) || (mkdir(p->dir, 0700) != 0 && errno != EEXIST) ||
        access(p->dir, W_OK | X_OK) != 0)
      return gpujit__error(p->dir ? GPUJIT_EIO : GPUJIT_ENOMEM, "%s: cannot keep records there: %s", o->records_dir,
                           p->dir ? strerror(errno) : "out of memory");
    lost_file(p);
    return 0;
  }
  base = gpujit__abspath(tmp && *tmp ? tmp : "/tmp");
  snprintf(tmpl, sizeof(tmpl), "%s/gpujit-profile-XXXXXX", base ? base : "/tmp");
  free(base);
  if (!mkdtemp(tmpl))
    return gpujit__error(GPUJIT_EIO, "cannot make a records directory in %s: %s", tmp && *tmp ? tmp : "/tmp",
                         strerror(errno));
  p->dir = gpujit__strdup(tmpl);
  p->own_dir = true;
  if (p->dir)
    lost_file(p);
  return 0;
}

int gpujit_profile_run(gpujit_profile **out, char *const argv[], const gpujit_profile_options *opts)
{
  static const gpujit_profile_options init = GPUJIT_PROFILE_OPTIONS_INIT;
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
  gpujit_profile_options o = opts ? *opts : init;
  char inject[PATH_MAX], cupti[PATH_MAX], **env = NULL;
  struct sigaction sa = {0}, old[4];
  gpujit_profile *p;
  double t0;
  pid_t pid;
  int err, status = 0, rc;
  if (!out || !argv || !argv[0] || !argv[0][0])
    return gpujit__error(GPUJIT_EINVAL, "gpujit_profile_run: no command to run");
  *out = NULL;
  if (o.version != GPUJIT_PROFILE_OPTIONS_VERSION)
    return gpujit__error(GPUJIT_EVERSION, "profile options version %u is not supported", o.version);
  if ((err = gpujit_profile_check_steps(o.steps, o.schedule)) < 0)
    return err;
  if ((err = gpujit__profile_find_inject(inject, sizeof(inject), o.inject_path)) < 0)
    return err;
  /* the toolkit's CUPTI, as the timing layer finds it: the injection library loads it, NVTX too */
  snprintf(cupti, sizeof(cupti), "%s", gpujit__cupti_library_path() ? gpujit__cupti_library_path() : "");
  if (!(p = calloc(1, sizeof(*p))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  p->opts = o;
  p->command = command_line(argv);
  if ((err = records_dir(p, &o)) < 0) {
    gpujit_profile_free(p);
    return err;
  }
  if (!p->dir || !(env = environment(inject, cupti, p->dir, &o, p, nsight_attached(argv)))) {
    gpujit_profile_free(p);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  if (!cupti[0])
    gpujit__profile_note(p,
                         "libcupti was not found in the toolkit (%s): kernels, copies, module loads and the "
                         "driver's JIT are not recorded, compiles are",
                         gpujit__cuda_root());
  if (o.lineinfo)
    gpujit__profile_note(p, "--lineinfo: -lineinfo was added to NVRTC compiles that lacked it (the program's "
                            "compiles changed)");
  if (o.nvrtc_trace)
    gpujit__profile_note(p, "--nvrtc-trace: --fdevice-time-trace was added to NVRTC compiles (the program's "
                            "compiles changed)");
  sa.sa_handler = forward;
  sigemptyset(&sa.sa_mask);
  child = 0;
  for (int i = 0; i < 4; i++)
    sigaction(sigs[i], &sa, &old[i]);
  t0 = gpujit__now_us();
  rc = posix_spawnp(&pid, argv[0], NULL, NULL, argv, env);
  environment_free(env);
  if (rc != 0) {
    for (int i = 0; i < 4; i++)
      sigaction(sigs[i], &old[i], NULL);
    gpujit_profile_free(p);
    return gpujit__error(rc == ENOENT ? GPUJIT_ENOENT : GPUJIT_EIO, "%s: %s", argv[0],
                         rc == ENOENT ? "command not found" : strerror(rc));
  }
  child = pid;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  p->totals.wall_ms = (gpujit__now_us() - t0) / 1e3;
  child = 0;
  for (int i = 0; i < 4; i++)
    sigaction(sigs[i], &old[i], NULL);
  if ((err = gpujit__profile_read(p, p->dir)) < 0 || (err = gpujit__profile_attribute(p)) < 0 ||
      (err = gpujit__profile_views(p)) < 0) {
    gpujit_profile_free(p);
    return err;
  }
  p->totals.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  p->totals.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + p->totals.signal;
  if (p->totals.signal)
    p->totals.partial = 1;
  *out = kept(p);
  return 0;
}
