/* What a profile's records say (profile/read.c), before they become module rows
 * (profile/report.c) and a trace (profile/trace.c). Times are nanoseconds on the host's
 * CLOCK_REALTIME; GPU times are moved onto it with each process's clock record. */
#ifndef GPUJIT_PROFILE_MODEL_H
#define GPUJIT_PROFILE_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "base/buf.h"
#include "gpujit/profile.h"

typedef struct pf_proc {
  int pid, ppid;
  char *exe, *cmd;
  uint64_t t0, t1; /* first and last record */
  bool ended;      /* its exit record */
  int version;     /* the record format its proc record says ("v") */
  uint64_t lost, untraced;
  int64_t clock_offset; /* host - CUPTI */
  bool has_clock, gpu;
  bool adapter;         /* a framework adapter's file (its proc record says "writer"): not a process of its own */
  bool hook, hook_said; /* a Python started with the hook on; a note said why it could not load */
  int anc[17], nanc;    /* ppid, then its ancestors */
  int tool;             /* the compile its "tool" record made, or -1 */
  uint64_t exit_t;      /* its exit record's time, 0: none */
  char *schedule;       /* the step schedule its "schedule" note gave, or NULL */
} pf_proc;

/* A GPU time (CUPTI's clock) on the host's, by the process's clock record: modular, so a damaged
 * record's time cannot overflow (the result is then as wrong as the record, never undefined). */
static inline uint64_t pf_host_time(const pf_proc *proc, uint64_t t)
{
  return proc && proc->has_clock ? t + (uint64_t)proc->clock_offset : t;
}

#define PF_MAX_STAGES 16
typedef struct pf_stage { /* a stage of a framework's compile, as its adapter measured it */
  char name[32];
  uint64_t t0, t1; /* t1 - t0 its length; an unknown start: t0 0, t1 the length */
  bool known;
} pf_stage;

typedef struct pf_compile {
  char kind[40]; /* nvrtc, nvjitlink, nvvm; a toolchain program (ptxas, g++ ...); an adapter's "fw" */
  int pid;
  uint32_t tid;
  char *name, *options, *log, *lib_path, *nvrtc_trace;
  char src[33];
  int headers, result, version;
  bool own_result; /* a tool's exit status as the tool itself said it (its exit record): no
                      parent's reaping can say otherwise */
  uint64_t t0, t1;
  uint64_t ptx_bytes, cubin_bytes, ltoir_bytes;
  char ptx_hash[33], cubin_hash[33], ltoir_hash[33];
  char from_hash[33];   /* a tool fed through a pipe: the output its input was made from */
  int stage_of;         /* a tool that is a later stage of that compile (gpujit's ptxas after its
                           NVRTC): the compile, whose row and count it shares, or -1 */
  bool repeat; /* the same source and options compiled before */
  int module;  /* the row its output went to, or -1 */
  bool tool, unit;      /* a toolchain process; a framework's compile (an adapter's "unit") */
  char *key;            /* a unit's identity (its framework's hash of it), a tool's output path */
  char cache[8];        /* a unit: "hit", "miss" or "" (unknown) */
  uint64_t handle;      /* a unit: the module handle it loaded ("bind"), 0 */
  int bind_pid;         /* the process that loaded it (a worker compiles, the parent loads) */
  uint64_t cpu_ns;      /* a tool: CPU time, its children's included */
  bool proper, pre;     /* a tool: a compiler proper (cc1plus, cicc, ptxas ...); run to preprocess only */
  bool script;          /* a tool: a script its interpreter ran (a `#!/bin/sh` g++) */
  char *paths;          /* a tool: the files its arguments name, each followed by '\n' */
  char *fatbins;        /* a tool: the hashes of the fatbins its output embeds, each followed by ' ' */
  bool ended;           /* a tool: its end record was seen */
  int anc[17], nanc;    /* its process's parent and ancestors */
  int parent;           /* the compile it ran inside (a unit or a tool), or -1 */
  pf_stage stages[PF_MAX_STAGES];
  int nstages;
  bool autotune;        /* a unit that compiles nothing itself: it benchmarks what others compiled */
  bool benchmarks;      /* a unit whose kernels run inside its span are its autotuning (compile work) */
  uint64_t busy_ns;     /* a unit: its framework's own measure of the compile, when not its whole span
                           (tracing, lowering and a backend, not the wait between them) */
} pf_compile;

/** A compile's time in ms: its framework's measure where given, else its span. */
static inline double pf_compile_ms(const pf_compile *c)
{
  return c->busy_ns ? (double)c->busy_ns / 1e6 : c->t1 > c->t0 ? (double)(c->t1 - c->t0) / 1e6 : 0;
}

typedef struct pf_load {
  int pid;
  uint32_t tid;
  char api[40], image[8], hash[33];
  char *file;
  uint64_t corr, t0, t1, bytes, handle;
  int result;
  double jit_ns;
  uint64_t jit_cache_hits;
  int module;
} pf_load;

typedef struct pf_ksum {
  int pid;
  uint64_t handle, n, ns;
  uint32_t device;
  char *name;
} pf_ksum;

