/* Reading a profile's records: one JSON-lines file per process image (profile/model.h). A line
 * cut short — the last one of a process killed mid-write — is passed over; any other line that
 * does not parse, and a file that cannot be read, are said in a note. */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/fs.h"
#include "inject/protocol.h"
#include "profile/model.h"
#include "profile/record_fields.h"

void gpujit__profile_note(gpujit_profile *p, const char *fmt, ...)
{
  char line[1200];
  va_list ap;
  int n;
  va_start(ap, fmt);
  n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
  va_end(ap);
  if (n < 0)
    return;
  if ((size_t)n > sizeof(line) - 2)
    n = (int)sizeof(line) - 2;
  if (p->notes.data && strstr(p->notes.data, line)) /* once */
    return;
  line[n] = '\n';
  gpujit__buf_put(&p->notes, line, (size_t)n + 1);
}

/* A GPU time (CUPTI's clock) on the host's: the process's clock record comes before its activity. */
static uint64_t host_of(const pf_proc *proc, uint64_t t);
static uint64_t gpu_t(const pf_proc *proc, const char *line, const char *k) { return host_of(proc, pf_t_of(line, k)); }
/* An NVTX range's times: `t0`, `t1` on the host clock (gpujit's own NVTX injection), else CUPTI's `s`, `e`. */
static void nvtx_times(const pf_proc *proc, const char *line, pf_nvtx *n)
{
  bool host = pf_t_of(line, "t0") != 0;
  n->s = host ? pf_t_of(line, "t0") : gpu_t(proc, line, "s"), n->e = host ? pf_t_of(line, "t1") : gpu_t(proc, line, "e");
}

/* A range's view: the records of its process that began inside it. Kernels, copies and memsets
 * count from their own records (the process's running sums carry no time); the sums, the exit
 * and the end of GPU recording belong to the whole process. @return whether to read the record. */
static bool in_range(gpujit_profile *p, const pf_proc *proc, const char *line, int kind, int pid)
{
  uint64_t t;
  if (!p->range)
    return true;
  if (kind == GPUJIT_RECORD_PROC) /* every process's lineage: a range takes its children's tools */
    return true;
  if (pid != p->range_pid) { /* a toolchain process the range's process started, inside the range */
    if (!gpujit__profile_descends(proc->anc, proc->nanc, p->range_pid))
      return false;
    if (kind == GPUJIT_RECORD_TOOL_END)
      return proc->tool >= 0;
    if (kind != GPUJIT_RECORD_TOOL)
      return false;
  }
  switch (kind) {
  case GPUJIT_RECORD_PROC:
  case GPUJIT_RECORD_CLOCK:
  case GPUJIT_RECORD_NOTE:
    return true;
  case GPUJIT_RECORD_KERNEL: /* tested once, in op_record, whichever reading found them */
  case GPUJIT_RECORD_COPY:
  case GPUJIT_RECORD_MEMSET:
    return true;
  case GPUJIT_RECORD_KSUM:
  case GPUJIT_RECORD_OSUM:
  case GPUJIT_RECORD_EXIT:
  case GPUJIT_RECORD_EXEC:
  case GPUJIT_RECORD_GPU_END:
  case GPUJIT_RECORD_DROPPED:
    return false;
  case GPUJIT_RECORD_STEP: /* a boundary: its own time */
  case GPUJIT_RECORD_KREGIONS: /* a read of kernel regions: when it was read */
  case GPUJIT_RECORD_KSLICES:
    t = pf_t_of(line, "t");
    return t >= p->range_t0 && t <= p->range_t1;
  default:
    break;
  }
  t = pf_t_of(line, "t0") ? pf_t_of(line, "t0") : gpu_t(proc, line, "s");
  return t >= p->range_t0 && t <= p->range_t1;
}

/* In a range, a kernel, copy or memset record is its own one-launch sum. */
static void range_sum(gpujit_profile *p, const pf_op *o)
{
  if (o->kind == 'k') {
    pf_ksum *s = PF_PUSH(p->ksums);
    if (!s)
      return;
    s->pid = o->pid;
    s->handle = o->handle;
    s->name = pf_dup(o->name);
    s->device = o->device;
    s->n = 1, s->ns = o->e > o->s ? o->e - o->s : 0;
  } else {
    pf_osum *s = PF_PUSH(p->osums);
    if (!s)
      return;
    s->pid = o->pid;
    snprintf(s->op, sizeof(s->op), "%s", o->kind == 'c' ? "copy" : "memset");
    s->device = o->device;
    s->n = 1, s->bytes = o->bytes, s->ns = o->e > o->s ? o->e - o->s : 0;
  }
}

