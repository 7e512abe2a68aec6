/* What entering and leaving an in-process profile costs (gpujit_profile_start/stop: a gpujit.profile
 * block in a plain python) in a process shaped like a PyTorch one, without a GPU: one object with
 * a 512 MiB .bss (one page in EVERY written, a few MiB) and an 8 MiB .data, OBJECTS more small ones
 * loaded RTLD_LOCAL, and NVRTC's nvrtcCompileProgram held in each (resolved before the block, as
 * CuPy and PyTorch's lazy NVRTC hold it). Each round is a fresh process (the former scan leaves
 * every page it read mapped): alternating pairs of the former scan, every page of every writable
 * segment (GPUJIT_BENCH_REBIND=full), and the default, the pages written. Prints medians and the
 * spread, and the rebinding's own part from the measuring note; checks the held pointers were
 * rebound and put back in both.
 * Usage: bench_rebind [PAIRS (7)] [OBJECTS (300)] [EVERY (128)] [ONLY: full or default, the other not run
 * (to profile one)] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "gpujit.h"

typedef struct figures {
  double enter, leave, rebind, put_back, read_mib, writable_mib;
  double enter_cpu, leave_cpu, rebind_cpu, put_back_cpu; /* this thread's CPU time: holds on a loaded machine */
  int ok;
} figures;

