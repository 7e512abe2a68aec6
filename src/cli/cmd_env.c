/* gpujit env and gpujit --version: every environment setting gpujit reads, what it does, and the
 * value in effect with where it came from; the toolkit and cache a build would use. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct setting {
  const char *name, *what;
} setting;

/* What a build would use where the variable is unset: the value and where it comes from. */
typedef struct effective {
  gpujit_toolkit_info tk;
  char *cache_dir;
  const char *cache_origin;
  char limit[64], hashes[4096];
  const char *limit_origin;
} effective;

/* Every variable gpujit reads (tests/cli/cases/env_settings.sh checks the sources name no other). */
static const setting settings[] = {
    {"CUDA_PATH", "the CUDA toolkit (else CUDA_HOME, else /usr/local/cuda, else NVIDIA's pip wheels beside gpujit)"},
    {"CUDA_HOME", "the CUDA toolkit, where CUDA_PATH is not set"},
    {"GPUJIT_ARCH", "the default arch (sm_90, compute_90) where no GPU says it"},
    {"GPUJIT_DEVICE", "the CUDA device gpujit runs on (default 0)"},
    {"GPUJIT_CACHE_DIR", "the kernel cache (default $XDG_CACHE_HOME/gpujit, ~/.cache/gpujit)"},
    {"GPUJIT_NO_CACHE", "1: no kernel cache"},
    {"GPUJIT_CACHE_MAX_SIZE", "the cache's size limit (500M, 2G), over the one `cache limit` kept"},
    {"GPUJIT_CACHE_TIME_MACROS", "1: cache builds that use __TIME__, __DATE__ or __TIMESTAMP__"},
    {"GPUJIT_CHECK_THREADS", "N (1-64): at most N threads check a lookup's dependency group (default 8)"},
    {"GPUJIT_BENCH_OBSERVE", "measuring switch: 0 does not observe what NVRTC reads (then nothing is cached: the cost of observing)"},
    {"GPUJIT_BENCH_CHECK", "measuring switch: letters b/u each helper of a group's check bound to a CPU other than the lookup's or not (default: u with 4+ CPUs, b with fewer), v the check's timeline logged (gpujit -v prints it), h no head start"},
    {"GPUJIT_BASE_DIR", "paths under it enter cache keys relatively (hits across checkouts)"},
    {"GPUJIT_REMOTE_CACHE", "remote stores (http://, https://, redis:// URLs, space-separated)"},
    {"GPUJIT_REMOTE_READ_ONLY", "1: never write to the remote stores"},
    {"GPUJIT_TOOLKIT_HASHES", "where the toolkit's content hashes are remembered (default: beside the cache)"},
    {"GPUJIT_SERVER", "1: start the warm build server on the first build and use it; 0: never (default: as `server start` left it)"},
    {"GPUJIT_WORKER", "the gpujit-worker program of project builds"},
    {"GPUJIT_NVRTC_LIBRARY", "the libnvrtc to load (default: the toolkit's)"},
    {"GPUJIT_NVJITLINK_LIBRARY", "the libnvJitLink to load (default: the toolkit's)"},
    {"GPUJIT_LIBCUDA", "the CUDA driver library to load (default libcuda.so.1)"},
    {"GPUJIT_NCU", "the ncu program of `gpujit ncu` and `run --ncu`"},
    {"GPUJIT_INJECT_LIBRARY", "the injection library of `gpujit profile` (default: beside gpujit)"},
    {"GPUJIT_CUPTI_LIBRARY", "set by `gpujit profile`: which libcupti its injection library loads"},
    {"GPUJIT_PROFILE_DIR", "set by `gpujit profile`: where the profiled processes write their records"},
    {"GPUJIT_PROFILE_FLAGS", "set by `gpujit profile`: lineinfo, nvrtc-trace, nsight"},
    {"GPUJIT_PROFILE_MAX_EVENTS", "set by `gpujit profile`: per-launch records kept per process"},
    {"GPUJIT_PROFILE_STEP", "set by `gpujit profile --step`: where steps come from (auto, api, torch, nvtx:NAME, kernel:NAME)"},
    {"GPUJIT_PROFILE_SCHEDULE", "set by `gpujit profile --schedule`: which steps are recorded (wait=,warmup=,active=,repeat=,skip_first=)"},
    {"GPUJIT_BENCH_LAUNCH_CALLBACKS", "measuring switch: 0 turns the profile's launch callbacks off, and words that change CUPTI's settings (docs/record-format.md)"},
    {"GPUJIT_PROFILE_PYTHON_HOOK", "set by `gpujit profile`: the Python start-up hook's directory"},
    {"GPUJIT_PROFILE_REINJECTED", "set by the injection library in a child whose variables it put back"},
    {"GPUJIT_PROFILE_FROM_HASH", "set by gpujit for its own ptxas under gpujit profile: the NVRTC PTX its input was made from"},
    {"GPUJIT_SYSFS_ROOT", "tests: another root for /sys when reading the GPUs' identity"},
};

