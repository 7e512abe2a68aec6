/* The contract between `gpujit profile` (src/profile) and what writes its records — the injection
 * library (src/inject), and any other writer that follows docs/record-format.md: the environment
 * the profiled program is given, the records directory's file names, the record kinds, the
 * format version, and the flush entry point. Both C sides include this header and spell none of
 * these names themselves; the Python start-up hook (src/inject/python, the standard library alone,
 * copied as it is) keeps those it writes in one table of _record.py, which test_layers checks
 * against this header. */
#ifndef GPUJIT_INJECT_PROTOCOL_H
#define GPUJIT_INJECT_PROTOCOL_H

#include <string.h>

/* The version of the record format, written as "v" in each process's "proc" record. A reader
 * refuses records of another version, naming both (docs/record-format.md says what changed). */
#define GPUJIT_RECORD_VERSION 1

/* The environment of the profiled program: X(ID, NAME). Set by `gpujit profile`; passed on to
 * children (and put back where a program dropped them, inject/exec.c). */
#define GPUJIT_RECORD_ENV(X)                                                                     \
  X(PRELOAD, "LD_PRELOAD")                     /* the injection library, ahead of the program's */ \
  X(CUDA_INJECTION, "CUDA_INJECTION64_PATH")   /* the driver's injection hook: CUPTI at cuInit */  \
  X(NVTX_INJECTION, "NVTX_INJECTION64_PATH")   /* NVTX ranges to CUPTI */                          \
  X(CUPTI_LIBRARY, "GPUJIT_CUPTI_LIBRARY")     /* which libcupti to load */                        \
  X(DIR, "GPUJIT_PROFILE_DIR")                 /* where each process writes its records file */    \
  X(FLAGS, "GPUJIT_PROFILE_FLAGS")             /* comma-separated words: GPUJIT_RECORD_FLAGS */    \
  X(MAX_EVENTS, "GPUJIT_PROFILE_MAX_EVENTS")   /* per-launch records kept per process */          \
  X(LAUNCH_CALLBACKS, "GPUJIT_BENCH_LAUNCH_CALLBACKS") /* 0: no launch callbacks (measuring) */ \
  X(REINJECTED, "GPUJIT_PROFILE_REINJECTED")   /* set in a child whose variables were put back */ \
  X(PYTHONPATH, "PYTHONPATH")                  /* the start-up hook's directory first */          \
  X(HOOK, "GPUJIT_PROFILE_PYTHON_HOOK")        /* that directory (put back first where dropped) */ \
  X(STEP, "GPUJIT_PROFILE_STEP")               /* where steps come from: GPUJIT_STEP_SOURCES */    \
  X(SCHEDULE, "GPUJIT_PROFILE_SCHEDULE")       /* wait=W,warmup=U,active=A,repeat=R,skip_first=S,skip_first_wait=B */ \
  X(REGIONS, "GPUJIT_PROFILE_REGIONS")         /* kernel regions: events per module's buffer, 0 off */

/* Not one of the variables above (no child gets it put back): set by a parent for one tool it
 * feeds through a pipe, the hash (as records hash output) of the compile output that tool's input
 * was made from — gpujit's ptxas, given the lean PTX, is told NVRTC's PTX (compile/toolkit/ptxas.c
 * spells the name out: it may not include this file). */
#define GPUJIT_FROM_HASH_ENV "GPUJIT_PROFILE_FROM_HASH"

#define GPUJIT_RECORD_ENV_ID(id, name) GPUJIT_RECORD_ENV_##id,
typedef enum gpujit_record_env_id { GPUJIT_RECORD_ENV(GPUJIT_RECORD_ENV_ID) GPUJIT_RECORD_ENV_COUNT } gpujit_record_env_id;
#undef GPUJIT_RECORD_ENV_ID
#define GPUJIT_RECORD_ENV_NAME(id, name) name,
static const char *const gpujit_record_env_names[] = {GPUJIT_RECORD_ENV(GPUJIT_RECORD_ENV_NAME)};
#undef GPUJIT_RECORD_ENV_NAME
/** The variable's name: GPUJIT_ENV(DIR) is "GPUJIT_PROFILE_DIR". */
#define GPUJIT_ENV(id) (gpujit_record_env_names[GPUJIT_RECORD_ENV_##id])

/* The words of GPUJIT_PROFILE_FLAGS: X(ID, WORD). */
#define GPUJIT_RECORD_FLAGS(X)                                                                   \
  X(LINEINFO, "lineinfo")       /* add -lineinfo to NVRTC compiles that lack it */               \
  X(NVRTC_TRACE, "nvrtc-trace") /* add --fdevice-time-trace to NVRTC compiles */                 \
  X(NSIGHT, "nsight")           /* an Nsight tool owns CUPTI and builds its launchers' environments */

#define GPUJIT_RECORD_FLAG_WORD(id, word) static const char GPUJIT_FLAG_##id[] = word;
GPUJIT_RECORD_FLAGS(GPUJIT_RECORD_FLAG_WORD)
#undef GPUJIT_RECORD_FLAG_WORD

