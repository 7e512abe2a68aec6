/*
 * A program for `gpujit profile` to watch: it compiles with NVRTC as frameworks do, resolved
 * with dlopen + dlsym (built as profile_target_dl) or linked directly (profile_target_direct,
 * -DDIRECT), and links with nvJitLink. Steps, in order, from argv:
 *   compile NAME      compile a kernel named NAME (the same source each time: a repeat)
 *   distinct NAME     compile a kernel whose source differs by NAME
 *   fail              compile a source with an error
 *   threads N         N threads compiling distinct kernels at once
 *   fork              fork a child that compiles one kernel ("child") and exits 0
 *   link              compile to LTO-IR and link it with nvJitLink
 *   load              compile "loaded" to CUBIN and PTX and load them through the stand-in driver
 *                     (tests/profile/fake_driver.c): linked directly (profile_target_direct), else
 *                     through dlsym, cuGetProcAddress (PTX, and cuLibraryLoadData) and a library
 *                     loaded RTLD_LOCAL ($PROFILE_TARGET_DRIVER, $PROFILE_TARGET_LOADER)
 *   exec PATH ARGS... replace this image by PATH with ARGS (the rest of argv)
 *   spawn-clean PATH ARGS...  run PATH with ARGS in a child whose environment is empty, wait
 *   reuse-fds FILE    close every descriptor from 3 up (closerange) and open FILE, kept open: the
 *                     descriptor numbers gpujit may have had are now the program's own file
 *   fork-storm N      while a thread creates and destroys programs in a loop, fork N children that
 *                     create one each and exit; prints "fork-storm hung H" (children not done in 10 s),
 *                     and exits 95 when H > 0
 *   exit N            exit with status N now
 *   signal N          raise signal N now
 * It prints what it did, one line per compile, so the tests compare the records with it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>
#include <nvJitLink.h>
#include <nvrtc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef nvrtcResult (*create_t)(nvrtcProgram *, const char *, const char *, int, const char *const *,
                                const char *const *);
typedef nvrtcResult (*compile_t)(nvrtcProgram, int, const char *const *);
typedef nvrtcResult (*destroy_t)(nvrtcProgram *);
typedef nvrtcResult (*size_t_fn)(nvrtcProgram, size_t *);
typedef nvrtcResult (*get_t)(nvrtcProgram, char *);

static create_t create;
static compile_t compile;
static destroy_t destroy;
static size_t_fn lto_size, cubin_size, ptx_size;
static get_t lto, cubin, ptx;

static void resolve(void)
{
#ifdef DIRECT
  create = nvrtcCreateProgram;
  compile = nvrtcCompileProgram;
  destroy = nvrtcDestroyProgram;
  lto_size = nvrtcGetLTOIRSize;
  lto = nvrtcGetLTOIR;
  cubin_size = nvrtcGetCUBINSize;
  cubin = nvrtcGetCUBIN;
  ptx_size = nvrtcGetPTXSize;
  ptx = nvrtcGetPTX;
#else
  const char *path = getenv("PROFILE_TARGET_NVRTC");
  void *h = dlopen(path ? path : "libnvrtc.so.13", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    exit(90);
  }
  create = (create_t)dlsym(h, "nvrtcCreateProgram");
  compile = (compile_t)dlsym(h, "nvrtcCompileProgram");
  destroy = (destroy_t)dlsym(h, "nvrtcDestroyProgram");
  lto_size = (size_t_fn)dlsym(h, "nvrtcGetLTOIRSize");
  lto = (get_t)dlsym(h, "nvrtcGetLTOIR");
  cubin_size = (size_t_fn)dlsym(h, "nvrtcGetCUBINSize");
  cubin = (get_t)dlsym(h, "nvrtcGetCUBIN");
  ptx_size = (size_t_fn)dlsym(h, "nvrtcGetPTXSize");
  ptx = (get_t)dlsym(h, "nvrtcGetPTX");
#endif
}

static void kernel(char *out, size_t n, const char *tag)
{
  snprintf(out, n, "extern \"C\" __global__ void k_%s(float *x) { x[threadIdx.x] *= 2.0f; }\n", tag);
}

typedef int (*load_data_t)(void **, const void *);
typedef int (*load_data_ex_t)(void **, const void *, unsigned, void *, void **);
typedef int (*lib_data_t)(void **, const void *, void *, void **, unsigned, void *, void **, unsigned);
typedef int (*gpa_t)(const char *, void **, int, unsigned long long, int *);
#ifdef DIRECT
int cuModuleLoadData(void **m, const void *image);
#endif

/* Compile "loaded" to CUBIN and PTX and load them (see the steps above). */
static void load_images(void)
{
  const char *opts[] = {"--gpu-architecture=sm_90"};
  char src[256], *bin, *text;
  size_t nb = 0, nt = 0;
  nvrtcProgram p;
  void *m = NULL;
  kernel(src, sizeof(src), "loaded");
  if (create(&p, src, "loaded", 0, NULL, NULL) != NVRTC_SUCCESS || compile(p, 1, opts) != NVRTC_SUCCESS ||
      cubin_size(p, &nb) != NVRTC_SUCCESS || ptx_size(p, &nt) != NVRTC_SUCCESS)
    exit(91);
  bin = malloc(nb), text = malloc(nt);
  cubin(p, bin), ptx(p, text);
  destroy(&p);
#ifdef DIRECT
  if (cuModuleLoadData(&m, bin))
    exit(93);
  printf("load direct 0\n");
#else
  {
    void *drv = dlopen(getenv("PROFILE_TARGET_DRIVER"), RTLD_NOW | RTLD_LOCAL), *lib = NULL;
    void *loader = dlopen(getenv("PROFILE_TARGET_LOADER"), RTLD_NOW | RTLD_LOCAL);
    load_data_t load = drv ? (load_data_t)dlsym(drv, "cuModuleLoadData") : NULL;
    gpa_t gpa = drv ? (gpa_t)dlsym(drv, "cuGetProcAddress_v2") : NULL;
    load_data_ex_t load_ex = NULL;
    lib_data_t lib_load = NULL;
    int (*loader_load)(const void *) = loader ? (int (*)(const void *))dlsym(loader, "loader_load") : NULL;
    if (!load || !gpa || !loader_load || gpa("cuModuleLoadDataEx", (void **)&load_ex, 13000, 0, NULL) ||
        gpa("cuLibraryLoadData", (void **)&lib_load, 13000, 0, NULL))
      exit(92);
    int r[4] = {load(&m, bin), load_ex(&m, text, 0, NULL, NULL), lib_load(&lib, bin, NULL, NULL, 0, NULL, NULL, 0),
                loader_load(bin)};
    printf("load dlsym %d\nload proc-address ptx %d\nload proc-address library %d\nload local-library %d\n", r[0], r[1],
           r[2], r[3]);
    if (r[0] || r[1] || r[2] || r[3])
      exit(93); /* a load the program made failed */
  }
#endif
  fflush(stdout);
  free(bin), free(text);
}

