/* Where the toolkit is, what identifies it, and run-time loading of NVRTC and nvJitLink
 * (see toolkit.h for why). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <glob.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "compile/observe/observe.h"
#include "compile/toolkit/toolkit.h"

#ifndef GPUJIT_CUDA_ROOT
#  define GPUJIT_CUDA_ROOT "/usr/local/cuda"
#endif
#ifndef GPUJIT_CUDA_MAJOR
#  define GPUJIT_CUDA_MAJOR 13
#endif
#define GPUJIT__STR2(x) #x
#define GPUJIT__STR(x) GPUJIT__STR2(x)

/* The root as named ($CUDA_PATH, $CUDA_HOME, the built-in one) and as it is: /usr/local/cuda and
 * /usr/local/cuda-13.0 (a symlink) are one toolkit, spelled one way in every path gpujit derives
 * from it (include directories, dependency records, keys). */
static pthread_mutex_t root_lock = PTHREAD_MUTEX_INITIALIZER;
static char root_named[PATH_MAX], root_real[PATH_MAX];
static gpujit_toolkit_origin root_origin;
static char pip_root[PATH_MAX];
static pthread_once_t pip_once = PTHREAD_ONCE_INIT;

/* Safe at fork: `root_lock` is taken across fork() (held only around a comparison and a
 * realpath), so a child forked by another thread while it was held neither waits on it for ever
 * nor sees the root half written; let go on both sides. */
static void root_fork_prepare(void) { pthread_mutex_lock(&root_lock); }
static void root_fork_release(void) { pthread_mutex_unlock(&root_lock); }
__attribute__((constructor)) static void root_fork_safe(void)
{
  pthread_atfork(root_fork_prepare, root_fork_release, root_fork_release);
}

/* NVIDIA's pip toolkits (nvidia-cuda-nvrtc, nvidia-nvjitlink, nvidia-cuda-cccl, cuda-toolkit),
 * used where no toolkit is named ($CUDA_PATH, $CUDA_HOME) and none is at the built-in root:
 * site-packages/nvidia/cu13 (or cu12) with lib/, include/ and, with nvidia-cuda-nvcc, bin/ —
 * laid out as a toolkit root. Found in the site-packages gpujit itself was installed into (the
 * wheel's extension, library and command sit in site-packages/gpujit/; bin/gpujit is a launcher
 * that execs that command), as CuPy and cuda.core find the same wheels. */
static bool pip_candidate(const char *site)
{
  static const char *const majors[] = {GPUJIT__STR(GPUJIT_CUDA_MAJOR), "13", "12"};
  for (size_t i = 0; i < sizeof(majors) / sizeof(majors[0]); i++) {
    char lib[PATH_MAX + 64];
    snprintf(lib, sizeof(lib), "%s/nvidia/cu%s/lib/libnvrtc.so.%s", site, majors[i], majors[i]);
    if (access(lib, R_OK) == 0) {
      snprintf(pip_root, sizeof(pip_root), "%s/nvidia/cu%s", site, majors[i]);
      return true;
    }
  }
  return false;
}

static bool has_nvrtc(const char *root);

/* Only where the built-in root holds no NVRTC (looked at once, with the pip wheels). */
static void find_pip_root(void)
{
  Dl_info info;
  char self[PATH_MAX], real[PATH_MAX];
  const char *from[2] = {NULL, NULL};
  ssize_t n;
  if (has_nvrtc(GPUJIT_CUDA_ROOT))
    return;
  if (dladdr((void *)find_pip_root, &info) && info.dli_fname && strchr(info.dli_fname, '/'))
    from[0] = info.dli_fname;
  if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) > 0)
    self[n] = '\0', from[1] = self;
  for (int f = 0; f < 2; f++) {
    char *slash;
    if (!from[f] || !realpath(from[f], real))
      continue;
    for (int up = 0; up < 4 && (slash = strrchr(real, '/')) != NULL && slash != real; up++) {
      *slash = '\0'; /* the directory above */
      if (pip_candidate(real))
        return;
    }
  }
}

/* Whether a toolkit root holds an NVRTC (an empty or half-removed directory is no toolkit). */
static bool has_nvrtc(const char *root)
{
  glob_t g;
  char pattern[PATH_MAX + 32];
  bool found;
  snprintf(pattern, sizeof(pattern), "%s/lib*/libnvrtc.so.*", root);
  found = glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc > 0;
  globfree(&g);
  return found;
}

/* The root named by the environment ($CUDA_PATH, else $CUDA_HOME), else the pip wheels, else the
 * built-in one; `origin` says which. */
