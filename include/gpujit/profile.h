/* gpujit profile: what JIT compiling costs against what executing costs, in any CUDA program.
 * A command runs with gpujit's injection library inside it and its children; what it recorded
 * (NVRTC, nvJitLink and libNVVM compiles, module loads with the driver's JIT, kernels, copies,
 * memsets, NVTX ranges) is read back into modules, each tied to the compile that made its image. */
#ifndef GPUJIT_PROFILE_H
#define GPUJIT_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "gpujit/common.h"

GPUJIT_BEGIN_DECLS

#define GPUJIT_PROFILE_OPTIONS_VERSION 1

typedef struct gpujit_profile_options {
  unsigned int version;
  int lineinfo;              /**< add -lineinfo to NVRTC compiles that lack it (changes the program's compiles) */
  int nvrtc_trace;           /**< add --fdevice-time-trace to NVRTC compiles and merge their phases */
  uint64_t max_trace_events; /**< per process, kernels/copies/memsets kept for the trace; 0: 200000 */
  const char *inject_path;   /**< the injection library; NULL: beside this library (or $GPUJIT_INJECT_LIBRARY) */
  const char *records_dir;   /**< where records go; NULL: a new directory, removed by gpujit_profile_free() */
  int no_cupti;              /**< leave CUPTI to the program (PyTorch's profiler links its own CUPTI): compiles
                                  and module loads are recorded, kernels, copies and the driver's JIT are not */
  int no_frameworks;         /**< no Python start-up hook: the compiles of JAX, Triton and torch.compile are
                                  not recorded (their ptxas processes and NVRTC compiles are) */
  const char *steps;         /**< where steps come from: NULL or "auto" (the program's gpujit_profile_step() /
                                  gpujit.step() calls, or torch.profiler's step()), "api", "torch",
                                  "nvtx:NAME" (each NVTX range or mark of that name), "kernel:NAME" (each launch
                                  of a kernel whose name holds NAME) */
  const char *schedule;      /**< which steps are recorded, as torch.profiler.schedule:
                                  "wait=W,warmup=U,active=A,repeat=R,skip_first=S"; NULL: the whole run. CUPTI is
                                  on only from the first warmup step to the last active one */
} gpujit_profile_options;

#define GPUJIT_PROFILE_OPTIONS_INIT { GPUJIT_PROFILE_OPTIONS_VERSION, 0, 0, 0, NULL, NULL, 0, 0, NULL, NULL }

/**
 * A step boundary: the program's next step begins now. Under `gpujit profile` (or a
 * gpujit.profile block) steps are counted per process and a schedule picks the ones recorded;
 * elsewhere a no-op costing a few nanoseconds (one load of a remembered pointer). Safe from any
 * thread.
 */
GPUJIT_API void gpujit_profile_step(void);

/**
 * Check a step source and a schedule as gpujit_profile_run() takes them (either may be NULL).
 * @return 0, or GPUJIT_EINVAL with a message naming what is wrong.
 */
GPUJIT_API int gpujit_profile_check_steps(const char *steps, const char *schedule);

/** @return 0, or GPUJIT_EVERSION. */
GPUJIT_API int gpujit_profile_options_init(gpujit_profile_options *opts, unsigned int version);

typedef struct gpujit_profile gpujit_profile;

