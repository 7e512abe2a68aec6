/* Running modules: devices, loaded modules, kernels, memory, launches, graphs, argument specs. */
#ifndef GPUJIT_RUN_H
#define GPUJIT_RUN_H

#include "common.h"
#include "module.h"

GPUJIT_BEGIN_DECLS

typedef struct gpujit_device gpujit_device;
typedef struct gpujit_loaded gpujit_loaded;
typedef struct gpujit_kernel gpujit_kernel;
typedef struct gpujit_graph gpujit_graph;
typedef uint64_t gpujit_devptr;

/** @return the number of CUDA devices in *out; GPUJIT_ENODRIVER when no driver can be loaded. */
GPUJIT_API int gpujit_device_count(int *out);

/**
 * The CUDA driver's version (as cuDriverGetVersion: 13000 for 13.0) and how many devices it
 * shows, loading the driver but making no context. Either out-pointer may be NULL.
 * @return 0; GPUJIT_ENODRIVER (the message says why: no libcuda, no device node, ...).
 */
GPUJIT_API int gpujit_driver_version(int *version, int *devices);

/**
 * Open a device: its primary context and a stream that every operation below uses.
 * @param ordinal -1: $GPUJIT_DEVICE, else 0.
 * @return 0, GPUJIT_ENODRIVER, GPUJIT_ENODEVICE (message says why), GPUJIT_ECUDA.
 */
GPUJIT_API int gpujit_device_open(gpujit_device **out, int ordinal);

/** Synchronise, release the context; NULL is a no-op. */
GPUJIT_API void gpujit_device_free(gpujit_device *dev);

typedef struct gpujit_device_info {
  int ordinal;
  char name[256];
  int cc_major, cc_minor;
  uint64_t total_memory;
  int multiprocessors;
  int max_threads_per_block;
  int max_block[3];
  int max_grid[3];
  int max_shared_per_block;       /**< without opt-in */
  int max_shared_per_block_optin; /**< with cuFuncSetAttribute opt-in */
  int l2_bytes;
  int driver_version;
} gpujit_device_info;

GPUJIT_API int gpujit_device_info_get(gpujit_device *dev, gpujit_device_info *out);

/** CUDA's legacy default stream (the stream CuPy and PyTorch use unless told otherwise). */
#define GPUJIT_STREAM_LEGACY ((void *)0x1)

/**
 * Issue the device's later work (launches, copies, memsets, graphs, timed regions, benchmarks) on
 * `stream`: a CUstream of the device's primary context (another framework's), or
 * GPUJIT_STREAM_LEGACY; NULL returns to the device's own stream. gpujit never destroys it.
 * @return 0, GPUJIT_EINVAL (NULL device, or a graph capture is open).
 */
GPUJIT_API int gpujit_device_set_stream(gpujit_device *dev, void *stream);

/** @return the stream the device issues work on (its own unless set). */
GPUJIT_API void *gpujit_device_stream(const gpujit_device *dev);

/** Wait for every stream of the device's context (gpujit_synchronize waits for its stream).
 *  @return 0, or the error of work that failed (GPUJIT_ECUDA). */
GPUJIT_API int gpujit_device_synchronize(gpujit_device *dev);

/**
 * The device of the calling thread's current CUDA context (the one CuPy's and PyTorch's current
 * device makes current); -1 when no context is current. Starts the driver.
 * @return 0, GPUJIT_ENODRIVER.
 */
GPUJIT_API int gpujit_device_current(int *out);

/**
 * The device whose memory `ptr` points into (unified addressing), or -1 when it is no device
 * memory (host memory, a freed or foreign address). Starts the driver.
 * @return 0, GPUJIT_ENODRIVER.
 */
GPUJIT_API int gpujit_pointer_device(int *out, gpujit_devptr ptr);

/** Free device memory now, in bytes. */
GPUJIT_API int gpujit_device_free_memory(gpujit_device *dev, uint64_t *out);

/**
 * Load a module's image on a device (cuModuleLoadData). The module may be freed afterwards.
 * @return 0, GPUJIT_EINVAL (LTO-IR cannot be loaded), GPUJIT_ECUDA (message names the error).
 */
GPUJIT_API int gpujit_module_load(gpujit_loaded **out, gpujit_device *dev, const gpujit_module *module);

/** Unload; kernels found in it become invalid. NULL is a no-op. */
GPUJIT_API void gpujit_loaded_free(gpujit_loaded *loaded);

/** @return milliseconds cuModuleLoadData took. */
GPUJIT_API double gpujit_loaded_load_ms(const gpujit_loaded *loaded);

/**
 * Find a kernel by symbol, lowered name, or name expression given at build.
 * @param out borrowed: lives as long as `loaded`.
 * @return 0 or GPUJIT_ENOENT (message lists the module's kernels).
 */
GPUJIT_API int gpujit_kernel_get(gpujit_kernel **out, gpujit_loaded *loaded, const char *name);

/**
 * Find a module-scope `__device__` or `__constant__` variable by symbol, lowered name, or name
 * expression given at build (e.g. "&table<float>") — cuModuleGetGlobal.
 * @param ptr receives its device address; @param bytes its size (may be NULL).
 * @return 0, GPUJIT_EINVAL (NULL argument) or GPUJIT_ENOENT (no such variable in the module).
 */