/* A kernel, copy or memset read (its name owned): kept, and in a range its own one-launch sum. */
static void keep_op(gpujit_profile *p, const pf_op *in)
{
  pf_op *o = PF_PUSH(p->ops);
  if (!o) {
    free(in->name);
    return;
  }
  *o = *in;
  if (p->range)
    range_sum(p, o);
}

/* Host time of a GPU timestamp: CUPTI's clock moved by the process's clock record. */
static uint64_t host_of(const pf_proc *proc, uint64_t t)
{
  return pf_host_time(proc, t);
}

/* A kernel, copy or memset record, whichever reading found its fields (the flat scan or cJSON):
 * the one constructor, and the one range test (a range keeps its process's ops that began in it).
 * `name` is owned by the op, or freed here when the op is not kept. */
static void op_record(gpujit_profile *p, const pf_proc *proc, pf_op o)
{
  o.s = host_of(proc, o.s), o.e = host_of(proc, o.e);
  o.e = o.e < o.s ? o.s : o.e; /* a damaged record that ends before it began lasts nothing */
  if (p->range && (o.pid != p->range_pid || o.s < p->range_t0 || o.s > p->range_t1)) {
    free(o.name);
    return;
  }
  keep_op(p, &o);
}

/* A process's running sums: of one function's launches ("ksum"), or of copies or memsets ("osum"). */
static void sum_record(gpujit_profile *p, const cJSON *j, int kind, int pid)
{
  if (kind == GPUJIT_RECORD_KSUM) {
    pf_ksum *s = PF_PUSH(p->ksums);
    if (!s)
      return;
    s->pid = pid;
    s->handle = pf_u_of(j, "module");
    s->name = pf_dup(pf_s_of(j, "name"));
    s->device = (uint32_t)pf_u_of(j, "device");
    s->n = pf_u_of(j, "n"), s->ns = pf_u_of(j, "ns");
  } else {
    pf_osum *s = PF_PUSH(p->osums);
    if (!s)
      return;
    s->pid = pid;
    snprintf(s->op, sizeof(s->op), "%s", pf_s_of(j, "op"));
    s->device = (uint32_t)pf_u_of(j, "device");
    s->n = pf_u_of(j, "n"), s->bytes = pf_u_of(j, "bytes"), s->ns = pf_u_of(j, "ns");
  }
}

/* An NVRTC, nvJitLink or libNVVM compile's record (kind `k`). */
static void compile_record(gpujit_profile *p, const char *line, const cJSON *j, const char *k, int kind, int pid)
{
  pf_compile *c = PF_PUSH(p->compiles);
  if (!c)
    return;
  snprintf(c->kind, sizeof(c->kind), "%s", k);
  c->pid = pid;
  c->tid = (uint32_t)pf_u_of(j, "tid");
  c->name = pf_dup(kind == GPUJIT_RECORD_NVRTC ? pf_s_of(j, "name") : k);
  c->options = pf_options_of(j);
  c->log = pf_dup(pf_s_of(j, "log"));
  c->lib_path = pf_dup(pf_s_of(j, "lib_path"));
  c->nvrtc_trace = pf_dup(pf_s_of(j, "nvrtc_trace"));
  pf_copy_hash(c->src, pf_s_of(j, "src_hash"));
  c->headers = (int)pf_i_of(j, "headers");
  c->result = (int)pf_i_of(j, "result");
  c->version = (int)pf_i_of(j, "version");
  c->t0 = pf_t_of(line, "t0"), c->t1 = pf_t_of(line, "t1");
  c->ptx_bytes = pf_u_of(j, "ptx_bytes"), c->cubin_bytes = pf_u_of(j, "cubin_bytes"),
  c->ltoir_bytes = pf_u_of(j, "ltoir_bytes");
  pf_copy_hash(c->ptx_hash, pf_s_of(j, "ptx_hash"));
  pf_copy_hash(c->cubin_hash, pf_s_of(j, "cubin_hash"));
  pf_copy_hash(c->ltoir_hash, pf_s_of(j, "ltoir_hash"));
  c->module = c->stage_of = -1;
}

