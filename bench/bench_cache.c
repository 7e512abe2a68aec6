/*
 * Cache hit latency: in process (API call to a ready module) and as a whole process
 * (`gpujit build` of a cached module), against a cold compile and against reading the same
 * bytes straight from a file. Variants interleave; medians and ratios are printed.
 */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/fs.h"
#include "gpujit.h"

extern char **environ;

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
  qsort(v, (size_t)n, sizeof(*v), cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double run_process(char *const argv[])
{
  pid_t pid;
  int status;
  posix_spawn_file_actions_t fa;
  double t0 = gpujit__now_us();
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 1, 0);
  if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
    perror(argv[0]);
    exit(1);
  }
  waitpid(pid, &status, 0);
  posix_spawn_file_actions_destroy(&fa);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "%s failed\n", argv[0]);
    exit(1);
  }
  return (gpujit__now_us() - t0) / 1e3;
}

int main(int argc, char **argv)
{
  int reps = argc > 1 ? atoi(argv[1]) : 200, preps = argc > 2 ? atoi(argv[2]) : 30, cold_reps = 5;
  const char *src = GPUJIT_EXAMPLES_DIR "/saxpy.cu";
  char dir[] = "/tmp/gpujit-bench-cache-XXXXXX", image[4200], cachedir[4200], outfile[4200];
  gpujit_cache_options co = GPUJIT_CACHE_OPTIONS_INIT;
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_cache *cache;
  gpujit_module *m = NULL;
  double *hit = calloc((size_t)reps, sizeof(double)), *raw = calloc((size_t)reps, sizeof(double));
  double cold[16], phit[256], pcold[16], praw[256];
  char *dir_key = NULL;

  if (reps < 1 || preps < 1 || preps > 256 || !mkdtemp(dir))
    return 2;
  snprintf(cachedir, sizeof(cachedir), "%s/cache", dir);
  snprintf(outfile, sizeof(outfile), "%s/saxpy.cubin", dir);
  co.dir = cachedir;
  if (gpujit_cache_open(&cache, &co) < 0)
    return 1;
  o.arch = "sm_90";
  o.cache = cache;
  if (gpujit_module_build_files(&m, &src, 1, &o) < 0) { /* populate */
    fprintf(stderr, "%s\n", gpujit_error_last());
    return 1;
  }
  gpujit_cache_entry_dir(&dir_key, cache, gpujit_module_cache_key(m));
  snprintf(image, sizeof(image), "%s/image.cubin", dir_key);
  gpujit_free(dir_key);
  gpujit_module_free(m);

  for (int r = 0; r < reps; r++) {
    gpujit__buf b = {0};
    double t0 = gpujit__now_us();
    if (gpujit_module_build_files(&m, &src, 1, &o) < 0 || gpujit_module_cache_status(m) != GPUJIT_CACHE_HIT)
      return 1;
    hit[r] = (gpujit__now_us() - t0) / 1e3;
    gpujit_module_free(m);
    t0 = gpujit__now_us();
    gpujit__file_read(&b, image);
    raw[r] = (gpujit__now_us() - t0) / 1e3;
    gpujit__buf_free(&b);
  }
  o.cache = NULL;
  for (int r = 0; r < cold_reps; r++) {
    double t0 = gpujit__now_us();
    gpujit_module_build_files(&m, &src, 1, &o);
    cold[r] = (gpujit__now_us() - t0) / 1e3;
    gpujit_module_free(m);
  }
  {
    char *hit_argv[] = {GPUJIT_CLI, "-q", "build", "--arch", "sm_90", "--cache-dir", cachedir, "-o", outfile, (char *)src, NULL};
    char *cold_argv[] = {GPUJIT_CLI, "-q", "build", "--arch", "sm_90", "--no-cache", "-o", outfile, (char *)src, NULL};
    char *raw_argv[] = {"/bin/cat", image, NULL};
    for (int r = 0; r < preps; r++) {
      phit[r] = run_process(hit_argv);
      praw[r] = run_process(raw_argv);
      if (r < cold_reps)
        pcold[r] = run_process(cold_argv);
    }
  }
  {
    double h = median(hit, reps), rw = median(raw, reps), c = median(cold, cold_reps);
    double ph = median(phit, preps), pr = median(praw, preps), pc = median(pcold, cold_reps);
    printf("cache hit latency, examples/saxpy.cu, sm_90 (medians; %d in-process, %d process repeats)\n\n", reps, preps);
    printf("%-34s %12s\n", "variant", "median ms");
    printf("%-34s %12.4f   target <= 0.5 ms\n", "in-process hit (API -> module)", h);
    printf("%-34s %12.4f\n", "in-process read of image file", rw);
    printf("%-34s %12.4f\n", "in-process cold compile", c);
    printf("%-34s %12.4f   target <= 10 ms\n", "process: gpujit build (hit)", ph);
    printf("%-34s %12.4f\n", "process: cat image", pr);
    printf("%-34s %12.4f\n", "process: gpujit build --no-cache", pc);
    printf("\nratios: in-process hit / cold compile = %.5f, hit / raw read = %.1f\n", h / c, h / rw);
    printf("        process hit / process cold = %.4f, process hit / cat = %.2f\n", ph / pc, ph / pr);
  }
  gpujit_cache_free(cache);
  free(hit);
  free(raw);
  {
    char *out;
    char cmd[4300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
      fprintf(stderr, "could not remove %s\n", dir);
    (void)out;
  }
  return 0;
}
