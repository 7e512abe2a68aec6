/* gpujit env and gpujit --version: every environment setting gpujit reads, what it does, and the
 * value in effect with where it came from; the toolkit and cache a build would use. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Who a variable is for: `gpujit env` lists the user's settings; the others only under --all (or
 * where one is set: then it is in effect, and said to be). */
typedef enum setting_group {
  FOR_USER,    /* a setting of gpujit's */
  FOR_SYSTEM,  /* the system's, that gpujit reads (HOME, NO_COLOR, XDG_CACHE_HOME, ...) */
  MEASURING,   /* switches for measuring gpujit itself (benchmarks); never needed to use it */
  FOR_PROFILE, /* set by `gpujit profile` for the programs it runs */
  FOR_TESTS    /* gpujit's own tests */
} setting_group;

static const char *const group_names[] = {"setting", "system", "measuring", "profile", "test"};

typedef struct setting {
  const char *name, *what;
  setting_group group;
} setting;

/* What a build would use where the variable is unset: the value and where it comes from. */
typedef struct effective {
  gpujit_toolkit_info tk;
  char *cache_dir;
  const char *cache_origin;
  char limit[64], hashes[4096];
  const char *limit_origin;
  uint64_t limit_bytes;
} effective;

/* Every variable gpujit reads (tests/cli/cases/env_settings.sh checks the sources name no other). */
static const setting settings[] = {
    {"CUDA_PATH", "the CUDA toolkit (else CUDA_HOME, else /usr/local/cuda, else NVIDIA's pip wheels beside gpujit)", FOR_USER},
    {"CUDA_HOME", "the CUDA toolkit, where CUDA_PATH is not set", FOR_USER},
    {"GPUJIT_ARCH", "the default arch (sm_90, compute_90) where no GPU says it", FOR_USER},
    {"GPUJIT_DEVICE", "the CUDA device gpujit runs on (default 0)", FOR_USER},
    {"GPUJIT_CACHE_DIR", "the kernel cache (default $XDG_CACHE_HOME/gpujit, ~/.cache/gpujit)", FOR_USER},
    {"GPUJIT_NO_CACHE", "1: no kernel cache", FOR_USER},
    {"GPUJIT_CACHE_MAX_SIZE", "the cache's size limit, over the one `cache limit` kept; as ccache's: a bare number is GiB, 500MB and 2GB powers of 1000, 512MiB and 2GiB powers of 1024, 0: none", FOR_USER},
    {"GPUJIT_CACHE_TIME_MACROS", "1: cache builds that use __TIME__, __DATE__ or __TIMESTAMP__", FOR_USER},
    {"GPUJIT_CHECK_THREADS", "N (1-64): at most N threads check a lookup's dependency group (default 8)", FOR_USER},
    {"GPUJIT_BASE_DIR", "paths under it enter cache keys relatively (hits across checkouts)", FOR_USER},
    {"GPUJIT_REMOTE_CACHE", "remote stores (http://, https://, redis:// URLs, space-separated)", FOR_USER},
    {"GPUJIT_REMOTE_READ_ONLY", "1: never write to the remote stores", FOR_USER},
    {"GPUJIT_TOOLKIT_HASHES", "where the toolkit's content hashes are remembered (default: beside the cache)", FOR_USER},
    {"GPUJIT_SERVER", "1: start the warm build server on the first build and use it; 0: never (default: as `server start` left it)", FOR_USER},
    {"GPUJIT_WORKER", "the gpujit-worker program of project builds", FOR_USER},
    {"GPUJIT_NVRTC_LIBRARY", "the libnvrtc to load (default: the toolkit's)", FOR_USER},
    {"GPUJIT_NVJITLINK_LIBRARY", "the libnvJitLink to load (default: the toolkit's)", FOR_USER},
    {"GPUJIT_LIBCUDA", "the CUDA driver library to load (default libcuda.so.1)", FOR_USER},
    {"GPUJIT_NCU", "the ncu program of `gpujit ncu` and `run --ncu`", FOR_USER},
    {"GPUJIT_INCLUDE_DIR", "gpujit's device headers (gpujit/regions.cuh; default: beside gpujit, else installed)", FOR_USER},
    {"GPUJIT_INJECT_LIBRARY", "the injection library of `gpujit profile` (default: beside gpujit)", FOR_USER},
    {"NO_COLOR", "set and not empty: no colour in gpujit's messages", FOR_SYSTEM},
    {"XDG_CACHE_HOME", "the kernel cache is $XDG_CACHE_HOME/gpujit where GPUJIT_CACHE_DIR is unset", FOR_SYSTEM},
    {"HOME", "the kernel cache is ~/.cache/gpujit where neither GPUJIT_CACHE_DIR nor XDG_CACHE_HOME is set", FOR_SYSTEM},
    {"XDG_RUNTIME_DIR", "the build server's socket directory (else /tmp/gpujit-UID)", FOR_SYSTEM},
    {"XDG_STATE_HOME", "the last profile is kept in $XDG_STATE_HOME/gpujit (else ~/.local/state/gpujit)", FOR_SYSTEM},
    {"TMPDIR", "temporary files (ptxas, precompiled headers, profile records); default /tmp", FOR_SYSTEM},
    {"PATH", "where `gpujit profile` finds the program it runs, and `gpujit ncu` finds ncu", FOR_SYSTEM},
    {"CUDA_VISIBLE_DEVICES", "which GPUs the driver shows: part of the GPUs' identity that a build records", FOR_SYSTEM},
    {"CUDA_DEVICE_ORDER", "the driver's device numbering: part of the GPUs' identity that a build records", FOR_SYSTEM},
    {"GPUJIT_BENCH_OBSERVE", "measuring switch: 0 does not observe what NVRTC reads (then nothing is cached: the cost of observing)", MEASURING},
    {"GPUJIT_BENCH_CHECK", "measuring switch: letters b/u each helper of a group's check bound to a CPU other than the lookup's or not (default: u with 4+ CPUs, b with fewer), v the check's timeline logged (gpujit -v prints it), h no head start, w no watch of its own of a group looked up again in the process", MEASURING},
    {"GPUJIT_BENCH_LAUNCH_CALLBACKS", "measuring switch: 0 turns the profile's launch callbacks off, and words that change CUPTI's settings (docs/record-format.md)", MEASURING},
    {"GPUJIT_BENCH_REBIND", "measuring switch: full makes an in-process profile (gpujit.profile in a plain python) read every page of the loaded objects' writable data as it once did, not only the pages written; any value says what rebinding read and cost in a note", MEASURING},
    {"GPUJIT_CUPTI_LIBRARY", "set by `gpujit profile`: which libcupti its injection library loads", FOR_PROFILE},
    {"GPUJIT_PROFILE_DIR", "set by `gpujit profile`: where the profiled processes write their records", FOR_PROFILE},
    {"GPUJIT_PROFILE_FLAGS", "set by `gpujit profile`: lineinfo, nvrtc-trace, nsight", FOR_PROFILE},
    {"GPUJIT_PROFILE_MAX_EVENTS", "set by `gpujit profile`: per-launch records kept per process", FOR_PROFILE},
    {"GPUJIT_PROFILE_STEP", "set by `gpujit profile --step`: where steps come from (auto, api, torch, nvtx:NAME, kernel:NAME)", FOR_PROFILE},
    {"GPUJIT_PROFILE_REGIONS", "read by `gpujit profile`'s injection library: kernel-region events each module's buffer holds (default 1048576, 32 bytes each); 0 binds none", FOR_PROFILE},
    {"GPUJIT_PROFILE_SCHEDULE", "set by `gpujit profile --schedule`: which steps are recorded (wait=,warmup=,active=,repeat=,skip_first=,skip_first_wait=)", FOR_PROFILE},
    {"GPUJIT_PROFILE_PYTHON_HOOK", "set by `gpujit profile`: the Python start-up hook's directory", FOR_PROFILE},
    {"GPUJIT_PROFILE_REINJECTED", "set by the injection library in a child whose variables it put back", FOR_PROFILE},
    {"GPUJIT_PROFILE_FROM_HASH", "set by gpujit for its own ptxas under gpujit profile: the NVRTC PTX its input was made from", FOR_PROFILE},
    {"NV_NSIGHT_INJECTION_TRANSPORT_TYPE", "set by Nsight Systems in a program it profiles: `gpujit profile` under nsys says so", FOR_PROFILE},
    {"NV_TPS_LAUNCH_TOKEN", "set by Nsight tools in a program they profile: `gpujit profile` under them says so", FOR_PROFILE},
    {"GPUJIT_SYSFS_ROOT", "tests: another root for /sys when reading the GPUs' identity", FOR_TESTS},
};
#define NSETTINGS (sizeof(settings) / sizeof(settings[0]))

