/* Modules: CUDA C sources compiled with NVRTC (and linked with nvJitLink) into one image. */
#ifndef GPUJIT_MODULE_H
#define GPUJIT_MODULE_H

#include "common.h"

GPUJIT_BEGIN_DECLS

typedef struct gpujit_module gpujit_module;
typedef struct gpujit_trace gpujit_trace; /* see gpujit/trace.h */
typedef struct gpujit_cache gpujit_cache; /* see gpujit/cache.h */

/** What the image holds. */
typedef enum gpujit_output_kind {
  GPUJIT_OUTPUT_AUTO = 0, /**< cubin for a real arch (sm_XX), PTX for a virtual one (compute_XX) */
  GPUJIT_OUTPUT_CUBIN = 1,
  GPUJIT_OUTPUT_PTX = 2,
  GPUJIT_OUTPUT_LTOIR = 3 /**< NVVM LTO-IR, for a later nvJitLink link (single-file modules) */
} gpujit_output_kind;

/** Where a module came from. */
typedef enum gpujit_cache_status {
  GPUJIT_CACHE_NONE = 0, /**< no cache was used */
  GPUJIT_CACHE_HIT = 1,
  GPUJIT_CACHE_MISS = 2
} gpujit_cache_status;

/** An in-memory source. `name` is the path diagnostics and the line table name. */
typedef struct gpujit_source {
  const char *name;
  const char *data;
  size_t size;
} gpujit_source;

/** NVRTC's automatic precompiled headers (PCH), managed by gpujit. A PCH lives in the process
 *  that made it: it pays when later modules of that process share the leading #include block
 *  and the options. */
typedef enum gpujit_pch_mode {
  /** Create a PCH for an include block the second time this process compiles it (or the first
   *  time, in a project build's worker that has more modules of the block queued); use it after. */
  GPUJIT_PCH_AUTO = 0,
  GPUJIT_PCH_OFF = 1, /**< never create or use one (`--no-pch`) */
  GPUJIT_PCH_ON = 2   /**< create one on the first compile of an include block */
} gpujit_pch_mode;

/** What happened to the PCH in a build (see gpujit_module_pch()). */
typedef enum gpujit_pch_status {
  GPUJIT_PCH_STATUS_OFF = 0,     /**< turned off, or a cache hit (nothing compiled) */
  GPUJIT_PCH_STATUS_NONE = 1,    /**< not attempted: the reason says why (e.g. first of its block) */
  GPUJIT_PCH_STATUS_CREATED = 2, /**< this compile made one for the modules after it */
  GPUJIT_PCH_STATUS_USED = 3,    /**< this compile used one made earlier in the process */
  GPUJIT_PCH_STATUS_REFUSED = 4  /**< NVRTC would not create or use one: the reason says why */
} gpujit_pch_status;

/** Version 2 added `pch`, version 3 `lean`; older structs are still accepted (pch = AUTO,
 *  lean = 1). */
#define GPUJIT_MODULE_OPTIONS_VERSION 3

/** Compile options. Initialise with GPUJIT_MODULE_OPTIONS_INIT or gpujit_module_options_init(). */
typedef struct gpujit_module_options {
  unsigned int version;
  /** "sm_90", "sm_90a", "compute_90", … NULL: $GPUJIT_ARCH, else the GPU's arch when a
   *  driver and device are present, else GPUJIT_DEFAULT_ARCH. */
  const char *arch;
  gpujit_output_kind output;
  const char *const *include_dirs;
  size_t include_dirs_count;
  const char *const *defines; /**< "NAME" or "NAME=VALUE" */
  size_t defines_count;
  const char *const *undefines;
  size_t undefines_count;
  const char *std; /**< "c++11" … "c++20"; NULL: NVRTC's default */
  int lineinfo;        /**< default 1 */
  int line_directives; /**< default 1: after a prelude, #line 1 "FILE" restores the user's lines */
  int device_debug;    /**< -G */
  int fast_math;       /**< --use_fast_math */
  int maxrregcount;    /**< 0: none */
  const char *ofast_compile; /**< NULL, or "0", "min", "mid", "max" */
  const char *const *name_expressions; /**< e.g. "scale<float>", lowered after compile */
  size_t name_expressions_count;
  const char *const *nvrtc_options; /**< passed through verbatim */
  size_t nvrtc_options_count;
  /** optional text compiled before every source (e.g. shared macros): NVRTC pre-includes it
   *  as the in-memory header "gpujit-prelude.h", so the user's lines keep their numbers and
   *  precompiled headers still work. line_directives = 0 joins it in front of the source text
   *  instead (lines shift by the prelude's). */
  const char *prelude;
  gpujit_trace *trace; /**< optional: spans and NVRTC phases go here (borrowed) */
  gpujit_cache *cache; /**< optional: kernel cache (borrowed) */
  gpujit_pch_mode pch; /**< version 2: precompiled headers (default AUTO) */
  /** version 3, default 1: cubins and PTX are lean — NVRTC makes PTX, module-scope variables
   *  that nothing reachable uses are removed (never `.visible`/`.extern` ones, the user's own
   *  `__device__`/`__constant__` variables, nor name-expression variables), and ptxas runs
   *  through the toolkit's ptxas (bin/ptxas, whole-program as NVRTC runs it; without one, cubins
   *  are not lean). 0: NVRTC's image as it comes (`--no-lean`). Part of the cache key. */
  int lean;
} gpujit_module_options;