/** One module: an image loaded (all loads of the same bytes together), or a compile nothing loaded. */
typedef struct gpujit_profile_module {
  const char *name;       /**< the NVRTC program's name, the file loaded, or the image's kind and hash */
  const char *kernel;     /**< the first kernel launched from it (most launches), or "" */
  const char *origin;     /**< "nvrtc", "nvjitlink", "nvvm", "driver JIT of PTX", "prebuilt", "not loaded", "unknown" */
  const char *image;      /**< "cubin", "ptx", "fatbin", "file", "" */
  uint64_t image_bytes;
  uint64_t loads;
  uint64_t compiles;      /**< compiles whose output is this image */
  uint64_t repeats;       /**< of them, identical to an earlier one (source and options): a cache would save them */
  double compile_ms;      /**< wall time of those compiles */
  double repeat_ms;       /**< of it, the repeats' */
  double load_ms;         /**< wall time of the loads, the driver's JIT included */
  double jit_ms;          /**< the driver's JIT (PTX to cubin) of it, from CUPTI's JIT records */
  uint64_t jit_cache_hits;
  uint64_t kernels;       /**< distinct kernels launched from it */
  uint64_t launches;
  double gpu_ms;          /**< their GPU time (sum of kernel durations) */
  double break_even;      /**< the program's own launches whose GPU time equals compile + load + autotuning
                               (0: none launched) */
  int pid;                /**< the process that loaded it first (or compiled it) */
  uint64_t cache_hits;    /**< framework compiles of it that its framework's cache served */
  uint64_t autotune_launches; /**< launches autotuning it (candidates benchmarked, an autotuner's cache flushes,
                                   a compile's own checks): compile work, not in launches */
  double autotune_ms;     /**< their GPU time, left out of gpu_ms and counted in break_even's cost */
} gpujit_profile_module;

typedef struct gpujit_profile_device {
  uint32_t device;
  uint64_t launches, copies, memsets, copy_bytes;
  double kernel_ms, copy_ms, memset_ms;
} gpujit_profile_device;

typedef struct gpujit_profile_totals {
  int exit_status;            /**< the command's: its exit code, or 128 + the signal that ended it */
  int signal;                 /**< the signal that ended it, or 0 */
  double wall_ms;             /**< the command, start to end */
  uint64_t processes, processes_partial; /**< partial: ended without saying so (crashed, killed, exec'd) */
  uint64_t compiles, failed, repeats;
  double compile_ms, repeat_ms, link_ms, load_ms, jit_ms, gpu_ms;
  uint64_t loads, launches;
  uint64_t untraced;          /**< launches, copies and memsets summed but past the trace budget */
  uint64_t lost;              /**< records that could not be kept (bounded tables, CUPTI's drops) */
  int partial;                /**< a process did not end normally: what it recorded until then is here */
  int gpu_recorded;           /**< CUPTI ran in at least one process */
  uint64_t untied;            /**< modules loaded that no recorded compile made (prebuilt, or made where the
                                   profile could not see): named by what they are, tied to nothing */
  uint64_t autotune_launches; /**< launches inside autotuners' benchmarking: compile work, not in launches */
  double autotune_ms;         /**< their GPU time, not in the modules' gpu_ms */
} gpujit_profile_totals;

/** A compile (NVRTC, nvJitLink, libNVVM) as the run recorded it. */
typedef struct gpujit_profile_compile {
  const char *kind;       /**< "nvrtc", "nvjitlink", "nvvm" */
  const char *name;       /**< the program's name */
  const char *options;    /**< its options, as given */
  const char *log;        /**< the compiler's log when it failed, or "" */
  const char *library;    /**< the compiler library the program loaded */
  const char *module;     /**< the name of the module row its output went to, or "" */
  int pid;
  uint32_t tid;
  int headers;            /**< headers given to it in memory */
  int result;             /**< the compiler's result code (0: success) */
  double ms;              /**< wall time */
  int repeat;             /**< the same source and options were compiled before */
  uint64_t ptx_bytes, cubin_bytes, ltoir_bytes;
  int id;                 /**< its index in the compiles */
  int within;             /**< the compile it ran inside (a framework's compile, a compiler driver), or -1:
                               its time is in that one's, not again in the totals */
  const char *cache;      /**< a framework's compile: "hit", "miss", or "" (not said) */
  double cpu_ms;          /**< a toolchain process: its CPU time (its children's included) */
  double start_ms;        /**< when it started, from the start of the run (of the range) */
  int stage_of;           /**< the compile this one is a later stage of, or -1: gpujit's own ptxas,
                               fed the lean PTX made from its NVRTC's (the two are one build: that
                               compile's row, counted once, with both times) */
} gpujit_profile_compile;

