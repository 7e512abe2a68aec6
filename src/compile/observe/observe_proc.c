/* What NVRTC reads besides files, seen through its imports as observe_got.c sees its file calls:
 * the environment (getenv, secure_getenv) during a compile and, once, as it was when NVRTC was
 * loaded; the shared libraries it maps (its builtins library, chosen by name, so by
 * LD_LIBRARY_PATH or the NVRTC library's own variant); and the threads it starts, which carry
 * the compile that started them so that their probes go into its record. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "compile/observe/observe.h"
#include "compile/observe/observe_note.h"

typedef char *(*getenv_fn)(const char *);
typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

static void *real_getenv, *real_secure_getenv, *real_pthread_create;

/* The libraries NVRTC mapped, process-wide: it maps its builtins on its first compile only, and
 * every later compile uses them as much. Guarded by `libs_lock`. */
static pthread_mutex_t libs_lock = PTHREAD_MUTEX_INITIALIZER;
static char **libs;
static size_t libs_count, libs_cap;
static pthread_once_t libs_fork_once = PTHREAD_ONCE_INIT;

/* Read by NVRTC 13.0 while it is loaded (its static constructors, before gpujit can rebind
 * anything): their values then hold for every compile of the process. Seen with a logger of
 * NVRTC's getenv slot; those it reads in nvrtcCompileProgram are observed there. */
static const char *const load_names[] = {"LLVM_OVERRIDE_PRODUCER",        "AS_SECURE_LOG_FILE",
                                         "NVRTC_DISABLE_CONCURRENT_NVVM", "LIBNVVM_DISABLE_CONCURRENT_API",
                                         "NVRTC_INTERNAL_GLOBAL_LOCK",    "NV_NVVM_VERSION",
                                         "NVRTC_DISABLE_PCH",             "NVRTC_PCH_HEAP_SIZE"};
static char *load_values[sizeof(load_names) / sizeof(load_names[0])];
static bool load_seen;
/* The dynamic loader's search path as the process started with it: NVRTC maps its builtins by
 * name, so this chooses the file (a copy earlier on the path is another builtins library). */
static char *library_path;

/* Every variable NVRTC read during a compile in this process, with its first value: some it
 * reads on its first compile only (CUDA_CACHE_DISABLE, beside mapping its builtins), and a
 * record must not depend on which compile of a process made it. Guarded by `libs_lock`. */
static gpujit__env_read *seen;
static size_t seen_count, seen_cap;

/* The objects mapped in the process as last looked at, and the loader's count of objects added
 * then: an object that appears during a compile was mapped by it. Guarded by `libs_lock`. */
static char **known;
static size_t known_count, known_cap;
static unsigned long long known_adds;
static bool known_taken;

static void libs_at_fork_child(void) { pthread_mutex_init(&libs_lock, NULL); }

static void libs_push(const char *path)
{
  char **n;
  pthread_mutex_lock(&libs_lock);
  for (size_t i = 0; i < libs_count; i++)
    if (strcmp(libs[i], path) == 0)
      goto done;
  if ((n = gpujit__grow(libs, &libs_cap, libs_count, sizeof(*libs), 4)) != NULL) {
    libs = n;
    if ((libs[libs_count] = strdup(path)) != NULL)
      libs_count++;
  }
done:
  pthread_mutex_unlock(&libs_lock);
}

static bool is_known(const char *name)
{
  for (size_t i = 0; i < known_count; i++)
    if (!strcmp(known[i], name))
      return true;
  return false;
}

static void know(const char *name)
{
  char **n;
  if (is_known(name) || !(n = gpujit__grow(known, &known_cap, known_count, sizeof(*known), 64)))
    return;
  known = n;
  if ((known[known_count] = strdup(name)) != NULL)
    known_count++;
}

static int count_adds(struct dl_phdr_info *info, size_t size, void *payload)
{
  (void)size;
  *(unsigned long long *)payload = info->dlpi_adds;
  return 1; /* the count is the same in every entry: the first is enough */
}

static unsigned long long adds_now(void)
{
  unsigned long long n = 0;
  dl_iterate_phdr(count_adds, &n);
  return n;
}

/* `payload` NULL: every object becomes known; else an object not known yet is a library the
 * compile mapped (the driver apart). */
static bool nvrtc_own(const char *path);
static int take_objects(struct dl_phdr_info *info, size_t size, void *payload)
{
  const char *name = info->dlpi_name;
  (void)size;
  if (!name || name[0] != '/' || is_known(name))
    return 0;
  if (payload && nvrtc_own(name)) {
    char **n = gpujit__grow(libs, &libs_cap, libs_count, sizeof(*libs), 4);
    if (n && (libs = n, (libs[libs_count] = strdup(name)) != NULL))
      libs_count++;
  }
  know(name);
  return 0;
}

void gpujit__observe_libs_mark(void)
{
  unsigned long long adds = adds_now();
  pthread_mutex_lock(&libs_lock);
  if (!known_taken || adds != known_adds) { /* what the process mapped since is no compile's */
    dl_iterate_phdr(take_objects, NULL);
    known_adds = adds;
    known_taken = true;
  }
  pthread_mutex_unlock(&libs_lock);
}

/* Of the objects mapped during a compile, NVRTC's own family (its builtins, wherever the loader
 * found them): what else the loader mapped then — the C++ runtime's unwinder, the driver NVRTC
 * asks about the GPU — depends on what the process had mapped before, and a record must not
 * (nor may a hit depend on the driver). */