typedef struct pf_osum {
  int pid;
  char op[8];
  uint32_t device;
  uint64_t n, bytes, ns;
} pf_osum;

typedef struct pf_jit {
  int pid;
  uint64_t corr, s, e;
  bool cache_hit;
  uint32_t device;
} pf_jit;

typedef struct pf_op { /* a traced kernel, copy or memset */
  int pid;
  char kind; /* 'k', 'c', 'm' */
  char *name;
  uint64_t handle, corr, s, e, bytes;
  uint32_t device, stream;
  int step; /* 1 + the id of the active step that launched it (steps.c), 0: none */
} pf_op;

typedef struct pf_nvtx {
  int pid;
  uint32_t thread;
  char *name;
  uint64_t s, e;
} pf_nvtx;

typedef struct pf_bind { /* a framework's compile tied to a module handle ("bind") */
  int pid;
  char fw[12];
  char *key;
  uint64_t handle;
} pf_bind;

typedef struct pf_span { /* a span an adapter declared: an autotuner benchmarking candidates */
  int pid;
  uint32_t tid;
  uint64_t t0, t1;
  char *name;
} pf_span;

typedef struct pf_step { /* a step boundary ("step" record): step n begins at t */
  int pid;
  uint64_t n, t;
  int cycle;
  char phase[8]; /* "warmup", "active", "after" */
  char src[8];
} pf_step;

typedef struct pf_launch { /* a launch's host side ("launch" record), in the recorded steps */
  int pid;
  uint32_t tid;
  uint64_t corr, t0, t1;
  char api[40];
} pf_launch;

typedef struct pf_kregion { /* a "kregions" record: one region of one read of a module's buffer */
  int pid;
  uint64_t handle, handle2, read;
  char scope[8];
  uint64_t events, dropped, unmatched, launches, min_cycles;
  char *name; /* NULL: a read that recorded no call */
  uint32_t depth, sms, units;
  uint64_t calls;
  double cyc[4], ns[4], total_ns, sm_imb, unit_imb; /* mean, median, p99, max */
} pf_kregion;

typedef struct pf_kslice { /* a region's call from a "kslices" record, for the trace */
  int pid;
  uint64_t handle, read;
  uint32_t region, sm, unit; /* region: its "i" in the read's kregions records */
  uint64_t s, d, cycles;     /* start (host clock) and length, ns */
} pf_kslice;

typedef struct pf_reap { /* a child that ended abnormally, as its parent's wait saw it */
  int child, status;
} pf_reap;

#define PF_VEC(T)                                                                                            \
  struct {                                                                                                   \
    T *v;                                                                                                    \
    size_t n, cap;                                                                                           \
  }

struct gpujit_profile {
  char *dir;
  char *command; /* the command line run (run.c), or a saved profile's (saved_open.c); NULL: not known */
  bool own_dir; /* made by the run: removed with the profile */
  bool records_missing; /* a process's records are missing (a note says whose and why): partial */
  PF_VEC(pf_proc) procs;
  PF_VEC(pf_compile) compiles;
  PF_VEC(pf_load) loads;
  PF_VEC(pf_ksum) ksums;
  PF_VEC(pf_osum) osums;
  PF_VEC(pf_jit) jits;
  PF_VEC(pf_op) ops;
  PF_VEC(pf_nvtx) nvtx;
  PF_VEC(pf_bind) binds;
  PF_VEC(pf_reap) reaps;
  PF_VEC(pf_span) spans;
  PF_VEC(pf_step) steps;
  PF_VEC(pf_launch) launches;
  PF_VEC(pf_kregion) kregions;
  PF_VEC(pf_kslice) kslices;
  gpujit__buf notes;
  gpujit_profile_totals totals;
  gpujit_profile_module *rows;
  size_t nrows;
  gpujit_profile_device *devices;
  size_t ndevices;
  char **row_names; /* the rows' own strings */
  char **row_kernels;
  gpujit_profile_options opts;
  gpujit_profile_compile *compile_rows; /* the compiles and processes as the public tables have them */
  gpujit_profile_process *process_rows;
  size_t nprocess_rows;
  gpujit_profile_compiler *compilers;
  size_t ncompilers;
  gpujit_profile_stage *stage_rows;
  size_t nstage_rows;
  gpujit_profile_step_row *step_rows; /* the active steps analysed (steps.c) */
  size_t nstep_rows;
  gpujit_profile_step_device *step_devices;
  size_t nstep_devices;
  gpujit_profile_step_stream *step_streams;
  size_t nstep_streams;
  gpujit_profile_step_kernel *step_kernels;
  size_t nstep_kernels;
  char **step_strings;     /* the step rows' own strings (summaries) */
  gpujit_profile_region *region_rows; /* the kernel regions (kregions.c) */
  size_t nregion_rows;
  char **region_strings;   /* their own strings (module names, kernels), nregion_rows * 2 */
  bool range;              /* only one process's records inside [range_t0, range_t1] */
  int range_pid;
  uint64_t range_t0, range_t1; /* host clock, ns */
};

