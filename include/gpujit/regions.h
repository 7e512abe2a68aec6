/* Timed regions inside kernels (the device header gpujit/regions.cuh): the events a loaded
 * module's launches recorded, read back, and each region's calls, cycles and times. */
#ifndef GPUJIT_REGIONS_H
#define GPUJIT_REGIONS_H

#include "common.h"
#include "run.h"
#include "trace.h"

GPUJIT_BEGIN_DECLS

/** The layout of the device state and its events this gpujit reads (GPUJIT_REGIONS_ABI of
 *  gpujit/regions.cuh): a module built with another is left unbound, and reading it says why. */
#define GPUJIT_REGIONS_LAYOUT 3
/** 64-bit words per event: the name's address, clock64(), %globaltimer,
 *  unit | SM << 32 | (%gridid & 0x7fff) << 48 | end << 63. */
#define GPUJIT_REGIONS_EVENT_WORDS 4
/** Events a loaded module's buffer holds unless told otherwise (32 bytes each: 32 MiB). */
#define GPUJIT_REGIONS_DEFAULT_EVENTS (1u << 20)

/** Who recorded: GPUJIT_REGIONS_SCOPE of the module. */
typedef enum gpujit_region_scope {
  GPUJIT_REGION_SCOPE_WARP = 0,  /**< the lowest active lane of each warp (the default) */
  GPUJIT_REGION_SCOPE_BLOCK = 1, /**< thread 0 of each block */
  GPUJIT_REGION_SCOPE_THREAD = 2 /**< every thread */
} gpujit_region_scope;

/** One region (one name) over the launches read. A "call" is one unit's begin and end. */
typedef struct gpujit_region_stat {
  char name[128];
  unsigned depth;        /**< nesting depth of its first call: 0 outermost */
  uint64_t calls;
  double cycles_mean, cycles_median, cycles_p99, cycles_max; /**< SM clock cycles (clock64) per call */
  double ns_mean, ns_median, ns_p99, ns_max;                 /**< nanoseconds (%globaltimer) per call */
  double total_ns;       /**< over every call */
  /** of the kernel's time: a unit's time in the region in one launch (total_ns over the
   *  (launch, unit) pairs that ran it) over the launches' mean duration (kernel_ns / launches);
   *  -1 where the kernel's duration is unknown */
  double share;
  double sm_imbalance;   /**< the busiest SM's cycles in the region over the mean SM's (1: even) */
  double unit_imbalance; /**< the same across units (warps, blocks or threads) */
  unsigned sms, units;   /**< how many SMs and units ran it */
} gpujit_region_stat;

/** One call of a region, for a timeline. */
typedef struct gpujit_region_slice {
  uint32_t region;   /**< index into the report's regions */
  uint32_t sm, unit, depth;
  uint32_t launch;   /**< the launch it ran in (%gridid's low 15 bits): units pair within a launch */
  uint64_t start_ns; /**< %globaltimer at its begin */
  uint64_t dur_ns;
  uint64_t cycles;
} gpujit_region_slice;

typedef struct gpujit_region_report {
  gpujit_region_stat *regions; /**< in the order each was first seen */
  size_t count;
  gpujit_region_slice *slices; /**< every call, in the units' order */
  size_t nslices;
  uint64_t events;         /**< events read */
  uint64_t dropped;        /**< events the buffer had no room for (not in any figure) */
  uint64_t unmatched;      /**< events without their other half: a `break` or `return` out of a
                                region, an end without a begin, or a half that was dropped */
  unsigned launches;       /**< the launches the events came from (as the caller said) */
  double kernel_ns;        /**< their summed duration (as the caller said), 0 unknown */
  /** the shortest call of any region in cycles: an upper bound of what one begin and end cost
   *  (exactly that for an empty region); 0 with no call */
  uint64_t min_call_cycles;
  gpujit_region_scope scope;
} gpujit_region_report;

/** A region name's address in the module (the string literal the device recorded) and the name. */
typedef struct gpujit_region_name {
  uint64_t addr;
  const char *name;
} gpujit_region_name;

/**
 * Summarise raw events (GPUJIT_REGIONS_EVENT_WORDS words each, as the device wrote them: each
 * unit's events in the order it wrote them). Begins and ends pair up per unit of each launch,
 * innermost first.
 * @param names the names of the addresses recorded; an address not among them reads "0x…".
 * @param kernel_ns the summed duration of the launches, 0 when unknown; @param launches how many.
 * @param out caller frees with gpujit_region_report_free().
 * @return 0, GPUJIT_EINVAL (NULL out, or events with nevents > 0), GPUJIT_ENOMEM.
 */
GPUJIT_API int gpujit_regions_analyze(gpujit_region_report **out, const uint64_t *events, size_t nevents,
                                      uint64_t dropped, const gpujit_region_name *names, size_t nnames,
                                      double kernel_ns, unsigned launches, gpujit_region_scope scope);

/** NULL is a no-op. */
GPUJIT_API void gpujit_region_report_free(gpujit_region_report *report);

/** The report as a text table, with dropped and unmatched events said. Caller frees with gpujit_free(). */
GPUJIT_API int gpujit_region_report_format(char **out, const gpujit_region_report *report);

/**
 * Add each call as a slice to a trace: a track per SM (calls of units that overlap on one SM go
 * to further tracks of it, "SM 3 #2"), or with `per_unit` a track per unit. The earliest call
 * starts at `start_us` on the trace clock (the launch's GPU start); the rest keep their distance.
 * @return 0, GPUJIT_EINVAL, GPUJIT_ENOMEM.
 */