static const char *named_root(gpujit_toolkit_origin *origin)
{
  const char *env = getenv("CUDA_PATH");
  *origin = GPUJIT_TOOLKIT_CUDA_PATH;
  if (!env || !*env)
    env = getenv("CUDA_HOME"), *origin = GPUJIT_TOOLKIT_CUDA_HOME;
  if (env && *env)
    return env;
  pthread_once(&pip_once, find_pip_root); /* looked for once: every build asks for the root */
  *origin = pip_root[0] ? GPUJIT_TOOLKIT_PIP : GPUJIT_TOOLKIT_DEFAULT;
  return pip_root[0] ? pip_root : GPUJIT_CUDA_ROOT;
}

const char *gpujit__cuda_root(void)
{
  gpujit_toolkit_origin origin;
  const char *named = named_root(&origin);
  char real[PATH_MAX];
  pthread_mutex_lock(&root_lock);
  if (strcmp(named, root_named) != 0) {
    snprintf(root_named, sizeof(root_named), "%s", named);
    snprintf(root_real, sizeof(root_real), "%s", realpath(named, real) ? real : named);
  }
  root_origin = origin;
  pthread_mutex_unlock(&root_lock);
  return root_real;
}

typedef struct lib_slot {
  const char *env;  /* override variable */
  const char *stem; /* "libnvrtc" */
  const char *pip;  /* the wheel that ships it */
  char path[PATH_MAX];
  bool from_env;    /* the override named it */
  bool missing;     /* a toolkit root was named ($CUDA_PATH, $CUDA_HOME) and it is not in it */
  gpujit_toolkit_origin origin;
  pthread_once_t path_once;
} lib_slot;

static lib_slot nvrtc_slot = {"GPUJIT_NVRTC_LIBRARY", "libnvrtc", "nvidia-cuda-nvrtc", "", false, false, 0, PTHREAD_ONCE_INIT};
static lib_slot link_slot = {"GPUJIT_NVJITLINK_LIBRARY", "libnvJitLink", "nvidia-nvjitlink", "", false, false, 0,
                             PTHREAD_ONCE_INIT};

/* $OVERRIDE, else the toolkit's lib64/, else lib/; else, where the root was only the built-in one,
 * the bare soname (ld.so's search). A root the user named that lacks the library is no toolkit:
 * never another NVRTC found elsewhere in its place. */
static void find(lib_slot *s)
{
  const char *env = getenv(s->env), *root = gpujit__cuda_root();
  gpujit_toolkit_origin origin;
  static const char *const dirs[] = {"lib64", "lib", "targets/x86_64-linux/lib"};
  char cand[PATH_MAX];
  if (env && *env) {
    snprintf(s->path, sizeof(s->path), "%s", env);
    s->from_env = true;
    return;
  }
  named_root(&origin);
  s->origin = origin;
  /* the CUDA major version is the toolkit's, found at run time: this build's first, then 13, 12 */
  static const char *const majors[] = {GPUJIT__STR(GPUJIT_CUDA_MAJOR), "13", "12"};
  for (size_t m = 0; m < sizeof(majors) / sizeof(majors[0]); m++)
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
      snprintf(cand, sizeof(cand), "%s/%s/%s.so.%s", root, dirs[i], s->stem, majors[m]);
      if (access(cand, R_OK) == 0) {
        if (!realpath(cand, s->path))
          snprintf(s->path, sizeof(s->path), "%s", cand);
        return;
      }
    }
  if (origin == GPUJIT_TOOLKIT_CUDA_PATH || origin == GPUJIT_TOOLKIT_CUDA_HOME) {
    snprintf(s->path, sizeof(s->path), "%s/lib64/%s.so.%s", root, s->stem, GPUJIT__STR(GPUJIT_CUDA_MAJOR));
    s->missing = true;
    return;
  }
  snprintf(s->path, sizeof(s->path), "%s.so.%s", s->stem, GPUJIT__STR(GPUJIT_CUDA_MAJOR));
}

static void find_nvrtc(void) { find(&nvrtc_slot); }
static void find_link(void) { find(&link_slot); }

const char *gpujit__nvrtc_library_path(void)
{
  pthread_once(&nvrtc_slot.path_once, find_nvrtc);
  return nvrtc_slot.path;
}

const char *gpujit__nvjitlink_library_path(void)
{
  pthread_once(&link_slot.path_once, find_link);
  return link_slot.path;
}

static char cupti_lib[PATH_MAX];
static pthread_once_t cupti_once = PTHREAD_ONCE_INIT;

static void find_cupti(void)
{
  static const char *const sub[] = {"lib64", "lib", "extras/CUPTI/lib64", "targets/x86_64-linux/lib"};
  static const char *const names[] = {"libcupti.so", "libcupti.so.13", "libcupti.so.12"}; /* pip: versioned only */
  char cand[PATH_MAX];
  for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
    for (size_t i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
      snprintf(cand, sizeof(cand), "%s/%s/%s", gpujit__cuda_root(), sub[i], names[k]);
      if (access(cand, R_OK) == 0) {
        if (!realpath(cand, cupti_lib))
          snprintf(cupti_lib, sizeof(cupti_lib), "%s", cand);
        return;
      }
    }
}

