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
 * @return 0; GPUJIT_ENOTOOLKIT when NVRTC or nvJitLink is not there (the message says what to
 *         do: set CUDA_PATH, or install NVIDIA's wheels); GPUJIT_ENVRTC / GPUJIT_ELINK when a
 *         library cannot answer.
 */
GPUJIT_API int gpujit_toolkit_versions(int *nvrtc_major, int *nvrtc_minor,
                                       int *nvjitlink_major, int *nvjitlink_minor);

/** Where the toolkit gpujit uses was named. */
typedef enum gpujit_toolkit_origin {
  GPUJIT_TOOLKIT_DEFAULT = 0,   /**< the root gpujit was built for (/usr/local/cuda) */
  GPUJIT_TOOLKIT_CUDA_PATH = 1, /**< $CUDA_PATH */
  GPUJIT_TOOLKIT_CUDA_HOME = 2, /**< $CUDA_HOME, where CUDA_PATH is unset */
  GPUJIT_TOOLKIT_PIP = 3        /**< NVIDIA's pip wheels in the environment gpujit is installed in */
} gpujit_toolkit_origin;

/** The toolkit gpujit would use, found without loading it. Strings are borrowed: they live until
 *  $CUDA_PATH or $CUDA_HOME change (root) or as long as the process (the rest). */
typedef struct gpujit_toolkit_info {
  const char *root;             /**< the toolkit root, its real path (as named where it does not exist) */
  gpujit_toolkit_origin origin; /**< who named the root */
  const char *nvrtc;            /**< the libnvrtc loaded: a path, or a bare soname for the loader's search */
  const char *nvjitlink;        /**< the libnvJitLink loaded, likewise */
  int nvrtc_from_env;           /**< 1: $GPUJIT_NVRTC_LIBRARY named it */
  int nvjitlink_from_env;       /**< 1: $GPUJIT_NVJITLINK_LIBRARY named it */
  const char *ptxas;            /**< the toolkit's ptxas, or NULL (lean modules then take NVRTC's cubin) */
  const char *problem;          /**< NULL, or why builds fail with GPUJIT_ENOTOOLKIT and what to do: the
                                     root named holds no NVRTC (a library left to the loader's search is
                                     only known missing when it loads: gpujit_toolkit_versions) */
  const char *cupti;            /**< the libcupti timing and `gpujit profile` load, or NULL: none found */
} gpujit_toolkit_info;

/**
 * Find the toolkit as a build would, loading nothing.
 * @return 0, or GPUJIT_EINVAL (out is NULL).
 */
GPUJIT_API int gpujit_toolkit_info_get(gpujit_toolkit_info *out);

/**
 * End the toolkit programs gpujit is running (ptxas, on the lean path) and remove the private
 * temporary directories they write in; the compiles they ran then fail. Async-signal-safe: call
 * it from a SIGTERM or SIGINT handler before the signal is raised again, so that a build killed
 * while ptxas runs leaves none of its files behind (the gpujit CLI does).
 */
GPUJIT_API void gpujit_children_abort(void);

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
