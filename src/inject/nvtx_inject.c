/* gpujit's own NVTX injection. NVTX (nvtx3, header-only, one copy in each library that uses it:
 * the program's, torch's, the `nvtx` package Warp uses) loads NVTX_INJECTION64_PATH at its first
 * call and hands InitializeInjectionNvtx2 its function tables; each copy does so once. With
 * `--step nvtx:NAME` `gpujit profile` names this library there (run.c), so the steps are counted
 * here: a range push, start or mark whose message is NAME begins a step — a string compare a call,
 * no CUPTI, which then stays unset up until the first warmup step as with gpujit.step().
 *
 * The NVTX ranges CUPTI's marker records showed (CUPTI is not NVTX's injection now, so it has
 * none) are written here instead, on the host clock every step record uses, for the steps CUPTI
 * records: a range whose push or start came in one of them, when it ends; a mark at once. Each
 * push is matched to its pop per thread and domain; a start to its end by id, across threads. */
#define _GNU_SOURCE
#define NVTX_NO_IMPL /* the types alone: the program's copies of NVTX call in here */
#include <nvtx3/nvToolsExt.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <wchar.h>

#include "inject/nvtx_inject.h"
#include "inject/protocol.h"

static gji_nvtx_steps steps;
static const char *want; /* the step's name, read when NVTX first calls in */

void gji_nvtx_steps_set(const gji_nvtx_steps *s)
{
  steps = *s;
}