/* The one search: the timing layer and the profile's injection library load the same CUPTI. */
const char *gpujit__cupti_library_path(void)
{
  pthread_once(&cupti_once, find_cupti);
  return cupti_lib[0] ? cupti_lib : NULL;
}

static char ptxas_exe[PATH_MAX];
static pthread_once_t ptxas_once = PTHREAD_ONCE_INIT;

static void find_ptxas(void)
{
  snprintf(ptxas_exe, sizeof(ptxas_exe), "%s/bin/ptxas", gpujit__cuda_root());
  if (access(ptxas_exe, X_OK) != 0)
    ptxas_exe[0] = '\0';
}

/* Looked for once: every build's key asks whether the lean path applies, hits included. */
const char *gpujit__ptxas_path(void)
{
  pthread_once(&ptxas_once, find_ptxas);
  return ptxas_exe[0] ? ptxas_exe : NULL;
}

static gpujit__nvrtc_api nvrtc_api;
static gpujit__nvjitlink_api link_api;
static pthread_once_t nvrtc_once = PTHREAD_ONCE_INIT, link_once = PTHREAD_ONCE_INIT;
static char nvrtc_error[1024], link_error[1024];
static int nvrtc_code, link_code; /* GPUJIT_ENOTOOLKIT, or GPUJIT_ENVRTC / GPUJIT_ELINK: too old */

#if GPUJIT_CUDA_MAJOR >= 13
#define GPUJIT__FIX "pip install 'gpujit[cu" GPUJIT__STR(GPUJIT_CUDA_MAJOR) "]' (NVIDIA's NVRTC, nvJitLink, CCCL and ptxas wheels)"
#else /* CUDA 12's wheels spread a toolkit over directories gpujit does not search: no extra brings one */
#define GPUJIT__FIX "install a CUDA " GPUJIT__STR(GPUJIT_CUDA_MAJOR) " toolkit (this gpujit was built against CUDA " \
  GPUJIT__STR(GPUJIT_CUDA_MAJOR) "; a gpujit built against CUDA 13 takes NVIDIA's pip wheels: gpujit[cu13])"
#endif

/* Why `s` is not there and what to do, in one line (dlerr: the loader's reason, or NULL). */
static void missing_message(const lib_slot *s, const char *what, const char *dlerr, char *out, size_t size)
{
  const char *var = s->origin == GPUJIT_TOOLKIT_CUDA_HOME ? "CUDA_HOME" : "CUDA_PATH";
  if (s->from_env)
    snprintf(out, size, "no CUDA toolkit: %s=%s cannot be loaded (%s); name a %s.so.N there, or unset it to use the "
             "toolkit's", s->env, s->path, dlerr ? dlerr : "no such file", s->stem);
  else if (s->missing)
    snprintf(out, size, "no CUDA toolkit at %s=%s (no lib64/%s.so.* or lib/%s.so.* in it): set %s to a toolkit root "
             "(the directory holding include/ and lib64/), unset it to use " GPUJIT_CUDA_ROOT " or NVIDIA's pip "
             "wheels, or " GPUJIT__FIX, var, root_named, s->stem, s->stem, var);
  else if (s->origin == GPUJIT_TOOLKIT_DEFAULT && !has_nvrtc(GPUJIT_CUDA_ROOT))
    snprintf(out, size, "no CUDA toolkit found (%s not at " GPUJIT_CUDA_ROOT ", not in NVIDIA's pip wheels beside "
             "gpujit, not on the loader's path): set CUDA_PATH to a toolkit root, or " GPUJIT__FIX, what);
  else
    snprintf(out, size, "no usable CUDA toolkit: cannot load %s (%s): %s; set CUDA_PATH to another toolkit root, or "
             "pip install %s", what, s->path, dlerr ? dlerr : "not found", s->pip);
}

/* dlopen the slot's library and fill `slots` (a table of function pointers) from `names`, in order. */
static void *load_table(const char *what, lib_slot *s, const char *const *names, void **slots, size_t n,
                        char *error, size_t error_size, int *code)
{
  void *h = dlopen(s->path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    missing_message(s, what, dlerror(), error, error_size);
    *code = GPUJIT_ENOTOOLKIT;
    return NULL;
  }
  for (size_t i = 0; i < n; i++)
    if (!(slots[i] = dlsym(h, names[i]))) {
      snprintf(error, error_size, "%s at %s lacks %s (too old?)", what, s->path, names[i]);
      return NULL;
    }
  return h;
}

