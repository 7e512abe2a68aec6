/* Project builds: many modules at once. Cache hits are served in the calling process; misses
 * compile in long-lived worker processes (NVRTC does not scale over threads of one process),
 * which keep NVRTC's precompiled headers between the modules they compile. */
#ifndef GPUJIT_PROJECT_H
#define GPUJIT_PROJECT_H

#include "common.h"
#include "module.h"

GPUJIT_BEGIN_DECLS

typedef struct gpujit_project gpujit_project;

/** @return 0 or GPUJIT_ENOMEM. */
GPUJIT_API int gpujit_project_create(gpujit_project **out);

/** Free a project and its results (and the modules they hold); NULL is a no-op. */
GPUJIT_API void gpujit_project_free(gpujit_project *project);

/**
 * Add one module: `files` (one, or several linked by nvJitLink) built with `opts` (NULL: the
 * build's defaults; their trace and cache are ignored: the build's are used). Everything is copied.
 * @param name NULL: the first file's base name without extension.
 * @param output where the image is written (atomically), or NULL for none.
 * @return 0, GPUJIT_EINVAL (no files, bad options) or GPUJIT_ENOMEM.
 */
GPUJIT_API int gpujit_project_add(gpujit_project *project, const char *name, const char *const *files,
                                  size_t count, const gpujit_module_options *opts, const char *output);

/**
 * Add every `*.cu` beneath `dir` (recursively, in path order), each its own module named by its
 * path relative to `dir` without extension. Outputs: under `out_dir` mirroring the tree, or beside
 * each source when `out_dir` is NULL; `ext` is the output extension ("cubin", "ptx", "ltoir").
 * @return 0, GPUJIT_ENOENT (no such directory, or no .cu file in it), GPUJIT_EIO, GPUJIT_ENOMEM.
 */
GPUJIT_API int gpujit_project_add_dir(gpujit_project *project, const char *dir, const char *out_dir,
                                      const gpujit_module_options *opts, const char *ext);

/**
 * Add the modules of a JSON manifest:
 *   {"modules": [{"name": "…", "files": ["a.cu", "b.cu"], "output": "out/a.cubin",
 *                 "options": {"arch": "sm_90", "defines": ["N=4"], "include_dirs": […],
 *                             "undefines": […], "std": "c++17", "fast_math": true, "lineinfo": true,
 *                             "maxrregcount": 64, "name_expressions": […], "nvrtc_options": […]}}]}
 * Relative paths are taken from the manifest's directory; a module's options are laid over `opts`.
 * A module without "output" goes under `out_dir` (or beside its first file) as NAME.`ext`.
 * @return 0, GPUJIT_ENOENT/GPUJIT_EIO, GPUJIT_EPARSE (the message names the module and field).
 */
GPUJIT_API int gpujit_project_add_manifest(gpujit_project *project, const char *path, const char *out_dir,
                                           const gpujit_module_options *opts, const char *ext);

/** @return the number of modules added. */
GPUJIT_API size_t gpujit_project_count(const gpujit_project *project);

/** How a module of a project build ended. */
typedef enum gpujit_project_status {
  GPUJIT_PROJECT_PENDING = 0, /**< not built (yet) */
  GPUJIT_PROJECT_HIT = 1,     /**< served from the cache by the calling process */
  GPUJIT_PROJECT_BUILT = 2,   /**< compiled by a worker (a cache miss, or uncached) */
  GPUJIT_PROJECT_FAILED = 3,  /**< did not compile, or its worker died: see error and message */
  GPUJIT_PROJECT_CANCELLED = 4
} gpujit_project_status;

/** One module's result. Strings are borrowed from the project. */
typedef struct gpujit_project_result {
  size_t index;
  const char *name;
  const char *output;  /**< written image, or NULL */
  gpujit_project_status status;
  int error;           /**< 0, or the gpujit error code */
  const char *message; /**< the error's one-line message, or "" */
  const char *log;     /**< the full NVRTC/nvJitLink log (diagnostics), or "" */
  int worker;          /**< 0: the calling process; 1..N: the worker that compiled it */
  double compile_ms;   /**< NVRTC + nvJitLink in the worker (0 for a hit) */
  double wall_ms;      /**< from dispatch to result */
  double start_ms;     /**< when it started, from the build's start */
  gpujit_pch_status pch;
  const char *pch_reason;
  const gpujit_module *module; /**< with keep_modules: the module (owned by the project) */
  const char *miss_reason;     /**< built on a cache miss: why it missed (as
                                    gpujit_module_cache_miss_reason()); else "" */
} gpujit_project_result;

/** Where a build stands (for progress displays). */
typedef struct gpujit_project_progress {
  size_t total, done, running, hits, failed;
  double elapsed_ms;
  double eta_ms; /**< estimated time left; < 0 while unknown */
} gpujit_project_progress;

#define GPUJIT_PROJECT_OPTIONS_VERSION 1

typedef struct gpujit_project_options {
  unsigned int version;
  int jobs;             /**< worker processes; 0: the number of online CPUs */
  gpujit_cache *cache;  /**< hits are served from it and misses stored to it (NULL: uncached) */
  gpujit_trace *trace;  /**< one trace: a track per worker, each module's span with NVRTC phases */
  int keep_modules;     /**< keep each module in its result (else only outputs are written) */
  int pch;              /**< 1 (default): managed precompiled headers in workers; 0: off */
  /** Called on the calling thread as each module ends. */
  void (*on_module)(void *user, const gpujit_project_result *result);
  /** Called on the calling thread after each change and at least every 100 ms while waiting. */
  void (*on_progress)(void *user, const gpujit_project_progress *progress);
  void *user;
  /** When it reads non-zero (e.g. set by a SIGINT handler) the build stops: workers are ended,
   *  modules not done are CANCELLED, the cache stays consistent. */
  volatile int *cancel;
  /** The worker executable; NULL: $GPUJIT_WORKER, else gpujit-worker beside the library or in
   *  ../libexec/gpujit/ from it. */
  const char *worker_path;
} gpujit_project_options;

#define GPUJIT_PROJECT_OPTIONS_INIT { GPUJIT_PROJECT_OPTIONS_VERSION, 0, NULL, NULL, 0, 1, NULL, NULL, NULL, NULL, NULL }

/** @return 0, or GPUJIT_EVERSION. */
GPUJIT_API int gpujit_project_options_init(gpujit_project_options *opts, unsigned int version);

/**
 * Build every module. A failing module does not stop the others.
 * @return 0 when all were built; GPUJIT_ECOMPILE when any failed (see the results);
 *   GPUJIT_ECANCELLED when cancelled; GPUJIT_EWORKER when no worker could be started;
 *   GPUJIT_EINVAL, GPUJIT_EVERSION, GPUJIT_ENOMEM.
 */
GPUJIT_API int gpujit_project_build(gpujit_project *project, const gpujit_project_options *opts);

/** @return module i's result (valid until the project is freed or built again), or NULL. */
GPUJIT_API const gpujit_project_result *gpujit_project_result_get(const gpujit_project *project, size_t i);

/** What a build did, in total. */
typedef struct gpujit_project_summary {
  size_t modules, hits, built, failed, cancelled;
  int workers;          /**< worker processes started (replacements included) */
  double wall_ms;       /**< the whole build */
  double compile_ms;    /**< the sum of all modules' compile time */
  double critical_ms;   /**< the busiest worker's span: what bounds the wall time */
  size_t pch_created, pch_used;
} gpujit_project_summary;

GPUJIT_API void gpujit_project_summary_get(const gpujit_project *project, gpujit_project_summary *out);

GPUJIT_END_DECLS

#endif