static double cpu_ms(void)
{
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static double after(const char *notes, const char *key)
{
  const char *p = notes ? strstr(notes, key) : NULL;
  return p ? atof(p + strlen(key)) : -1;
}

/* The MiB figure just before `what` in the note ("12.5 MiB of writable segments"). */
static double mib_before(const char *notes, const char *what)
{
  const char *p = notes ? strstr(notes, what) : NULL;
  while (p && p > notes && (p[-1] == ' ' || p[-1] == '.' || (p[-1] >= '0' && p[-1] <= '9')))
    p--;
  return p ? atof(p) : -1;
}

static figures measure(const char *mode, int objects, size_t every, const char *dir)
{
  figures f = {0};
  gpujit_profile_options o = GPUJIT_PROFILE_OPTIONS_INIT;
  gpujit_profile_session *s = NULL;
  gpujit_profile *p = NULL;
  void *big = dlopen(BENCH_REBIND_BIG, RTLD_NOW | RTLD_LOCAL), *real = dlsym(RTLD_DEFAULT, "nvrtcCompileProgram");
  void (*touch)(size_t, void *) = NULL;
  void *(*held)(size_t) = NULL;
  const char *notes;
  double t0, c0;
  if (!big || !real)
    return f;
  *(void **)&touch = dlsym(big, "big_touch");
  *(void **)&held = dlsym(big, "big_held");
  for (int i = 0; i < objects; i++) {
    char path[PATH_MAX];
    void *h, (*hold)(void *) = NULL;
    snprintf(path, sizeof(path), "%s/small%d.so", dir, i);
    if (!(h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) || !(*(void **)&hold = dlsym(h, "small_hold")))
      return f;
    hold(real);
  }
  touch(every, real);
  setenv("GPUJIT_BENCH_REBIND", mode, 1);
  o.inject_path = BENCH_INJECT;
  o.no_cupti = 1;
  t0 = gpujit__now_us(), c0 = cpu_ms();
  if (gpujit_profile_start(&s, &o) != 0)
    return f;
  f.enter = (gpujit__now_us() - t0) / 1e3, f.enter_cpu = cpu_ms() - c0;
  f.ok = held(every) != real;
  t0 = gpujit__now_us(), c0 = cpu_ms();
  if (gpujit_profile_stop(s, &p) != 0)
    return f;
  f.leave = (gpujit__now_us() - t0) / 1e3, f.leave_cpu = cpu_ms() - c0;
  f.ok &= held(every) == real;
  notes = gpujit_profile_notes(p);
  f.rebind = after(notes, "rebinding took ");
  f.put_back = after(notes, "putting back took ");
  f.rebind_cpu = after(strstr(notes, "rebinding took "), "(");
  f.put_back_cpu = after(strstr(notes, "putting back took "), "(");
  f.writable_mib = mib_before(notes, "MiB of writable segments");
  f.read_mib = mib_before(notes, "MiB of them read");
  gpujit_profile_free(p);
  gpujit_profile_session_free(s);
  return f;
}

/* One round in a fresh process. */
static figures round_in_child(const char *mode, int objects, size_t every, const char *dir)
{
  figures f = {0};
  int fd[2], status;
  pid_t pid;
  if (pipe(fd) != 0 || (pid = fork()) < 0)
    exit(1);
  if (pid == 0) {
    close(fd[0]);
    f = measure(mode, objects, every, dir);
    _exit(write(fd[1], &f, sizeof(f)) == (ssize_t)sizeof(f) ? 0 : 1);
  }
  close(fd[1]);
  if (read(fd[0], &f, sizeof(f)) != (ssize_t)sizeof(f))
    f.ok = 0;
  close(fd[0]);
  waitpid(pid, &status, 0);
  return f;
}

static void row(const char *what, double *a, double *b, int n)
{
  double lo[2] = {a[0], b[0]}, hi[2] = {a[0], b[0]}, med[2];
  for (int i = 0; i < n; i++) {
    lo[0] = a[i] < lo[0] ? a[i] : lo[0], hi[0] = a[i] > hi[0] ? a[i] : hi[0];
    lo[1] = b[i] < lo[1] ? b[i] : lo[1], hi[1] = b[i] > hi[1] ? b[i] : hi[1];
  }
  med[0] = bench_median(a, n), med[1] = bench_median(b, n);
  printf("  %-26s %9.2f [%8.2f-%8.2f]   %9.2f [%8.2f-%8.2f]\n", what, med[0], lo[0], hi[0], med[1], lo[1], hi[1]);
}

int main(int argc, char **argv)
{
  int pairs = argc > 1 ? atoi(argv[1]) : 7, objects = argc > 2 ? atoi(argv[2]) : 300, bad = 0;
  size_t every = argc > 3 ? (size_t)atol(argv[3]) : 128;
  const char *only = argc > 4 ? argv[4] : "";
  char dir[] = "/tmp/bench-rebind-XXXXXX", cmd[PATH_MAX * 2];
  double v[10][2][64];
  figures last[2] = {{0}};
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor); /* NVRTC loaded, as in a program that uses it */
  if (pairs < 1 || pairs > 64 || objects < 0 || every < 1 || !mkdtemp(dir)) {
    fprintf(stderr, "usage: bench_rebind [PAIRS 1-64] [OBJECTS] [EVERY >= 1]\n");
    return 2;
  }
  for (int i = 0; i < objects; i++) { /* copies: each its own object to the loader */
    snprintf(cmd, sizeof(cmd), "cp %s %s/small%d.so", BENCH_REBIND_SMALL, dir, i);
    if (system(cmd) != 0)
      return 1;
  }
  for (int r = 0; r < pairs; r++)
    for (int k = 0; k < 2; k++) {
      int which = (k + r) % 2; /* 0: the former scan, 1: the default; alternating which goes first */
      figures f = {0};
      if (!*only || !strcmp(only, which ? "default" : "full"))
        f = round_in_child(which ? "v" : "full", objects, every, dir);
      else
        f.ok = 1;
      bad += !f.ok;
      v[0][which][r] = f.enter, v[1][which][r] = f.rebind, v[2][which][r] = f.leave, v[3][which][r] = f.put_back;
      v[4][which][r] = f.read_mib, v[5][which][r] = f.writable_mib, v[6][which][r] = f.enter_cpu;
      v[7][which][r] = f.rebind_cpu, v[8][which][r] = f.leave_cpu, v[9][which][r] = f.put_back_cpu;
      last[which] = f;
    }
  printf("bench_rebind: an object with a 512 MiB .bss (1 page in %zu written) and an 8 MiB .data, %d more objects, "
         "NVRTC's function held in each; %d alternating pairs of fresh processes; ms, median [min-max]\n",
         every, objects, pairs);
  printf("  %-26s %-32s   %s\n", "", "former scan (every page)", "default (the pages written)");
  row("block entry (start)", v[0][0], v[0][1], pairs);
  row("  of it, rebinding", v[1][0], v[1][1], pairs);
  row("block exit (stop)", v[2][0], v[2][1], pairs);
  row("  of it, putting back", v[3][0], v[3][1], pairs);
  row("entry, CPU ms", v[6][0], v[6][1], pairs);
  row("  of it, rebinding", v[7][0], v[7][1], pairs);
  row("exit, CPU ms", v[8][0], v[8][1], pairs);
  row("  of it, putting back", v[9][0], v[9][1], pairs);
  row("MiB read", v[4][0], v[4][1], pairs);
  printf("  MiB of writable segments: %.1f; held pointers rebound and put back in every round: %s\n",
         last[1].writable_mib, bad ? "NO" : "yes");
  snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
  if (system(cmd) != 0)
    return 1;
  return bad ? 1 : 0;
}
