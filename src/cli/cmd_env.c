/* gpujit env: every environment setting gpujit reads, what it does, and its value now. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct setting {
  const char *name, *what;
} setting;

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
    {"GPUJIT_OBSERVE", "0: do not observe what NVRTC reads (then nothing is cached; for measuring the cost of observing)"},
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
    {"GPUJIT_PROFILE_LAUNCH_CALLBACKS", "0: the profile's launch callbacks off (to measure them)"},
    {"GPUJIT_PROFILE_PYTHON_HOOK", "set by `gpujit profile`: the Python start-up hook's directory"},
    {"GPUJIT_PROFILE_REINJECTED", "set by the injection library in a child whose variables it put back"},
    {"GPUJIT_SYSFS_ROOT", "tests: another root for /sys when reading the GPUs' identity"},
};

static void env_help(void)
{
  printf("usage: gpujit env [--names]\n\n"
         "Every environment variable gpujit reads, what it does and its value now (\"-\": unset).\n"
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
  for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
    const char *v = getenv(settings[i].name);
    if (names)
      printf("%s\n", settings[i].name);
    else
      printf("%-31s %s\n  %s\n", settings[i].name, v ? v : "-", settings[i].what);
  }
  return EXIT_OK;
}