static const char *origin_name(gpujit_toolkit_origin o)
{
  switch (o) {
  case GPUJIT_TOOLKIT_CUDA_PATH: return "CUDA_PATH";
  case GPUJIT_TOOLKIT_CUDA_HOME: return "from CUDA_HOME";
  case GPUJIT_TOOLKIT_PIP: return "NVIDIA's pip wheels beside gpujit";
  default: return "default";
  }
}

static void effective_get(effective *e)
{
  gpujit_cache_options co = GPUJIT_CACHE_OPTIONS_INIT;
  gpujit_cache *c = NULL;
  uint64_t bytes = 0;
  memset(e, 0, sizeof(*e));
  gpujit_toolkit_info_get(&e->tk);
  if (gpujit_cache_default_dir(&e->cache_dir, &e->cache_origin) < 0)
    e->cache_dir = NULL;
  if (e->cache_dir)
    snprintf(e->hashes, sizeof(e->hashes), "%s/toolkit-hashes", e->cache_dir);
  co.dir = e->cache_dir;
  snprintf(e->limit, sizeof(e->limit), "none");
  e->limit_origin = "default";
  if (e->cache_dir && gpujit_cache_open_existing(&c, &co) == 0 && gpujit_cache_limit_get(c, &bytes, &e->limit_origin) == 0 &&
      bytes)
    cli_size(e->limit, sizeof(e->limit), (double)bytes);
  if (!strcmp(e->limit_origin, "none"))
    e->limit_origin = "default";
  gpujit_cache_free(c);
  gpujit_error_clear();
}

/* The value in effect for an unset variable, and its origin; NULL where it has none. */
static const char *effective_value(const effective *e, const char *name, const char **origin)
{
  const char *cache_origin = e->cache_origin && !strcmp(e->cache_origin, "HOME") ? "default" : e->cache_origin;
  *origin = "default";
  if (!strcmp(name, "CUDA_PATH"))
    return *origin = origin_name(e->tk.origin), e->tk.root;
  if (!strcmp(name, "GPUJIT_CACHE_DIR"))
    return *origin = cache_origin, e->cache_dir;
  if (!strcmp(name, "GPUJIT_TOOLKIT_HASHES"))
    return *origin = cache_origin, e->hashes[0] ? e->hashes : NULL;
  if (!strcmp(name, "GPUJIT_CACHE_MAX_SIZE"))
    return *origin = e->limit_origin, e->limit;
  if (!strcmp(name, "GPUJIT_NVRTC_LIBRARY"))
    return *origin = "the toolkit's", e->tk.nvrtc;
  if (!strcmp(name, "GPUJIT_NVJITLINK_LIBRARY"))
    return *origin = "the toolkit's", e->tk.nvjitlink;
  if (!strcmp(name, "GPUJIT_DEVICE"))
    return "0";
  if (!strcmp(name, "GPUJIT_LIBCUDA"))
    return "libcuda.so.1";
  if (!strcmp(name, "GPUJIT_ARCH"))
    return "the GPU's, else " GPUJIT_DEFAULT_ARCH;
  return NULL;
}

/* Why gpujit would not take `v`, the value of `name` in the environment, as it is written, or
 * NULL: listed as in effect, a value a build refuses (an arch that is none) or ignores (a
 * size that is none) or that means nothing (GPUJIT_SERVER=yes is off for one reader and on for another)
 * would pass for a setting. `why` holds the message. */