/* A module load's record. */
static void load_record(gpujit_profile *p, const char *line, const cJSON *j, int pid)
{
  pf_load *l = PF_PUSH(p->loads);
  if (!l)
    return;
  l->pid = pid;
  l->tid = (uint32_t)pf_u_of(j, "tid");
  snprintf(l->api, sizeof(l->api), "%s", pf_s_of(j, "api"));
  snprintf(l->image, sizeof(l->image), "%s", *pf_s_of(j, "file") ? "file" : pf_s_of(j, "image"));
  pf_copy_hash(l->hash, pf_s_of(j, "hash"));
  l->file = pf_dup(pf_s_of(j, "file"));
  l->corr = pf_u_of(j, "corr");
  l->t0 = pf_t_of(line, "t0"), l->t1 = pf_t_of(line, "t1");
  l->bytes = pf_u_of(j, "bytes");
  l->handle = pf_u_of(j, "module");
  l->result = (int)pf_i_of(j, "result");
  l->module = -1;
}

static void one(gpujit_profile *p, pf_proc *proc, const char *line, const cJSON *j)
{
  const char *k = pf_s_of(j, "k");
  int kind = gpujit_record_kind_of(k), pid = (int)pf_i_of(j, "pid");
  uint64_t t = pf_t_of(line, "t") ? pf_t_of(line, "t") : pf_t_of(line, "t1");
  if (!in_range(p, proc, line, kind, pid))
    return;
  if (t) {
    if (!proc->t0 || t < proc->t0)
      proc->t0 = t;
    if (t > proc->t1)
      proc->t1 = t;
  }
  switch (kind) {
  case GPUJIT_RECORD_PROC: {
    proc->version = (int)pf_i_of(j, "v"); /* 0: written before versions */
    proc->pid = pid;
    proc->ppid = (int)pf_i_of(j, "ppid");
    free(proc->exe), free(proc->cmd);
    proc->exe = pf_dup(pf_s_of(j, "exe"));
    proc->cmd = pf_dup(pf_s_of(j, "cmd"));
    gpujit__profile_read_lineage(proc, j);
    break;
  }
  case GPUJIT_RECORD_EXEC: { /* this image ended by running another program */
    proc->ended = true;
    break;
  }
  case GPUJIT_RECORD_EXIT: {
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "status");
    proc->ended = true;
    proc->exit_t = pf_t_of(line, "t");
    proc->lost += pf_u_of(j, "lost");
    if (proc->tool >= 0 && cJSON_IsNumber(st)) { /* a tool's own exit status, whoever reaps it */
      p->compiles.v[proc->tool].result = (int)st->valuedouble;
      p->compiles.v[proc->tool].own_result = true;
    }
    break;
  }
  case GPUJIT_RECORD_CLOCK: {
    proc->clock_offset = (int64_t)(pf_t_of(line, "host") - pf_t_of(line, "cupti"));
    proc->has_clock = proc->gpu = true;
    break;
  }
  case GPUJIT_RECORD_NVRTC: case GPUJIT_RECORD_NVJITLINK: case GPUJIT_RECORD_NVVM:
    compile_record(p, line, j, k, kind, pid);
    break;
  case GPUJIT_RECORD_LOAD:
    load_record(p, line, j, pid);
    break;
  case GPUJIT_RECORD_KSUM: case GPUJIT_RECORD_OSUM:
    sum_record(p, j, kind, pid);
    break;
  case GPUJIT_RECORD_JIT: {
    pf_jit *x = PF_PUSH(p->jits);
    if (!x)
      return;
    x->pid = pid;
    x->corr = pf_u_of(j, "corr");
    x->s = gpu_t(proc, line, "s"), x->e = gpu_t(proc, line, "e");
    x->cache_hit = !strcmp(pf_s_of(j, "op"), "cache-load");
    x->device = (uint32_t)pf_u_of(j, "device");
    break;
  }
  case GPUJIT_RECORD_KERNEL: case GPUJIT_RECORD_COPY: case GPUJIT_RECORD_MEMSET: {
    op_record(p, proc,
              (pf_op){.pid = pid,
                      .kind = k[0],
                      .name = pf_dup(k[0] == 'k' ? pf_s_of(j, "name") : pf_s_of(j, "what")),
                      .handle = pf_u_of(j, "module"),
                      .corr = pf_u_of(j, "corr"),
                      .s = pf_t_of(line, "s"),
                      .e = pf_t_of(line, "e"),
                      .bytes = pf_u_of(j, "bytes"),
                      .device = (uint32_t)pf_u_of(j, "device"),
                      .stream = (uint32_t)pf_u_of(j, "stream")});
    break;
  }
  case GPUJIT_RECORD_NVTX: {
    pf_nvtx *n = PF_PUSH(p->nvtx);
    if (!n)
      return;
    n->pid = pid;
    n->thread = (uint32_t)pf_u_of(j, "thread");
    n->name = pf_dup(pf_s_of(j, "name"));
    nvtx_times(proc, line, n);
    break;
  }
  case GPUJIT_RECORD_GPU_END: {
    proc->untraced += pf_u_of(j, "untraced");
    break;
  }
  case GPUJIT_RECORD_DROPPED: {
    proc->lost += pf_u_of(j, "records");
    break;
  }
  case GPUJIT_RECORD_NOTE: {
    proc->lost += pf_u_of(j, "lost"); /* records the Python adapters could not write, since their last such note */
    proc->hook_said |= !strcmp(pf_s_of(j, "what"), "python-no-hook");
    gpujit__profile_step_note(proc, j); /* the steps' schedule */
    gpujit__profile_note(p, "process %d: %s", pid, pf_s_of(j, "msg"));
    break;
  }
  case GPUJIT_RECORD_STEP: case GPUJIT_RECORD_LAUNCH:
    gpujit__profile_read_step(p, line, j, kind, pid);
    break;
  case GPUJIT_RECORD_KREGIONS: case GPUJIT_RECORD_KSLICES:
    gpujit__profile_read_kregions(p, proc, line, j, kind, pid);
    break;
  case GPUJIT_RECORD_TOOL: case GPUJIT_RECORD_TOOL_END: case GPUJIT_RECORD_REAP: case GPUJIT_RECORD_UNIT:
  case GPUJIT_RECORD_BIND: case GPUJIT_RECORD_SPAN:
    gpujit__profile_read_compiler(p, proc, line, j, kind);
    break;
  default: /* a kind this version does not know: skipped */
    break;
  }
}