/** The arch used when nothing else chooses one (see gpujit_module_options.arch). */
#define GPUJIT_DEFAULT_ARCH "sm_90"

#define GPUJIT_MODULE_OPTIONS_INIT \
  { GPUJIT_MODULE_OPTIONS_VERSION, NULL, GPUJIT_OUTPUT_AUTO, NULL, 0, NULL, 0, NULL, 0, NULL, \
    1, 1, 0, 0, 0, NULL, NULL, 0, NULL, 0, NULL, NULL, NULL, GPUJIT_PCH_AUTO, 1 }

/** @return 0, or GPUJIT_EVERSION for an unknown version. */
GPUJIT_API int gpujit_module_options_init(gpujit_module_options *opts, unsigned int version);

/**
 * Check options without compiling: arch, std, maxrregcount, ofast_compile, defines.
 * @return 0, GPUJIT_EINVAL (message names the bad value) or GPUJIT_EVERSION.
 */
GPUJIT_API int gpujit_module_options_validate(const gpujit_module_options *opts);

/**
 * The arch a NULL `arch` resolves to right now ($GPUJIT_ARCH, else the GPU's, else the default).
 * @return static or thread-local storage, valid until the next call on this thread.
 */
GPUJIT_API const char *gpujit_default_arch(void);

/**
 * Compile source files into one module. One file compiles directly; several compile to
 * LTO-IR and are linked by nvJitLink.
 * @param out receives the module; the caller frees it with gpujit_module_free().
 * @return 0; GPUJIT_EINVAL (bad options/arguments), GPUJIT_ENOENT / GPUJIT_EIO (unreadable
 *   file), GPUJIT_EPARSE (empty or binary file), GPUJIT_ECOMPILE (diagnostics in
 *   gpujit_error_log()), GPUJIT_ELINK, GPUJIT_ENVRTC, GPUJIT_ENOMEM, GPUJIT_EVERSION.
 */
GPUJIT_API int gpujit_module_build_files(gpujit_module **out, const char *const *paths,
                                         size_t count, const gpujit_module_options *opts);

/** As gpujit_module_build_files(), from in-memory sources. */
GPUJIT_API int gpujit_module_build_sources(gpujit_module **out, const gpujit_source *sources,
                                           size_t count, const gpujit_module_options *opts);

/** Free a module; NULL is a no-op. */
GPUJIT_API void gpujit_module_free(gpujit_module *module);

/** @return the image bytes (borrowed: lives as long as the module); size in *size. */
GPUJIT_API const void *gpujit_module_image(const gpujit_module *module, size_t *size);

/** @return "cubin", "ptx" or "ltoir" (also the image file extension), "auto" (static). */
GPUJIT_API const char *gpujit_output_kind_name(gpujit_output_kind kind);

/** @return the image kind (never GPUJIT_OUTPUT_AUTO). */
GPUJIT_API gpujit_output_kind gpujit_module_output(const gpujit_module *module);

/** @return the arch the module was built for, e.g. "sm_90" (borrowed). */
GPUJIT_API const char *gpujit_module_arch(const gpujit_module *module);

/** @return the module name: the first source's base name without extension (borrowed). */
GPUJIT_API const char *gpujit_module_name(const gpujit_module *module);

/** @return the number of kernels (entry functions) in the image. LTO-IR lists none. */
GPUJIT_API size_t gpujit_module_kernel_count(const gpujit_module *module);

/** @return kernel i's symbol (mangled unless extern "C"), or NULL out of range (borrowed). */
GPUJIT_API const char *gpujit_module_kernel(const gpujit_module *module, size_t i);

/**
 * A kernel's parameter sizes, read from the cubin's metadata (no GPU needed).
 * @return the number of parameters, or -1 when unknown (PTX or LTO-IR images, unknown kernel).
 */
