/* The environment a compile observes besides its files and options: the variables NVRTC and
 * nvJitLink read (found in the 13.0 libraries' own strings), and those that choose which NVRTC
 * and nvJitLink a process loads. One table, so that whatever must match between two processes
 * that compile for each other (the build server and its clients) names the same list. */
#ifndef GPUJIT_COMPILE_TOOLKIT_NVRTC_ENV_H
#define GPUJIT_COMPILE_TOOLKIT_NVRTC_ENV_H

#include <stdbool.h>
#include <stddef.h>

/* X(name, who reads it) */
#define GPUJIT__NVRTC_ENV(X)                                                                        \
  X("NVRTCWIZ", "NVRTC")                                                                            \
  X("NVRTC_APPEND_FLAGS", "NVRTC")                                                                  \
  X("NVRTC_PCH_HEAP_SIZE", "NVRTC")                                                                 \
  X("NVRTC_DISABLE_PCH", "NVRTC")                                                                   \
  X("NVRTC_DISABLE_CONCURRENT_NVVM", "NVRTC")                                                       \
  X("EDG_BASE", "NVRTC")                                                                            \
  X("EDG_MODULES_PATH", "NVRTC")                                                                    \
  X("NV_NVVM_VERSION", "NVRTC, nvJitLink")                                                          \
  X("NVVM_IR_VER_CHK", "NVRTC, nvJitLink")                                                          \
  X("LLVM_OVERRIDE_PRODUCER", "NVRTC, nvJitLink")                                                   \
  X("LIBNVVM_DISABLE_CONCURRENT_API", "NVRTC, nvJitLink")                                           \
  X("NVJITLINK_TRACE_MESSAGES", "nvJitLink")                                                        \
  X("LIBNVVM_NVVM_VERSION", "nvJitLink")                                                            \
  X("DUMP_KNOBS_TO_FILE", "nvJitLink")                                                              \
  X("CAN_FINALIZE_DEBUG", "nvJitLink")                                                              \
  X("LD_LIBRARY_PATH", "the loader: which NVRTC and nvJitLink are found")                           \
  X("GPUJIT_NVRTC_LIBRARY", "gpujit: which NVRTC is loaded")

/** How many names the table holds; name `i` (NULL past the end) and who reads it. */
size_t gpujit__nvrtc_env_count(void);
const char *gpujit__nvrtc_env_name(size_t i, const char **reader);

/** Whether `name` is one of the table's: a variable NVRTC or nvJitLink reads, or one that
 *  chooses which of them is loaded. */
bool gpujit__nvrtc_env_reads(const char *name);

#endif
