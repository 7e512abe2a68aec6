/*
 * The warm build server against in-process builds, whole `gpujit build` processes interleaved
 * in one run:
 *   - the edit loop: block_reduce.cu with its kernel body changed before each of CALLS builds
 *     (every build a miss), with a server and without;
 *   - a cache hit with a server running and without (hits are served by the client);
 *   - a trivial module (saxpy, changed each time) through the server and in-process;
 *   - a project's edit loop: three CUB modules, one of them changed before each `gpujit build
 *     -j 2 DIR` (one miss, two hits), its misses on the server's workers or the build's own.
 * Usage: bench_server [CALLS] [HITS]. Prints a table and RESULT lines.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fs.h"
#include "bench_util.h"

static char dir[] = "/tmp/bench-server-XXXXXX";

/* The kernel body changed as an edit changes it: `marker` (an expression statement's end, ";")
 * becomes " * I.0f;". */
static void edit(const char *path, const char *base, const char *marker, int i)
{
  gpujit__buf src = {0};
  FILE *f;
  char *at;
  if (gpujit__file_read(&src, base) < 0 || !(at = strstr(src.data, marker)))
    exit(1);
  f = fopen(path, "w");
  fprintf(f, "%.*s%.*s * %d.0f;%s", (int)(at - src.data), src.data, (int)strlen(marker) - 1, at, i,
          at + strlen(marker));
  fclose(f);
  gpujit__buf_free(&src);
}

static double build(const char *file, const char *cache, bool server)
{
  char out[512];
  snprintf(out, sizeof(out), "%s/out.cubin", dir);
  char *argv[] = {(char *)GPUJIT_CLI, "build", "-q", "--cache-dir", (char *)cache, "-o", out, (char *)file, NULL};
  setenv("GPUJIT_SERVER", server ? "" : "0", 1);
  return bench_run_process(argv);
}

static double build_project(const char *proj, const char *cache, bool server)
{
  char out[512];
  snprintf(out, sizeof(out), "%s.out", proj);
  char *argv[] = {(char *)GPUJIT_CLI, "build", "-q", "-j", "2", "--cache-dir", (char *)cache, "--out-dir", out,
                  (char *)proj, NULL};
  setenv("GPUJIT_SERVER", server ? "" : "0", 1);
  return bench_run_process(argv);
}

/* Module m of project `proj` (m.cu), edit i. */
static void edit_module(const char *proj, int m, int i)
{
  char path[600];
  snprintf(path, sizeof(path), "%s/m%d.cu", proj, m);
  edit(path, GPUJIT_EXAMPLES_DIR "/block_reduce.cu", "partial[blockIdx.x] = sum;", i);
}

static void server(const char *verb, const char *cache)
{
  char cmd[1024];
  snprintf(cmd, sizeof(cmd), "GPUJIT_SERVER= '%s' server %s -q --cache-dir '%s'", GPUJIT_CLI, verb, cache);
  if (system(cmd) != 0 && !strcmp(verb, "start")) {
    fprintf(stderr, "cannot start the server\n");
    exit(1);
  }
}