/* The records directory: one JSON-lines file per process image, p<PID>-<NS>.jsonl, and an empty
 * lost-<PID>-<ERRNO> where a process could not write its records; where it could not even make
 * that (a directory made read-only for it), a line "PID ERRNO" appended to the file `lost`,
 * which the profile makes before the run so that it can be written then. */
#define GPUJIT_RECORD_FILE_FORMAT "p%d-%llu.jsonl" /* pid, CLOCK_REALTIME ns at its first record */
#define GPUJIT_RECORD_FILE_PREFIX "p"
#define GPUJIT_RECORD_FILE_SUFFIX ".jsonl"
#define GPUJIT_RECORD_LOST_FORMAT "lost-%d-%d" /* pid, errno */
#define GPUJIT_RECORD_LOST_FILE "lost"

/* The toolchain programs recorded as compiles when they run in the profiled tree: X(ID, NAME,
 * WHAT). A name matches the program's file name, also with a target prefix
 * (x86_64-linux-gnu-gcc) or a version suffix (gcc-12). */
#define GPUJIT_RECORD_TOOLS(X)                                            \
  X(PTXAS, "ptxas", "PTX to cubin")                                       \
  X(NVLINK, "nvlink", "device link")                                      \
  X(FATBINARY, "fatbinary", "fatbin packing")                             \
  X(CICC, "cicc", "CUDA C++ to PTX")                                      \
  X(NVCC, "nvcc", "the CUDA compiler driver")                             \
  X(CUDAFE, "cudafe++", "CUDA front end")                                 \
  X(GCC, "gcc", "C compiler (launchers, extensions)")                     \
  X(GXX, "g++", "C++ compiler")                                           \
  X(CC, "cc", "C compiler")                                               \
  X(CXX, "c++", "C++ compiler")                                           \
  X(CLANG, "clang", "C compiler")                                         \
  X(CLANGXX, "clang++", "C++ compiler")

#define GPUJIT_RECORD_TOOL_NAME(id, name, what) name,
static const char *const gpujit_record_tool_names[] = {GPUJIT_RECORD_TOOLS(GPUJIT_RECORD_TOOL_NAME)};
#undef GPUJIT_RECORD_TOOL_NAME
#define GPUJIT_RECORD_TOOL_COUNT (sizeof(gpujit_record_tool_names) / sizeof(gpujit_record_tool_names[0]))

/* The directory of the start-up hook beside the injection library (a `sitecustomize` that
 * `gpujit profile` puts first on PYTHONPATH). Which frameworks it adapts is its own list
 * (WATCHED in python/_gpujit_profile_hook/__init__.py); the report reads a unit's "fw" as a name. */
#define GPUJIT_RECORD_PYTHON_HOOK_DIR "gpujit-python-hook"

/* The flush entry point the injection library exports: what CUPTI holds is written out now (a
 * block of Python measured by gpujit.profile() reads its records right after). */
#define GPUJIT_RECORD_FLUSH_FN gpujit_inject_flush /* the exported function (inject/cupti.c) */
#define GPUJIT_RECORD_STR2(x) #x
#define GPUJIT_RECORD_STR(x) GPUJIT_RECORD_STR2(x)
#define GPUJIT_RECORD_FLUSH_SYMBOL GPUJIT_RECORD_STR(GPUJIT_RECORD_FLUSH_FN) /* its name, for dlsym */
typedef void (*gpujit_record_flush_fn)(void);

/* Where a process's steps come from (GPUJIT_PROFILE_STEP): "auto" (the default: the program's
 * calls of gpujit.step() / gpujit_profile_step(), or torch.profiler's step(), whichever comes
 * first in the process), "api" (gpujit's calls only), "torch", "nvtx:NAME" (each NVTX range or
 * mark of that name begins a step) or "kernel:NAME" (each launch of a kernel whose name holds
 * NAME begins a step). Written as each step record's "src": api, torch, nvtx or kernel. */
#define GPUJIT_STEP_SOURCES "auto, api, torch, nvtx:NAME, kernel:NAME"
/* Those of them that are one word, as a list: whoever checks a source reads it here. */
#define GPUJIT_STEP_WORDS {"auto", "api", "torch"}

/* The step entry point the injection library exports: a step boundary from the program (the
 * public gpujit_profile_step(), Python's gpujit.step(), or the torch adapter: `src` one of
 * GPUJIT_STEP_SRC_*). Looked up with dlsym by whoever calls it; absent outside a profile. */
#define GPUJIT_RECORD_STEP_FN gpujit_inject_step
#define GPUJIT_RECORD_STEP_SYMBOL GPUJIT_RECORD_STR(GPUJIT_RECORD_STEP_FN)
enum { GPUJIT_STEP_SRC_API = 0, GPUJIT_STEP_SRC_TORCH = 1 };
typedef void (*gpujit_record_step_fn)(int src);

