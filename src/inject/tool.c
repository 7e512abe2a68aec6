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
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "inject/image.h"
#include "inject/protocol.h"
#include "inject/record.h"

static char output[4096];
static bool is_tool;

/* Compilers proper: the programs that turn source into code or link it, whichever driver,
 * wrapper script or cache (gcc, a `#!/bin/sh` g++ that execs g++-real, ccache, nvcc) runs them.
 * What runs one of these is a compile; what is merely called a compiler is not. */
static const char *const propers[] = {"cc1",       "cc1plus", "cc1obj",   "cc1objplus", "f951",   "lto1",
                                      "cicc",      "ptxas",   "nvlink",   "fatbinary",  "cudafe++", "collect2",
                                      "ld",        "ld.bfd",  "ld.gold",  "ld.lld",     "lld",    "mold",
                                      "as"};

/* A program's name without a version suffix ("gcc-12" is gcc, "ptxas" stays). */
static void program_name(char *name, size_t cap, const char *path)
{
  const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  size_t n;
  snprintf(name, cap, "%s", base);
  n = strlen(name);
  while (n > 0 && (name[n - 1] == '.' || (name[n - 1] >= '0' && name[n - 1] <= '9')))
    n--;
  if (n > 1 && n < strlen(name) && name[n - 1] == '-') /* gcc-12 */
    name[n - 1] = '\0';
}

/* Whether the program is a compiler proper (clang is one when its driver runs it as -cc1). */
static bool is_proper(const char *name, char **argv, int argc)
{
  const char *last = strrchr(name, '-');
  int dashes = 0;
  for (const char *c = name; *c; c++)
    dashes += *c == '-';
  if (dashes >= 2 && last[1]) /* a target triplet before it: x86_64-linux-gnu-as is as */
    name = last + 1;
  if (!strncmp(name, "clang", 5))
    return argc > 1 && (!strcmp(argv[1], "-cc1") || !strcmp(argv[1], "-cc1as"));
  for (size_t i = 0; i < sizeof(propers) / sizeof(propers[0]); i++)
    if (!strcmp(name, propers[i]))
      return true;
  return false;
}

/* A script the kernel started through its interpreter (argv: the interpreter, the script, its
 * arguments): @return the script's index in argv (1), else 0. A `#!/bin/sh` wrapper named g++
 * is recorded as g++. */
static int script_index(const char *exe, char **argv, int argc)
{
  const char *eb = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
  const char *ab = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
  char head[2];
  int fd;
  bool script = false;
  if (argc < 2 || !strcmp(eb, ab) || argv[1][0] == '-' || (fd = open(argv[1], O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) < 0)
    return 0;
  {
    struct stat st;
    script = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && read(fd, head, 2) == 2 && head[0] == '#' && head[1] == '!';
  }
  close(fd);
  return script ? 1 : 0;
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

/* The whole command line, however long (an -o may come after the 256th argument): a malloc'd
 * buffer and argv into it, or 0. */
static int read_cmdline(char **buf, char ***argv)
{
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC), argc = 0;
  size_t len = 0, cap = 16384;
  char *b = malloc(cap + 1);
  ssize_t n = 0;
  *buf = NULL, *argv = NULL;
  while (fd >= 0 && b && (n = read(fd, b + len, cap - len)) > 0)
    if ((len += (size_t)n) == cap) {
      char *grown = realloc(b, 2 * cap + 1);
      if (!grown)
        break;
      b = grown, cap *= 2;
    }
  if (fd >= 0)
    close(fd);
  if (!b || len == 0 || !(*argv = malloc((len + 1) * sizeof(char *)))) {
    free(b);
    return 0;
  }
  b[len] = '\0';
  for (char *p = b; p < b + len; p += strlen(p) + 1)
    (*argv)[argc++] = p;
  *buf = b;
  return argc;
}

/* Preprocessing or checking alone (ccache runs `gcc -E` before the real compile; build systems
 * run -M for dependencies): no code is made, so it is no compile. -MD/-MMD/-MF come with one. */
static bool preprocess_only(char **argv, int argc)
{
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "-E") || !strcmp(argv[i], "-M") || !strcmp(argv[i], "-MM") ||
        !strcmp(argv[i], "-fsyntax-only") || !strcmp(argv[i], "--preprocess") || !strcmp(argv[i], "-dryrun") ||
        !strcmp(argv[i], "--dryrun"))
      return true;
  return false;
}

static void tool_end(void);

/* A Python interpreter started so that no start-up hook can load (-I, -E or -S: no PYTHONPATH or
 * no site): its framework compiles cannot be seen, which the report must say rather than show
 * nothing. Options come before the script, -c or -m, and combine ("-Es"). */
static void python_without_hook(const char *base, char **argv, int argc)
{
  char flags[8] = "";
  size_t nf = 0;
  bool done = false;
  for (int i = 1; i < argc && !done && argv[i][0] == '-' && argv[i][1] && argv[i][1] != '-'; i++)
    for (const char *c = argv[i] + 1; *c && !done; c++) {
      if ((*c == 'I' || *c == 'E' || *c == 'S') && !strchr(flags, *c) && nf + 1 < sizeof(flags))
        flags[nf++] = *c, flags[nf] = '\0';
      done = *c == 'c' || *c == 'm'; /* the rest is the program's */
      if (*c == 'W' || *c == 'X') { /* a value follows, here or in the next argument */
        i += c[1] == '\0';
        break;
      }
    }
  if (nf)
    gji_note("python-no-hook", "process %d (%s) runs Python with -%s: gpujit's start-up hook cannot load there, so "
                               "its framework compiles (JAX, Triton, torch.compile, Warp, Numba) are not in this report",
             (int)getpid(), base, flags);
}

