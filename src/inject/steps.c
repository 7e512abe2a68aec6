/* Steps and the schedule. A step boundary comes from the program — gpujit_profile_step() or
 * gpujit.step() through the exported gpujit_inject_step, torch.profiler's step() through the
 * Python adapter, an NVTX range or mark of a name, a launch of a kernel — and steps are counted
 * per process from 0, step 0 beginning when the process does. $GPUJIT_PROFILE_SCHEDULE selects
 * steps as torch.profiler.schedule does (skip_first, then cycles of wait, warmup and active
 * steps, repeat cycles; repeat 0: for ever). CUPTI is attached when the first warmup step of a
 * cycle begins and detached when the step after its last active one ends — flushed, unsubscribed,
 * and after the last cycle cuptiFinalize'd, taking milliseconds that no recorded step is charged —
 * so a launch outside them costs what it costs with no profiler;
 * compiles and module loads are recorded all along (driver.c's wrappers while CUPTI is off). A
 * `step` record is written where a warmup or active step begins and where the step after an
 * active one begins: a handful per cycle however long the run. Without a schedule the whole run
 * is recorded as before, and every boundary is written as an active step's. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inject/cupti.h"
#include "inject/kregions.h"
#include "inject/nvtx_inject.h"
#include "inject/protocol.h"
#include "inject/steps.h"

typedef enum { PH_NONE, PH_WAIT, PH_WARMUP, PH_ACTIVE } phase_t;

static struct {
  bool parsed, on;
  long wait, warmup, active, repeat, skip, skip_wait;
  int only;     /* the one source counted: -1 any (auto: the first seen), else a gji_step_src */
  bool chosen;  /* auto: a source was seen first */
  char marker[256];
  gji_step_src marker_src;
} S = {.only = -1};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t current; /* the step going on now */
static bool cupti_on;
static uint64_t began;   /* when this process image began: step 0's start */
static int detach_due;   /* 1: at the next boundary CUPTI goes (2: and is finalized) */
static bool first_written; /* step 0's record, where step 0 is recorded */
static int nvtx_rec;       /* the step now is one CUPTI records (atomic: NVTX's handlers read it, no lock) */

static bool scheduled(void);
static bool cupti_now(void);
static const char *marker(int *src);
static void from_marker(int src);
static bool recorded_now(void);
static const char *nvtx_name(void);
static void nvtx_boundary(void);
static bool nvtx_recording(void);

__attribute__((constructor)) static void steps_init(void)
{
  static const gji_cupti_steps hooks = {cupti_now, scheduled, marker, from_marker};
  static const gji_nvtx_steps nvtx_hooks = {nvtx_name, nvtx_boundary, nvtx_recording};
  began = gji_now();
  gji_fork_safe(&lock);
  gji_cupti_steps_set(&hooks);
  gji_nvtx_steps_set(&nvtx_hooks);
  gji_kregions_window_set(recorded_now);
}

static const char *const src_names[] = {"api", "torch", "nvtx", "kernel"};

static bool number(const char *v, long *out)
{
  char *end = NULL;
  long n = strtol(v, &end, 10);
  if (!*v || *end || n < 0 || n > 1000000000L)
    return false;
  *out = n;
  return true;
}

/* "wait=W,warmup=U,active=A,repeat=R,skip_first=S,skip_first_wait=B": false where a word is not one of these. */
static bool parse_schedule(const char *text)
{
  char buf[256], *save = NULL;
  snprintf(buf, sizeof(buf), "%s", text);
  S.repeat = 0;
  S.active = -1;
  for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(w, '=');
    long v;
    if (!eq || !number(eq + 1, &v))
      return false;
    *eq = '\0';
    if (!strcmp(w, "wait"))
      S.wait = v;
    else if (!strcmp(w, "warmup"))
      S.warmup = v;
    else if (!strcmp(w, "active"))
      S.active = v;
    else if (!strcmp(w, "repeat"))
      S.repeat = v;
    else if (!strcmp(w, "skip_first"))
      S.skip = v;
    else if (!strcmp(w, "skip_first_wait"))
      S.skip_wait = v;
    else
      return false;
  }
  return S.active >= 1;
}