/** A stage of a framework's compile (tracing, lowering, backend; ttir, ptx, cubin ...), as the
 *  framework measured it. */
typedef struct gpujit_profile_stage {
  int compile;            /**< the compile's id */
  const char *name;
  double start_ms;        /**< from the start of its compile; -1: not known (the framework gives its length only) */
  double ms;
} gpujit_profile_stage;

/** JIT compile of one compiler over the run: "nvrtc", "ptxas", "xla", "triton", "inductor" ... */
typedef struct gpujit_profile_compiler {
  const char *compiler;
  uint64_t compiles;      /**< its compiles not inside another's */
  double ms;              /**< their wall time: what the program waited for */
  uint64_t within;        /**< its compiles inside another compiler's (ptxas under XLA), counted there */
  double within_ms;
  uint64_t cache_hits;    /**< compiles its own cache served */
  uint64_t failed;
  double cpu_ms;          /**< toolchain processes: CPU time */
} gpujit_profile_compiler;

/** A process of the run. */
typedef struct gpujit_profile_process {
  int pid, ppid;
  const char *command;
  int ended;              /**< it said it ended (0: crashed, killed, or exec'd) */
  int gpu_recorded;       /**< CUPTI ran in it */
} gpujit_profile_process;

/** An active step of a process (the schedule's, `--step`/`--schedule`: docs/profile.md "Steps"):
 *  its wall time, the GPU work it launched, how busy the GPU was and where it sat idle. */
typedef struct gpujit_profile_step_row {
  int id;                 /**< its index in the steps (the step_* tables' "step") */
  int pid;                /**< steps are counted per process */
  uint64_t step;          /**< the step's number in its process, from 0 */
  int cycle;              /**< the schedule's repeat, from 0 */
  const char *src;        /**< where its boundaries came from: "api", "torch", "nvtx", "kernel" */
  const char *schedule;   /**< the schedule as the process noted it ("wait=80,warmup=3,active=1,repeat=1"), or "" */
  int complete;           /**< 0: still open when its process ended (the step ends at its exit, or last record) */
  double start_ms;        /**< when it began, from the start of the run */
  double wall_ms;         /**< its host time: its boundary to the next */
  double window_ms;       /**< from its start to the later of its end and its last GPU operation's end */
  uint64_t launches;      /**< host launch calls made in it (launch records) */
  uint64_t kernels, copies, memsets; /**< GPU operations launched in it (else started in it) */
  double gpu_ms;          /**< their GPU time, summed */
  double busy_ms;         /**< the union of their GPU intervals, over all devices and streams */
  double busy_pct;        /**< busy_ms of window_ms */
  double idle_ms;         /**< window_ms - busy_ms */
  uint64_t gaps;          /**< idle gaps between consecutive operations of a stream, all streams */
  double gap_ms;          /**< their sum */
  double gap_median_us, gap_p90_us, gap_max_us;
  double host_wait_ms;    /**< the GPU idle (every stream of the process) while the host was still
                               issuing: a gap whose next operation's launch call returned after the
                               previous operation ended */
  double host_wait_pct;   /**< host_wait_ms of window_ms */
  const char *verdict;    /**< "gpu-bound", "launch-bound", "host-bound", "mixed", "no-gpu-work" */
  const char *summary;    /**< the verdict as a sentence, as the text report prints it */
} gpujit_profile_step_row;
/** A step's work on one GPU. */
typedef struct gpujit_profile_step_device {
  int step;               /**< the step's id */
  uint32_t device;
  uint64_t ops;
  double busy_ms, busy_pct; /**< the union of its operations' intervals; of the step's window */
} gpujit_profile_step_device;
/** A step's work on one stream. */
typedef struct gpujit_profile_step_stream {
  int step;               /**< the step's id */
  uint32_t device, stream;
  uint64_t ops;
  double busy_ms;         /**< the union of its operations' intervals */
  double span_ms;         /**< its first operation's start to its last one's end */
  double start_ms;        /**< its first operation's start, from the step's start */
  uint64_t gaps;          /**< between consecutive operations in start order (ops - 1) */
  double gap_ms, gap_median_us, gap_p90_us, gap_max_us;
  double host_wait_ms;    /**< of gap_ms, the gaps whose next operation's launch returned after the previous one ended */
} gpujit_profile_step_stream;
/** A kernel of a step: its launches in the step and their GPU time (the top ones by time). */
typedef struct gpujit_profile_step_kernel {
  int step;               /**< the step's id */
  const char *name;       /**< the kernel's symbol */
  uint64_t count;
  double total_ms, mean_us;
} gpujit_profile_step_kernel;
/** A kernel region (gpujit/regions.cuh) of a module the profiled program loaded, whoever compiled it:
 *  its calls over the reads of the run — a scheduled profile's active steps, the module's unload, its
 *  context's end, the process's exit (docs/profile.md, "Kernel regions"). One row per module and
 *  region, in the order each was first read. */
