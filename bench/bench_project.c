/*
 * Project builds, measured side by side in one run:
 *  1. 64 generated modules (3 in 8 header-heavy, in two include blocks; the rest small), cold:
 *     -j 1 against -j CORES, without PCH (the worker processes' scaling) and with it (what users get);
 *  2. two header-heavy modules of one include block in one worker: the second's compile with the
 *     first's PCH against --no-pch;
 *  3. the same 64 modules all cached: `gpujit build DIR` as a whole process.
 * usage: bench_project [MODULES [JOBS [REPS [HEAVY]]]]   (HEAVY: header-heavy modules, default 3/8)
 */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fs.h"
#include "bench_util.h"
#include "gpujit.h"

static const char heavy_head[] =
    "#include <cub/block/block_reduce.cuh>\n#include <cub/block/block_scan.cuh>\n"
    "#include <cub/block/block_radix_sort.cuh>\n#include <cub/block/block_load.cuh>\n"
    "#include <cub/block/block_store.cuh>\n#include <cub/block/block_exchange.cuh>\n"
    "#include <cub/block/block_histogram.cuh>\n#include <cub/block/block_discontinuity.cuh>\n"
    "#include <cub/warp/warp_reduce.cuh>\n#include <cub/warp/warp_scan.cuh>\n";
static const char other_head[] =
    "#include <cub/block/block_reduce.cuh>\n#include <cub/warp/warp_reduce.cuh>\n"
    "#include <cuda/std/complex>\n#include <cuda/std/tuple>\n#include <cuda/std/array>\n";

static void write_file(const char *dir, const char *name, const char *text)
{
  char path[4096];
  FILE *f;
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  if (!(f = fopen(path, "w")) || fputs(text, f) < 0 || fclose(f) != 0) {
    perror(path);
    exit(1);
  }
}

/* `heavy` of `n` modules spread evenly are header-heavy (two include blocks, alternating), the
 * rest small; each has a body of its own. */
static void generate(const char *dir, int n, int heavy)
{
  for (int i = 0, h = 0; i < n; i++) {
    char name[64], text[8192];
    snprintf(name, sizeof(name), "m%02d.cu", i);
    if ((i * heavy) % n < heavy && ++h)
      snprintf(text, sizeof(text),
               "%s\nextern \"C\" __global__ void k%d(float *o)\n{\n  using R = cub::BlockReduce<float, %d>;\n"
               "  __shared__ typename R::TempStorage s;\n  float v = R(s).Sum(o[threadIdx.x] * %d.0f);\n"
               "  if (threadIdx.x == 0) o[blockIdx.x] = v;\n}\n",
               h % 2 ? heavy_head : other_head, i, 64 << (i % 3), i + 1);
    else
      snprintf(text, sizeof(text),
               "extern \"C\" __global__ void k%d(const float *x, float *y, int n)\n{\n"
               "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  float a = x[i %% n];\n"
               "  for (int r = 0; r < %d; r++) a = a * 1.0001f + %d.0f;\n  if (i < n) y[i] = a;\n}\n",
               i, 4 + i % 13, i);
    write_file(dir, name, text);
  }
}

/* What one build's compiles took (ms, medians): a PCH made, a PCH used, the longest half plain. */
typedef struct chain {
  double make_ms, use_ms, plain_ms;
} chain;

static void chain_of(chain *c, const gpujit_project *p, int heavy)
{
  double make[512], use[512], plain[512];
  int nm = 0, nu = 0, np = 0;
  for (size_t i = 0; i < gpujit_project_count(p) && i < 512; i++) {
    const gpujit_project_result *r = gpujit_project_result_get(p, i);
    if (r->pch == GPUJIT_PCH_STATUS_CREATED)
      make[nm++] = r->compile_ms;
    else if (r->pch == GPUJIT_PCH_STATUS_USED)
      use[nu++] = r->compile_ms;
    else
      plain[np++] = r->compile_ms;
  }
  c->make_ms = nm ? bench_median(make, nm) : 0;
  c->use_ms = nu ? bench_median(use, nu) : 0;
  if (np) { /* the header-heavy ones: the longest `heavy` */
    int k = heavy < np ? heavy : np;
    bench_median(plain, np); /* sorted */
    c->plain_ms = k ? bench_median(plain + np - k, k) : 0;
  }
}

/* One cold build of the directory into a fresh cache. @return wall ms; *created/*used PCH counts;
 * what its compiles took into *ch where given. */
