/* `gpujit run`'s pieces: the command's state, the launch plan (flags or JSON, checked before
 * anything runs), the execute phases and the compile vs execute report. */
#ifndef GPUJIT_CLI_RUN_H
#define GPUJIT_CLI_RUN_H

#include <cjson/cJSON.h>

#include "cli.h"

#define MAX_LAUNCHES 64
#define MAX_ARGS 64

typedef struct launch {
  char kernel[256]; /* the symbol, once validate_plan resolved it */
  char expr[256];   /* the name the user gave, when it was a name expression */
  unsigned grid[3], block[3], shared;
  gpujit_arg_spec args[MAX_ARGS];
  size_t nargs;
  gpujit_kernel *k;
  void *argv[MAX_ARGS];
  gpujit_devptr ptrs[MAX_ARGS];
} launch;

typedef struct buffer {
  const gpujit_arg_spec *spec;
  gpujit_devptr ptr;
  size_t bytes;
} buffer;

typedef struct run_ctx {
  launch launches[MAX_LAUNCHES];
  size_t nlaunches;
  buffer buffers[MAX_LAUNCHES * MAX_ARGS];
  size_t nbuffers;
  gpujit_device *dev;
} run_ctx;

/* What the command line asked for (cmd_run.c). */
typedef struct run_opts {
  const char *kernel, *grid, *block, *launch_file;
  gpujit_arg_spec args[MAX_ARGS]; /* --arg, in order */
  size_t nargs;
  long warmup, repeat, shared, device;
  double noise, timeout;
  gpujit_timer_source timer;
  bool bench, l2_flush, timeline, ncu;
} run_opts;

/* One `gpujit run`: its options, its plan, and what each phase made for the next (and for the
 * cleanup). Heap-allocated: the plan's tables are large. */
typedef struct run_cmd {
  cli_ctx *ctx;
  int argc;
  char **argv;
  run_opts o;
  cli_module_args ma;
  run_ctx r;
  gpujit_module *m;
  gpujit_loaded *loaded;
  gpujit_timing_result *res; /* the region's results, once it is closed */
  size_t nres;
  cJSON *out, *mj;           /* the "gpujit-run" document and its "module" record */
  double phases[4], load_ms, first_ms;
  gpujit_timer *timer;       /* the stage being timed (-v, NVTX) */
  gpujit_region_report *regions; /* the kernel regions of the timed launches (run_regions.c) */
} run_cmd;

typedef struct kstats {
  const char *name;
  gpujit_stats gpu;
  double launch_us;
  size_t n;
} kstats;

/* run_help.c */
void run_help(void);

/* run_plan.c */
bool parse_dims(const char *s, unsigned out[3]);
int load_launch_file(cli_ctx *ctx, run_ctx *r, const char *path);
buffer *find_buffer(run_ctx *r, const char *name);
/** Everything that can be checked without a GPU: names, references, argument counts and sizes. */
int validate_plan(cli_ctx *ctx, run_ctx *r, const gpujit_module *m);

/* run_exec.c: the execute half, phase by phase; each returns an exit code. */
/** Open the device (or report the compile half alone when there is none), check the buffers fit,
 *  choose the timer. */
int run_open_device(run_cmd *c);
/** Load the module and find and check every launch's kernel. */
int run_load(run_cmd *c);
/** Open the timing region, allocate and initialise the buffers, wire every argument. */
int run_buffers(run_cmd *c);
/** The first launch (lazy loading included), then the warm-up. */
int run_warm(run_cmd *c);
/** The benchmark or the timed launches, and their report. */
int run_measure(run_cmd *c);
/** Copy back the buffers asked for: checksums, files. */
int run_copy_back(run_cmd *c);
/** Close the timing region: its trace track, CUPTI's losses, the timeline. */
int run_finish_timing(run_cmd *c);

/* run_regions.c: kernel regions (gpujit/regions.cuh) of the timed launches, where the module has them */
/** Empty the module's event buffer before the timed launches, grown for `launches_ahead` runs
 *  of the plan as far as memory allows. */
void run_regions_reset(run_cmd *c, double launches_ahead);
/** Read and summarise the events; into the JSON and the trace (the first launch at `start_us`). */
int run_regions_collect(run_cmd *c, double kernel_ms, unsigned launches, double start_us);
/** The region table, unless quiet or JSON. */
void run_regions_print(const run_cmd *c);

/* run_report.c */
void checksum(const buffer *b, const void *host, double *sum, char hex[17]);
cJSON *stats_json(const gpujit_stats *s);
/** The module's record of a build (the keys of "gpujit-build"), with load and first-launch times. */
void compile_report(const gpujit_module *m, cJSON *mj, bool cached, double load_ms, double first_ms);
void print_compile(const cJSON *mj, const double phases[4]);
void phase_times(const gpujit_module *m, double out[4]);
void trace_results(gpujit_trace *trace, const gpujit_timing_result *res, size_t n, int device);

#endif