/* Arguments that make a command look like a compile or a link. Besides compilers proper, only
 * such processes say what they are (a driver, a wrapper script, a cache): the report climbs from
 * each compiler proper through them to the outermost process of its compile. */
static bool compile_like(char **argv, int argc, int first)
{
  static const char *const flags[] = {"-c", "-S", "--cubin", "-cubin", "--ptx", "-ptx", "--fatbin", "-fatbin"};
  for (int i = first; i < argc; i++) {
    if (!strncmp(argv[i], "-o", 2) || !strncmp(argv[i], "--output-file", 13) || is_input(argv[i]))
      return true;
    for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++)
      if (!strcmp(argv[i], flags[f]))
        return true;
  }
  return false;
}

/* The arguments that name files (no options, no command strings): what a wrapper or driver has in
 * common with the compile it runs (ccache and g++ both name x.cpp; cicc names nvcc's input). */
static int path_args(char **argv, int argc, int first, const char **out, int cap)
{
  int n = 0;
  for (int i = first; i < argc && n < cap; i++) {
    const char *a = argv[i];
    if (a[0] == '-') {
      if (a[1] == 'o' && a[2] && !strchr(a, ' '))
        out[n++] = a + 2; /* -ofile */
    } else if ((strchr(a, '/') || strchr(a, '.')) && !strchr(a, ' ') && strlen(a) < 1024) {
      out[n++] = a;
    }
  }
  return n;
}

/* This process's "tool" record, when it is a compiler proper or looks like a compile. */
static void tool_record(const char *exe, char **argv, int argc)
{
  char name[128];
  const char *arch = "", *out = "", *inputs[16], *paths[48], *from;
  int first = 1 + script_index(exe, argv, argc), ninputs = 0, npaths;
  bool proper;
  gji_line l;
  program_name(name, sizeof(name), exe); /* what runs: /usr/bin/gcc may be x86_64-linux-gnu-gcc-12 */
  proper = first == 1 && is_proper(name, argv, argc);
  program_name(name, sizeof(name), first == 2 ? argv[1] : argv[0]); /* as it was called */
  proper = proper || (first == 1 && is_proper(name, argv, argc));
  if (!proper && !compile_like(argv, argc, first))
    return;
  for (int i = first; i < argc; i++) {
    const char *v;
    if ((v = value_of(argv, argc, &i, "-o")) || (v = value_of(argv, argc, &i, "--output-file")) ||
        (v = value_of(argv, argc, &i, "--create")))
      out = v;
    else if ((v = value_of(argv, argc, &i, "-arch")) || (v = value_of(argv, argc, &i, "--gpu-name")) ||
             (v = value_of(argv, argc, &i, "--arch")))
      arch = v;
    else if (is_input(argv[i]) && ninputs < 16)
      inputs[ninputs++] = argv[i];
  }
  npaths = path_args(argv, argc, first, paths, 48);
  is_tool = true;
  gji_set_end_hook(tool_end);
  if (out[0] == '/' || !out[0])
    snprintf(output, sizeof(output), "%s", out);
  else {
    char cwd[2048];
    snprintf(output, sizeof(output), "%s/%s", getcwd(cwd, sizeof(cwd)) ? cwd : ".", out);
  }
  gji_begin(&l, GPUJIT_KIND(TOOL));
  gji_str(&l, "tool", name);
  gji_i64(&l, "proper", proper);
  gji_i64(&l, "pre", preprocess_only(argv, argc)); /* -E, -M, -fsyntax-only: no code made */
  gji_i64(&l, "script", first == 2); /* a wrapper script: named as it was called (g++, not sh) */
  gji_str(&l, "arch", arch);
  gji_str(&l, "input", ninputs ? inputs[0] : "");
  gji_i64(&l, "inputs", ninputs);
  gji_str(&l, "output", out);
  gji_u64(&l, "t0", gji_now());
  gji_strs(&l, "paths", paths, npaths);
  gji_strs(&l, "args", (const char *const *)argv + first, argc - first > 64 ? 64 : argc - first);
  from = getenv(GPUJIT_FROM_HASH_ENV); /* its input came through a pipe, made from that output */
  if (from && strlen(from) == 32 && strspn(from, "0123456789abcdef") == 32)
    gji_str(&l, "from_hash", from);
  gji_end(&l);
}

__attribute__((constructor)) static void tool_start(void)
{
  char *cmd = NULL, **argv = NULL, exe[1024] = "";
  const char *base;
  int argc;
  ssize_t n;
  if (!gji_active())
    return;
  if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) > 0)
    exe[n] = '\0';
  base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
  if ((argc = read_cmdline(&cmd, &argv)) == 0)
    return;
  if (!strncmp(base, "python", 6)) { /* no tool; only its options matter, when the hook is on */
    if (getenv(GPUJIT_ENV(HOOK))) {
      gji_open_now(); /* its proc record says the hook was on: the report looks for the hook's file */
      python_without_hook(base, argv, argc);
    }
  } else {
    tool_record(exe, argv, argc);
  }
  free(argv), free(cmd);
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
  gji_fatbins_fields(&l, output); /* an object or library nvcc built: the kernels it will load */
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
