/* Kernel parameter types from a mangled kernel symbol or from a written signature. */
#ifndef GPUJIT_COMPILE_IMAGE_PARAMS_H
#define GPUJIT_COMPILE_IMAGE_PARAMS_H

#include <stddef.h>

#include "gpujit/module.h"

/**
 * The parameter types an Itanium-mangled kernel symbol holds.
 * @return 0 with *count = -1 for an unmangled (extern "C") symbol, 0 with the types, or
 *         GPUJIT_EPARSE when the mangling holds what is not read here (then nothing is known).
 */
int gpujit__params_demangle(const char *symbol, gpujit_param_type *types, int max, int *count);
/** Parse "float, const float *x, int n" (names optional); GPUJIT_EINVAL names a bad parameter. */
int gpujit__params_parse(const char *signature, gpujit_param_type *types, int max, int *count);
/** Bytes a parameter of this type takes; 0 for UNKNOWN and RECORD. */
size_t gpujit__param_type_size(gpujit_param_type t);

#endif