static const char *origin_name(gpujit_toolkit_origin o)
{
  switch (o) {
  case GPUJIT_TOOLKIT_CUDA_PATH: return "CUDA_PATH";
  case GPUJIT_TOOLKIT_CUDA_HOME: return "from CUDA_HOME";
  case GPUJIT_TOOLKIT_PIP: return "NVIDIA's pip wheels beside gpujit";
  default: return "default";
  }
}

/* The same words as gpujit.config()'s in Python. */
static const char *origin_key(gpujit_toolkit_origin o)
{
  switch (o) {
  case GPUJIT_TOOLKIT_CUDA_PATH: return "CUDA_PATH";
  case GPUJIT_TOOLKIT_CUDA_HOME: return "CUDA_HOME";
  case GPUJIT_TOOLKIT_PIP: return "pip";
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
    cli_limit_size(e->limit, sizeof(e->limit), bytes);
  if (!strcmp(e->limit_origin, "none"))
    e->limit_origin = "default";
  e->limit_bytes = bytes;
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

/* What gpujit would build and run with: gpujit version (text or JSON), found without a toolkit too.
 * The same keys as gpujit.config() in Python. */
typedef struct versions {
  effective e;
  int nvrtc[2], link[2], driver, devices;
  const char *toolkit_problem;
  char driver_problem[1024], versions_problem[1024];
  bool driver_ok;
} versions;

static void versions_get(versions *v)
{
  memset(v, 0, sizeof(*v));
  effective_get(&v->e);
  if (v->e.tk.problem)
    v->toolkit_problem = v->e.tk.problem;
  else if (gpujit_toolkit_versions(&v->nvrtc[0], &v->nvrtc[1], &v->link[0], &v->link[1]) < 0) {
    /* copied: the message is cleared below */
    snprintf(v->versions_problem, sizeof(v->versions_problem), "%s", gpujit_error_last());
    v->toolkit_problem = v->versions_problem;
  }
  if (gpujit_driver_version(&v->driver, &v->devices) == 0)
    v->driver_ok = true;
  else
    snprintf(v->driver_problem, sizeof(v->driver_problem), "%s", gpujit_error_last());
  gpujit_error_clear();
}

static cJSON *lib_json(cJSON *o, const char *name, const char *path, const int ver[2], const char *problem)
{
  cJSON *l = cJSON_AddObjectToObject(o, name);
  char vs[32];
  snprintf(vs, sizeof(vs), "%d.%d", ver[0], ver[1]);
  if (problem) {
    cJSON_AddNullToObject(l, "version");
    cJSON_AddNullToObject(l, "path");
  } else {
    cJSON_AddStringToObject(l, "version", vs);
    cJSON_AddStringToObject(l, "path", path);
  }
  return l;
}

static int version_json(cli_ctx *ctx, versions *v, const char *file)
{
  cJSON *o = cJSON_CreateObject(), *t, *d, *c;
  const char *origin = v->e.cache_origin && strcmp(v->e.cache_origin, "HOME") ? v->e.cache_origin : "default";
  cJSON_AddStringToObject(o, "gpujit", gpujit_version());
  t = cJSON_AddObjectToObject(o, "toolkit");
  cJSON_AddStringToObject(t, "root", v->e.tk.root ? v->e.tk.root : "");
  cJSON_AddStringToObject(t, "origin", origin_key(v->e.tk.origin));
  if (v->toolkit_problem)
    cJSON_AddStringToObject(t, "problem", v->toolkit_problem);
  else
    cJSON_AddNullToObject(t, "problem");
  cJSON_AddBoolToObject(lib_json(o, "nvrtc", v->e.tk.nvrtc, v->nvrtc, v->toolkit_problem), "from_env",
                        v->e.tk.nvrtc_from_env);
  cJSON_AddBoolToObject(lib_json(o, "nvjitlink", v->e.tk.nvjitlink, v->link, v->toolkit_problem), "from_env",
                        v->e.tk.nvjitlink_from_env);
  if (v->e.tk.ptxas)
    cJSON_AddStringToObject(o, "ptxas", v->e.tk.ptxas);
  else
    cJSON_AddNullToObject(o, "ptxas");
  if (v->e.tk.cupti)
    cJSON_AddStringToObject(o, "cupti", v->e.tk.cupti);
  else
    cJSON_AddNullToObject(o, "cupti");
  d = cJSON_AddObjectToObject(o, "driver");
  if (v->driver_ok) {
    char vs[32];
    snprintf(vs, sizeof(vs), "%d.%d", v->driver / 1000, v->driver % 1000 / 10);
    cJSON_AddStringToObject(d, "version", vs);
    cJSON_AddNumberToObject(d, "devices", v->devices);
    cJSON_AddNullToObject(d, "problem");
  } else {
    cJSON_AddNullToObject(d, "version");
    cJSON_AddNumberToObject(d, "devices", 0);
    cJSON_AddStringToObject(d, "problem", v->driver_problem);
  }
  c = cJSON_AddObjectToObject(o, "cache");
  cJSON_AddStringToObject(c, "path", v->e.cache_dir ? v->e.cache_dir : "");
  cJSON_AddStringToObject(c, "path_source", origin);
  cJSON_AddNumberToObject(c, "limit_bytes", (double)v->e.limit_bytes);
  cJSON_AddStringToObject(c, "limit_source", v->e.limit_origin);
  return cli_json_emit(ctx, o, "gpujit-version", file);
}

int cli_version(cli_ctx *ctx, int argc, char **argv)
{
  bool json = false;
  const char *file = NULL;
  versions v;
  cli_args a = {.argc = argc, .i = 1, .argv = argv, .cmd = "version"};
  int rc = EXIT_OK;
  for (; a.i < argc; a.i++) {
    if (cli_json_opt(&a, &json, &file))
      continue;
    if (cli_opt(&a, "-h", false) || cli_opt(&a, "--help", false)) {
      printf("usage: gpujit version [--json[=FILE]]\n\n"
             "gpujit's version; the toolkit, NVRTC, nvJitLink, ptxas, CUPTI, CUDA driver and cache it\n"
             "would use, and where each was found (--json: docs/json.md, gpujit-version).\n");
      return EXIT_OK;
    }
    if (cli_is_option(&a))
      return cli_unknown_option(ctx, &a, "version");
    return cli_usage_error(ctx, "version", "unexpected argument '%s'", argv[a.i]);
  }
  versions_get(&v);
  if (json) {
    rc = version_json(ctx, &v, file);
    free(v.e.cache_dir);
    return rc;
  }
  printf("gpujit %s\n", gpujit_version());
  if (v.toolkit_problem) {
    printf("toolkit none found: %s\nNVRTC none\nnvJitLink none\n", v.toolkit_problem);
  } else {
    printf("toolkit %s (%s)\n", v.e.tk.root, origin_name(v.e.tk.origin));
    printf("NVRTC %d.%d (%s%s)\n", v.nvrtc[0], v.nvrtc[1], v.e.tk.nvrtc,
           v.e.tk.nvrtc_from_env ? ", GPUJIT_NVRTC_LIBRARY" : "");
    printf("nvJitLink %d.%d (%s%s)\n", v.link[0], v.link[1], v.e.tk.nvjitlink,
           v.e.tk.nvjitlink_from_env ? ", GPUJIT_NVJITLINK_LIBRARY" : "");
    printf("ptxas %s\n", v.e.tk.ptxas ? v.e.tk.ptxas : "none (lean modules take NVRTC's cubin; pip install nvidia-cuda-nvcc)");
  }
  printf("CUPTI %s\n", v.e.tk.cupti ? v.e.tk.cupti : "none (gpujit profile records no GPU time)");
  if (v.driver_ok)
    printf("driver %d.%d (%d device%s)\n", v.driver / 1000, v.driver % 1000 / 10, v.devices, v.devices == 1 ? "" : "s");
  else
    printf("driver none: %s\n", v.driver_problem);
  printf("cache %s (%s)\n", v.e.cache_dir ? v.e.cache_dir : "?",
         v.e.cache_origin && strcmp(v.e.cache_origin, "HOME") ? v.e.cache_origin : "default");
  free(v.e.cache_dir);
  return EXIT_OK;
}

static void env_help(void)
{
  printf("usage: gpujit env [--all] [--names] [--json[=FILE]]\n\n"
         "Every environment variable gpujit reads that a user sets, what it does, and its value: a\n"
         "variable that is set shows its value (environment); one that is unset says so, with the\n"
         "value in effect instead and where that comes from (default, the toolkit's, NVIDIA's pip\n"
         "wheels).\n"
         "  --all      also the measuring switches (for benchmarking gpujit itself), the variables\n"
         "             `gpujit profile` sets for the programs it runs, and those of gpujit's tests\n"
         "             (one of them that is set is always shown)\n"
         "  --names    the names alone, one per line: every variable gpujit reads\n"
         "  --json     one document: every variable, its group, whether it is set, its value and\n"
         "             the value in effect (docs/json.md, gpujit-env)\n");
}

typedef struct env_row {
  const setting *s;
  const char *set;       /* its value in the environment, or NULL: unset (or empty) */
  const char *effective; /* unset: the value in effect instead, or NULL */
  const char *origin;
  const char *why;       /* set, but not in effect: why */
} env_row;

static void env_row_get(const effective *e, const setting *s, env_row *r, char *why, size_t n)
{
  const char *v = getenv(s->name);
  memset(r, 0, sizeof(*r));
  r->s = s;
  r->origin = "environment";
  if (v && *v) {
    r->set = v;
    r->why = not_in_effect(s->name, v, why, n);
  } else {
    r->effective = effective_value(e, s->name, &r->origin);
  }
}

static void env_print_row(const env_row *r)
{
  printf("%-31s ", r->s->name);
  if (r->set) { /* escaped: a value with a line break could print a line that reads as another variable */
    cli_put_escaped(stdout, r->set);
    printf("  (environment%s", r->why ? "; NOT IN EFFECT, " : "");
    if (r->why)
      cli_put_escaped(stdout, r->why);
    printf(")");
  } else if (r->effective) {
    printf("unset; in effect: ");
    cli_put_escaped(stdout, r->effective);
    printf("  (%s)", r->origin);
  } else {
    printf("unset");
  }
  printf("%s\n  %s\n", r->s->group == MEASURING ? "  [measuring switch]" : "", r->s->what);
}

static int env_json(cli_ctx *ctx, const effective *e, const char *file)
{
  cJSON *o = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(o, "variables");
  char why[1024];
  for (size_t i = 0; i < NSETTINGS; i++) {
    env_row r;
    cJSON *v = cJSON_CreateObject();
    env_row_get(e, &settings[i], &r, why, sizeof(why));
    cJSON_AddStringToObject(v, "name", r.s->name);
    cJSON_AddStringToObject(v, "group", group_names[r.s->group]);
    cJSON_AddBoolToObject(v, "set", r.set != NULL);
    if (r.set)
      cJSON_AddStringToObject(v, "value", r.set);
    else
      cJSON_AddNullToObject(v, "value");
    if (r.set ? !r.why : r.effective != NULL)
      cJSON_AddStringToObject(v, "in_effect", r.set ? r.set : r.effective);
    else
      cJSON_AddNullToObject(v, "in_effect");
    cJSON_AddStringToObject(v, "origin", r.set ? "environment" : r.effective ? r.origin : "unset");
    if (r.why)
      cJSON_AddStringToObject(v, "not_in_effect", r.why);
    else
      cJSON_AddNullToObject(v, "not_in_effect");
    cJSON_AddStringToObject(v, "what", r.s->what);
    cJSON_AddItemToArray(arr, v);
  }
  if (e->tk.problem)
    cJSON_AddStringToObject(o, "toolkit_problem", e->tk.problem);
  else
    cJSON_AddNullToObject(o, "toolkit_problem");
  return cli_json_emit(ctx, o, "gpujit-env", file);
}

int cmd_env(cli_ctx *ctx, int argc, char **argv)
{
  bool names = false, all = false, json = false;
  const char *json_file = NULL;
  size_t hidden = 0;
  effective e;
  char why[1024];
  int rc = EXIT_OK;
  cli_args a = {.argc = argc, .i = 1, .argv = argv, .cmd = "env"};
  for (; a.i < argc; a.i++) {
    if (cli_end_of_options(&a))
      continue;
    if (cli_opt(&a, "--names", false))
      names = true;
    else if (cli_opt(&a, "--all", false))
      all = true;
    else if (cli_json_opt(&a, &json, &json_file))
      continue;
    else if (cli_opt(&a, "-h", false) || cli_opt(&a, "--help", false)) {
      env_help();
      return EXIT_OK;
    } else if (cli_is_option(&a))
      return cli_unknown_option(ctx, &a, "env");
    else
      return cli_usage_error(ctx, "env", "unexpected argument '%s'", argv[a.i]);
  }
  if (names && json)
    return cli_usage_error(ctx, "env", "--names and --json: give one (--json lists every name)");
  if (names) {
    for (size_t i = 0; i < NSETTINGS; i++)
      printf("%s\n", settings[i].name);
    return EXIT_OK;
  }
  effective_get(&e);
  if (json) {
    rc = env_json(ctx, &e, json_file);
    free(e.cache_dir);
    return rc;
  }
  for (size_t i = 0; i < NSETTINGS; i++) {
    env_row r;
    env_row_get(&e, &settings[i], &r, why, sizeof(why));
    if (settings[i].group > FOR_SYSTEM && !all && !r.set) {
      hidden++;
      continue;
    }
    env_print_row(&r);
  }
  if (hidden)
    printf("\n(%zu more, unset: measuring switches, variables `gpujit profile` sets, test hooks: gpujit env --all)\n",
           hidden);
  if (e.tk.problem) {
    printf("\nno toolkit: ");
    cli_put_escaped(stdout, e.tk.problem);
    printf("\n");
  }
  free(e.cache_dir);
  return rc;
}