GPUJIT_API int gpujit_module_kernel_params(const gpujit_module *module, const char *kernel, int *sizes,
                                           int max);

/** A kernel parameter's type, as far as it is known. */
typedef enum gpujit_param_type {
  GPUJIT_PARAM_UNKNOWN = 0, /**< only its size is known (an extern "C" kernel's parameter) */
  GPUJIT_PARAM_POINTER,     /**< any pointer (a device address) */
  GPUJIT_PARAM_BOOL,
  GPUJIT_PARAM_I8, GPUJIT_PARAM_U8, GPUJIT_PARAM_I16, GPUJIT_PARAM_U16,
  GPUJIT_PARAM_I32, GPUJIT_PARAM_U32, GPUJIT_PARAM_I64, GPUJIT_PARAM_U64,
  GPUJIT_PARAM_F16, GPUJIT_PARAM_BF16, GPUJIT_PARAM_F32, GPUJIT_PARAM_F64,
  GPUJIT_PARAM_RECORD       /**< a struct, vector or wider type passed by value: bytes only */
} gpujit_param_type;

/** @return the type's C name ("float", "pointer", "unknown", ...); static. */
GPUJIT_API const char *gpujit_param_type_name(gpujit_param_type type);

/** @return bytes a parameter of this type takes; 0 for UNKNOWN and RECORD. */
GPUJIT_API size_t gpujit_param_type_size(gpujit_param_type type);

/**
 * A kernel's parameter types: from its mangled symbol (a C++ kernel's types are in it), checked
 * against the cubin's parameter sizes; an extern "C" kernel's parameters are UNKNOWN with the
 * sizes the cubin gives (`sizes` may be NULL).
 * @param count receives the number of parameters, or -1 when neither source knows them (a PTX
 *        image of an extern "C" kernel).
 * @return 0, GPUJIT_EINVAL (NULL argument), GPUJIT_ENOENT (no such kernel in the module).
 */
GPUJIT_API int gpujit_module_kernel_param_types(const gpujit_module *module, const char *kernel,
                                                gpujit_param_type *types, int *sizes, int max, int *count);

/**
 * Parse a written signature: C types separated by commas, names optional ("float a, const float *x,
 * int n"); "" or "void" is no parameters. Pointers of any type are POINTER.
 * @return 0, or GPUJIT_EINVAL naming the parameter that is no type gpujit can pass.
 */
GPUJIT_API int gpujit_param_types_parse(gpujit_param_type *types, int max, int *count, const char *signature);

/** @return the lowered (mangled) name of a name expression given at build, or NULL (borrowed). */
GPUJIT_API const char *gpujit_module_lowered_name(const gpujit_module *module,
                                                  const char *name_expression);

/** @return the number of name expressions the module was built with. */
GPUJIT_API size_t gpujit_module_name_expression_count(const gpujit_module *module);

/** @return name expression i and, through *lowered, its lowered name (borrowed); NULL out of range. */
GPUJIT_API const char *gpujit_module_name_expression(const gpujit_module *module, size_t i,
                                                     const char **lowered);

/** @return the full NVRTC (and nvJitLink info) log of the build; "" when empty (borrowed). */
GPUJIT_API const char *gpujit_module_log(const gpujit_module *module);

/** Where the time of a build went, in milliseconds (0 for stages that did not run). */
typedef struct gpujit_module_timings {
  double read_ms;    /**< reading source files */
  double hash_ms;    /**< hashing the cache key (cache issue) */
  double lookup_ms;  /**< cache lookup */
  double compile_ms; /**< NVRTC, all sources (lean: with the lean pass and ptxas after it) */
  double link_ms;    /**< nvJitLink */
  double store_ms;   /**< cache store */
  double total_ms;   /**< the whole build call */
  double saved_ms;   /**< on a cache hit: the compile and link time the entry recorded */
  /** NVRTC's own phases, known when the compile ran under a trace (on a hit: as recorded) */
  double front_end_ms, optimizer_ms, codegen_ms, ptxas_ms;
} gpujit_module_timings;

/** Copy the build's timings into *out. */
GPUJIT_API void gpujit_module_timings_get(const gpujit_module *module, gpujit_module_timings *out);

/**
 * What happened to NVRTC's precompiled header in this build.
 * @param reason receives why (e.g. "options differ from the PCH's"), or "" (borrowed); may be NULL.
 */
GPUJIT_API gpujit_pch_status gpujit_module_pch(const gpujit_module *module, const char **reason);