GPUJIT_API int gpujit_loaded_global(gpujit_devptr *ptr, size_t *bytes, gpujit_loaded *loaded, const char *name);

/** @return the kernel's symbol (borrowed). */
GPUJIT_API const char *gpujit_kernel_name(const gpujit_kernel *kernel);

typedef struct gpujit_kernel_attrs {
  int registers;
  int shared_bytes; /**< static shared memory */
  int local_bytes;  /**< per thread */
  int const_bytes;
  int max_threads_per_block;
  int params;         /**< number of parameters (cubin metadata; -1 unknown) */
  int param_bytes[64];/**< each parameter's size in bytes */
} gpujit_kernel_attrs;

GPUJIT_API int gpujit_kernel_attrs_get(const gpujit_kernel *kernel, gpujit_kernel_attrs *out);

GPUJIT_API int gpujit_mem_alloc(gpujit_devptr *out, gpujit_device *dev, size_t bytes);
GPUJIT_API int gpujit_mem_free(gpujit_device *dev, gpujit_devptr ptr);
GPUJIT_API int gpujit_memcpy_htod(gpujit_device *dev, gpujit_devptr dst, const void *src, size_t bytes);
GPUJIT_API int gpujit_memcpy_dtoh(gpujit_device *dev, void *dst, gpujit_devptr src, size_t bytes);
GPUJIT_API int gpujit_memcpy_dtod(gpujit_device *dev, gpujit_devptr dst, gpujit_devptr src, size_t bytes);
/** Set `count` 32-bit words to `value`. */
GPUJIT_API int gpujit_memset_d32(gpujit_device *dev, gpujit_devptr dst, uint32_t value, size_t count);

/**
 * Launch on the device's stream. `args` points at each argument's value, as cuLaunchKernel
 * takes them. Grid and block are checked against the device's limits first.
 * @return 0, GPUJIT_EINVAL (limits; message says which), GPUJIT_ECUDA (names the kernel).
 */
GPUJIT_API int gpujit_launch(gpujit_kernel *kernel, const unsigned grid[3], const unsigned block[3],
                             unsigned shared_bytes, void **args);

/** Check grid, block and shared memory against the device's and the kernel's limits. */
GPUJIT_API int gpujit_launch_check(const gpujit_kernel *kernel, const unsigned grid[3], const unsigned block[3],
                                   unsigned shared_bytes);

/** Wait for the device's stream; a failed kernel's error is reported here with its name. */
GPUJIT_API int gpujit_synchronize(gpujit_device *dev);

/** Capture the operations that follow on the device's stream into a graph. */
GPUJIT_API int gpujit_graph_begin(gpujit_device *dev);
GPUJIT_API int gpujit_graph_end(gpujit_graph **out, gpujit_device *dev, const char *name);
/** Launch a captured graph (timed as a whole by the timing layer). */
GPUJIT_API int gpujit_graph_launch(gpujit_graph *graph);
GPUJIT_API void gpujit_graph_free(gpujit_graph *graph);

/* ---- argument specs (gpujit run) -------------------------------------------------------- */

typedef enum gpujit_arg_type {
  GPUJIT_ARG_I32, GPUJIT_ARG_U32, GPUJIT_ARG_I64, GPUJIT_ARG_U64, GPUJIT_ARG_F32, GPUJIT_ARG_F64,
  GPUJIT_ARG_BUFFER, /**< a device buffer */
  GPUJIT_ARG_REF     /**< a named buffer of an earlier argument */
} gpujit_arg_type;

typedef enum gpujit_init_kind {
  GPUJIT_INIT_ZEROS, GPUJIT_INIT_ONES, GPUJIT_INIT_IOTA, GPUJIT_INIT_RANDOM, GPUJIT_INIT_VALUE
} gpujit_init_kind;

/** One parsed argument: "i32:1048576", "f32:2.0", "buf:f32:1048576:random:7,name=x,out=checksum",
 *  "@x" (a reference to buffer x). */
typedef struct gpujit_arg_spec {
  gpujit_arg_type type;
  union {
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    float f32;
    double f64;
  } value;
  gpujit_arg_type elem;   /**< buffers: element type (a scalar type) */
  uint64_t count;         /**< buffers: elements */
  gpujit_init_kind init;
  double init_value;      /**< GPUJIT_INIT_VALUE */
  uint64_t seed;          /**< GPUJIT_INIT_RANDOM */
  char name[64];          /**< buffers: optional name; refs: the name referred to */
  int out_checksum;       /**< copy back after the run and print a checksum */
  char out_file[256];     /**< copy back and dump to this file */
} gpujit_arg_spec;

/** Parse one argument spec. @return 0 or GPUJIT_EINVAL with a message naming the problem. */
GPUJIT_API int gpujit_arg_spec_parse(gpujit_arg_spec *out, const char *text);

/** @return an argument's size in bytes as passed to the kernel (8 for buffers and refs). */
GPUJIT_API size_t gpujit_arg_size(const gpujit_arg_spec *spec);

/** @return a scalar type's size in bytes. */
GPUJIT_API size_t gpujit_arg_type_size(gpujit_arg_type type);

/** Fill `count` host elements of `spec`'s element type as its init asks (random: a fixed PRNG). */
GPUJIT_API void gpujit_arg_fill(void *host, const gpujit_arg_spec *spec);

GPUJIT_END_DECLS

#endif
