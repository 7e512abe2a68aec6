/*
 * Cache hit latency: in process (API call to a ready module) and as a whole process
 * (`gpujit build` of a cached module), against a cold compile and against reading the same
 * bytes straight from a file; a miss against the same compile uncached, in process and as a
 * process, into a fresh cache and into one in use (each miss a define no entry has). Variants
 * interleave; medians, ratios and the spread (fastest..slowest) are printed.
 */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
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

/* In process, a miss (a define no entry has: the cache looks up, compiles, stores) or the same
 * compile with no cache. @return wall ms; *cpu: this process's CPU ms. */
static double miss_once(const gpujit_module_options *base, gpujit_cache *cache, const char *src, int r, double *cpu)
{
  gpujit_module_options o = *base;
  gpujit_module *m = NULL;
  char def[64];
  const char *defs[1] = {def};
  struct timespec c0, c1;
  double t0;
  snprintf(def, sizeof(def), "GPUJIT_BENCH_MISS=%d%d", (int)getpid(), r);
  o.defines = defs;
  o.defines_count = 1;
  o.cache = cache;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
  t0 = gpujit__now_us();
  if (gpujit_module_build_files(&m, &src, 1, &o) < 0 || (cache && gpujit_module_cache_status(m) == GPUJIT_CACHE_HIT)) {
    fprintf(stderr, "%s: expected a compile: %s\n", src, gpujit_error_last());
    exit(1);
  }
  t0 = (gpujit__now_us() - t0) / 1e3;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
  *cpu = (double)(c1.tv_sec - c0.tv_sec) * 1e3 + (double)(c1.tv_nsec - c0.tv_nsec) / 1e6;
  gpujit_module_free(m);
  return t0;
}

static void spread_of(double out[2], const double *v, int n)
{
  out[0] = out[1] = v[0];
  for (int i = 1; i < n; i++) {
    out[0] = v[i] < out[0] ? v[i] : out[0];
    out[1] = v[i] > out[1] ? v[i] : out[1];
  }
}

int main(int argc, char **argv)
{
  int reps = argc > 1 ? atoi(argv[1]) : 200, preps = argc > 2 ? atoi(argv[2]) : 30, miss_reps = 9;
  const char *src = GPUJIT_EXAMPLES_DIR "/saxpy.cu", *heavy = GPUJIT_EXAMPLES_DIR "/block_reduce.cu";
  char dir[] = "/tmp/gpujit-bench-cache-XXXXXX", image[4200], cachedir[4200], outfile[4200];
  gpujit_cache_options co = GPUJIT_CACHE_OPTIONS_INIT;
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_cache *cache;
  gpujit_module *m = NULL;
  double *hit = calloc((size_t)reps, sizeof(double)), *hhit = calloc((size_t)reps, sizeof(double));
  double *raw = calloc((size_t)reps, sizeof(double));
  double cold[16], phit[256], pdef[256], praw[256], pmiss[16], pnocache[16], pmiss2[16], pnocache2[16];
  double imiss[16], inocache[16], imiss_cpu[16], inocache_cpu[16];
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
  for (int r = 0; r < miss_reps; r++) { /* in process: misses into the cache in use, alternating */
    if (r % 2) {
      inocache[r] = miss_once(&o, NULL, src, 1000 + r, &inocache_cpu[r]);
      imiss[r] = miss_once(&o, cache, src, r, &imiss_cpu[r]);
    } else {
      imiss[r] = miss_once(&o, cache, src, r, &imiss_cpu[r]);
      inocache[r] = miss_once(&o, NULL, src, 1000 + r, &inocache_cpu[r]);
    }
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
    char define[64]; /* a miss into the cache in use: a define no entry has */
    char *miss2_argv[] = {GPUJIT_CLI, "-q", "build", "--arch", "sm_90", "--cache-dir", cachedir, "-D", define, "-o", outfile, (char *)src, NULL};
    char *nocache2_argv[] = {GPUJIT_CLI, "-q", "build", "--arch", "sm_90", "--no-cache", "-D", define, "-o", outfile, (char *)src, NULL};
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
      snprintf(define, sizeof(define), "GPUJIT_BENCH_MISS=p%d%d", (int)getpid(), r);
      if (r % 2) {
        pnocache2[r] = bench_run_process(nocache2_argv);
        pmiss2[r] = bench_run_process(miss2_argv);
      } else {
        pmiss2[r] = bench_run_process(miss2_argv);
        pnocache2[r] = bench_run_process(nocache2_argv);
      }
    }
  }
  {
    double h = bench_median(hit, reps), hh = bench_median(hhit, reps), rw = bench_median(raw, reps), c = bench_median(cold, 5);
    double ph = bench_median(phit, preps), pd = bench_median(pdef, preps), pr = bench_median(praw, preps);
    double sp[6][2];
    spread_of(sp[0], pmiss, miss_reps), spread_of(sp[1], pnocache, miss_reps), spread_of(sp[2], pmiss2, miss_reps);
    spread_of(sp[3], pnocache2, miss_reps), spread_of(sp[4], imiss, miss_reps), spread_of(sp[5], inocache, miss_reps);
    double pm = bench_median(pmiss, miss_reps), pn = bench_median(pnocache, miss_reps);
    double pm2 = bench_median(pmiss2, miss_reps), pn2 = bench_median(pnocache2, miss_reps);
    double im = bench_median(imiss, miss_reps), in = bench_median(inocache, miss_reps);
    double imc = bench_median(imiss_cpu, miss_reps), inc = bench_median(inocache_cpu, miss_reps);
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
    printf("%-44s %12.4f   (%.1f..%.1f)\n", "process: miss into the cache in use", pm2, sp[2][0], sp[2][1]);
    printf("%-44s %12.4f   (%.1f..%.1f)\n", "process: the same, --no-cache", pn2, sp[3][0], sp[3][1]);
    printf("%-44s %12.4f   (%.1f..%.1f), CPU %.1f ms\n", "in-process miss, saxpy", im, sp[4][0], sp[4][1], imc);
    printf("%-44s %12.4f   (%.1f..%.1f), CPU %.1f ms\n", "in-process compile, no cache, saxpy", in, sp[5][0], sp[5][1], inc);
    printf("\nratios: block_reduce hit / saxpy hit = %.3f (in-process; target <= 1.5, issue 62)\n", hh / h);
    printf("RESULT hit_ratio in_process_block_reduce_over_saxpy=%.4f saxpy_ms=%.4f block_reduce_ms=%.4f\n", hh / h, h, hh);
    printf("        process miss / --no-cache = %.3f, fresh cache (spread %.1f..%.1f against %.1f..%.1f ms)\n", pm / pn,
           sp[0][0], sp[0][1], sp[1][0], sp[1][1]);
    printf("        process miss / --no-cache = %.3f, cache in use (target <= 1.02)\n", pm2 / pn2);
    printf("        in-process miss / uncached compile = %.3f wall, %.3f CPU (target <= 1.02)\n", im / in, imc / inc);
    printf("RESULT miss_ratio process_fresh=%.4f process_in_use=%.4f in_process=%.4f in_process_cpu=%.4f\n", pm / pn,
           pm2 / pn2, im / in, imc / inc);
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
