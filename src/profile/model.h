/* What a profile's records say (profile/read.c), before they become module rows
 * (profile/report.c) and a trace (profile/trace.c). Times are nanoseconds on the host's
 * CLOCK_REALTIME; GPU times are moved onto it with each process's clock record. */
#ifndef GPUJIT_PROFILE_MODEL_H
#define GPUJIT_PROFILE_MODEL_H

#include <stdbool.h>
#include <stdint.h>

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
} pf_proc;

typedef struct pf_compile {
  char kind[12]; /* nvrtc, nvjitlink, nvvm */
  int pid;
  uint32_t tid;
  char *name, *options, *log, *lib_path, *nvrtc_trace;
  char src[33];
  int headers, result, version;
  uint64_t t0, t1;
  uint64_t ptx_bytes, cubin_bytes, ltoir_bytes;
  char ptx_hash[33], cubin_hash[33], ltoir_hash[33];
  bool repeat; /* the same source and options compiled before */
  int module;  /* the row its output went to, or -1 */
} pf_compile;

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
} pf_op;

typedef struct pf_nvtx {
  int pid;
  uint32_t thread;
  char *name;
  uint64_t s, e;
} pf_nvtx;

#define PF_VEC(T)                                                                                            \
  struct {                                                                                                   \
    T *v;                                                                                                    \
    size_t n, cap;                                                                                           \
  }

struct gpujit_profile {
  char *dir;
  bool own_dir; /* made by the run: removed with the profile */
  PF_VEC(pf_proc) procs;
  PF_VEC(pf_compile) compiles;
  PF_VEC(pf_load) loads;
  PF_VEC(pf_ksum) ksums;
  PF_VEC(pf_osum) osums;
  PF_VEC(pf_jit) jits;
  PF_VEC(pf_op) ops;
  PF_VEC(pf_nvtx) nvtx;
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
  bool range;              /* only one process's records inside [range_t0, range_t1] */
  int range_pid;
  uint64_t range_t0, range_t1; /* host clock, ns */
};

/** Push an element (zeroed) onto a PF_VEC; NULL when out of memory. */
#define PF_PUSH(vec) ((vec).n == (vec).cap ? pf_grow((void **)&(vec).v, &(vec).cap, sizeof(*(vec).v)) : 0, \
                      (vec).n < (vec).cap ? (memset(&(vec).v[(vec).n], 0, sizeof(*(vec).v)), &(vec).v[(vec).n++]) : NULL)
int pf_grow(void **v, size_t *cap, size_t size);

/** Read every record file of `dir` into `p` (empty otherwise). */
int gpujit__profile_read(gpujit_profile *p, const char *dir);
/** Tie loads, compiles, JIT and kernels together into module rows, device rows and totals. */
int gpujit__profile_attribute(gpujit_profile *p);
/** The public views of the compiles and processes (fields.c), after attribution. */
int gpujit__profile_views(gpujit_profile *p);
/** Remove a records directory (its files, then it). */
void pf_remove_dir(const char *dir);
/** A note for the report (one line). */
void gpujit__profile_note(gpujit_profile *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
