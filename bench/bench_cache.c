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
#include "bench_util.h"
#include "gpujit.h"

/* One module hit `reps` times in process, alternating with the other module. */
static int hit_once(gpujit_module_options *o, const char *src, double *out_ms)
{
  gpujit_module *m = NULL;
  double t0 = gpujit__now_us();
  if (gpujit_module_build_files(&m, &src, 1, o) < 0 || gpujit_module_cache_status(m) != GPUJIT_CACHE_HIT) {
    fprintf(stderr, "%s: expected a hit: %s\n", src, gpujit_error_last());
    gpujit_module_free(m);
    return -1;
  }
  *out_ms = (gpujit__now_us() - t0) / 1e3;
  gpujit_module_free(m);
  return 0;
}

int main(int argc, char **argv)
{
  int reps = argc > 1 ? atoi(argv[1]) : 200, preps = argc > 2 ? atoi(argv[2]) : 30, miss_reps = 7;
  const char *src = GPUJIT_EXAMPLES_DIR "/saxpy.cu", *heavy = GPUJIT_EXAMPLES_DIR "/block_reduce.cu";
  char dir[] = "/tmp/gpujit-bench-cache-XXXXXX", image[4200], cachedir[4200], outfile[4200];
  gpujit_cache_options co = GPUJIT_CACHE_OPTIONS_INIT;
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_cache *cache;
  gpujit_module *m = NULL;
  double *hit = calloc((size_t)reps, sizeof(double)), *hhit = calloc((size_t)reps, sizeof(double));
  double *raw = calloc((size_t)reps, sizeof(double));
  double cold[16], phit[256], pdef[256], praw[256], pmiss[16], pnocache[16];
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
  if (gpujit_module_build_files(&m, &heavy, 1, &o) < 0) { /* the header-heavy one: CUB */
    fprintf(stderr, "%s\n", gpujit_error_last());
    return 1;
  }
  gpujit_module_free(m);

  for (int r = 0; r < reps; r++) {
    gpujit__buf b = {0};
    double t0;
    if (hit_once(&o, src, &hit[r]) < 0 || hit_once(&o, heavy, &hhit[r]) < 0)
      return 1;
    t0 = gpujit__now_us();
    gpujit__file_read(&b, image);
    raw[r] = (gpujit__now_us() - t0) / 1e3;
    gpujit__buf_free(&b);
  }
  o.cache = NULL;
  for (int r = 0; r < 5; r++) {
    double t0 = gpujit__now_us();
    gpujit_module_build_files(&m, &src, 1, &o);
    cold[r] = (gpujit__now_us() - t0) / 1e3;
    gpujit_module_free(m);
  }
  {
    char missdir[4300];
    char *hit_argv[] = {GPUJIT_CLI, "-q", "build", "--arch", "sm_90", "--cache-dir", cachedir, "-o", outfile, (char *)src, NULL};
    char *def_argv[] = {GPUJIT_CLI, "-q", "build", "--cache-dir", cachedir, "-o", outfile, (char *)src, NULL};
    char *miss_argv[] = {GPUJIT_CLI, "-q", "build", "--arch", "sm_90", "--cache-dir", missdir, "-o", outfile, (char *)src, NULL};
    char *nocache_argv[] = {GPUJIT_CLI, "-q", "build", "--arch", "sm_90", "--no-cache", "-o", outfile, (char *)src, NULL};
    char *raw_argv[] = {"/bin/cat", image, NULL};
    bench_run_process(def_argv); /* the first default-arch build records the GPU's arch (or finds none) */
    bench_run_process(def_argv);
    for (int r = 0; r < preps; r++) {
      phit[r] = bench_run_process(hit_argv);
      pdef[r] = bench_run_process(def_argv);
      praw[r] = bench_run_process(raw_argv);
    }
    /* Misses, each into a fresh cache, alternating with the same build uncached. */
    for (int r = 0; r < miss_reps; r++) {
      snprintf(missdir, sizeof(missdir), "%s/miss-%d", dir, r);
      if (r % 2) {
        pnocache[r] = bench_run_process(nocache_argv);
        pmiss[r] = bench_run_process(miss_argv);
      } else {
        pmiss[r] = bench_run_process(miss_argv);
        pnocache[r] = bench_run_process(nocache_argv);
      }
    }
  }
  {
    double h = bench_median(hit, reps), hh = bench_median(hhit, reps), rw = bench_median(raw, reps), c = bench_median(cold, 5);
    double ph = bench_median(phit, preps), pd = bench_median(pdef, preps), pr = bench_median(praw, preps);
    double pm = bench_median(pmiss, miss_reps), pn = bench_median(pnocache, miss_reps);
    printf("cache, sm_90 (medians; %d in-process, %d process, %d miss repeats)\n\n", reps, preps, miss_reps);
    printf("%-44s %12s\n", "variant", "median ms");
    printf("%-44s %12.4f   target <= 0.1 ms\n", "in-process hit, saxpy (API -> module)", h);
    printf("%-44s %12.4f\n", "in-process hit, block_reduce (CUB, 609 hdrs)", hh);
    printf("%-44s %12.4f\n", "in-process read of saxpy's image file", rw);
    printf("%-44s %12.4f\n", "in-process cold compile, saxpy", c);
    printf("%-44s %12.4f\n", "process: gpujit build --arch sm_90 (hit)", ph);
    printf("%-44s %12.4f   target <= 3 ms\n", "process: gpujit build, default arch (hit)", pd);
    printf("%-44s %12.4f\n", "process: cat image", pr);
    printf("%-44s %12.4f\n", "process: gpujit build (miss, fresh cache)", pm);
    printf("%-44s %12.4f\n", "process: gpujit build --no-cache", pn);
    printf("\nratios: block_reduce hit / saxpy hit = %.3f (target <= 1.2)\n", hh / h);
    printf("        process miss / --no-cache = %.3f (target <= 1.05)\n", pm / pn);
    printf("        process hit, default arch / --arch = %.3f\n", pd / ph);
    printf("        in-process hit / cold compile = %.5f, hit / raw read = %.1f, process hit / cat = %.2f\n", h / c,
           h / rw, ph / pr);
  }
  gpujit_cache_free(cache);
  free(hit);
  free(hhit);
  free(raw);
  {
    char cmd[4300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
      fprintf(stderr, "could not remove %s\n", dir);
  }
  return 0;
}