typedef struct gpujit_profile_region {
  int pid;
  const char *module;     /**< the module row of the load with its handle, else the handle "0x…" */
  const char *kernels;    /**< the kernels launched from the module (its kernel sums), ", "-separated, or "" */
  uint64_t handle;        /**< the module (or library) handle it was bound through */
  const char *scope;      /**< who recorded: "warp", "block", "thread" */
  const char *region;     /**< its name; "" where the module recorded no call (events dropped or unmatched only) */
  uint32_t depth;         /**< nesting depth of its first call: 0 outermost */
  uint64_t calls;         /**< a unit's begin and end, over every unit, launch and read */
  double cycles_mean, cycles_median, cycles_p99, cycles_max; /**< SM cycles (clock64) per call */
  double ns_mean, ns_median, ns_p99, ns_max;                 /**< nanoseconds (%globaltimer) per call */
  double total_ns;        /**< over every call */
  double sm_imbalance;    /**< the busiest SM's cycles in it over the mean SM's (1: even) */
  double unit_imbalance;  /**< the same across units (warps, blocks or threads) */
  uint32_t sms, units;    /**< SMs and units that ran it (the most of any read) */
  uint64_t reads;         /**< the module's reads (active steps' ends, unload, exit: the same in each of its
                               rows); over several, a region's median and p99 are its reads' own weighted by
                               their calls, and its mean, max and calls are exact */
  uint64_t events, dropped, unmatched; /**< the module's over its reads (the same in each of its rows):
                               events read, dropped for want of room (GPUJIT_PROFILE_REGIONS sizes the buffer),
                               without their other half */
  uint64_t launches;      /**< the module's launches its reads' events came from */
  uint64_t min_call_cycles; /**< the module's shortest call: what one begin and end cost at most */
} gpujit_profile_region;

/** The kinds of values a profile's tables hold. */
typedef enum gpujit_profile_field_type {
  GPUJIT_FIELD_STR,  /**< const char * */
  GPUJIT_FIELD_INT,  /**< int */
  GPUJIT_FIELD_U32,  /**< uint32_t */
  GPUJIT_FIELD_U64,  /**< uint64_t */
  GPUJIT_FIELD_F64,  /**< double */
  GPUJIT_FIELD_BOOL  /**< int, 0 or 1 */
} gpujit_profile_field_type;

/** One field of a profile's table: its key in the JSON (and in Python's dicts), what it holds,
 *  and where it is in the table's struct. */
typedef struct gpujit_profile_field {
  const char *key;
  gpujit_profile_field_type type;
  size_t offset;
  int optional;           /**< left out of the JSON when zero or "" */
} gpujit_profile_field;

