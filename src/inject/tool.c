/* Toolchain programs in the profiled tree: ptxas, nvlink, fatbinary, cicc, nvcc and the C
 * compilers (Triton builds its launchers with one) are compiles too. XLA and Triton run ptxas
 * as a subprocess; the injection library is preloaded into it like into any child, so the tool
 * says itself what it is ("tool": which, the arguments that matter, when it started) and, at its
 * exit, what it cost and wrote ("tool_end": CPU time, the output's size and hash, which ties it
 * to the module that loads those bytes). A parent's wait that reaps a child which failed or was
 * killed writes "reap" with its status: the tool cannot say that itself. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "inject/image.h"
#include "inject/protocol.h"
#include "inject/record.h"

static char output[4096];
static bool is_tool;

/* The tool a program's file name names ("x86_64-linux-gnu-gcc-12" is gcc), or NULL. */
static const char *tool_of(const char *path)
{
  const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  char name[128];
  size_t n;
  if (!strncmp(base, "x86_64-linux-gnu-", 17) || !strncmp(base, "aarch64-linux-gnu-", 18))
    base = strchr(base, '-') ? strstr(base, "-gnu-") + 5 : base;
  snprintf(name, sizeof(name), "%s", base);
  n = strlen(name);
  while (n > 0 && (name[n - 1] == '.' || (name[n - 1] >= '0' && name[n - 1] <= '9')))
    n--;
  if (n > 0 && n < strlen(name) && name[n - 1] == '-') /* gcc-12 */
    name[n - 1] = '\0';
  for (size_t i = 0; i < GPUJIT_RECORD_TOOL_COUNT; i++)
    if (!strcmp(name, gpujit_record_tool_names[i]))
      return gpujit_record_tool_names[i];
  return NULL;
}

/* The value of option `opt` at argv[*i]: "-o F", "-oF" (single-dash short options only),
 * "--opt=F", "--opt F". */
static const char *value_of(char **argv, int argc, int *i, const char *opt)
{
  size_t n = strlen(opt);
  const char *a = argv[*i];
  if (strncmp(a, opt, n))
    return NULL;
  if (a[n] == '=')
    return a + n + 1;
  if (a[n] == '\0' && *i + 1 < argc)
    return argv[++*i];
  if (a[n] != '\0' && opt[1] != '-' && n == 2)
    return a + n;
  return NULL;
}

/* A file the tool reads: one of the extensions compilers take. */
static bool is_input(const char *a)
{
  static const char *const ext[] = {".ptx", ".cu", ".c", ".cc", ".cpp", ".cxx", ".cubin", ".o", ".fatbin", ".ll", ".bc", ".ii"};
  const char *dot = strrchr(a, '.');
  if (a[0] == '-' || !dot)
    return false;
  for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++)
    if (!strcmp(dot, ext[i]))
      return true;
  return false;
}

static int read_cmdline(char *buf, size_t cap, char **argv, int max)
{
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC), argc = 0;
  ssize_t n = fd >= 0 ? read(fd, buf, cap - 1) : -1;
  if (fd >= 0)
    close(fd);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  for (char *p = buf; p < buf + n && argc < max; p += strlen(p) + 1)
    argv[argc++] = p;
  return argc;
}

static void tool_end(void);