static double cold_chain(const char *dir, const char *cache_dir, int jobs, int pch, size_t *created, size_t *used,
                         chain *ch, int heavy)
{
  gpujit_cache_options co = GPUJIT_CACHE_OPTIONS_INIT;
  gpujit_project_options po = GPUJIT_PROJECT_OPTIONS_INIT;
  gpujit_module_options mo = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_project_summary s;
  gpujit_project *p = NULL;
  gpujit_cache *cache = NULL;
  char cmd[4200];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", cache_dir);
  if (system(cmd) != 0)
    exit(1);
  co.dir = cache_dir;
  if (gpujit_cache_open(&cache, &co) < 0 || gpujit_project_create(&p) < 0 ||
      gpujit_project_add_dir(p, dir, NULL, &mo, NULL) < 0) {
    fprintf(stderr, "setup: %s\n", gpujit_error_last());
    exit(1);
  }
  po.jobs = jobs;
  po.cache = cache;
  po.pch = pch;
  if (gpujit_project_build(p, &po) < 0) {
    fprintf(stderr, "build: %s\n", gpujit_error_last());
    exit(1);
  }
  gpujit_project_summary_get(p, &s);
  if (created)
    *created = s.pch_created;
  if (used)
    *used = s.pch_used;
  if (ch)
    chain_of(ch, p, heavy);
  gpujit_project_free(p);
  gpujit_cache_free(cache);
  return s.wall_ms;
}

static double cold(const char *dir, const char *cache_dir, int jobs, int pch, size_t *created, size_t *used)
{
  return cold_chain(dir, cache_dir, jobs, pch, created, used, NULL, 0);
}

/* Two modules of one include block, one worker: the second's compile ms; its parts into part[3]:
 * NVRTC, the lean pass, the lean path's ptxas (a process of its own). */
static double second_compile(const char *dir, int pch, double part[3])
{
  gpujit_project_options po = GPUJIT_PROJECT_OPTIONS_INIT;
  gpujit_module_options mo = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_project *p = NULL;
  char a[4200], b[4200];
  const char *fa = a, *fb = b;
  double ms;
  snprintf(a, sizeof(a), "%s/a.cu", dir);
  snprintf(b, sizeof(b), "%s/b.cu", dir);
  if (gpujit_project_create(&p) < 0 || gpujit_project_add(p, "a", &fa, 1, &mo, NULL) < 0 ||
      gpujit_project_add(p, "b", &fb, 1, &mo, NULL) < 0)
    exit(1);
  po.jobs = 1;
  po.pch = pch;
  po.keep_modules = 1;
  if (gpujit_project_build(p, &po) < 0) {
    fprintf(stderr, "pair: %s\n", gpujit_error_last());
    exit(1);
  }
  {
    const gpujit_project_result *r0 = gpujit_project_result_get(p, 0), *r1 = gpujit_project_result_get(p, 1);
    const gpujit_project_result *second = r1->start_ms > r0->start_ms ? r1 : r0;
    if (pch && second->pch != GPUJIT_PCH_STATUS_USED) {
      fprintf(stderr, "pair: the second module did not use the PCH (%s: %s)\n", gpujit_pch_status_name(second->pch),
              second->pch_reason);
      exit(1);
    }
    ms = second->compile_ms;
    if (second->module) {
      gpujit_module_lean lean;
      gpujit_module_lean_get(second->module, &lean);
      part[1] = lean.pass_ms;
      part[2] = lean.ptxas_ms;
      part[0] = ms - part[1] - part[2];
    }
  }
  gpujit_project_free(p);
  return ms;
}

/* The fastest and slowest of v[0..n). */
static void spread(double out[2], const double *v, int n)
{
  out[0] = out[1] = v[0];
  for (int i = 1; i < n; i++) {
    out[0] = v[i] < out[0] ? v[i] : out[0];
    out[1] = v[i] > out[1] ? v[i] : out[1];
  }
}

