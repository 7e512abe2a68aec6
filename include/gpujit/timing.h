/* The shared event-timing layer: timed regions, scoped timers, statistics, benchmarks. */
#ifndef GPUJIT_TIMING_H
#define GPUJIT_TIMING_H

#include "common.h"
#include "run.h"

GPUJIT_BEGIN_DECLS

/** Which activities a timed region records. */
enum {
  GPUJIT_TIMING_KERNEL = 1u << 0,
  GPUJIT_TIMING_MEMCPY = 1u << 1,
  GPUJIT_TIMING_MEMSET = 1u << 2,
  GPUJIT_TIMING_GRAPH = 1u << 3,
  GPUJIT_TIMING_ALL = 0xfu
};

typedef enum gpujit_activity_kind {
  GPUJIT_ACTIVITY_KERNEL = 0,
  GPUJIT_ACTIVITY_MEMCPY_HTOD,
  GPUJIT_ACTIVITY_MEMCPY_DTOH,
  GPUJIT_ACTIVITY_MEMCPY_DTOD,
  GPUJIT_ACTIVITY_MEMSET,
  GPUJIT_ACTIVITY_GRAPH
} gpujit_activity_kind;

/** @return "kernel", "memcpy HtoD", "memcpy DtoH", "memcpy DtoD", "memset" or "graph" (static). */
GPUJIT_API const char *gpujit_activity_kind_name(gpujit_activity_kind kind);

/** One timed activity. */
typedef struct gpujit_timing_result {
  int device;
  char name[128];
  gpujit_activity_kind kind;
  double elapsed_ms;   /**< GPU time between the event pair */
  uint64_t order;      /**< issue order on the device */
  double start_us;     /**< GPU start on the trace clock (gpujit_trace_now_us), approximate */
  double host_us;      /**< host time the operation was issued (trace clock) */
  double launch_us;    /**< host time the launch call took */
  uint64_t bytes;      /**< copies and memsets */
  uint64_t graph_node; /**< CUPTI timers: a kernel inside a graph, its node id (the graph's own
                            result follows its nodes); else 0 */
  int missing;         /**< CUPTI timers: no record came for this activity (elapsed_ms is 0) */
} gpujit_timing_result;

/** Where a device's timed regions take their GPU times from. */
typedef enum gpujit_timer_source {
  GPUJIT_TIMER_EVENTS = 0,           /**< a CUDA event pair around each activity */
  GPUJIT_TIMER_CUPTI = 1,            /**< CUPTI's serialised kernel records (agree with Nsight Compute
                                          to 0-2 %), copies, memsets, kernels of graphs by node */
  GPUJIT_TIMER_CUPTI_CONCURRENT = 2  /**< CUPTI's concurrent kernel kind: kernels overlap as they
                                          ran, for timelines; short kernels back to back read short */
} gpujit_timer_source;

/** @return "events", "cupti" or "cupti-concurrent" (static). */
GPUJIT_API const char *gpujit_timer_source_name(gpujit_timer_source source);

/**
 * Choose the timer of a device's regions (no region may be open). CUPTI is loaded at run time
 * from the toolkit. @return 0, GPUJIT_EINVAL (a region is open), GPUJIT_EUNSUPPORTED (the message
 * says why CUPTI cannot be used).
 */
GPUJIT_API int gpujit_timing_set_source(gpujit_device *dev, gpujit_timer_source source);

/** Records CUPTI reported dropped since it started (0 with events). */
GPUJIT_API uint64_t gpujit_timing_dropped(gpujit_device *dev);

/**
 * Start a timed region on a device; regions nest. While any region is open, gpujit's launch,
 * copy, memset and graph wrappers record an event pair (from a pool) around each activity that
 * the filter selects; with none open they add nothing.
 */
GPUJIT_API int gpujit_timing_begin(gpujit_device *dev, unsigned filter);

/**
 * End the innermost region: synchronise and return its activities in issue order.
 * @param out caller frees with gpujit_free(). @return 0, GPUJIT_EINVAL (no open region), GPUJIT_ECUDA.
 */
GPUJIT_API int gpujit_timing_end(gpujit_timing_result **out, size_t *count, gpujit_device *dev);

