/* NVRTC and nvJitLink stages: option validation, flag building, compiling, linking. */
#ifndef GPUJIT_COMPILE_H
#define GPUJIT_COMPILE_H

#include "gpujit/module.h"
#include "internal.h"

/** How many NVRTC compiles this process ran (tests check that hits run none). */
extern unsigned long gpujit__nvrtc_compiles;
/** Once per process: load NVRTC's supported arch list and versions. */
int gpujit__nvrtc_init(void);
/** Arch syntax and NVRTC support (initialises NVRTC). */
int gpujit__check_arch_supported(const char *arch);
/** Whether NVRTC supports numeric arch `arch` (e.g. 90). */
bool gpujit__nvrtc_arch_supported(int arch);
/** Translate an nvrtcResult (passed as int) into a gpujit code with a message. */
int gpujit__nvrtc_error(int result, const char *what);

/** Resolve opts->arch (NULL → default) into `out` (at least 32 bytes). */
int gpujit__resolve_arch(char *out, size_t size, const char *arch);
/** The image kind for an arch and requested output. */
gpujit_output_kind gpujit__resolve_output(const char *arch, gpujit_output_kind requested);

/** Build NVRTC flags for one source in `source_dir`; `lto` adds -dlto -rdc=true. */
int gpujit__nvrtc_flags(gpujit__strvec *out, const gpujit_module_options *opts, const char *arch,
                        const char *source_dir, bool lto, const char *time_trace_file);

/** Toolkit include directories baked in at build time, or from $CUDA_PATH / $CUDA_HOME. */
const char *gpujit__cuda_root(void);

/** One NVRTC compile's results. */
typedef struct gpujit__nvrtc_result {
  gpujit__buf image; /* cubin, PTX or LTO-IR */
  gpujit__buf log;
  gpujit__strvec lowered; /* parallel to the name expressions */
} gpujit__nvrtc_result;

/** Compile `source` named `program_name` (its absolute path). */
int gpujit__nvrtc_compile(gpujit__nvrtc_result *out, const char *source, const char *program_name,
                          const gpujit__strvec *flags, const char *const *name_exprs,
                          size_t name_exprs_count, gpujit_output_kind output);
void gpujit__nvrtc_result_free(gpujit__nvrtc_result *r);

/** Find the first diagnostic in an NVRTC log as "file:line:col: message". */
void gpujit__first_diagnostic(char *out, size_t size, const char *log);

/** Link LTO-IR inputs with nvJitLink into a cubin (or PTX for a virtual arch). */
int gpujit__link(gpujit__buf *image, gpujit__buf *info_log, const gpujit__buf *inputs,
                 const char *const *names, size_t count, const gpujit_module_options *opts,
                 const char *arch, gpujit_output_kind output, bool timing);

/** Kernel (entry function) names from a cubin (ELF) or PTX image. */
int gpujit__image_kernels(gpujit__strvec *out, const void *image, size_t size,
                          gpujit_output_kind kind);

/** Per-kernel resources as ptxas -v reports them. */
typedef struct gpujit__kernel_resources {
  int registers, shared_bytes, stack_bytes, spill_stores, spill_loads;
} gpujit__kernel_resources;

/** Find `kernel`'s resources in a compile log with ptxas info; GPUJIT_ENOENT if absent. */
int gpujit__ptxas_resources(gpujit__kernel_resources *out, const char *log, const char *kernel);

/** Kernel parameter count and sizes from a cubin's .nv.info; -1 when unknown. */
int gpujit__cubin_params(const void *image, size_t size, const char *kernel, int *sizes, int max);

/**
 * Rewrite old_base to new_base in a cubin's .debug_line directory and file tables (any
 * lengths). GPUJIT_EUNSUPPORTED, image untouched, when the layout is not the expected one.
 */
int gpujit__cubin_rebase(gpujit__buf *image, const char *old_base, const char *new_base);

/** GPU arch of device 0 through the driver, e.g. "sm_90"; GPUJIT_ENODRIVER/ENODEVICE otherwise. */
int gpujit__driver_arch(char *out, size_t size);

#endif
