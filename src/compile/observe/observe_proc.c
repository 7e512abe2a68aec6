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

/* Every variable NVRTC read during a compile in this process, with its first value (`seen_list`,
 * below; nvJitLink's during a link in `link_seen`): some it reads on its first compile only
 * (CUDA_CACHE_DISABLE, beside mapping its builtins), and a record must not depend on which
 * compile of a process made it. Guarded by `libs_lock`. */

/* Read by nvJitLink 13.0 while it is loaded, as NVRTC's `load_names` (a logger of its getenv
 * slot; "bar" is one of them, as it reads it); those it reads in nvJitLinkCreate, AddData and
 * Complete (NVJITLINK_TRACE_MESSAGES, NV_NVVM_VERSION, LIBNVVM_NVVM_VERSION, NVVM_IR_VER_CHK,
 * DUMP_KNOBS_TO_FILE, CAN_FINALIZE_DEBUG) are observed there. */
static const char *const link_load_names[] = {"AS_SECURE_LOG_FILE", "LLVM_OVERRIDE_PRODUCER",
                                              "LIBNVVM_DISABLE_CONCURRENT_API", "bar"};
static char *link_load_values[sizeof(link_load_names) / sizeof(link_load_names[0])];
static bool link_load_seen;

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

/* A variable read, into a process-wide list of first values (`seen`, or nvJitLink's `link_seen`). */
typedef struct env_list {
  gpujit__env_read *v;
  size_t count, cap;
} env_list;

static void seen_push(env_list *l, const char *name, const char *value)
{
  gpujit__env_read *n;
  pthread_mutex_lock(&libs_lock);
  for (size_t i = 0; i < l->count; i++)
    if (strcmp(l->v[i].name, name) == 0)
      goto done;
  if ((n = gpujit__grow(l->v, &l->cap, l->count, sizeof(*l->v), 16)) != NULL) {
    l->v = n;
    n[l->count].value = value ? strdup(value) : NULL;
    if ((n[l->count].name = strdup(name)) != NULL && (!value || n[l->count].value))
      l->count++;
    else {
      free(n[l->count].name);
      free(n[l->count].value);
    }
  }
done:
  pthread_mutex_unlock(&libs_lock);
}

static env_list seen_list, link_seen;

static char *noted(env_list *l, const char *name, char *v)
{
  if (name && gpujit__observe_active() && !gpujit__observe_env_ignored(name)) {
    gpujit__observe_note_env(name, v);
    seen_push(l, name, v);
  }
  return v;
}

static char *w_getenv(const char *name) { return noted(&seen_list, name, ((getenv_fn)real_getenv)(name)); }

static char *w_secure_getenv(const char *name)
{
  return noted(&seen_list, name, ((getenv_fn)real_secure_getenv)(name));
}

/* nvJitLink's, apart from NVRTC's: a variable only a link reads is no compile's dependency. */
static char *w_link_getenv(const char *name) { return noted(&link_seen, name, ((getenv_fn)real_getenv)(name)); }

static char *w_link_secure_getenv(const char *name)
{
  return noted(&link_seen, name, ((getenv_fn)real_secure_getenv)(name));
}

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

const gpujit__got_row gpujit__observe_link_rows[] = {
    {"getenv", (void *)w_link_getenv, &real_getenv},
    {"secure_getenv", (void *)w_link_secure_getenv, &real_secure_getenv},
    {"pthread_create", (void *)w_pthread_create, &real_pthread_create},
};
const size_t gpujit__observe_link_count = sizeof(gpujit__observe_link_rows) / sizeof(gpujit__observe_link_rows[0]);

void gpujit__observe_link_loaded(void)
{
  getenv_fn get = real_getenv ? (getenv_fn)real_getenv : getenv;
  for (size_t i = 0; i < sizeof(link_load_names) / sizeof(link_load_names[0]); i++) {
    const char *v = get(link_load_names[i]);
    link_load_values[i] = v ? strdup(v) : NULL;
  }
  link_load_seen = true;
}

void gpujit__observe_add_link_process(gpujit__observed *o)
{
  for (size_t i = 0; link_load_seen && i < sizeof(link_load_names) / sizeof(link_load_names[0]); i++)
    gpujit__observed_env_add(o, link_load_names[i], link_load_values[i], false);
  pthread_mutex_lock(&libs_lock);
  for (size_t i = 0; i < link_seen.count; i++) /* after the link's own reads, which stand */
    gpujit__observed_env_add(o, link_seen.v[i].name, link_seen.v[i].value, false);
  pthread_mutex_unlock(&libs_lock);
}

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
  for (size_t i = 0; i < seen_list.count; i++) /* after the compile's own reads, which stand */
    gpujit__observed_env_add(o, seen_list.v[i].name, seen_list.v[i].value, false);
  for (size_t i = 0; i < libs_count; i++)
    gpujit__observed_library_add(o, libs[i]);
  if (libs_count && load_seen)
    gpujit__observed_env_add(o, "LD_LIBRARY_PATH", library_path, false);
  pthread_mutex_unlock(&libs_lock);
}