static const char *not_in_effect(const char *name, const char *v, char *why, size_t size)
{
  uint64_t bytes;
  long n;
  if (!strcmp(name, "GPUJIT_ARCH")) {
    gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
    o.arch = v;
    if (gpujit_module_options_validate(&o) == 0)
      return NULL;
    snprintf(why, size, "refused: a build fails, as it is not sm_XX or compute_XX (e.g. sm_90, compute_90)");
  } else if (!strcmp(name, "GPUJIT_CACHE_MAX_SIZE")) {
    if (gpujit_cache_parse_size(v, &bytes) == 0)
      return NULL;
    snprintf(why, size, "ignored with a warning, no size limit applied: %s", gpujit_error_last());
  } else if (!strcmp(name, "GPUJIT_DEVICE")) {
    if (cli_parse_int(v, 0, 1000000L, &n))
      return NULL;
    snprintf(why, size, "not a device number: read as device %d", atoi(v));
  } else if (!strcmp(name, "GPUJIT_CHECK_THREADS")) {
    n = strtol(v, NULL, 10);
    if (n >= 1 && n <= 64)
      return NULL;
    snprintf(why, size, "ignored: not a count of 1-64; the default is used");
  } else if (!strcmp(name, "GPUJIT_SERVER") || !strcmp(name, "GPUJIT_CACHE_TIME_MACROS") ||
             !strcmp(name, "GPUJIT_BENCH_OBSERVE")) {
    const char *only = !strcmp(name, "GPUJIT_SERVER") ? "0 or 1" : !strcmp(name, "GPUJIT_BENCH_OBSERVE") ? "0" : "1";
    if ((!strcmp(v, "0") && strchr(only, '0')) || (!strcmp(v, "1") && strchr(only, '1')))
      return NULL;
    snprintf(why, size, "ignored: only %s means anything", only);
  } else {
    return NULL;
  }
  gpujit_error_clear();
  return why;
}

/* gpujit --version: what gpujit would build with, found without a toolkit too. */
int cli_print_version(cli_ctx *ctx)
{
  effective e;
  int a = 0, b = 0, c = 0, d = 0;
  (void)ctx;
  effective_get(&e);
  printf("gpujit %s\n", gpujit_version());
  if (e.tk.problem || gpujit_toolkit_versions(&a, &b, &c, &d) < 0) {
    printf("toolkit none found: %s\nNVRTC none\nnvJitLink none\n", e.tk.problem ? e.tk.problem : gpujit_error_last());
  } else {
    printf("toolkit %s (%s)\n", e.tk.root, origin_name(e.tk.origin));
    printf("NVRTC %d.%d (%s%s)\n", a, b, e.tk.nvrtc, e.tk.nvrtc_from_env ? ", GPUJIT_NVRTC_LIBRARY" : "");
    printf("nvJitLink %d.%d (%s%s)\n", c, d, e.tk.nvjitlink, e.tk.nvjitlink_from_env ? ", GPUJIT_NVJITLINK_LIBRARY" : "");
    printf("ptxas %s\n", e.tk.ptxas ? e.tk.ptxas : "none (lean modules take NVRTC's cubin; pip install nvidia-cuda-nvcc)");
  }
  printf("cache %s (%s)\n", e.cache_dir ? e.cache_dir : "?",
         e.cache_origin && strcmp(e.cache_origin, "HOME") ? e.cache_origin : "default");
  free(e.cache_dir);
  return EXIT_OK;
}

static void env_help(void)
{
  printf("usage: gpujit env [--names]\n\n"
         "Every environment variable gpujit reads, what it does, the value in effect and where it comes\n"
         "from: (environment), (default), the toolkit's, NVIDIA's pip wheels (\"-\": unset, no default).\n"
         "  --names    the names alone, one per line\n");
}

int cmd_env(cli_ctx *ctx, int argc, char **argv)
{
  bool names = false;
  cli_args a = {.argc = argc, .i = 1, .argv = argv, .cmd = "env"};
  for (; a.i < argc; a.i++) {
    if (cli_end_of_options(&a))
      continue;
    if (cli_opt(&a, "--names", false))
      names = true;
    else if (cli_opt(&a, "-h", false) || cli_opt(&a, "--help", false)) {
      env_help();
      return EXIT_OK;
    } else if (cli_is_option(&a))
      return cli_unknown_option(ctx, &a, "env");
    else
      return cli_usage_error(ctx, "env", "unexpected argument '%s'", argv[a.i]);
  }
  effective e;
  char problem[1024];
  if (!names)
    effective_get(&e);
  for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
    const char *v = getenv(settings[i].name), *origin = "environment";
    if (names) {
      printf("%s\n", settings[i].name);
      continue;
    }
    const char *why = v && *v ? not_in_effect(settings[i].name, v, problem, sizeof(problem)) : NULL;
    if (!v || !*v)
      v = effective_value(&e, settings[i].name, &origin);
    if (!v) {
      printf("%-31s -\n  %s\n", settings[i].name, settings[i].what);
      continue;
    }
    /* escaped: a value with a line break could print a line that reads as another variable */
    printf("%-31s ", settings[i].name);
    cli_put_escaped(stdout, v);
    printf("  (%s%s", origin, why ? "; NOT IN EFFECT, " : "");
    if (why)
      cli_put_escaped(stdout, why);
    printf(")\n  %s\n", settings[i].what);
  }
  if (!names && e.tk.problem) {
    printf("\nno toolkit: ");
    cli_put_escaped(stdout, e.tk.problem);
    printf("\n");
  }
  if (!names)
    free(e.cache_dir);
  return EXIT_OK;
}
