/*
 * Cold-compile benchmark: gpujit against the same NVRTC calls made directly, and tracing
 * on against off beside NVRTC's own --fdevice-time-trace cost. Variants are interleaved per
 * repeat so drift hits them alike; min and median are printed with their ratios.
 */
#define _GNU_SOURCE
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fs.h"
#include "compile/nvrtc/nvrtc.h"
#include "compile/nvrtc/options.h"
#include "gpujit.h"

enum { DIRECT, GPUJIT, DIRECT_TRACE, GPUJIT_TRACE, VARIANTS };
static const char *const variant_names[VARIANTS] = {"nvrtc", "gpujit", "nvrtc+trace", "gpujit+trace"};

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Exactly what gpujit does for one source, minus gpujit: create, compile, fetch, destroy. */
static double direct_compile(const char *path, const char *src, const gpujit__strvec *flags)
{
  nvrtcProgram prog;
  size_t size;
  char *img;
  double t0 = gpujit__now_us();
  if (nvrtcCreateProgram(&prog, src, path, 0, NULL, NULL) != NVRTC_SUCCESS ||
      nvrtcCompileProgram(prog, (int)flags->count, (const char *const *)flags->items) != NVRTC_SUCCESS) {
    fprintf(stderr, "direct compile of %s failed\n", path);
    exit(1);
  }
  nvrtcGetCUBINSize(prog, &size);
  img = malloc(size);
  nvrtcGetCUBIN(prog, img);
  free(img);
  nvrtcDestroyProgram(&prog);
  return (gpujit__now_us() - t0) / 1e3;
}

static double gpujit_compile(const char *path, gpujit_trace *trace)
{
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_module *m = NULL;
  double t0 = gpujit__now_us();
  o.arch = "sm_90";
  o.trace = trace;
  o.pch = GPUJIT_PCH_OFF; /* like for like with NVRTC: what PCH saves is bench_project's */
  if (gpujit_module_build_files(&m, &path, 1, &o) != 0) {
    fprintf(stderr, "gpujit build of %s failed: %s\n", path, gpujit_error_last());
    exit(1);
  }
  gpujit_module_free(m);
  return (gpujit__now_us() - t0) / 1e3;
}

int main(int argc, char **argv)
{
  int reps = argc > 1 ? atoi(argv[1]) : 5;
  const char *dir = argc > 2 ? argv[2] : GPUJIT_EXAMPLES_DIR;
  const char *modules[] = {"saxpy.cu", "vecops.cu", "scale.cu", "block_reduce.cu"};
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  char tmpdir[] = "/tmp/gpujit-bench-XXXXXX";

  if (reps < 1 || !mkdtemp(tmpdir))
    return 2;
  printf("cold compile, sm_90, lineinfo on; %d interleaved repeats; times in ms\n\n", reps);
  printf("%-16s %-13s %9s %9s\n", "module", "variant", "min", "median");
  for (size_t k = 0; k < sizeof(modules) / sizeof(modules[0]); k++) {
    char path[4096], base[4200];
    double *t[VARIANTS], med[VARIANTS], mn[VARIANTS];
    gpujit__buf src = {0};
    gpujit__strvec flags = {0}, tflags = {0};
    snprintf(path, sizeof(path), "%s/%s", dir, modules[k]);
    {
      char *abs = gpujit__abspath(path);
      snprintf(path, sizeof(path), "%s", abs);
      free(abs);
    }
    if (gpujit__file_read(&src, path) < 0) {
      fprintf(stderr, "%s\n", gpujit_error_last());
      return 1;
    }
    {
      char *d = gpujit__dirname(path);
      gpujit__nvrtc_flags(&flags, &o, "sm_90", d, false, NULL);
      free(d);
    }
    for (int v = 0; v < VARIANTS; v++)
      t[v] = calloc((size_t)reps, sizeof(double));
    /* One warm-up of each so library loading stays out of the numbers. */
    for (int r = -1; r < reps; r++) {
      for (int v = 0; v < VARIANTS; v++) {
        double ms;
        gpujit_trace *trace = NULL;
        gpujit_trace_options to = GPUJIT_TRACE_OPTIONS_INIT;
        to.tmp_dir = tmpdir;
        switch (v) {
        case DIRECT: ms = direct_compile(path, src.data, &flags); break;
        case GPUJIT: ms = gpujit_compile(path, NULL); break;
        case DIRECT_TRACE:
          snprintf(base, sizeof(base), "%s/direct-%zu-%d", tmpdir, k, r + 1);
          gpujit__strvec_free(&tflags);
          for (size_t i = 0; i < flags.count; i++)
            gpujit__strvec_push(&tflags, flags.items[i]);
          gpujit__strvec_pushf(&tflags, "--fdevice-time-trace=%s", base);
          ms = direct_compile(path, src.data, &tflags);
          strcat(base, ".json");
          unlink(base);
          break;
        default:
          gpujit_trace_create(&trace, &to);
          ms = gpujit_compile(path, trace);
          gpujit_trace_free(trace);
          break;
        }
        if (r >= 0)
          t[v][r] = ms;
      }
    }
    for (int v = 0; v < VARIANTS; v++) {
      qsort(t[v], (size_t)reps, sizeof(double), cmp_double);
      mn[v] = t[v][0];
      med[v] = reps % 2 ? t[v][reps / 2] : (t[v][reps / 2 - 1] + t[v][reps / 2]) / 2;
      printf("%-16s %-13s %9.2f %9.2f\n", modules[k], variant_names[v], mn[v], med[v]);
    }
    printf("%-16s %-13s %9.4f %9.4f   gpujit / nvrtc (target <= 1.02)\n", modules[k], "ratio",
           mn[GPUJIT] / mn[DIRECT], med[GPUJIT] / med[DIRECT]);
    printf("%-16s %-13s %9.4f %9.4f   nvrtc+trace / nvrtc: NVRTC's own trace cost\n", modules[k], "ratio",
           mn[DIRECT_TRACE] / mn[DIRECT], med[DIRECT_TRACE] / med[DIRECT]);
    printf("%-16s %-13s %9.4f %9.4f   gpujit+trace / gpujit (target <= NVRTC's + 0.01)\n", modules[k],
           "ratio", mn[GPUJIT_TRACE] / mn[GPUJIT], med[GPUJIT_TRACE] / med[GPUJIT]);
    printf("%-16s %-13s %9.4f %9.4f   gpujit+trace / nvrtc+trace: gpujit's own tracing cost\n\n", modules[k],
           "ratio", mn[GPUJIT_TRACE] / mn[DIRECT_TRACE], med[GPUJIT_TRACE] / med[DIRECT_TRACE]);
    for (int v = 0; v < VARIANTS; v++)
      free(t[v]);
    gpujit__buf_free(&src);
    gpujit__strvec_free(&flags);
    gpujit__strvec_free(&tflags);
  }
  rmdir(tmpdir);
  return 0;
}