bool gji_nvtx_injected(void)
{
  static pthread_mutex_t known_lock = PTHREAD_MUTEX_INITIALIZER;
  static char known_path[4096]; /* the variable's value `known` was worked out for */
  static int known;             /* 0 not asked, 1 yes, 2 no */
  const char *path = gji_setting(GPUJIT_RECORD_ENV_NVTX_INJECTION);
  int answer;
  pthread_mutex_lock(&known_lock);
  if (!known || strcmp(known_path, path ? path : "") != 0) {
    Dl_info self;
    struct stat a, b;
    bool same = path && *path && dladdr((void *)gji_nvtx_injected, &self) && self.dli_fname && stat(path, &a) == 0 &&
                stat(self.dli_fname, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
    snprintf(known_path, sizeof(known_path), "%s", path ? path : "");
    known = same ? 1 : 2;
  }
  answer = known;
  pthread_mutex_unlock(&known_lock);
  return answer == 1;
}

/* Domains and registered strings are handles the program gets from here: each a name of ours,
 * valid for the process's life (NVTX lets a program keep a handle as long as it likes), so each
 * stays on a list, reachable, never freed. */
typedef struct named {
  char text[128];
  struct named *next;
} named;

static named *all_named;

static named *named_new(const char *a, const wchar_t *w)
{
  named *n = calloc(1, sizeof(*n));
  size_t i = 0;
  if (!n)
    return NULL;
  n->next = __atomic_load_n(&all_named, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(&all_named, &n->next, n, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
    ;
  if (a)
    snprintf(n->text, sizeof(n->text), "%s", a);
  else
    for (; w && w[i] && i + 1 < sizeof(n->text); i++)
      n->text[i] = w[i] < 0x80 ? (char)w[i] : '?'; /* a name to show and compare, not to round-trip */
  return n;
}

static const char *domain_name(nvtxDomainHandle_t d)
{
  return d ? ((const named *)(const void *)d)->text : "";
}

/* A message as text: ASCII as it is, wide text narrowed into `buf`, a registered string's own. */
static const char *text_of(int type, const nvtxMessageValue_t *m, char *buf, size_t n)
{
  size_t i = 0;
  switch (type) {
  case NVTX_MESSAGE_TYPE_ASCII:
    return m->ascii;
  case NVTX_MESSAGE_TYPE_REGISTERED:
    return m->registered ? ((const named *)(const void *)m->registered)->text : NULL;
  case NVTX_MESSAGE_TYPE_UNICODE:
    for (; m->unicode && m->unicode[i] && i + 1 < n; i++)
      buf[i] = m->unicode[i] < 0x80 ? (char)m->unicode[i] : '?';
    buf[i] = '\0';
    return m->unicode ? buf : NULL;
  default:
    return NULL;
  }
}

/* A wide message as text (narrowed into `buf`). */
static const char *wide_text(const wchar_t *m, char *buf, size_t n)
{
  nvtxMessageValue_t v = {.unicode = m};
  return text_of(NVTX_MESSAGE_TYPE_UNICODE, &v, buf, n);
}

static const char *attr_text(const nvtxEventAttributes_t *a, char *buf, size_t n)
{
  return a ? text_of(a->messageType, &a->message, buf, n) : NULL;
}

static void write_range(const char *name, const char *domain, uint64_t s, uint64_t e, uint32_t tid)
{
  gji_line l;
  gji_begin_on(&l, GPUJIT_KIND(NVTX), tid);
  gji_str(&l, "name", name);
  gji_u64(&l, "t0", s); /* the host clock's fields (CUPTI's are `s`, `e`): a reader that knows */
  gji_u64(&l, "t1", e); /* only CUPTI's ranges finds no time in these, never a wrong one */
  gji_u64(&l, "thread", tid);
  gji_str(&l, "domain", domain);
  gji_end_later(&l, e);         /* no system call each: a step may hold thousands */
}

/* A range or mark begins: a step first where it is the step's name, so the step's own range is
 * among those its step records. @return whether it is to be written (CUPTI would record it now). */
static bool begins(const char *name)
{
  if (!gji_active())
    return false; /* between sessions (in-process): the copies of NVTX that loaded this library still call in */
  const char *w = __atomic_load_n(&want, __ATOMIC_RELAXED);
  if (w && name && !strcmp(name, w))
    steps.boundary();
  return steps.recording && steps.recording();
}

/* Pushed ranges, per thread: each one's domain, and where it is written its name and start. */
typedef struct pushed {
  const void *domain;
  uint64_t t; /* 0: not written */
  char name[116];
} pushed;
#define DEPTH 64
static __thread struct {
  int depth;
  pushed *v; /* DEPTH of them, made at the first range written on the thread */
} P;

static int push(nvtxDomainHandle_t d, const char *name)
{
  bool rec = begins(name);
  int at = P.depth++;
  if (at >= DEPTH)
    return at; /* deeper than kept: counted, not written */
  if (rec && !P.v)
    P.v = calloc(DEPTH, sizeof(*P.v));
  if (!P.v)
    return at;
  P.v[at].domain = d;
  P.v[at].t = rec ? gji_now() : 0;
  if (rec)
    snprintf(P.v[at].name, sizeof(P.v[at].name), "%s", name ? name : "");
  return at;
}

static int pop(nvtxDomainHandle_t d)
{
  int at = P.depth - 1;
  if (at < 0)
    return -1; /* a pop with nothing pushed: NVTX says so with a negative depth */
  P.depth--;
  if (at >= DEPTH || !P.v)
    return at;
  for (int i = at; i >= 0; i--) /* the newest of its domain: domains nest independently */
    if (P.v[i].domain == (const void *)d) {
      pushed p = P.v[i];
      memmove(&P.v[i], &P.v[i + 1], (size_t)(at - i) * sizeof(P.v[0]));
      if (p.t)
        write_range(p.name, domain_name(d), p.t, gji_now(), gji_tid());
      break;
    }
  return at;
}

/* Started ranges, by id: one may end on another thread. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
__attribute__((constructor)) static void fork_safe_lock(void)
{
  gji_fork_safe(&lock);
}
static uint64_t next_id;
static struct {
  uint64_t id, t;
  uint32_t tid;
  const void *domain;
  char name[104];
} started[256];

static nvtxRangeId_t start(nvtxDomainHandle_t d, const char *name)
{
  bool rec = begins(name);
  nvtxRangeId_t id = __atomic_add_fetch(&next_id, 1, __ATOMIC_RELAXED);
  if (rec) {
    pthread_mutex_lock(&lock);
    started[id % 256].id = id;
    started[id % 256].t = gji_now();
    started[id % 256].tid = gji_tid();
    started[id % 256].domain = d;
    snprintf(started[id % 256].name, sizeof(started[0].name), "%s", name ? name : "");
    pthread_mutex_unlock(&lock);
  }
  return id;
}

static void end(nvtxRangeId_t id)
{
  uint64_t t = gji_now();
  char name[104];
  uint64_t s = 0;
  uint32_t tid = 0;
  const void *d = NULL;
  pthread_mutex_lock(&lock);
  if (id && started[id % 256].id == id) {
    snprintf(name, sizeof(name), "%s", started[id % 256].name);
    s = started[id % 256].t, tid = started[id % 256].tid, d = started[id % 256].domain;
    started[id % 256].id = 0;
  }
  pthread_mutex_unlock(&lock);
  if (s)
    write_range(name, domain_name((nvtxDomainHandle_t)(uintptr_t)d), s, t, tid);
}

static void mark(nvtxDomainHandle_t d, const char *name)
{
  if (begins(name)) {
    uint64_t t = gji_now();
    write_range(name ? name : "", domain_name(d), t, t, gji_tid());
  }
}

/* The entry points NVTX calls: each the text of its message, then one of the five above. */
#define TEXT char buf[128]
static void NVTX_API h_markEx(const nvtxEventAttributes_t *a)
{
  TEXT;
  mark(NULL, attr_text(a, buf, sizeof(buf)));
}
static void NVTX_API h_markA(const char *m)
{
  mark(NULL, m);
}
static void NVTX_API h_markW(const wchar_t *m)
{
  TEXT;
  mark(NULL, wide_text(m, buf, sizeof(buf)));
}
static nvtxRangeId_t NVTX_API h_startEx(const nvtxEventAttributes_t *a)
{
  TEXT;
  return start(NULL, attr_text(a, buf, sizeof(buf)));
}
static nvtxRangeId_t NVTX_API h_startA(const char *m)
{
  return start(NULL, m);
}
static nvtxRangeId_t NVTX_API h_startW(const wchar_t *m)
{
  TEXT;
  return start(NULL, wide_text(m, buf, sizeof(buf)));
}
static void NVTX_API h_end(nvtxRangeId_t id)
{
  end(id);
}
static int NVTX_API h_pushEx(const nvtxEventAttributes_t *a)
{
  TEXT;
  return push(NULL, attr_text(a, buf, sizeof(buf)));
}
static int NVTX_API h_pushA(const char *m)
{
  return push(NULL, m);
}
static int NVTX_API h_pushW(const wchar_t *m)
{
  TEXT;
  return push(NULL, wide_text(m, buf, sizeof(buf)));
}
static int NVTX_API h_pop(void)
{
  return pop(NULL);
}

static void NVTX_API h_dmarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
  TEXT;
  mark(d, attr_text(a, buf, sizeof(buf)));
}
static nvtxRangeId_t NVTX_API h_dstartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
  TEXT;
  return start(d, attr_text(a, buf, sizeof(buf)));
}
static void NVTX_API h_dend(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
  (void)d, end(id);
}
static int NVTX_API h_dpushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
  TEXT;
  return push(d, attr_text(a, buf, sizeof(buf)));
}
static int NVTX_API h_dpop(nvtxDomainHandle_t d)
{
  return pop(d);
}
/* a domain or registered string lives as long as the process: the program may hold its handle */
static nvtxStringHandle_t NVTX_API h_regA(nvtxDomainHandle_t d, const char *s)
{
  (void)d;
  return (nvtxStringHandle_t)(void *)named_new(s ? s : "", NULL);
}
static nvtxStringHandle_t NVTX_API h_regW(nvtxDomainHandle_t d, const wchar_t *s)
{
  (void)d;
  return (nvtxStringHandle_t)(void *)named_new(NULL, s);
}
static nvtxDomainHandle_t NVTX_API h_domainA(const char *s)
{
  return (nvtxDomainHandle_t)(void *)named_new(s ? s : "", NULL);
}
static nvtxDomainHandle_t NVTX_API h_domainW(const wchar_t *s)
{
  return (nvtxDomainHandle_t)(void *)named_new(NULL, s);
}
static void NVTX_API h_domainDestroy(nvtxDomainHandle_t d)
{
  (void)d; /* kept: a late range may name it */
}