/** The tables of a profile; each is one JSON section. */
typedef enum gpujit_profile_table {
  GPUJIT_PROFILE_TOTALS,    /**< "totals": gpujit_profile_totals */
  GPUJIT_PROFILE_OPTIONS,   /**< "options": gpujit_profile_options (what the run changed in the program) */
  GPUJIT_PROFILE_DEVICES,   /**< "devices": gpujit_profile_device rows */
  GPUJIT_PROFILE_MODULES,   /**< "modules": gpujit_profile_module rows */
  GPUJIT_PROFILE_COMPILES,  /**< "compiles": gpujit_profile_compile rows */
  GPUJIT_PROFILE_PROCESSES, /**< "processes": gpujit_profile_process rows */
  GPUJIT_PROFILE_COMPILERS, /**< "compilers": gpujit_profile_compiler rows */
  GPUJIT_PROFILE_STAGES,    /**< "stages": gpujit_profile_stage rows */
  GPUJIT_PROFILE_STEPS,     /**< "steps": gpujit_profile_step_row rows, the active steps */
  GPUJIT_PROFILE_STEP_DEVICES, /**< "step_devices": gpujit_profile_step_device rows */
  GPUJIT_PROFILE_STEP_STREAMS, /**< "step_streams": gpujit_profile_step_stream rows */
  GPUJIT_PROFILE_STEP_KERNELS, /**< "step_kernels": gpujit_profile_step_kernel rows, up to 10 per step */
  GPUJIT_PROFILE_REGIONS,   /**< "kernel_regions": gpujit_profile_region rows */
  GPUJIT_PROFILE_NTABLES
} gpujit_profile_table;

/**
 * The fields of one table, in the order the JSON writes them: the one description `gpujit
 * profile --json`, gpujit.profile() and any other reader of the structs share.
 * @param name receives the table's JSON key ("totals", "modules", …); may be NULL.
 * @param n receives the number of fields.
 * @return the fields, or NULL for an unknown table.
 */
GPUJIT_API const gpujit_profile_field *gpujit_profile_fields(gpujit_profile_table table, const char **name, size_t *n);

/**
 * A table's rows: a pointer to the first struct and how many (1 for totals and options).
 * @param stride receives the size of one row's struct.
 * @return the number of rows (0 for an unknown table or a NULL profile).
 */
GPUJIT_API size_t gpujit_profile_table_rows(const gpujit_profile *p, gpujit_profile_table table, const void **rows,
                                            size_t *stride);

/**
 * Run argv (argv[0] looked up in PATH) with the injection library inside it and its children,
 * wait for it (SIGINT, SIGTERM and SIGHUP are passed on to it), and read what it recorded.
 * @param out receives the profile (free with gpujit_profile_free()), also when the command failed.
 * @return 0 (the command's own status is in the totals), GPUJIT_EINVAL (no command),
 *   GPUJIT_ENOENT (the command or the injection library not found), GPUJIT_EIO.
 */
GPUJIT_API int gpujit_profile_run(gpujit_profile **out, char *const argv[], const gpujit_profile_options *opts);

/** Read a records directory (written by a run). */
GPUJIT_API int gpujit_profile_load(gpujit_profile **out, const char *records_dir);

/**
 * A range of one process's profile — what began in it between t0 and t1 (host CLOCK_REALTIME,
 * ns): its compiles, links and loads, its kernels, copies and memsets (from their own records: a
 * range sees those within the trace budget, --max-events), the driver's JIT. For the calling
 * process, CUPTI's buffers are flushed to the records first. Nothing in a range is partial;
 * totals.wall_ms is the range's length.
 * @return 0, GPUJIT_EINVAL (NULL argument, t1 before t0), GPUJIT_ENOENT, GPUJIT_ENOMEM.
 */
GPUJIT_API int gpujit_profile_load_range(gpujit_profile **out, const char *records_dir, int pid, uint64_t t0_ns,
                                         uint64_t t1_ns);

/**
 * Whether this process runs under `gpujit profile` (its injection library loaded and recording).
 * @param records_dir receives where its records go (borrowed from the environment), may be NULL.
 * @return 1 or 0.
 */
GPUJIT_API int gpujit_profile_recording(const char **records_dir);

GPUJIT_API void gpujit_profile_free(gpujit_profile *p);

/** An in-process profile of the calling process (gpujit.profile in a plain `python app.py`). */
typedef struct gpujit_profile_session gpujit_profile_session;