/** What the lean path did in a build (recorded with the cache entry, so a hit says it too). */
typedef struct gpujit_module_lean {
  int applied;              /**< 1: the PTX went through the lean pass before ptxas */
  size_t ptx_bytes_before;  /**< NVRTC's PTX (a linked module's: nvJitLink's) */
  size_t ptx_bytes_after;   /**< what ptxas was given */
  size_t variables;         /**< module-scope .global/.const variables without linkage */
  size_t removed;           /**< of those, removed: nothing reachable used them */
  size_t kept_unreferenced; /**< of those, nothing used them but they may be the user's */
  double pass_ms;           /**< the lean pass */
  double ptxas_ms;          /**< the toolkit's ptxas (0 for PTX output) */
  const char *note;         /**< why nothing was removed (a construct not understood), or "" (borrowed) */
} gpujit_module_lean;

/** Copy what the lean path did into *out (all zero when it did not apply). */
GPUJIT_API void gpujit_module_lean_get(const gpujit_module *module, gpujit_module_lean *out);

/** @return "off", "none", "created", "used" or "refused" (static). */
GPUJIT_API const char *gpujit_pch_status_name(gpujit_pch_status status);

/** @return whether the module came from the cache. */
GPUJIT_API gpujit_cache_status gpujit_module_cache_status(const gpujit_module *module);
/** 1 when this build cannot be cached (it expands __TIME__, __DATE__ or __TIMESTAMP__, or has
 *  NVRTC options the cache cannot track): compiled every time, counted as "uncacheable" in the
 *  cache's stats, not as a miss; why is in gpujit_module_cache_miss_reason. 0 otherwise, NULL included. */
GPUJIT_API int gpujit_module_uncacheable(const gpujit_module *module);

/** Why the cache missed, for a module compiled on a miss: which recorded header changed and how,
 *  what differs from the module's last build (an option, a define, the arch, the toolkit, a
 *  source's text), an evicted entry, or never built; "" for a hit or without a cache (borrowed).
 *  The CLI logs it with -v. */
GPUJIT_API const char *gpujit_module_cache_miss_reason(const gpujit_module *module);

/** @return the module's cache key as 32 hex digits, or NULL when no cache was used (borrowed). */
GPUJIT_API const char *gpujit_module_cache_key(const gpujit_module *module);

/**
 * Write the image to `path` atomically (temp file in the same directory, rename; not fsynced,
 * as compilers do). A file that holds these bytes already is left alone, its mtime too, so
 * nothing downstream rebuilds.
 * @return 0 or GPUJIT_EIO (message names the path and the errno text).
 */
GPUJIT_API int gpujit_module_write(const gpujit_module *module, const char *path);

/** The kinds of entries of a module's record (gpujit_module_record()). */
typedef enum gpujit_module_record_kind {
  GPUJIT_MODULE_RECORD_STRING,  /**< value->string */
  GPUJIT_MODULE_RECORD_NUMBER,  /**< value->number */
  GPUJIT_MODULE_RECORD_BOOL,    /**< value->number, 0 or 1 */
  GPUJIT_MODULE_RECORD_STRINGS, /**< a list: value->strings, value->count of them */
  GPUJIT_MODULE_RECORD_OBJECT,  /**< an object opens under `key`: the entries up to its END are its own */
  GPUJIT_MODULE_RECORD_END      /**< the object opened last closes (`key` NULL) */
} gpujit_module_record_kind;

/** An entry's value; which member holds it, its kind says. Borrowed: valid during the call. */
typedef struct gpujit_module_record_value {
  const char *string;
  double number;
  const char *const *strings;
  size_t count;
} gpujit_module_record_value;

/** Called for each entry of a record; a negative return stops the walk. */
typedef int (*gpujit_module_record_fn)(const char *key, gpujit_module_record_kind kind,
                                       const gpujit_module_record_value *value, void *payload);

/**
 * A built module's record, entry by entry, with the keys and in the order of a module's record
 * in the "gpujit-build" JSON (docs/json.md): "arch", "kind", "size", "kernels",
 * "lowered_names" (an object: each name expression's symbol, "" when none), "key" (with a
 * cache), "miss_reason" (when it missed), "uncacheable" (when it cannot be cached), "lean" (an
 * object, when the lean pass ran), "time_ms" (an object: read, hash, lookup, compile, link,
 * store, total, saved). The one place the record is made: `gpujit build --json` and
 * gpujit.build() both take it from here, so they say the same under the same names.
 * @param fn called for each entry, with `payload` last.
 * @return 0, GPUJIT_EINVAL (NULL module or fn), or the first negative value fn returned.
 */
GPUJIT_API int gpujit_module_record(const gpujit_module *module, gpujit_module_record_fn fn, void *payload);

GPUJIT_END_DECLS

#endif