static bool nvrtc_own(const char *path)
{
  const char *base = strrchr(path, '/');
  return strncmp(base ? base + 1 : path, "libnvrtc", 8) == 0;
}

static void seen_push(const char *name, const char *value)
{
  gpujit__env_read *n;
  pthread_mutex_lock(&libs_lock);
  for (size_t i = 0; i < seen_count; i++)
    if (strcmp(seen[i].name, name) == 0)
      goto done;
  if ((n = gpujit__grow(seen, &seen_cap, seen_count, sizeof(*seen), 16)) != NULL) {
    seen = n;
    seen[seen_count].value = value ? strdup(value) : NULL;
    if ((seen[seen_count].name = strdup(name)) != NULL && (!value || seen[seen_count].value))
      seen_count++;
    else {
      free(seen[seen_count].name);
      free(seen[seen_count].value);
    }
  }
done:
  pthread_mutex_unlock(&libs_lock);
}

static char *noted(const char *name, char *v)
{
  if (name && gpujit__observe_active() && !gpujit__observe_env_ignored(name)) {
    gpujit__observe_note_env(name, v);
    seen_push(name, v);
  }
  return v;
}

static char *w_getenv(const char *name) { return noted(name, ((getenv_fn)real_getenv)(name)); }

static char *w_secure_getenv(const char *name) { return noted(name, ((getenv_fn)real_secure_getenv)(name)); }

struct start {
  void *(*fn)(void *);
  void *arg;
  gpujit__observed *creator;
  uint64_t id;
};

static void *started(void *p)
{
  struct start s = *(struct start *)p;
  free(p);
  gpujit__observe_thread_started(s.creator, s.id);
  return s.fn(s.arg);
}

static int w_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
  struct start *s = malloc(sizeof(*s));
  int r;
  if (!s) /* the thread starts as NVRTC asked; its probes, if any, are taken for nobody's */
    return ((pthread_create_fn)real_pthread_create)(t, attr, fn, arg);
  s->fn = fn;
  s->arg = arg;
  gpujit__observe_thread_creator(&s->creator, &s->id);
  if ((r = ((pthread_create_fn)real_pthread_create)(t, attr, started, s)) != 0)
    free(s);
  return r;
}

const gpujit__got_row gpujit__observe_proc_rows[] = {
    {"getenv", (void *)w_getenv, &real_getenv},
    {"secure_getenv", (void *)w_secure_getenv, &real_secure_getenv},
    {"pthread_create", (void *)w_pthread_create, &real_pthread_create},
};
const size_t gpujit__observe_proc_count = sizeof(gpujit__observe_proc_rows) / sizeof(gpujit__observe_proc_rows[0]);

/* NVRTC's builtins already mapped when gpujit rebound its imports (the host program loaded the
 * same NVRTC and compiled with it first): found among the mapped objects by NVRTC's name for it. */
static int find_builtins(struct dl_phdr_info *info, size_t size, void *payload)
{
  const char *name = info->dlpi_name, *base;
  (void)size;
  (void)payload;
  if (name && name[0] == '/' && (base = strrchr(name, '/')) && strncmp(base + 1, "libnvrtc-builtins", 17) == 0)
    libs_push(name);
  return 0;
}

static void libs_at_fork_register(void) { pthread_atfork(NULL, NULL, libs_at_fork_child); }

void gpujit__observe_proc_loaded(void)
{
  getenv_fn get = real_getenv ? (getenv_fn)real_getenv : getenv;
  pthread_once(&libs_fork_once, libs_at_fork_register);
  for (size_t i = 0; i < sizeof(load_names) / sizeof(load_names[0]); i++) {
    const char *v = get(load_names[i]);
    load_values[i] = v ? strdup(v) : NULL;
  }
  load_seen = true;
  library_path = get("LD_LIBRARY_PATH") ? strdup(get("LD_LIBRARY_PATH")) : NULL;
  dl_iterate_phdr(find_builtins, NULL);
}

void gpujit__observe_add_process(gpujit__observed *o)
{
  unsigned long long adds = adds_now();
  pthread_mutex_lock(&libs_lock);
  if (known_taken && adds != known_adds) { /* mapped during the compile: NVRTC's */
    dl_iterate_phdr(take_objects, (void *)1);
    known_adds = adds;
  }
  pthread_mutex_unlock(&libs_lock);
  for (size_t i = 0; load_seen && i < sizeof(load_names) / sizeof(load_names[0]); i++)
    gpujit__observed_env_add(o, load_names[i], load_values[i], false);
  size_t found;
  pthread_mutex_lock(&libs_lock);
  found = libs_count;
  pthread_mutex_unlock(&libs_lock);
  if (!found) /* mapped before gpujit first looked (the program compiled with the same NVRTC first) */
    dl_iterate_phdr(find_builtins, NULL);
  pthread_mutex_lock(&libs_lock);
  for (size_t i = 0; i < seen_count; i++) /* after the compile's own reads, which stand */
    gpujit__observed_env_add(o, seen[i].name, seen[i].value, false);
  for (size_t i = 0; i < libs_count; i++)
    gpujit__observed_library_add(o, libs[i]);
  if (libs_count && load_seen)
    gpujit__observed_env_add(o, "LD_LIBRARY_PATH", library_path, false);
  pthread_mutex_unlock(&libs_lock);
}