/**
 * Start recording this process as `gpujit profile` records a command, without having been started
 * by it: the injection library is loaded into the process now (its settings given by this call,
 * nothing set in the environment, no child followed), the calls the loaded libraries make to NVRTC,
 * nvJitLink, libNVVM, the driver's module loads and CUPTI's take-over functions are rebound to its
 * wrappers (function pointers the program already resolved into its libraries' data included), and
 * CUPTI is attached as `opts->schedule` wants it — now, or from the first warmup step to the step
 * after the last active one. What it cannot see is said in the profile's notes. One session at a
 * time; `opts` as gpujit_profile_run() takes them (no_frameworks is the caller's: the Python
 * adapters are Python's to start).
 * @param out receives the session (end it with gpujit_profile_stop(), free it with
 *   gpujit_profile_session_free()).
 * @return 0, GPUJIT_EINVAL (a bad step source or schedule), GPUJIT_EVERSION, GPUJIT_ENOENT (no
 *   injection library), GPUJIT_EBUSY (a session is on already, or `gpujit profile` runs this
 *   process: its own records are there, gpujit_profile_recording()), GPUJIT_EIO, GPUJIT_ENOMEM.
 */
GPUJIT_API int gpujit_profile_start(gpujit_profile_session **out, const gpujit_profile_options *opts);

/** The session's records directory and the injection library it loaded (borrowed: they live as
 *  long as `s`); NULL for a NULL session. */
GPUJIT_API const char *gpujit_profile_session_dir(const gpujit_profile_session *s);
GPUJIT_API const char *gpujit_profile_session_inject(const gpujit_profile_session *s);

/**
 * End the session — CUPTI flushed, detached and finalized, every rebound call put back — and read
 * what it recorded as gpujit_profile_load_range() reads the process from the session's start to
 * now: compiles, loads, kernels, the active steps, and the notes (what was not seen, and why).
 * @param out receives the profile (free with gpujit_profile_free()); it may be read and written
 *   (gpujit_profile_trace(), gpujit_profile_save()) after the session is freed.
 * @return 0, GPUJIT_EINVAL (NULL argument, the session stopped already), GPUJIT_ENOMEM.
 */
GPUJIT_API int gpujit_profile_stop(gpujit_profile_session *s, gpujit_profile **out);

/** Free a session (stopping it first if it is on). Its records directory, made by the session, is
 *  removed when neither it nor a profile read from it holds it. NULL: nothing. */
GPUJIT_API void gpujit_profile_session_free(gpujit_profile_session *s);

/** The module rows, sorted by total cost (compile + load + GPU), largest first. */
GPUJIT_API size_t gpujit_profile_modules(const gpujit_profile *p, const gpujit_profile_module **rows);
GPUJIT_API size_t gpujit_profile_devices(const gpujit_profile *p, const gpujit_profile_device **rows);
GPUJIT_API void gpujit_profile_totals_get(const gpujit_profile *p, gpujit_profile_totals *out);
/** The compiles, in the order they started. */
GPUJIT_API size_t gpujit_profile_compiles(const gpujit_profile *p, const gpujit_profile_compile **rows);
/** The processes of the run (of a range: the one process). */
GPUJIT_API size_t gpujit_profile_processes(const gpujit_profile *p, const gpujit_profile_process **rows);
/** The active steps, in process and step order (docs/profile.md, "Steps"); their devices,
 *  streams and top kernels are the tables GPUJIT_PROFILE_STEP_*, each row naming its step's id. */
GPUJIT_API size_t gpujit_profile_steps(const gpujit_profile *p, const gpujit_profile_step_row **rows);
/** The kernel regions read in the profiled program's modules, per module and region
 *  (docs/profile.md, "Kernel regions"). */
GPUJIT_API size_t gpujit_profile_regions(const gpujit_profile *p, const gpujit_profile_region **rows);
/** What the run noted once each (CUPTI unavailable, options that changed the compiles, …), one per line. */
GPUJIT_API const char *gpujit_profile_notes(const gpujit_profile *p);