/* The records that come by the hundred thousand (kernels, copies, memsets) are flat objects of
 * plain strings and integers, as the injection library writes them: they are read by a scan of
 * their fields here, not a parse into a tree (a tenth of the time). A line this scan does not
 * follow (an escape, a nested value) goes to cJSON as before. */
enum { F_K, F_PID, F_NAME, F_WHAT, F_MODULE, F_CORR, F_S, F_E, F_BYTES, F_DEVICE, F_STREAM, F_N };
static const char *const flat_keys[F_N] = {"k", "pid", "name",  "what",   "module", "corr",
                                           "s", "e",   "bytes", "device", "stream"};

typedef struct flat {
  const char *v[F_N];
  size_t len[F_N];
} flat;

static bool flat_scan(const char *line, flat *f)
{
  const char *c = line;
  memset(f, 0, sizeof(*f));
  if (*c++ != '{')
    return false;
  while (*c == '"') {
    const char *key = ++c, *v;
    size_t klen, vlen;
    if (!(c = strchr(c, '"')))
      return false;
    klen = (size_t)(c - key);
    if (c[1] != ':')
      return false;
    v = c += 2;
    if (*c == '"') {
      const char *q = strpbrk(c + 1, "\\\"");
      if (!q || *q == '\\')
        return false; /* escapes: cJSON's */
      v = c + 1, vlen = (size_t)(q - v), c = q + 1;
    } else {
      while ((*c >= '0' && *c <= '9') || *c == '-')
        c++;
      if (c == v)
        return false; /* true, false, null, an array or an object */
      vlen = (size_t)(c - v);
    }
    for (int i = 0; i < F_N; i++)
      if (strlen(flat_keys[i]) == klen && !memcmp(flat_keys[i], key, klen)) {
        f->v[i] = v, f->len[i] = vlen;
        break;
      }
    if (*c == ',')
      c++;
    else if (*c == '}')
      return f->v[F_K] != NULL;
  }
  return false;
}

static bool flat_is(const flat *f, int i, const char *s)
{
  return f->v[i] && f->len[i] == strlen(s) && !memcmp(f->v[i], s, f->len[i]);
}

/* A field as a number: decimal, or a "0x…" string; 0 when absent. */
static uint64_t flat_u(const flat *f, int i)
{
  if (!f->v[i])
    return 0;
  if (f->len[i] > 2 && f->v[i][0] == '0' && f->v[i][1] == 'x')
    return strtoull(f->v[i] + 2, NULL, 16);
  return f->v[i][0] == '-' ? 0 : strtoull(f->v[i], NULL, 10);
}