int main(int argc, char **argv)
{
  int n = argc > 1 ? atoi(argv[1]) : 64, cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
  int jobs = argc > 2 ? atoi(argv[2]) : cores, reps = argc > 3 ? atoi(argv[3]) : 1;
  int heavy = argc > 4 ? atoi(argv[4]) : n * 3 / 8;
  char root[] = "/tmp/gpujit-bench-project-XXXXXX", dir[4200], pair[4200], cache_dir[4200], cmd[4300];
  double j1[8], jn[8], j1p[8], jnp[8], sec_pch[8], sec_off[8], hit[21], fresh[21];
  size_t created = 0, used = 0, created1 = 0, used1 = 0;
  chain plain1[8], pch1[8];
  double part_off[8][3] = {{0}}, part_pch[8][3] = {{0}}, po_k[3][8], pp_k[3][8]; /* the pair's parts */
  double mk[8], us[8], pl[8];
  if (n < 8 || jobs < 1 || reps < 1 || reps > 8 || heavy < 0 || heavy > n) {
    fprintf(stderr, "usage: bench_project [MODULES>=8 [JOBS [REPS<=8 [HEAVY<=MODULES]]]]\n");
    return 2;
  }
  setenv("GPUJIT_WORKER", GPUJIT_WORKER_PATH, 1);
  if (!getenv("GPUJIT_ARCH"))
    setenv("GPUJIT_ARCH", "sm_90", 1);
  if (!mkdtemp(root))
    return 1;
  snprintf(dir, sizeof(dir), "%s/modules", root);
  snprintf(pair, sizeof(pair), "%s/pair", root);
  snprintf(cache_dir, sizeof(cache_dir), "%s/cache", root);
  gpujit__mkdirs(dir, 0777);
  gpujit__mkdirs(pair, 0777);
  generate(dir, n, heavy);
  {
    char a[8192], b[8192];
    snprintf(a, sizeof(a), "%sextern \"C\" __global__ void a(float *o) { o[threadIdx.x] *= 2.0f; }\n", heavy_head);
    snprintf(b, sizeof(b),
             "%sextern \"C\" __global__ void b(int *o) {\n  using S = cub::BlockScan<int, 128>;\n"
             "  __shared__ typename S::TempStorage t;\n  int v;\n  S(t).ExclusiveSum(o[threadIdx.x], v);\n"
             "  o[threadIdx.x] = v;\n}\n",
             heavy_head);
    write_file(pair, "a.cu", a);
    write_file(pair, "b.cu", b);
  }
  printf("bench_project: %d modules (%d header-heavy), %d cores, -j %d, %d rep(s)\n", n, heavy, cores, jobs, reps);
  fflush(stdout);
  for (int r = 0; r < reps; r++) { /* interleaved */
    j1[r] = cold_chain(dir, cache_dir, 1, 0, NULL, NULL, &plain1[r], heavy);
    jn[r] = cold(dir, cache_dir, jobs, 0, NULL, NULL);
    j1p[r] = cold_chain(dir, cache_dir, 1, 1, &created1, &used1, &pch1[r], heavy);
    mk[r] = pch1[r].make_ms, us[r] = pch1[r].use_ms, pl[r] = plain1[r].plain_ms;
    jnp[r] = cold(dir, cache_dir, jobs, 1, &created, &used);
    sec_off[r] = second_compile(pair, 0, part_off[r]);
    sec_pch[r] = second_compile(pair, 1, part_pch[r]);
    for (int k = 0; k < 3; k++)
      po_k[k][r] = part_off[r][k], pp_k[k][r] = part_pch[r][k];
  }
  {
    char *args[] = {(char *)GPUJIT_CLI, (char *)"build", (char *)"-q", (char *)"--cache-dir", cache_dir, dir, NULL};
    bench_run_process(args); /* warm the page cache; the outputs are then up to date */
    for (int i = 0; i < 21; i++) {
      char out[4300];
      char *fresh_args[] = {(char *)GPUJIT_CLI, (char *)"build", (char *)"-q", (char *)"--cache-dir", cache_dir,
                            (char *)"--out-dir", out, dir, NULL};
      snprintf(out, sizeof(out), "%s/out%d", root, i); /* a CI job: cache restored, no outputs yet */
      hit[i] = bench_run_process(args);
      fresh[i] = bench_run_process(fresh_args);
    }
  }
  {
    double s1[4][2], s2[2][2]; /* the spread: fastest and slowest of the reps */
    double chain_ms[3];        /* making, a use, a plain header-heavy compile */
    double part_med[4];        /* the pair's second: NVRTC, pass, ptxas with the PCH; NVRTC without */
    spread(s1[0], j1, reps), spread(s1[1], jn, reps), spread(s1[2], j1p, reps), spread(s1[3], jnp, reps);
    spread(s2[0], sec_off, reps), spread(s2[1], sec_pch, reps);
    double a = bench_median(j1, reps), b = bench_median(jn, reps), c = bench_median(j1p, reps), d = bench_median(jnp, reps);
    double so = bench_median(sec_off, reps), sp = bench_median(sec_pch, reps), h = bench_median(hit, 21), hf = bench_median(fresh, 21);
    printf("  cold, no PCH:  -j 1 %9.0f ms   -j %-3d %9.0f ms   speed-up %.2fx (target >= %.1fx = 0.8 x cores)\n", a,
           jobs, b, a / b, 0.8 * jobs);
    printf("  cold, PCH:     -j 1 %9.0f ms   -j %-3d %9.0f ms   speed-up %.2fx\n", c, jobs, d, c / d);
    printf("  PCH plan: -j 1 %zu PCHs created, %zu used; -j %d %zu created, %zu used (of %d header-heavy modules)\n",
           created1, used1, jobs, created, used, heavy);
    printf("  cold PCH against cold no PCH: -j 1 %.2fx, -j %d %.2fx faster (target at -j cores >= 3x)\n", a / c, jobs,
           b / d);
    {
      double m = bench_median(mk, reps), u = bench_median(us, reps), pc = bench_median(pl, reps);
      /* a block's first module must wait for its PCH to be made: making + a use is the least a
       * PCH build can take, however many workers (and each runs slower beside the others) */
      printf("  PCH chain, compiles of the -j 1 builds (ms, medians): making a PCH %.0f, using one %.0f, a header-heavy "
             "module plain %.0f: making + a use = %.2fx a plain compile;\n"
             "    PCH at -j %d can be at most %.2fx faster than no PCH at -j %d (%.0f / %.0f ms; target 3x)\n",
             m, u, pc, pc > 0 ? (m + u) / pc : 0, jobs, m + u > 0 ? b / (m + u) : 0, jobs, b, m + u);
      chain_ms[0] = m, chain_ms[1] = u, chain_ms[2] = pc;
    }
    printf("  spread (fastest..slowest of %d): no PCH -j 1 %.0f..%.0f, -j %d %.0f..%.0f; PCH -j 1 %.0f..%.0f, -j %d %.0f..%.0f ms\n",
           reps, s1[0][0], s1[0][1], jobs, s1[1][0], s1[1][1], s1[2][0], s1[2][1], jobs, s1[3][0], s1[3][1]);
    printf("  second header-heavy module, one worker: PCH %.1f ms (%.1f..%.1f), --no-pch %.1f ms (%.1f..%.1f): "
           "%.2fx faster (target >= 8x; NVRTC alone: bench_pch_pair)\n",
           sp, s2[1][0], s2[1][1], so, s2[0][0], s2[0][1], so / sp);
    {
      double pn = bench_median(pp_k[0], reps), pl = bench_median(pp_k[1], reps), px = bench_median(pp_k[2], reps);
      double on = bench_median(po_k[0], reps), ol = bench_median(po_k[1], reps), ox = bench_median(po_k[2], reps);
      /* where the second module's time goes: NVRTC's is bench_pch_pair's to compare (NVRTC alone
       * runs its ptxas inside; the lean path runs the toolkit's ptxas after its pass) */
      printf("    its compile: PCH NVRTC %.1f + lean pass %.1f + ptxas process %.1f ms; --no-pch NVRTC %.1f + %.1f + %.1f ms\n",
             pn, pl, px, on, ol, ox);
      part_med[0] = pn, part_med[1] = pl, part_med[2] = px, part_med[3] = on;
    }
    printf("  %d cached modules, whole `gpujit build DIR` process: median %.2f ms of 21 with the outputs up to date,\n"
           "    %.2f ms writing every output to a new --out-dir (target <= 30 ms)\n", n, h, hf);
    printf("RESULT project_speedup_nopch=%.2f project_speedup_pch=%.2f pch_vs_nopch_j1=%.2f pch_vs_nopch_jn=%.2f "
           "pch_created=%zu pch_used=%zu pch_created_j1=%zu pch_used_j1=%zu pch_second=%.2f pch_second_ms=%.1f "
           "nopch_second_ms=%.1f cached_process_ms=%.2f cached_fresh_out_ms=%.2f\n",
           a / b, c / d, a / c, b / d, created, used, created1, used1, so / sp, sp, so, h, hf);
    printf("RESULT pch_chain_make_ms=%.0f pch_chain_use_ms=%.0f heavy_plain_ms=%.0f pch_chain_floor_ms=%.0f "
           "pch_jn_bound=%.2f pch_second_nvrtc_ms=%.1f pch_second_pass_ms=%.1f pch_second_ptxas_ms=%.1f "
           "nopch_second_nvrtc_ms=%.1f\n", chain_ms[0], chain_ms[1], chain_ms[2], chain_ms[0] + chain_ms[1],
           chain_ms[0] + chain_ms[1] > 0 ? b / (chain_ms[0] + chain_ms[1]) : 0, part_med[0], part_med[1], part_med[2],
           part_med[3]);
  }
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
  return system(cmd) == 0 ? 0 : 1;
}
