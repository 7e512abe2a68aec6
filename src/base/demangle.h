/* C++ names as people read them (demangle.c; the public gpujit_demangle is in gpujit/common.h). */
#ifndef GPUJIT_BASE_DEMANGLE_H
#define GPUJIT_BASE_DEMANGLE_H

#include <stddef.h>

/** A kernel's symbol as Nsight shows it: demangled, without the "void " every kernel returns
 *  ("scale<float>(float*, float, int)"); a name that is not mangled as it is. */
void gpujit__kernel_name(const char *name, char *out, size_t size);

#endif