int main(int argc, char **argv)
{
  int calls = argc > 1 ? atoi(argv[1]) : 10, hits = argc > 2 ? atoi(argv[2]) : 21;
  char ks[600], kl[600], ss[600], sl[600], cs[600], cl[600];
  char ps[600], pl[600];
  double with[64], without[64], hit_s[256], hit_l[256], triv_s[64], triv_l[64], proj_s[64], proj_l[64];
  if (calls < 2 || calls > 64 || hits < 1 || hits > 256 || !mkdtemp(dir)) {
    fprintf(stderr, "usage: bench_server [CALLS 2..64] [HITS 1..256]\n");
    return 2;
  }
  snprintf(ks, sizeof(ks), "%s/k_server.cu", dir);
  snprintf(kl, sizeof(kl), "%s/k_local.cu", dir);
  snprintf(ss, sizeof(ss), "%s/saxpy_server.cu", dir);
  snprintf(sl, sizeof(sl), "%s/saxpy_local.cu", dir);
  snprintf(cs, sizeof(cs), "%s/cache_server", dir);
  snprintf(cl, sizeof(cl), "%s/cache_local", dir);
  server("start", cs);
  for (int i = 0; i < calls; i++) { /* interleaved */
    edit(kl, GPUJIT_EXAMPLES_DIR "/block_reduce.cu", "partial[blockIdx.x] = sum;", i + 1);
    edit(ks, GPUJIT_EXAMPLES_DIR "/block_reduce.cu", "partial[blockIdx.x] = sum;", i + 1);
    without[i] = build(kl, cl, false);
    with[i] = build(ks, cs, true);
  }
  for (int i = 0; i < hits; i++) {
    hit_l[i] = build(kl, cl, false);
    hit_s[i] = build(ks, cs, true);
  }
  for (int i = 0; i < calls; i++) {
    edit(sl, GPUJIT_EXAMPLES_DIR "/saxpy.cu", "y[i] = a * x[i] + y[i];", i + 1);
    edit(ss, GPUJIT_EXAMPLES_DIR "/saxpy.cu", "y[i] = a * x[i] + y[i];", i + 1);
    triv_l[i] = build(sl, cl, false);
    triv_s[i] = build(ss, cs, true);
  }
  snprintf(ps, sizeof(ps), "%s/proj_server", dir);
  snprintf(pl, sizeof(pl), "%s/proj_local", dir);
  mkdir(ps, 0755);
  mkdir(pl, 0755);
  for (int m = 0; m < 3; m++) {
    edit_module(ps, m, 1000 + m);
    edit_module(pl, m, 1000 + m);
  }
  build_project(pl, cl, false); /* every module built once: from here one miss a call */
  build_project(ps, cs, true);
  for (int i = 0; i < calls; i++) {
    edit_module(pl, i % 3, 2000 + i);
    edit_module(ps, i % 3, 2000 + i);
    proj_l[i] = build_project(pl, cl, false);
    proj_s[i] = build_project(ps, cs, true);
  }
  server("stop", cs);
  double pjs = bench_median(proj_s, calls), pjl = bench_median(proj_l, calls);
  double first_with = with[0], first_without = without[0];
  double mw = bench_median(with, calls), mo = bench_median(without, calls);
  double rest_w = bench_median(with + 1, calls - 1);
  double hs = bench_median(hit_s, hits), hl = bench_median(hit_l, hits);
  double ts = bench_median(triv_s, calls), tl = bench_median(triv_l, calls);
  printf("gpujit build as a whole process, medians (%d edits, %d hits)\n", calls, hits);
  printf("%-44s %12s %12s %8s\n", "", "in-process", "server", "ratio");
  printf("%-44s %9.1f ms %9.1f ms %7.2fx\n", "edit loop: block_reduce.cu, body changed", mo, mw, mo / mw);
  printf("%-44s %9.1f ms %9.1f ms\n", "  its first call (the server makes the PCH)", first_without, first_with);
  printf("%-44s %12s %9.1f ms %7.2fx\n", "  calls 2.. with the server", "", rest_w, mo / rest_w);
  printf("%-44s %9.2f ms %9.2f ms %7.2fx\n", "cache hit (block_reduce)", hl, hs, hl / hs);
  printf("%-44s %9.1f ms %9.1f ms %+7.1f ms\n", "trivial module (saxpy), body changed", tl, ts, ts - tl);
  printf("%-44s %9.1f ms %9.1f ms %7.2fx\n", "project edit loop: 3 CUB modules, 1 changed", pjl, pjs, pjl / pjs);
  printf("RESULT edit_loop_ms in_process %.1f\nRESULT edit_loop_ms server %.1f\nRESULT edit_loop_ratio %.2f\n", mo, mw,
         mo / mw);
  printf("RESULT hit_ms in_process %.2f\nRESULT hit_ms server_running %.2f\n", hl, hs);
  printf("RESULT trivial_ms in_process %.1f\nRESULT trivial_ms server %.1f\n", tl, ts);
  printf("RESULT project_edit_ms in_process %.1f\nRESULT project_edit_ms server %.1f\n", pjl, pjs);
  printf("targets: edit loop >= 5x (%.2fx); hit no slower (%+.2f ms); trivial module <= +1 ms (%+.1f ms)\n", mo / mw,
         hs - hl, ts - tl);
  char cmd[700];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : 1;
}