static int one(const char *name, const char *src, int nopt, const char *const *opts)
{
  nvrtcProgram p;
  nvrtcResult r;
  if (create(&p, src, name, 0, NULL, NULL) != NVRTC_SUCCESS)
    return -1;
  r = compile(p, nopt, opts);
  printf("compiled %s result %d\n", name, (int)r);
  fflush(stdout);
  destroy(&p);
  return (int)r;
}

static void *thread_main(void *arg)
{
  char src[256], name[64];
  const char *opts[] = {"--gpu-architecture=compute_90"};
  snprintf(name, sizeof(name), "thread%ld", (long)(intptr_t)arg);
  kernel(src, sizeof(src), name);
  one(name, src, 1, opts);
  return NULL;
}

static volatile int storm_stop;

static void *storm_thread(void *arg)
{
  (void)arg;
  while (!storm_stop) {
    nvrtcProgram p;
    if (create(&p, "__global__ void s() {}", "storm", 0, NULL, NULL) == NVRTC_SUCCESS)
      destroy(&p);
  }
  return NULL;
}

/* Children that wait on a lock the parent's other thread held at the fork never end. */
static int fork_storm(int n)
{
  pthread_t t;
  int hung = 0;
  pthread_create(&t, NULL, storm_thread, NULL);
  for (int i = 0; i < n; i++) {
    pid_t pid = fork();
    int st, waited = 0;
    if (pid == 0) {
      nvrtcProgram p;
      if (create(&p, "__global__ void c() {}", "forked", 0, NULL, NULL) == NVRTC_SUCCESS)
        destroy(&p);
      exit(0);
    }
    while (waitpid(pid, &st, WNOHANG) == 0 && waited < 10000) {
      usleep(1000);
      waited++;
    }
    if (waited >= 10000) {
      hung++;
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
    }
  }
  storm_stop = 1;
  pthread_join(t, NULL);
  return hung;
}