__attribute__((constructor)) static void tool_start(void)
{
  static char cmd[16384];
  char *argv[256], exe[1024] = "";
  const char *tool, *arch = "", *input = "", *out = "";
  const char *inputs[16];
  int argc, ninputs = 0;
  ssize_t n;
  gji_line l;
  if (!gji_active())
    return;
  if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) > 0)
    exe[n] = '\0';
  if (!(tool = tool_of(exe)) || (argc = read_cmdline(cmd, sizeof(cmd), argv, 256)) == 0)
    return;
  for (int i = 1; i < argc; i++) {
    const char *v;
    if ((v = value_of(argv, argc, &i, "-o")) || (v = value_of(argv, argc, &i, "--output-file")) ||
        (v = value_of(argv, argc, &i, "--create")))
      out = v;
    else if ((v = value_of(argv, argc, &i, "-arch")) || (v = value_of(argv, argc, &i, "--gpu-name")) ||
             (v = value_of(argv, argc, &i, "--arch")) || (v = value_of(argv, argc, &i, "-arch")))
      arch = v;
    else if (is_input(argv[i]) && ninputs < 16)
      inputs[ninputs++] = argv[i];
  }
  input = ninputs ? inputs[0] : "";
  is_tool = true;
  gji_set_end_hook(tool_end);
  if (out[0] == '/' || !out[0])
    snprintf(output, sizeof(output), "%s", out);
  else {
    char cwd[2048];
    snprintf(output, sizeof(output), "%s/%s", getcwd(cwd, sizeof(cwd)) ? cwd : ".", out);
  }
  gji_begin(&l, GPUJIT_KIND(TOOL));
  gji_str(&l, "tool", tool);
  gji_str(&l, "arch", arch);
  gji_str(&l, "input", input);
  gji_i64(&l, "inputs", ninputs);
  gji_str(&l, "output", out);
  gji_strs(&l, "args", (const char *const *)argv + 1, argc - 1 > 64 ? 64 : argc - 1);
  gji_u64(&l, "t0", gji_now());
  gji_end(&l);
}

static uint64_t cpu_ns(int who)
{
  struct rusage r;
  if (getrusage(who, &r) != 0)
    return 0;
  return ((uint64_t)r.ru_utime.tv_sec + (uint64_t)r.ru_stime.tv_sec) * 1000000000ull +
         ((uint64_t)r.ru_utime.tv_usec + (uint64_t)r.ru_stime.tv_usec) * 1000ull;
}

static void tool_end(void)
{
  char h[33];
  uint64_t bytes = 0;
  gji_line l;
  if (!is_tool)
    return;
  is_tool = false;
  gji_begin(&l, GPUJIT_KIND(TOOL_END));
  gji_u64(&l, "t1", gji_now());
  gji_u64(&l, "cpu_ns", cpu_ns(RUSAGE_SELF) + cpu_ns(RUSAGE_CHILDREN)); /* a driver's own children too */
  if (output[0] && gji_file_hash(output, h, &bytes)) {
    gji_u64(&l, "output_bytes", bytes);
    gji_str(&l, "output_hash", h);
  }
  gji_end(&l);
}

/* The status of a child as one number: its exit code, or 128 + the signal that ended it. */
static void reap_record(pid_t child, int status)
{
  gji_line l;
  if (child <= 0 || !gji_active() || (WIFEXITED(status) && WEXITSTATUS(status) == 0) ||
      !(WIFEXITED(status) || WIFSIGNALED(status)))
    return;
  gji_begin(&l, GPUJIT_KIND(REAP));
  gji_i64(&l, "child", child);
  gji_i64(&l, "status", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  gji_u64(&l, "t", gji_now());
  gji_end(&l);
}

__attribute__((visibility("default"))) pid_t waitpid(pid_t pid, int *status, int options);
pid_t waitpid(pid_t pid, int *status, int options)
{
  static pid_t (*next)(pid_t, int *, int);
  int st = 0;
  pid_t r;
  if (!next)
    next = (pid_t(*)(pid_t, int *, int))dlsym(RTLD_NEXT, "waitpid");
  r = next(pid, &st, options);
  if (status)
    *status = st;
  if (r > 0)
    reap_record(r, st);
  return r;
}

__attribute__((visibility("default"))) pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru);
pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
  static pid_t (*next)(pid_t, int *, int, struct rusage *);
  int st = 0;
  pid_t r;
  if (!next)
    next = (pid_t(*)(pid_t, int *, int, struct rusage *))dlsym(RTLD_NEXT, "wait4");
  r = next(pid, &st, options, ru);
  if (status)
    *status = st;
  if (r > 0)
    reap_record(r, st);
  return r;
}