static void parse_source(const char *text)
{
  if (!text || !*text || !strcmp(text, "auto"))
    return;
  if (!strcmp(text, "api"))
    S.only = GJI_STEP_API;
  else if (!strcmp(text, "torch"))
    S.only = GJI_STEP_TORCH;
  else if (!strncmp(text, "nvtx:", 5) && text[5]) {
    S.only = S.marker_src = GJI_STEP_NVTX;
    snprintf(S.marker, sizeof(S.marker), "%s", text + 5);
  } else if (!strncmp(text, "kernel:", 7) && text[7]) {
    S.only = S.marker_src = GJI_STEP_KERNEL;
    snprintf(S.marker, sizeof(S.marker), "%s", text + 7);
  } else
    gji_note("steps", "%s=%s is not one of %s: steps come from the program's calls (auto)", GPUJIT_ENV(STEP), text,
             GPUJIT_STEP_SOURCES);
}

static phase_t phase_of(uint64_t n, long *cycle);

static void parse(void)
{
  const char *sched = gji_setting(GPUJIT_RECORD_ENV_SCHEDULE);
  long cycle;
  if (S.parsed)
    return;
  S.parsed = true;
  parse_source(gji_setting(GPUJIT_RECORD_ENV_STEP));
  if (sched && *sched) {
    if (parse_schedule(sched))
      S.on = true;
    else
      gji_note("schedule", "%s=%s is not a schedule (wait=W,warmup=U,active=A,repeat=R,skip_first=S,skip_first_wait=B, active at "
                           "least 1): the whole run is recorded",
               GPUJIT_ENV(SCHEDULE), sched);
  }
  __atomic_store_n(&nvtx_rec, !S.on || phase_of(current, &cycle) >= PH_WARMUP, __ATOMIC_RELAXED);
  if (S.on)
    gji_note("schedule", "wait=%ld,warmup=%ld,active=%ld,repeat=%ld,skip_first=%ld%s (steps: %s%s%s)", S.wait,
             S.warmup, S.active, S.repeat, S.skip, S.skip_wait ? ",skip_first_wait=1" : "",
             S.only < 0 ? "auto" : src_names[S.only], S.marker[0] ? ":" : "", S.marker);
}

/* torch.profiler.schedule's action for step `n`, and the cycle it is in. */
static phase_t phase_of(uint64_t n, long *cycle)
{
  uint64_t len = (uint64_t)(S.wait + S.warmup + S.active), m;
  *cycle = 0;
  if (!S.on)
    return PH_ACTIVE;
  if (n < (uint64_t)S.skip)
    return PH_NONE;
  m = n - (uint64_t)S.skip + (S.skip_wait ? (uint64_t)S.wait : 0); /* torch's skip_first_wait: the first cycle waits not */
  *cycle = (long)(m / len);
  if (S.repeat > 0 && m / len >= (uint64_t)S.repeat)
    return PH_NONE;
  m %= len;
  return m < (uint64_t)S.wait ? PH_WAIT : m < (uint64_t)(S.wait + S.warmup) ? PH_WARMUP : PH_ACTIVE;
}

/* Whether a later step than `n` is recorded (another cycle follows). */
static bool more_after(uint64_t n)
{
  long c;
  (void)phase_of(n, &c);
  return S.repeat == 0 || c + 1 < S.repeat;
}

static void write_step(uint64_t n, uint64_t t, const char *phase, long cycle, gji_step_src src)
{
  gji_line l;
  gji_begin(&l, GPUJIT_KIND(STEP));
  gji_u64(&l, "n", n);
  gji_u64(&l, "t", t);
  gji_str(&l, "phase", phase);
  gji_i64(&l, "cycle", cycle);
  gji_str(&l, "src", src_names[src]);
  gji_end_later(&l, t); /* no system call for a step: a loop may make thousands a second */
}

static bool scheduled(void)
{
  pthread_mutex_lock(&lock);
  parse();
  pthread_mutex_unlock(&lock);
  return S.on;
}

static const char *marker(int *src)
{
  pthread_mutex_lock(&lock);
  parse();
  pthread_mutex_unlock(&lock);
  *src = (int)S.marker_src;
  if (S.marker_src == GJI_STEP_NVTX && gji_nvtx_injected()) {
    *src = 0; /* NVTX calls come to this library (nvtx_inject.c): CUPTI has nothing to count */
    return NULL;
  }
  return S.marker[0] ? S.marker : NULL;
}

/* Step 0 begins with the process: its record, where it is recorded, before any other step's. */
static void first_step(gji_step_src src)
{
  long cycle;
  phase_t p = phase_of(0, &cycle);
  if (first_written || !S.on || (p != PH_WARMUP && p != PH_ACTIVE))
    return;
  first_written = true;
  write_step(0, began, p == PH_ACTIVE ? "active" : "warmup", cycle, src);
}

