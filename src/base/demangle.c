/* C++ names as people read them: `_Z5scaleIfEvPT_S0_i` is `void scale<float>(float*, float, int)`.
 * The demangler is the C++ runtime's (__cxa_demangle, libstdc++), loaded when first needed: gpujit
 * is C and links no C++ runtime; where none is installed, names stay as they are. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/demangle.h"
#include "gpujit/common.h"

typedef char *(*cxa_demangle_fn)(const char *mangled, char *out, size_t *len, int *status);
static cxa_demangle_fn cxa_demangle;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* libstdc++'s own, asked of that library: a process may hold other definitions of the name
 * (a framework's statically linked runtime) that do not behave alike. */
static void load(void)
{
  void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
  cxa_demangle = (cxa_demangle_fn)dlsym(h ? h : RTLD_DEFAULT, "__cxa_demangle");
}

int gpujit_demangle(const char *name, char *out, size_t size)
{
  char *d = NULL;
  int status = -1;
  if (!name || !out || !size)
    return -1;
  if (name[0] == '_' && name[1] == 'Z') {
    pthread_once(&once, load);
    if (cxa_demangle)
      d = cxa_demangle(name, NULL, NULL, &status);
  }
  snprintf(out, size, "%s", d && status == 0 ? d : name);
  free(d);
  return d && status == 0 ? 1 : 0;
}

void gpujit__kernel_name(const char *name, char *out, size_t size)
{
  /* every kernel returns void: Nsight shows scale<float>(float*, float, int) */
  if (gpujit_demangle(name, out, size) == 1 && !strncmp(out, "void ", 5))
    memmove(out, out + 5, strlen(out + 5) + 1);
}
