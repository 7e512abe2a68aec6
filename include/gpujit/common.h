/* Shared definitions for every gpujit public header: export macro, C++ guards, version. */
#ifndef GPUJIT_COMMON_H
#define GPUJIT_COMMON_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#  define GPUJIT_API __declspec(dllexport)
#elif defined(__GNUC__)
#  define GPUJIT_API __attribute__((visibility("default")))
#else
#  define GPUJIT_API
#endif

#ifdef __cplusplus
#  define GPUJIT_BEGIN_DECLS extern "C" {
#  define GPUJIT_END_DECLS }
#else
#  define GPUJIT_BEGIN_DECLS
#  define GPUJIT_END_DECLS
#endif

#define GPUJIT_VERSION_MAJOR 0
#define GPUJIT_VERSION_MINOR 1
#define GPUJIT_VERSION_PATCH 0
#define GPUJIT_VERSION_STRING "0.1.0"

GPUJIT_BEGIN_DECLS

/** @return gpujit's version as "MAJOR.MINOR.PATCH" (static storage). */
GPUJIT_API const char *gpujit_version(void);

/**
 * Report the NVRTC and nvJitLink versions gpujit runs against.
 * Any out-pointer may be NULL.
 * @return 0, or GPUJIT_ENVRTC / GPUJIT_ELINK when a library cannot answer.
 */
GPUJIT_API int gpujit_toolkit_versions(int *nvrtc_major, int *nvrtc_minor,
                                       int *nvjitlink_major, int *nvjitlink_minor);

/** Free memory that gpujit returned through an out-parameter. */
GPUJIT_API void gpujit_free(void *ptr);

/**
 * A C++ symbol as people read it: "_Z5scaleIfEvPT_S0_i" -> "void scale<float>(float*, float, int)"
 * (the C++ runtime's demangler, loaded when first needed). A name that is not mangled, or that
 * cannot be demangled, is copied as it is. The result is cut to fit `size`.
 * @return 1 demangled, 0 copied as it is, -1 bad arguments.
 */
GPUJIT_API int gpujit_demangle(const char *name, char *out, size_t size);

GPUJIT_END_DECLS

#endif
