/* NVRTC and nvJitLink, loaded with dlopen on first use: a cache hit, `gpujit cache` and
 * `gpujit trace` never map these 100 MB libraries, so a cached build starts in milliseconds. */
#ifndef GPUJIT_COMPILE_TOOLKIT_TOOLKIT_H
#define GPUJIT_COMPILE_TOOLKIT_TOOLKIT_H

#include <stdbool.h>
#include <sys/stat.h>

#include <nvJitLink.h>
#include <nvrtc.h>

#define GPUJIT__NVRTC_FUNCS(X)                                                            \
  X(nvrtcVersion) X(nvrtcGetNumSupportedArchs) X(nvrtcGetSupportedArchs)                  \
  X(nvrtcGetErrorString) X(nvrtcCreateProgram) X(nvrtcDestroyProgram)                     \
  X(nvrtcAddNameExpression) X(nvrtcCompileProgram) X(nvrtcGetProgramLogSize)              \
  X(nvrtcGetProgramLog) X(nvrtcGetPTXSize) X(nvrtcGetPTX) X(nvrtcGetCUBINSize)            \
  X(nvrtcGetCUBIN) X(nvrtcGetLTOIRSize) X(nvrtcGetLTOIR) X(nvrtcGetLoweredName)

/* NVRTC 12.8+: precompiled headers. Optional: NULL where the library lacks them. */
#define GPUJIT__NVRTC_PCH_FUNCS(X)                                                        \
  X(nvrtcGetPCHHeapSize) X(nvrtcSetPCHHeapSize) X(nvrtcGetPCHCreateStatus)                \
  X(nvrtcGetPCHHeapSizeRequired)

#define GPUJIT__NVJITLINK_FUNCS(X)                                                        \
  X(nvJitLinkVersion) X(nvJitLinkCreate) X(nvJitLinkDestroy) X(nvJitLinkAddData)          \
  X(nvJitLinkComplete) X(nvJitLinkGetLinkedCubinSize) X(nvJitLinkGetLinkedCubin)          \
  X(nvJitLinkGetLinkedPtxSize) X(nvJitLinkGetLinkedPtx) X(nvJitLinkGetErrorLogSize)       \
  X(nvJitLinkGetErrorLog) X(nvJitLinkGetInfoLogSize) X(nvJitLinkGetInfoLog)

typedef struct gpujit__nvrtc_api {
#define GPUJIT__PTR(name) __typeof__(name) *name;
  GPUJIT__NVRTC_FUNCS(GPUJIT__PTR)
#undef GPUJIT__PTR
} gpujit__nvrtc_api;

typedef struct gpujit__nvrtc_pch_api {
#define GPUJIT__PTR(name) __typeof__(name) *name;
  GPUJIT__NVRTC_PCH_FUNCS(GPUJIT__PTR)
#undef GPUJIT__PTR
} gpujit__nvrtc_pch_api;

typedef struct gpujit__nvjitlink_api {
#define GPUJIT__PTR(name) __typeof__(name) *name;
  GPUJIT__NVJITLINK_FUNCS(GPUJIT__PTR)
#undef GPUJIT__PTR
} gpujit__nvjitlink_api;

/** Load NVRTC once; GPUJIT_ENVRTC with the reason when it cannot be loaded. */
int gpujit__nvrtc_api_get(const gpujit__nvrtc_api **out);
/** NVRTC's PCH functions once NVRTC is loaded (gpujit__nvrtc_api_get); NULL when this NVRTC
 *  has none of them (older than 12.8). */
const gpujit__nvrtc_pch_api *gpujit__nvrtc_pch_api_get(void);
/** Whether nvJitLink was loaded (by a link) in this process: loading it costs milliseconds. */
bool gpujit__nvjitlink_loaded(void);
/** Load nvJitLink once; GPUJIT_ELINK with the reason when it cannot be loaded. */
int gpujit__nvjitlink_api_get(const gpujit__nvjitlink_api **out);
/** The toolkit root: $CUDA_PATH, else $CUDA_HOME, else the one gpujit was built against — its
 *  real path (one spelling for a toolkit reached through a symlink). */
const char *gpujit__cuda_root(void);
/** What identifies the toolkit for cache keys: the content hashes of NVRTC, its builtins,
 *  nvJitLink and ptxas (toolkit_id.c; remembered per file stat in toolkit-hashes beside the
 *  cache), computed once without loading either library. Borrowed, lives as long as the process. */
const char *gpujit__toolkit_id(void);
/** The content hash the toolkit id took of the file at `path` when `st` (its stat now) is the
 *  stat that hash was of — the same real path, device, inode, size, mtime and ctime, the stamp the
 *  id itself trusts (NVRTC's builtins library) — into `out`; false otherwise. */
bool gpujit__toolkit_known_hash(const char *path, const struct stat *st, char out[33]);
/** GPUJIT_ENOTOOLKIT, with what to do, where the toolkit the user named ($CUDA_PATH, $CUDA_HOME,
 *  $GPUJIT_NVRTC_LIBRARY) holds no NVRTC; 0 otherwise (a library left to the loader's search is
 *  found, or not, when it loads). Loads nothing. */
int gpujit__toolkit_check(void);
/** The file each library loads (or would load) from, without loading it. */
const char *gpujit__nvrtc_library_path(void);
const char *gpujit__nvjitlink_library_path(void);
/** The toolkit's libcupti (its real path: lib64, lib, extras/CUPTI/lib64 or
 *  targets/x86_64-linux/lib under the root), else NULL; looked for once. */
const char *gpujit__cupti_library_path(void);
/** The toolkit's ptxas if it is there and executable, else NULL (looked for once). */
const char *gpujit__ptxas_path(void);

#endif