/* A kernel, copy or memset line read by flat_scan; @return false when the line is another kind. */
static bool flat_op(gpujit_profile *p, pf_proc *proc, const flat *f)
{
  char kind = flat_is(f, F_K, "kernel") ? 'k' : flat_is(f, F_K, "copy") ? 'c' : flat_is(f, F_K, "memset") ? 'm' : 0;
  int nm = kind == 'k' ? F_NAME : F_WHAT;
  if (!kind)
    return false;
  op_record(p, proc,
            (pf_op){.pid = (int)strtol(f->v[F_PID] ? f->v[F_PID] : "0", NULL, 10),
                    .kind = kind,
                    .name = gpujit__strndup(f->v[nm] ? f->v[nm] : "", f->v[nm] ? f->len[nm] : 0),
                    .handle = flat_u(f, F_MODULE),
                    .corr = flat_u(f, F_CORR),
                    .s = flat_u(f, F_S),
                    .e = flat_u(f, F_E),
                    .bytes = flat_u(f, F_BYTES),
                    .device = (uint32_t)flat_u(f, F_DEVICE),
                    .stream = (uint32_t)flat_u(f, F_STREAM)});
  return true;
}

/* The format version a records file states in its first line (its proc record); -1 when that
 * line is no proc record (a file cut short before it: read as it is). */
static int file_version(const char *data, size_t len)
{
  const char *eol = memchr(data, '\n', len);
  cJSON *j;
  int v = -1;
  if (eol && (j = cJSON_ParseWithLength(data, (size_t)(eol - data))) != NULL) {
    if (!strcmp(pf_s_of(j, "k"), "proc"))
      v = (int)pf_i_of(j, "v"); /* 0: written before versions */
    cJSON_Delete(j);
  }
  return v;
}

/* One process's records. A file that cannot be read, or is of another format, or lines that do
 * not parse, are said in a note and the rest is reported: nothing is lost without a word. */