GPUJIT_API int gpujit_region_report_trace(gpujit_trace *trace, const gpujit_region_report *report, double start_us,
                                          int per_unit);

/* ---- a loaded module's buffer ------------------------------------------------------------- */

/**
 * @return 1 when the loaded module records regions (it was built with GPUJIT_REGIONS and the
 * header, and gpujit bound a buffer to it at load), else 0 (NULL included).
 */
GPUJIT_API int gpujit_loaded_regions(const gpujit_loaded *loaded);

/** Replace the buffer by one of `events` events, rounded down to whole chunks (events recorded so
 *  far are lost). @return 0, GPUJIT_EINVAL (no regions in the module, 0 or more than 2^31 events),
 *  GPUJIT_ECUDA. */
GPUJIT_API int gpujit_loaded_regions_capacity(gpujit_loaded *loaded, uint64_t events);

/**
 * Events made since the last reset, kept and dropped together (a slot with no chunk left drops
 * and counts), and the capacity, after waiting for the device's stream. The buffer is claimed in
 * chunks of 64 events per hardware warp slot, so a buffer can drop events before `count` reaches
 * `capacity`: up to 63 events per slot in use stay unwritten at the end of a slot's chunk.
 * @return 0, GPUJIT_EINVAL (no regions in the module), GPUJIT_ECUDA.
 */
GPUJIT_API int gpujit_loaded_regions_count(gpujit_loaded *loaded, uint64_t *count, uint64_t *capacity);

/** Forget the events recorded so far (in order on the device's stream, after work issued before).
 *  @return 0, GPUJIT_EINVAL (no regions in the module), GPUJIT_ECUDA. */
GPUJIT_API int gpujit_loaded_regions_reset(gpujit_loaded *loaded);

/**
 * Wait for the device's stream, read the events recorded since the last reset (or the load) and
 * summarise them: gpujit_regions_analyze with the names read from the module. Leaves them there.
 * @param kernel_ms the launches' summed GPU time when known, else 0; @param launches how many.
 * @return 0, GPUJIT_EINVAL (no regions in the module; a module of another layout: the message names
 *         both), GPUJIT_ENOMEM, GPUJIT_ECUDA.
 */
GPUJIT_API int gpujit_loaded_regions_read(gpujit_region_report **out, gpujit_loaded *loaded, double kernel_ms,
                                          unsigned launches);

/* ---- read by the timers and the benchmark ------------------------------------------------ */

/*
 * Every timer kind reads the kernel regions of the launches it covers, in a *window* of its own:
 * each timed region (gpujit_timing_begin … gpujit_timing_end, nested ones included), a
 * benchmark's samples (not its warm-up), a process-wide capture given the device
 * (gpujit_capture_regions), a host timer given the device (gpujit_timer_start) and
 * gpujit_timing_regions_begin … gpujit_timing_regions_end. Windows nest and may overlap. A module
 * with regions is reset before its first launch while any window is open; a window that opens
 * while a module is already recording for another marks where its buffer stands (waiting for the
 * device's stream) and reads only what was written after. When a window closes it reads its
 * modules (waiting for the stream) and its tables become the device's last: gpujit_timing_regions
 * gives them until the next window closes. The kernel time of a table (its `share`) is the
 * window's own timing of the module's kernels: a timed region's records (events or CUPTI) where
 * its filter has kernels, a benchmark's samples' total, a capture's kernel records; a host timer
 * times none (share -1).
 */

/**
 * Open a window of its own on the device, timing nothing (what a host timer does); windows opened
 * this way close innermost first.
 * @return 0, GPUJIT_EINVAL (NULL, or the device's activity hooks are held by another layer),
 *         GPUJIT_ENOMEM, GPUJIT_ECUDA (marking a module already recording failed).
 */
GPUJIT_API int gpujit_timing_regions_begin(gpujit_device *dev);

/**
 * Close the innermost window gpujit_timing_regions_begin opened on the device: each module's table
 * is read (waiting for the device's stream) and gpujit_timing_regions gives it.
 * @return 0, GPUJIT_EINVAL (no such window open), or the read's error (GPUJIT_ECUDA,
 *         GPUJIT_ENOMEM: the window is closed either way).
 */
GPUJIT_API int gpujit_timing_regions_end(gpujit_device *dev);

/**
 * The table of `loaded`'s kernel regions in the last window that closed on the device (above),
 * with that window's launches of it and their GPU time as the window timed them. A module without
 * regions costs one branch per launch and gets no table.
 * @return borrowed, valid until the next window on the device closes or the module or device is
 *         freed; NULL where the module launched nothing with regions in that window (or it could
 *         not be read: the window's end returned that error).
 */
GPUJIT_API const gpujit_region_report *gpujit_timing_regions(gpujit_device *dev, const gpujit_loaded *loaded);

/**
 * The i-th module with regions of the device's last window (in the order of their first
 * launches) and its table, as gpujit_timing_regions gives it.
 * @param loaded receives the module (NULL past the last). @return the table: NULL past the last, or
 *         where it could not be read.
 */
GPUJIT_API const gpujit_region_report *gpujit_timing_regions_at(gpujit_device *dev, size_t i,
                                                                gpujit_loaded **loaded);

GPUJIT_END_DECLS

#endif