typedef struct slot {
  unsigned id;
  NvtxFunctionPointer fn;
} slot;

static const slot core[] = {
    {NVTX_CBID_CORE_MarkEx, (NvtxFunctionPointer)h_markEx},
    {NVTX_CBID_CORE_MarkA, (NvtxFunctionPointer)h_markA},
    {NVTX_CBID_CORE_MarkW, (NvtxFunctionPointer)h_markW},
    {NVTX_CBID_CORE_RangeStartEx, (NvtxFunctionPointer)h_startEx},
    {NVTX_CBID_CORE_RangeStartA, (NvtxFunctionPointer)h_startA},
    {NVTX_CBID_CORE_RangeStartW, (NvtxFunctionPointer)h_startW},
    {NVTX_CBID_CORE_RangeEnd, (NvtxFunctionPointer)h_end},
    {NVTX_CBID_CORE_RangePushEx, (NvtxFunctionPointer)h_pushEx},
    {NVTX_CBID_CORE_RangePushA, (NvtxFunctionPointer)h_pushA},
    {NVTX_CBID_CORE_RangePushW, (NvtxFunctionPointer)h_pushW},
    {NVTX_CBID_CORE_RangePop, (NvtxFunctionPointer)h_pop},
};
static const slot core2[] = {
    {NVTX_CBID_CORE2_DomainMarkEx, (NvtxFunctionPointer)h_dmarkEx},
    {NVTX_CBID_CORE2_DomainRangeStartEx, (NvtxFunctionPointer)h_dstartEx},
    {NVTX_CBID_CORE2_DomainRangeEnd, (NvtxFunctionPointer)h_dend},
    {NVTX_CBID_CORE2_DomainRangePushEx, (NvtxFunctionPointer)h_dpushEx},
    {NVTX_CBID_CORE2_DomainRangePop, (NvtxFunctionPointer)h_dpop},
    {NVTX_CBID_CORE2_DomainRegisterStringA, (NvtxFunctionPointer)h_regA},
    {NVTX_CBID_CORE2_DomainRegisterStringW, (NvtxFunctionPointer)h_regW},
    {NVTX_CBID_CORE2_DomainCreateA, (NvtxFunctionPointer)h_domainA},
    {NVTX_CBID_CORE2_DomainCreateW, (NvtxFunctionPointer)h_domainW},
    {NVTX_CBID_CORE2_DomainDestroy, (NvtxFunctionPointer)h_domainDestroy},
};