int main(int argc, char **argv)
{
  const char *opts[] = {"--gpu-architecture=compute_90", "-default-device"};
  char src[256];
  resolve();
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
    if (!strcmp(a, "compile")) {
      kernel(src, sizeof(src), "same");
      one(v, src, 2, opts), i++;
    } else if (!strcmp(a, "distinct")) {
      kernel(src, sizeof(src), v);
      one(v, src, 2, opts), i++;
    } else if (!strcmp(a, "fail")) {
      one("broken", "extern \"C\" __global__ void k(float *x) {\n  x[0] = undefined_name;\n}\n", 2, opts);
    } else if (!strcmp(a, "threads")) {
      int n = atoi(v);
      pthread_t t[16];
      for (int k = 0; k < n && k < 16; k++)
        pthread_create(&t[k], NULL, thread_main, (void *)(intptr_t)k);
      for (int k = 0; k < n && k < 16; k++)
        pthread_join(t[k], NULL);
      i++;
    } else if (!strcmp(a, "fork")) {
      pid_t pid = fork();
      if (pid == 0) {
        kernel(src, sizeof(src), "child");
        one("child", src, 2, opts);
        exit(0);
      }
      {
        int st = 0;
        waitpid(pid, &st, 0);
        printf("child status %d\n", st);
        fflush(stdout);
      }
    } else if (!strcmp(a, "link")) {
      const char *lopts[] = {"--gpu-architecture=compute_90", "-dlto", "-rdc=true"};
      const char *jopts[] = {"-arch=sm_90", "-lto"};
      nvrtcProgram p;
      nvJitLinkHandle h;
      size_t n = 0;
      char *ir;
      kernel(src, sizeof(src), "linked");
      create(&p, src, "linked", 0, NULL, NULL);
      compile(p, 3, lopts);
      lto_size(p, &n);
      ir = malloc(n);
      lto(p, ir);
      destroy(&p);
      if (nvJitLinkCreate(&h, 2, jopts) != NVJITLINK_SUCCESS ||
          nvJitLinkAddData(h, NVJITLINK_INPUT_LTOIR, ir, n, "linked") != NVJITLINK_SUCCESS ||
          nvJitLinkComplete(h) != NVJITLINK_SUCCESS)
        printf("link failed\n");
      else
        printf("linked\n");
      nvJitLinkDestroy(&h);
      free(ir);
    } else if (!strcmp(a, "load")) {
      load_images();
    } else if (!strcmp(a, "exec")) { /* exec the rest of argv: this image ends */
      fflush(stdout);
      execv(v, argv + i + 1);
      perror(v);
      exit(127);
    } else if (!strcmp(a, "spawn-clean")) { /* run the rest of argv with an empty environment */
      char *const empty[] = {NULL};
      pid_t pid = fork();
      fflush(stdout);
      if (pid == 0) {
        execve(v, argv + i + 1, empty);
        _exit(127);
      }
      waitpid(pid, NULL, 0);
      break;
    } else if (!strcmp(a, "reuse-fds")) {
      int f;
      fflush(stdout);
      closefrom(3);
      if ((f = open(v, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0)
        exit(94);
      printf("reuse-fds %s on descriptor %d\n", v, f);
      fflush(stdout);
      i++;
    } else if (!strcmp(a, "fork-storm")) {
      int hung = fork_storm(atoi(v));
      printf("fork-storm hung %d\n", hung);
      fflush(stdout);
      if (hung)
        exit(95);
      i++;
    } else if (!strcmp(a, "exit")) {
      fflush(stdout);
      exit(atoi(v));
    } else if (!strcmp(a, "signal")) {
      fflush(stdout);
      raise(atoi(v));
    }
  }
  return 0;
}