int gpujit__toolkit_check(void)
{
  char msg[1024];
  gpujit__nvrtc_library_path();
  if (nvrtc_slot.missing || (nvrtc_slot.from_env && strchr(nvrtc_slot.path, '/') && access(nvrtc_slot.path, R_OK))) {
    missing_message(&nvrtc_slot, "NVRTC", NULL, msg, sizeof(msg));
    return gpujit__error(GPUJIT_ENOTOOLKIT, "%s", msg);
  }
  return 0;
}

int gpujit_toolkit_info_get(gpujit_toolkit_info *out)
{
  static _Thread_local char problem[1024];
  if (!out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_toolkit_info_get: NULL out");
  memset(out, 0, sizeof(*out));
  out->root = gpujit__cuda_root();
  pthread_mutex_lock(&root_lock);
  out->origin = root_origin;
  pthread_mutex_unlock(&root_lock);
  out->nvrtc = gpujit__nvrtc_library_path();
  out->nvjitlink = gpujit__nvjitlink_library_path();
  out->nvrtc_from_env = nvrtc_slot.from_env;
  out->nvjitlink_from_env = link_slot.from_env;
  out->ptxas = gpujit__ptxas_path();
  out->cupti = gpujit__cupti_library_path();
  if (gpujit__toolkit_check() < 0) {
    snprintf(problem, sizeof(problem), "%s", gpujit_error_last());
    gpujit_error_clear();
    out->problem = problem;
  }
  return 0;
}

#define GPUJIT__NAME(name) #name,
static const char *const nvrtc_names[] = {GPUJIT__NVRTC_FUNCS(GPUJIT__NAME)};
static const char *const link_names[] = {GPUJIT__NVJITLINK_FUNCS(GPUJIT__NAME)};
static const char *const pch_names[] = {GPUJIT__NVRTC_PCH_FUNCS(GPUJIT__NAME)};
#undef GPUJIT__NAME
static gpujit__nvrtc_pch_api pch_api;
static bool pch_complete;

/* The API structs hold only function pointers, in the order of their name lists. */
static void load_nvrtc(void)
{
  void *h;
  gpujit__nvrtc_library_path();
  nvrtc_code = GPUJIT_ENVRTC;
  h = load_table("NVRTC", &nvrtc_slot, nvrtc_names, (void **)&nvrtc_api, sizeof(nvrtc_names) / sizeof(nvrtc_names[0]),
                 nvrtc_error, sizeof(nvrtc_error), &nvrtc_code);
  if (!h)
    return;
  gpujit__observe_install(h);
  pch_complete = true;
  for (size_t i = 0; i < sizeof(pch_names) / sizeof(pch_names[0]); i++)
    pch_complete &= (((void **)&pch_api)[i] = dlsym(h, pch_names[i])) != NULL;
}

const gpujit__nvrtc_pch_api *gpujit__nvrtc_pch_api_get(void)
{
  pthread_once(&nvrtc_once, load_nvrtc);
  return !nvrtc_error[0] && pch_complete ? &pch_api : NULL;
}

static void load_link(void)
{
  gpujit__nvjitlink_library_path();
  link_code = GPUJIT_ELINK;
  void *h = load_table("nvJitLink", &link_slot, link_names, (void **)&link_api,
                       sizeof(link_names) / sizeof(link_names[0]), link_error, sizeof(link_error), &link_code);
  if (h)
    gpujit__observe_install_link(h);
}

_Static_assert(sizeof(gpujit__nvrtc_api) == sizeof(nvrtc_names) / sizeof(nvrtc_names[0]) * sizeof(void *),
               "gpujit__nvrtc_api must hold exactly the listed function pointers");
_Static_assert(sizeof(gpujit__nvrtc_pch_api) == sizeof(pch_names) / sizeof(pch_names[0]) * sizeof(void *),
               "gpujit__nvrtc_pch_api must hold exactly the listed function pointers");
_Static_assert(sizeof(gpujit__nvjitlink_api) == sizeof(link_names) / sizeof(link_names[0]) * sizeof(void *),
               "gpujit__nvjitlink_api must hold exactly the listed function pointers");

int gpujit__nvrtc_api_get(const gpujit__nvrtc_api **out)
{
  pthread_once(&nvrtc_once, load_nvrtc);
  if (nvrtc_error[0])
    return gpujit__error(nvrtc_code, "%s", nvrtc_error);
  *out = &nvrtc_api;
  return 0;
}

bool gpujit__nvjitlink_loaded(void) { return __atomic_load_n(&link_api.nvJitLinkVersion, __ATOMIC_ACQUIRE) != NULL; }

int gpujit__nvjitlink_api_get(const gpujit__nvjitlink_api **out)
{
  pthread_once(&link_once, load_link);
  if (link_error[0])
    return gpujit__error(link_code, "%s", link_error);
  *out = &link_api;
  return 0;
}