/* One module's table of the calling NVTX copy: each slot this library handles set (the rest left
 * to NVTX, which makes them no-ops). false: the copy has no such table. */
static bool install(const NvtxExportTableCallbacks *cb, NvtxCallbackModule module, const slot *s, size_t n)
{
  NvtxFunctionTable table = NULL;
  unsigned size = 0;
  if (!cb->GetModuleFunctionTable(module, &table, &size) || !table)
    return false;
  for (size_t i = 0; i < n; i++)
    if (s[i].id < size && table[s[i].id])
      *table[s[i].id] = s[i].fn;
  return true;
}

void gji_nvtx_session(void)
{
  __atomic_store_n(&want, steps.name ? steps.name() : NULL, __ATOMIC_RELAXED);
}

/* Called by each copy of NVTX in the process at its first call, when NVTX_INJECTION64_PATH names
 * this library. @return 0 (NVTX makes every call a no-op) where no profile is recorded here. */
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get);
int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
  const NvtxExportTableCallbacks *cb;
  const NvtxExportTableVersionInfo *version;
  if (!gji_active() || !get || !(cb = (const NvtxExportTableCallbacks *)get(NVTX_ETID_CALLBACKS)) ||
      cb->struct_size < sizeof(*cb) || !cb->GetModuleFunctionTable)
    return 0;
  if (steps.name)
    want = steps.name();
  if ((version = (const NvtxExportTableVersionInfo *)get(NVTX_ETID_VERSIONINFO)) &&
      version->struct_size >= sizeof(*version) && version->SetInjectionNvtxVersion)
    version->SetInjectionNvtxVersion(NVTX_VERSION);
  if (!install(cb, NVTX_CB_MODULE_CORE, core, sizeof(core) / sizeof(core[0])))
    return 0;
  install(cb, NVTX_CB_MODULE_CORE2, core2, sizeof(core2) / sizeof(core2[0])); /* an NVTX before domains: none */
  return 1;
}