/* In-process sessions (gpujit_profile_start, a gpujit.profile block in a program `gpujit profile`
 * did not start): the injection library dlopen'd into the running program and given, through
 * `start`, the settings the environment gives a preloaded copy — an array indexed by
 * GPUJIT_RECORD_ENV_* (DIR, FLAGS, MAX_EVENTS, STEP, SCHEDULE, CUPTI_LIBRARY; NULL: not given).
 * `start` returns 0, or -1 with the reason in `why` (a session already on; the library preloaded:
 * `gpujit profile` runs this process). `stop` ends the session: CUPTI flushed and let go, every
 * rebound call put back, nothing recorded after it. */
#define GPUJIT_RECORD_INPROC_START_FN gpujit_inject_inproc_start
#define GPUJIT_RECORD_INPROC_STOP_FN gpujit_inject_inproc_stop
#define GPUJIT_RECORD_INPROC_START_SYMBOL GPUJIT_RECORD_STR(GPUJIT_RECORD_INPROC_START_FN)
#define GPUJIT_RECORD_INPROC_STOP_SYMBOL GPUJIT_RECORD_STR(GPUJIT_RECORD_INPROC_STOP_FN)
/* The CUPTI_LIBRARY setting that leaves CUPTI to the program (its own profiler records). */
#define GPUJIT_RECORD_NO_CUPTI "-"
typedef int (*gpujit_record_inproc_start_fn)(const char *const *settings, char *why, size_t why_size);
typedef void (*gpujit_record_inproc_stop_fn)(void);

/* The record kinds: X(ID, "k"). Each line is one JSON object {"k": KIND, "pid", "tid", ...};
 * docs/record-format.md lists each kind's fields. */
#define GPUJIT_RECORD_KINDS(X)                                                                   \
  X(PROC, "proc")           /* a process image starts; "v": GPUJIT_RECORD_VERSION */             \
  X(EXIT, "exit")           /* it ended normally; what it could not keep ("lost") */             \
  X(EXEC, "exec")           /* it ended by running another program */                            \
  X(CLOCK, "clock")         /* the host and CUPTI clocks side by side */                         \
  X(NVRTC, "nvrtc")         /* an NVRTC compile */                                               \
  X(NVJITLINK, "nvjitlink") /* an nvJitLink link */                                              \
  X(NVVM, "nvvm")           /* a libNVVM compile */                                              \
  X(LOAD, "load")           /* a module load, with the hash of its image */                      \
  X(KSUM, "ksum")           /* kernels of one function summed (launches, GPU time) */            \
  X(OSUM, "osum")           /* copies or memsets summed */                                       \
  X(JIT, "jit")             /* the driver's JIT of PTX */                                        \
  X(KERNEL, "kernel")       /* one launch, for the trace */                                      \
  X(COPY, "copy")           /* one copy, for the trace */                                        \
  X(MEMSET, "memset")       /* one memset, for the trace */                                      \
  X(NVTX, "nvtx")           /* an NVTX range */                                                  \
  X(GPU_END, "gpu_end")     /* CUPTI's records of this process are all written */                \
  X(DROPPED, "dropped")     /* records CUPTI dropped */                                          \
  X(NOTE, "note")           /* something the report must say, once per kind of trouble */        \
  X(TOOL, "tool")           /* this process is a toolchain program (ptxas, nvlink, a C compiler) */ \
  X(TOOL_END, "tool_end")   /* it ends: CPU time, what it wrote */                               \
  X(REAP, "reap")           /* a child ended abnormally (status), as its parent's wait saw it */ \
  X(UNIT, "unit")           /* a framework's compile of one function, kernel or graph (adapters) */ \
  X(BIND, "bind")           /* a framework's compile tied to the module handle it loaded */      \
  X(SPAN, "span")           /* a span an adapter declares: "role" autotune (benchmarking)    */ \
  X(STEP, "step")           /* a step begins (a boundary the program marked), with its phase */  \
  X(LAUNCH, "launch")       /* one launch's host side, for a traced step: thread, API, times */    \
  X(KREGIONS, "kregions")   /* a module's kernel regions read back: one region's calls summarised */ \
  X(KSLICES, "kslices")     /* some of those calls, for the trace: SM, unit, start, length, cycles */

#define GPUJIT_RECORD_KIND_ID(id, k) GPUJIT_RECORD_##id,
typedef enum gpujit_record_kind { GPUJIT_RECORD_KINDS(GPUJIT_RECORD_KIND_ID) GPUJIT_RECORD_KIND_COUNT } gpujit_record_kind;
#undef GPUJIT_RECORD_KIND_ID
#define GPUJIT_RECORD_KIND_NAME(id, k) k,
static const char *const gpujit_record_kind_names[] = {GPUJIT_RECORD_KINDS(GPUJIT_RECORD_KIND_NAME)};
#undef GPUJIT_RECORD_KIND_NAME
/** The kind's "k": GPUJIT_KIND(PROC) is "proc". */
#define GPUJIT_KIND(id) (gpujit_record_kind_names[GPUJIT_RECORD_##id])

/** The kind a record's "k" names, or -1 for one this version does not know (a reader skips it). */
static inline int gpujit_record_kind_of(const char *k)
{
  for (int i = 0; i < GPUJIT_RECORD_KIND_COUNT; i++)
    if (!strcmp(k, gpujit_record_kind_names[i]))
      return i;
  return -1;
}

#endif