/** A custom report: receives every region's results as it ends. NULL turns it off. */
typedef void (*gpujit_timing_report_cb)(const gpujit_timing_result *results, size_t count, void *payload);
GPUJIT_API void gpujit_timing_set_report(gpujit_device *dev, gpujit_timing_report_cb cb, void *payload);

enum {
  GPUJIT_REPORT_TIMELINE = 1u << 0, /**< each activity in issue order */
  GPUJIT_REPORT_ACTIVITY = 1u << 1, /**< total and count per name */
  GPUJIT_REPORT_DEVICE = 1u << 2,   /**< total and count per device */
  GPUJIT_REPORT_ALL = 7u
};

/** Format results as text tables (the library never prints). Caller frees with gpujit_free(). */
GPUJIT_API int gpujit_timing_format(char **out, const gpujit_timing_result *results, size_t count,
                                    unsigned sections);

/** Summary statistics of a sample. */
typedef struct gpujit_stats {
  size_t n;
  double min, median, mean, max;
  double stdev; /**< sample standard deviation (n - 1) */
  double noise; /**< robust relative spread: 1.4826 * median absolute deviation / median */
} gpujit_stats;

/** Compute statistics (the input is not modified). @return 0 or GPUJIT_EINVAL for n == 0. */
GPUJIT_API int gpujit_stats_compute(gpujit_stats *out, const double *samples, size_t n);

/* ---- scoped timers ---------------------------------------------------------------------- */

typedef struct gpujit_timer gpujit_timer;

enum {
  GPUJIT_TIMER_SYNCHRONIZE = 1u << 0, /**< synchronise the device at start and stop */
  GPUJIT_TIMER_NVTX = 1u << 1         /**< push an NVTX range for the timer's life */
};

/**
 * Start a host timer. `dev` may be NULL (no synchronisation). `color` is 0xAARRGGBB for NVTX.
 * With a device the timer reads the kernel regions of the launches on `dev` until it stops, in a
 * window of its own (gpujit/regions.h): gpujit_timing_regions gives the table after
 * gpujit_timer_stop (`share` unknown: a host timer times no kernel).
 */
GPUJIT_API int gpujit_timer_start(gpujit_timer **out, gpujit_device *dev, const char *name, unsigned flags,
                                  uint32_t color);

/** @return the timer's name (borrowed: lives until the timer stops). */
GPUJIT_API const char *gpujit_timer_name(const gpujit_timer *timer);

/** Stop and free the timer; host milliseconds in *elapsed_ms (may be NULL), taken before the
 *  kernel regions are read. @return 0, GPUJIT_EINVAL, GPUJIT_ECUDA (synchronising or reading the
 *  regions failed; the timer is freed either way). */
GPUJIT_API int gpujit_timer_stop(gpujit_timer *timer, double *elapsed_ms);

/* ---- process-wide captures (CUPTI) ------------------------------------------------------- */

/** An open capture of every GPU activity in the process, whoever issued it. */
typedef struct gpujit_capture gpujit_capture;

/**
 * Start capturing what runs on every GPU of the process: kernels (CUPTI's concurrent kind, so the
 * program's concurrency is kept), copies and memsets that any framework issues (CuPy, PyTorch,
 * gpujit), as far as `filter` selects (GPUJIT_TIMING_*). Captures may nest and overlap.
 * @return 0, GPUJIT_EINVAL (a filter selecting nothing), GPUJIT_EUNSUPPORTED (CUPTI cannot be used:
 *         not found, or another profiler holds it) with the reason.
 */
GPUJIT_API int gpujit_capture_begin(gpujit_capture **out, unsigned filter);

/**
 * End a capture: wait for the work of every active context, then give each activity that started
 * on a GPU between begin and now, in start order (`device` is the CUDA ordinal, `elapsed_ms` its
 * GPU duration, `start_us` on the trace clock; `host_us` and `launch_us` are 0). Frees `cap`.
 * @param out the results (caller frees with gpujit_free()); @param lost records that could not
 *        be kept (CUPTI's drops and the capture's fixed budget), may be NULL.
 * @return 0, GPUJIT_EINVAL, GPUJIT_ENOMEM, GPUJIT_ECUDA (work in the region failed).
 */
GPUJIT_API int gpujit_capture_end(gpujit_capture *cap, gpujit_timing_result **out, size_t *count, uint64_t *lost);