/** Push an element (zeroed) onto a PF_VEC; NULL when out of memory. */
#define PF_PUSH(vec) ((vec).n == (vec).cap ? pf_grow((void **)&(vec).v, &(vec).cap, sizeof(*(vec).v)) : 0, \
                      (vec).n < (vec).cap ? (memset(&(vec).v[(vec).n], 0, sizeof(*(vec).v)), &(vec).v[(vec).n++]) : NULL)
int pf_grow(void **v, size_t *cap, size_t size);

/** The injection library: `asked`, else $GPUJIT_INJECT_LIBRARY, else beside this code (run.c).
 *  @return 0, GPUJIT_ENOENT naming where it looked. */
int gpujit__profile_find_inject(char *out, size_t size, const char *asked);
/** gpujit_profile_step() goes to `fn` from now on (an in-process session's injection library, which
 *  no dlsym of the process's global scope finds), or back to the global look-up with NULL (schedule.c). */
void gpujit__profile_step_bind(void (*fn)(int));

/** Read every record file of `dir` into `p` (empty otherwise). */
int gpujit__profile_read(gpujit_profile *p, const char *dir);
/** A toolchain process's or a framework adapter's record (read_compilers.c): "tool", "tool_end",
 *  "reap", "unit", "bind". */
void gpujit__profile_read_compiler(gpujit_profile *p, pf_proc *proc, const char *line, const cJSON *j, int kind);
/** A proc record's "ancestors" and "writer" into proc. */
void gpujit__profile_read_lineage(pf_proc *proc, const cJSON *j);
/** After every file: tools' statuses from their parents' reaps, units' handles from binds. */
void gpujit__profile_compilers_joined(gpujit_profile *p);
/** Toolchain processes into compiles (toolchain.c): each compiler proper that made code, climbed
 *  to the outermost process of its compile (a wrapper, driver or cache whose arguments name the
 *  same files); the processes that ran none (preprocessing, a shell) are no compiles. */
void gpujit__profile_toolchain(gpujit_profile *p);
/** Whether `proc` (by its lineage) descends from `pid`. */
bool gpujit__profile_descends(const int *anc, int nanc, int pid);
/** Tie loads, compiles, JIT and kernels together into module rows, device rows and totals. */
int gpujit__profile_attribute(gpujit_profile *p);
/** Pass 0 of attribution (compilers.c): each compile's container (a framework's compile, a
 *  compiler driver), by time, process lineage and thread. */
void gpujit__profile_nest(gpujit_profile *p);
/** The outermost compile `c` ran inside (itself when none). */
const pf_compile *gpujit__profile_top(const gpujit_profile *p, const pf_compile *c);
/** The compile that made what load `l` loaded (its outermost): by content (the image's hash
 *  against what each compile wrote, the fatbins a built object embeds), by a module handle its
 *  framework bound, or a framework compile in whose span, on whose thread, it was loaded; NULL
 *  when none did (never by order: a wrong tie is worse than none). */
const pf_compile *gpujit__profile_maker(const gpujit_profile *p, const pf_load *l);
/** Whether compile `c` succeeded and wrote `hash`: its PTX or cubin, or (`embedded`) a fatbin
 *  its object or library embeds. */
bool gpujit__profile_made(const pf_compile *c, const char *hash, bool embedded);
/** The per-compiler totals (compilers.c). */
int gpujit__profile_compilers(gpujit_profile *p);
/** The public views of the compiles and processes (fields.c), after attribution. */
int gpujit__profile_views(gpujit_profile *p);
/** Free what a compile owns (its strings), not the compile itself. */
void gpujit__profile_compile_free(pf_compile *c);
/** A "step" or "launch" record (read_steps.c). */
void gpujit__profile_read_step(gpujit_profile *p, const char *line, const cJSON *j, int kind, int pid);
/** Where step `i` ends: the next boundary its process wrote (`complete`), else its process's exit
 *  or last record (a range's end). The steps in process and time order: after gpujit__profile_steps(). */
uint64_t gpujit__profile_step_end(const gpujit_profile *p, size_t i, bool *complete);
/** A note that gives the process's step schedule (read_steps.c): kept for its steps. */
void gpujit__profile_step_note(pf_proc *proc, const cJSON *j);
/** The active steps explained (steps.c): their rows, devices, streams and top kernels. */
int gpujit__profile_steps(gpujit_profile *p);
/** Free what steps.c made. */
void gpujit__profile_steps_free(gpujit_profile *p);
/** A "kregions" or "kslices" record (kregions.c). */
void gpujit__profile_read_kregions(gpujit_profile *p, const pf_proc *proc, const char *line, const cJSON *j, int kind,
                                   int pid);
/** The kernel regions' rows (kregions.c), after attribution: per module and region, its reads merged. */
int gpujit__profile_regions(gpujit_profile *p);
/** Free what kregions.c made. */
void gpujit__profile_regions_free(gpujit_profile *p);
/** The kernel regions' tables as text, per module (kregions.c), for the report. */
void gpujit__profile_format_regions(const gpujit_profile *p, gpujit__buf *f);
/** Remove a records directory and everything in it (best effort). */
void pf_remove_dir(const char *dir);
/** A note for the report (one line). */
void gpujit__profile_note(gpujit_profile *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