/**
 * The report as text: the title line, totals, one line per device, the module rows (the first
 * `top`, 0 for all) and the notes — the table `gpujit profile` prints.
 * @param out receives the text (caller frees with gpujit_free()).
 * @return 0, GPUJIT_EINVAL, GPUJIT_ENOMEM.
 */
GPUJIT_API int gpujit_profile_format(const gpujit_profile *p, const char *title, long top, char **out);

/** The version of the profile's JSON ("format": "gpujit-profile"): raised when a key changes
 *  meaning or goes away (new keys may come within a version). docs/json.md. */
#define GPUJIT_PROFILE_JSON_VERSION 1

/** The whole profile as JSON: "format" ("gpujit-profile") and "version" first, then each table
 *  of gpujit_profile_fields() under its name, then "notes" (a list of lines).
 *  @param out receives the text (caller frees with gpujit_free()). */
GPUJIT_API int gpujit_profile_json(const gpujit_profile *p, char **out);

/** Write a Trace Event Format file (Perfetto, chrome://tracing, `gpujit trace analyze`): a track
 *  per host thread with compile and load spans, a track per device and stream with kernels,
 *  copies and memsets, NVTX ranges, a flow from each compile to its module's first launch; for
 *  recorded steps, a "steps" track per process, each launch's host side on its thread and a
 *  flow from it to what it launched. */
GPUJIT_API int gpujit_profile_trace(const gpujit_profile *p, const char *path);

/** The command line the profile ran, words a shell would take back ("" when not known: a records
 *  directory read with gpujit_profile_load()). Borrowed: lives as long as `p`. */
GPUJIT_API const char *gpujit_profile_command(const gpujit_profile *p);

/** The version of a saved profile's format (docs/profile.md, "Saved profiles"): raised when what
 *  it holds changes meaning; a reader refuses another version, naming both. */
#define GPUJIT_PROFILE_SAVED_VERSION 1

/**
 * Save a profile to one file that gpujit_profile_open() (`gpujit profile report`) reads again:
 * a POSIX tar of its records and a manifest of what the run knew beside them (the command, its
 * exit status and wall time, the options, the notes). A regular file is replaced whole (nothing
 * is replaced on error), a FIFO or character device written through; a link, directory or socket
 * is refused.
 * @return 0, GPUJIT_EINVAL (NULL argument, a path gpujit does not write), GPUJIT_ENOENT (no such
 *   directory), GPUJIT_EIO (a record unreadable, the file unwritable), GPUJIT_ENOMEM.
 */
GPUJIT_API int gpujit_profile_save(const gpujit_profile *p, const char *path);

/**
 * Open a saved profile (gpujit_profile_save()), or a records directory (`--keep`), as the run
 * reported it: the same rows, totals and notes, without running anything.
 * @param out receives the profile (free with gpujit_profile_free()).
 * @return 0, GPUJIT_EINVAL (NULL argument), GPUJIT_ENOENT (nothing at `path`), GPUJIT_EIO (not a
 *   regular file or directory, unreadable), GPUJIT_ECORRUPT (not a saved profile, truncated or
 *   damaged: the message says which and where), GPUJIT_EVERSION (a version this library does not
 *   read, both named), GPUJIT_ENOMEM.
 */
GPUJIT_API int gpujit_profile_open(gpujit_profile **out, const char *path);

/**
 * Write one self-contained HTML page of the profile (no network: its styles, script and data are
 * inside it): the totals; per module the compile, load and GPU time as bars, launches and
 * break-even, in a table that sorts; the time by compiler and by process; and the timeline of
 * compiles, loads, kernels, copies and memsets per process, thread, device and stream. Every
 * string from the records is escaped. Written as gpujit_profile_save() writes its file.
 * @return 0, GPUJIT_EINVAL, GPUJIT_ENOENT, GPUJIT_EIO, GPUJIT_ENOMEM.
 */
GPUJIT_API int gpujit_profile_html(const gpujit_profile *p, const char *path);

GPUJIT_END_DECLS

#endif