/**
 * Also read the kernel regions of `dev`'s modules launched from now until gpujit_capture_end, in
 * a window of the capture's own (gpujit/regions.h): after gpujit_capture_end, gpujit_timing_regions
 * gives each module's table, its kernel time (share) the capture's records of the module's kernels
 * on that device (matched by name; a kernel of the same name from elsewhere on that device counts
 * too). `dev` must outlive the capture.
 * @return 0, GPUJIT_EINVAL (NULL, a device given twice, more than 16 devices, the device's hooks
 *         held by another layer), GPUJIT_ENOMEM, GPUJIT_ECUDA.
 */
GPUJIT_API int gpujit_capture_regions(gpujit_capture *cap, gpujit_device *dev);

/* ---- benchmarks ------------------------------------------------------------------------- */

#define GPUJIT_BENCH_OPTIONS_VERSION 1

typedef struct gpujit_bench_options {
  unsigned int version;
  unsigned warmup;      /**< untimed runs first (default 3) */
  unsigned min_samples; /**< default 10 */
  unsigned max_samples; /**< default 100000 */
  double min_time_s;    /**< default 0.5: sample at least this long */
  double timeout_s;     /**< default 15: stop here whatever the noise */
  double max_noise;     /**< default 0.005: stop once the GPU samples' noise falls under it */
  int l2_flush;         /**< overwrite L2 before each sample, for cold timings */
} gpujit_bench_options;

#define GPUJIT_BENCH_OPTIONS_INIT { GPUJIT_BENCH_OPTIONS_VERSION, 3, 10, 100000, 0.5, 15.0, 0.005, 0 }

typedef enum gpujit_bench_stop {
  GPUJIT_BENCH_STOP_NOISE = 0, /**< the noise criterion was met */
  GPUJIT_BENCH_STOP_TIMEOUT,
  GPUJIT_BENCH_STOP_MAX_SAMPLES
} gpujit_bench_stop;

typedef struct gpujit_bench_result {
  gpujit_stats gpu; /**< ms: events around each sample, or with a CUPTI timer source the sum of
                         the sample's activity durations */
  gpujit_stats cpu; /**< ms, host time of the launch callback */
  gpujit_bench_stop stop;
  double elapsed_s;
} gpujit_bench_result;

/** Issues the work to measure on the device's stream; returns 0 or an error code. */
typedef int (*gpujit_bench_fn)(void *payload);

/**
 * Run `fn` repeatedly as the options say (warm-up, then samples until the noise criterion after
 * min samples and min time, or the timeout), timing each sample with events and the host clock.
 * @param samples_out optional: the GPU samples (ms), caller frees with gpujit_free().
 */
GPUJIT_API int gpujit_benchmark(gpujit_bench_result *out, double **samples_out, gpujit_device *dev,
                                gpujit_bench_fn fn, void *payload, const gpujit_bench_options *opts);

/** The most devices one benchmark times. */
#define GPUJIT_BENCH_MAX_DEVICES 16

/**
 * gpujit_benchmark over several devices (what cupyx.profiler.benchmark's `devices` does): each
 * sample is bracketed by an event pair on every device's stream, so out[k] holds device k's GPU
 * times; the CPU statistics are the same in every result; sampling stops on device 0's noise.
 * @param out ndev results; @param samples_out optional: n CPU samples then n GPU samples per
 *        device (ms, n = out[0].gpu.n), caller frees with gpujit_free().
 * @return 0, GPUJIT_EINVAL (no device, one given twice, more than GPUJIT_BENCH_MAX_DEVICES, a CUPTI
 *         source with several devices), or `fn`'s error.
 */
GPUJIT_API int gpujit_benchmark_devices(gpujit_bench_result *out, double **samples_out, gpujit_device *const *devs,
                                        size_t ndev, gpujit_bench_fn fn, void *payload,
                                        const gpujit_bench_options *opts);

/**
 * Decide whether sampling may stop (exposed for tests): after min_samples and min_time_s, when
 * the noise of `samples` is under max_noise; or at the timeout or max_samples.
 * @return 1 and *reason when it may stop, else 0.
 */
GPUJIT_API int gpujit_bench_should_stop(const double *samples, size_t n, double elapsed_s,
                                        const gpujit_bench_options *opts, gpujit_bench_stop *reason);

GPUJIT_END_DECLS

#endif