static bool cupti_now(void)
{
  long cycle;
  phase_t p;
  pthread_mutex_lock(&lock);
  parse();
  p = phase_of(current, &cycle);
  cupti_on = !S.on || p == PH_WARMUP || p == PH_ACTIVE;
  if (current == 0)
    first_step(S.only < 0 ? GJI_STEP_API : (gji_step_src)S.only);
  pthread_mutex_unlock(&lock);
  return cupti_on;
}

/* Whether a boundary from `src` counts: the source asked for, or under auto the first of the
 * program's calls seen (a program calling both gpujit.step() and torch's step() is counted once). */
static bool counts(gji_step_src src)
{
  if (S.only >= 0)
    return (int)src == S.only;
  if (src == GJI_STEP_NVTX || src == GJI_STEP_KERNEL)
    return false;
  if (!S.chosen) {
    S.chosen = true;
    S.only = (int)src;
    return true;
  }
  return false;
}

static void boundary(gji_step_src src)
{
  uint64_t t = gji_now();
  long was_cycle, cycle;
  phase_t was, now;
  pthread_mutex_lock(&lock);
  parse();
  if (!counts(src)) {
    pthread_mutex_unlock(&lock);
    return;
  }
  if (current == 0)
    first_step(src);
  was = phase_of(current, &was_cycle);
  now = phase_of(++current, &cycle);
  /* NVTX ranges are written where CUPTI's activity is on: from the warmup to the step after the last active one */
  __atomic_store_n(&nvtx_rec, !S.on || now == PH_WARMUP || now == PH_ACTIVE || was == PH_ACTIVE, __ATOMIC_RELAXED);
  if (S.on) /* kernel regions: an active step's read at its end, emptied before a first active one */
    gji_kregions_step(was == PH_ACTIVE, now == PH_ACTIVE);
  if (detach_due && now != PH_WARMUP && now != PH_ACTIVE) { /* the step after the last active one ended */
    gji_cupti_detach(detach_due == 2);
    cupti_on = false;
  }
  detach_due = 0;
  if (!S.on)
    write_step(current, t, "active", 0, src);
  else if (now == PH_WARMUP || now == PH_ACTIVE) {
    write_step(current, t, now == PH_ACTIVE ? "active" : "warmup", cycle, src);
    if (!cupti_on)
      cupti_on = gji_cupti_attach();
  } else if (was == PH_ACTIVE) {
    write_step(current, t, "after", was_cycle, src);
    /* CUPTI goes at the next boundary: its flush and cuptiFinalize are no active step's time */
    if (cupti_on)
      detach_due = more_after(current - 1) ? 1 : 2;
  }
  pthread_mutex_unlock(&lock);
}

/* An in-process session: steps counted from 0 again, step 0 beginning now, its settings read anew. */
void gji_steps_begin(void)
{
  pthread_mutex_lock(&lock);
  memset(&S, 0, sizeof(S));
  S.only = -1;
  current = 0;
  cupti_on = false;
  began = gji_now();
  detach_due = 0;
  first_written = false;
  pthread_mutex_unlock(&lock);
}

/* The program's own boundary: gpujit_profile_step() (libgpujit looks this up), gpujit.step(), and
 * the torch adapter (`src` GPUJIT_STEP_SRC_TORCH). */
__attribute__((visibility("default"))) void GPUJIT_RECORD_STEP_FN(int src);
void GPUJIT_RECORD_STEP_FN(int src)
{
  if (!gji_active())
    return;
  boundary(src == GPUJIT_STEP_SRC_TORCH ? GJI_STEP_TORCH : GJI_STEP_API);
}

static void from_marker(int src) { boundary((gji_step_src)src); }

/* gpujit's own NVTX injection (nvtx_inject.c): the name it counts, a boundary, the recorded window. */
static const char *nvtx_name(void)
{
  pthread_mutex_lock(&lock);
  parse();
  pthread_mutex_unlock(&lock);
  return S.marker_src == GJI_STEP_NVTX && S.marker[0] ? S.marker : NULL;
}

static void nvtx_boundary(void)
{
  if (gji_active())
    boundary(GJI_STEP_NVTX);
}

static bool nvtx_recording(void) { return __atomic_load_n(&nvtx_rec, __ATOMIC_RELAXED) != 0; }

/* Whether the step going on now is recorded (active): the whole run without a schedule. */
static bool recorded_now(void)
{
  long cycle;
  bool on;
  pthread_mutex_lock(&lock);
  parse();
  on = !S.on || phase_of(current, &cycle) == PH_ACTIVE;
  pthread_mutex_unlock(&lock);
  return on;
}