static int read_file(gpujit_profile *p, const char *path, const char *name)
{
  gpujit__buf b = {0};
  pf_proc *proc;
  char *line, *end;
  size_t unread = 0;
  int err = gpujit__file_read(&b, path), v;
  if (err == GPUJIT_ENOMEM)
    return err;
  if (err < 0) {
    gpujit__profile_note(p, "records file %s could not be read (%s): what its process recorded is missing from this report",
                         name, gpujit_error_last());
    gpujit_error_clear();
    return 0;
  }
  {
    /* every process's file begins with its proc record: one without it was emptied during the run */
    size_t lead = 0;
    while (lead < b.len && b.data[lead] == '\0')
      lead++;
    if (lead == b.len || (memchr(b.data + lead, '\n', b.len - lead) && file_version(b.data + lead, b.len - lead) < 0)) {
      gpujit__profile_note(p, "records file %s %s (emptied while the run went on): what its process recorded%s is "
                              "missing from this report",
                           name, lead == b.len ? "is empty" : "lost its beginning", lead == b.len ? "" : " before");
      p->records_missing = true;
      if (lead == b.len) {
        gpujit__buf_free(&b);
        return 0;
      }
    }
  }
  if (b.len && (v = file_version(b.data, b.len)) >= 0 && v != GPUJIT_RECORD_VERSION) { /* never misread another format */
    gpujit__profile_note(p, "records file %s is of format version %d%s; this gpujit reads version %d (the injection "
                            "library or Python hook of another build of gpujit wrote it): its records are not in this report",
                         name, v, v ? "" : " (before versions)", GPUJIT_RECORD_VERSION);
    gpujit__buf_free(&b);
    return 0;
  }
  if (!(proc = PF_PUSH(p->procs))) {
    gpujit__buf_free(&b);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  proc->tool = -1;
  for (line = b.data; line && line < b.data + b.len; line = end + 1) {
    cJSON *j;
    flat f;
    if (!(end = memchr(line, '\n', (size_t)(b.data + b.len - line))))
      break; /* no end of line: cut short by a kill */
    *end = '\0';
    while (line < end && *line == '\0') /* a file system's hole before a line (a crash while extending it) */
      line++;
    if (line == end)
      continue;
    if (!strncmp(line, "{\"k\":\"", 6) && strchr("kcm", line[6]) && flat_scan(line, &f) && flat_op(p, proc, &f))
      continue;
    if ((j = cJSON_Parse(line)) != NULL) {
      one(p, proc, line, j);
      cJSON_Delete(j);
    } else {
      unread++;
    }
  }
  gpujit__buf_free(&b);
  if (unread)
    gpujit__profile_note(p, "%zu line%s of records file %s could not be read (damaged): what %s recorded is missing "
                            "from this report",
                         unread, unread == 1 ? "" : "s", name, unread == 1 ? "it" : "they");
  return 0;
}

static void lost_note(gpujit_profile *p, int pid, int code)
{
  gpujit__profile_note(p, "process %d could not write its records (%s): what it did after that is missing from this "
                          "report",
                       pid, strerror(code));
  p->records_missing = true;
}

/* The lines "PID ERRNO" of processes that could not make a file in the directory at all. */
static void lost_lines(gpujit_profile *p, const char *dir)
{
  char path[4096], line[64];
  FILE *f;
  snprintf(path, sizeof(path), "%s/" GPUJIT_RECORD_LOST_FILE, dir);
  if (!(f = fopen(path, "re")))
    return;
  while (fgets(line, sizeof(line), f)) {
    int pid, code;
    if (sscanf(line, "%d %d", &pid, &code) == 2)
      lost_note(p, pid, code);
  }
  fclose(f);
}

int gpujit__profile_read(gpujit_profile *p, const char *dir)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  int err = 0;
  if (!d) { /* removed or made unreadable during the run: the command's outcome is still reported */
    gpujit__profile_note(p, "the records directory %s could not be read (%s): nothing the processes recorded is in "
                            "this report",
                         dir, strerror(errno));
    return 0;
  }
  while (err == 0 && (e = readdir(d)) != NULL) {
    char path[4096];
    size_t len = strlen(e->d_name);
    int pid, code;
    /* a process that could not write its records left this empty file (inject/record.c) */
    if (sscanf(e->d_name, GPUJIT_RECORD_LOST_FORMAT, &pid, &code) == 2) {
      lost_note(p, pid, code);
      continue;
    }
    if (!strcmp(e->d_name, GPUJIT_RECORD_LOST_FILE)) {
      lost_lines(p, dir);
      continue;
    }
    if (strncmp(e->d_name, GPUJIT_RECORD_FILE_PREFIX, strlen(GPUJIT_RECORD_FILE_PREFIX)) ||
        len <= strlen(GPUJIT_RECORD_FILE_SUFFIX) ||
        strcmp(e->d_name + len - strlen(GPUJIT_RECORD_FILE_SUFFIX), GPUJIT_RECORD_FILE_SUFFIX))
      continue;
    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
    err = read_file(p, path, e->d_name);
  }
  closedir(d);
  gpujit__profile_compilers_joined(p);
  /* A process only an adapter wrote for (a Python process that compiled through a framework and
   * called nothing the injection library records) is a process of the run, with no end to say. */
  for (size_t i = 0; i < p->procs.n; i++) {
    bool lone = p->procs.v[i].adapter;
    for (size_t k = 0; k < p->procs.n && lone; k++)
      lone = k == i || p->procs.v[k].adapter || p->procs.v[k].pid != p->procs.v[i].pid;
    if (lone) /* the first such file of its pid; later ones of that pid stay adapters' */
      p->procs.v[i].adapter = false, p->procs.v[i].ended = true;
  }
  if (p->range) { /* the range's process alone; it goes on, so nothing in the range is partial */
    size_t keep = 0;
    for (size_t i = 0; i < p->procs.n; i++) {
      if (p->procs.v[i].pid == p->range_pid) {
        p->procs.v[keep] = p->procs.v[i];
        p->procs.v[keep++].ended = true;
      } else {
        free(p->procs.v[i].exe), free(p->procs.v[i].cmd), free(p->procs.v[i].schedule);
      }
    }
    p->procs.n = keep;
    return err;
  }
  /* A process image without an exit record was replaced by exec when a later image has its pid. */
  for (size_t i = 0; i < p->procs.n; i++)
    for (size_t k = 0; k < p->procs.n && !p->procs.v[i].ended; k++)
      if (k != i && !p->procs.v[k].adapter && p->procs.v[k].pid == p->procs.v[i].pid &&
          p->procs.v[k].t0 >= p->procs.v[i].t1)
        p->procs.v[i].ended = true;
  return err;
}
