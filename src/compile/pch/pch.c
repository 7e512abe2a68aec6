/* NVRTC's automatic precompiled headers (CUDA 12.8+), managed for the process.
 *
 * Facts this is built on (NVRTC 13.0): a PCH is made for the leading block of preprocessing
 * directives of a program and the exact options; it lives in the heap of the process that made
 * it (another process refuses it); making one costs ~45 % on the compile that makes it, using one
 * saves 80-90 % of a header-heavy compile; a #line before the block disables it; the program's
 * name and the --fdevice-time-trace file do not matter. So a PCH is made only where a later
 * compile in this process can use it. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "base/error.h"
#include "base/fs.h"
#include "compile/includes/directives.h"
#include "compile/observe/observe.h"
#include "compile/pch/pch.h"
#include "compile/toolkit/toolkit.h"

/* What identifies a header's content without reading it: a write changes ctime at least. */
typedef struct stamp {
  char *path;
  dev_t dev;
  ino_t ino;
  off_t size;
  struct timespec mtime, ctime;
} stamp;

typedef struct gpujit__pch_stamps {
  stamp *items;
  size_t count;
} gpujit__pch_stamps;

typedef struct block_state {
  uint64_t key;
  unsigned seen;   /* compiles of this block in this process */
  bool has_pch;    /* a PCH for it exists in this process's heap */
  char file[4096]; /* that PCH */
  gpujit__pch_stamps made_from; /* the headers it was made from, as they were */
  gpujit__observed probes; /* what the compile that made it probed: reused only while each holds */
} block_state;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static block_state *blocks;
static size_t blocks_count, blocks_cap;
static char dir[4096];
static bool dir_failed;

/* Safe at fork: a child forked by another thread while `lock` was held would wait on it for
 * ever. It is taken across fork() (held only briefly, never across a compile), so the child's
 * copy of the blocks is whole, and let go on both sides. */
static void fork_prepare(void) { pthread_mutex_lock(&lock); }
static void fork_release(void) { pthread_mutex_unlock(&lock); }
__attribute__((constructor)) static void fork_safe(void) { pthread_atfork(fork_prepare, fork_release, fork_release); }

/* ---- the leading directive block ---------------------------------------------------------- */

/* End of the leading run of blank space, comments and preprocessing directives. */
static size_t block_end(const char *s, size_t n, bool *has_include)
{
  gpujit__buf lines = {0};
  size_t i = 0, last = 0;
  *has_include = false;
  while (i < n) {
    char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      i++;
    } else if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] != '\n')
        i++;
    } else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      const char *e = memmem(s + i + 2, n - i - 2, "*/", 2);
      i = e ? (size_t)(e - s) + 2 : n;
    } else if (c == '#' || (c == '%' && i + 1 < n && s[i + 1] == ':')) {
      while (i < n && s[i] != '\n') /* to the end of the line, through continuations */
        i += (s[i] == '\\' && i + 1 < n && s[i + 1] == '\n') ? 2 : 1;
    } else {
      break;
    }
    last = i;
  }
  /* Whether one of its directives is an #include, as the preprocessor reads them. */
  if (gpujit__directive_lines(&lines, s, last, NULL) == 0)
    for (const char *p = lines.data; p && *p && !*has_include; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
      if (*p == '#') {
        p++;
        while (*p == ' ')
          p++;
        *has_include = strncmp(p, "include", 7) == 0;
      }
  gpujit__buf_free(&lines);
  return last;
}

void gpujit__pch_block_of(gpujit__pch_block *out, const char *source, size_t size, const char *prelude,
                          const gpujit__strvec *flags)
{
  XXH3_state_t *st = XXH3_createState();
  size_t end = block_end(source, size, &out->has_include);
  out->key = 0;
  if (!st)
    return;
  XXH3_64bits_reset(st);
  XXH3_64bits_update(st, source, end);
  XXH3_64bits_update(st, "\0prelude\0", 9);
  if (prelude)
    XXH3_64bits_update(st, prelude, strlen(prelude) + 1);
  for (size_t i = 0; flags && i < flags->count; i++) /* NVRTC refuses a PCH made with(out) a trace */
    if (strncmp(flags->items[i], "--fdevice-time-trace", 20) != 0)
      XXH3_64bits_update(st, flags->items[i], strlen(flags->items[i]) + 1);
    else
      XXH3_64bits_update(st, "\0traced\0", 8); /* but not by the trace file's name */
  out->key = XXH3_64bits_digest(st);
  XXH3_freeState(st);
}

static void stamps_free(gpujit__pch_stamps *s)
{
  for (size_t i = 0; s && i < s->count; i++)
    free(s->items[i].path);
  if (s) {
    free(s->items);
    s->items = NULL;
    s->count = 0;
  }
}

static gpujit__pch_stamps *stamps_take(const char *const *paths, size_t n)
{
  gpujit__pch_stamps *s = calloc(1, sizeof(*s));
  if (!s || !(s->items = calloc(n ? n : 1, sizeof(stamp)))) {
    free(s);
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    struct stat st;
    stamp *t = &s->items[s->count++];
    if (!(t->path = gpujit__strdup(paths[i])) || stat(paths[i], &st) < 0) {
      stamps_free(s);
      free(s);
      return NULL;
    }
    t->dev = st.st_dev;
    t->ino = st.st_ino;
    t->size = st.st_size;
    t->mtime = st.st_mtim;
    t->ctime = st.st_ctim;
  }
  return s;
}

/* Whether every header is as stamped; the first that is not into `changed`. */
static bool stamps_hold(const gpujit__pch_stamps *s, const char **changed)
{
  for (size_t i = 0; i < s->count; i++) {
    const stamp *t = &s->items[i];
    struct stat st;
    if (stat(t->path, &st) < 0 || st.st_dev != t->dev || st.st_ino != t->ino || st.st_size != t->size ||
        st.st_mtim.tv_sec != t->mtime.tv_sec || st.st_mtim.tv_nsec != t->mtime.tv_nsec ||
        st.st_ctim.tv_sec != t->ctime.tv_sec || st.st_ctim.tv_nsec != t->ctime.tv_nsec) {
      *changed = t->path;
      return false;
    }
  }
  return true;
}

/*
 * Whether the compile reaches one file by two paths (a hard link, a symbolic link to it): two
 * stamps of one inode under two names, into `why`. NVRTC keeps a block header's #pragma once (and
 * include guard) by the file in a plain compile, but by its path in a PCH: a compile that uses a
 * PCH reads the file's other name a second time where a compile without one skips it, and makes
 * other code. Such a compile gets no PCH, made or used, so that a PCH never changes what a module
 * compiles to. (Two spellings of one path, "d/../a.h", are one name to NVRTC and to the scan.)
 */
static bool one_file_twice(const gpujit__pch_stamps *s, char *why, size_t n)
{
  for (size_t i = 0; i < s->count; i++)
    for (size_t k = i + 1; k < s->count; k++)
      if (s->items[i].ino == s->items[k].ino && s->items[i].dev == s->items[k].dev &&
          strcmp(s->items[i].path, s->items[k].path)) {
        snprintf(why, n, "one file by two paths, which a PCH would make NVRTC read twice: %s, %s",
                 s->items[i].path, s->items[k].path);
        return true;
      }
  return false;
}

/* Under the lock: the block's PCH can no longer be trusted; remove it so NVRTC cannot use it. */
static void forget_pch(block_state *b)
{
  if (b->file[0])
    unlink(b->file);
  b->file[0] = '\0';
  b->has_pch = false;
  stamps_free(&b->made_from);
  gpujit__observed_free(&b->probes);
}

/* Under the lock. */
static block_state *state_of(uint64_t key)
{
  block_state *p;
  for (size_t i = 0; i < blocks_count; i++)
    if (blocks[i].key == key)
      return &blocks[i];
  if (!(p = gpujit__grow(blocks, &blocks_cap, blocks_count, sizeof(*p), 16)))
    return NULL;
  blocks = p;
  p = &blocks[blocks_count++];
  memset(p, 0, sizeof(*p));
  p->key = key;
  return p;
}

/* ---- the process's PCH directory ---------------------------------------------------------- */

/* Directories "gpujit-pch-PID-XXXXXX" whose process is gone (killed before its cleanup ran). */
static void remove_stale(const char *base)
{
  DIR *d = opendir(base);
  struct dirent *e;
  char path[4400];
  if (!d)
    return;
  while ((e = readdir(d))) {
    long pid;
    char *end;
    if (strncmp(e->d_name, "gpujit-pch-", 11) != 0)
      continue;
    pid = strtol(e->d_name + 11, &end, 10);
    if (pid <= 0 || *end != '-' || pid == (long)getpid())
      continue;
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
      continue;
    snprintf(path, sizeof(path), "%s/%s", base, e->d_name);
    gpujit__rmrf(path);
  }
  closedir(d);
}

/* Removed by the process that made it only: a child forked after it was made, ending with exit(),
 * would otherwise take the parent's PCHs with it. */
static pid_t dir_pid;

__attribute__((destructor)) static void remove_own_dir(void)
{
  if (dir[0] && dir_pid == getpid())
    gpujit__rmrf(dir);
}

const char *gpujit__pch_dir(void)
{
  const char *base = getenv("TMPDIR");
  pthread_mutex_lock(&lock);
  if (!dir[0] && !dir_failed) {
    if (!base || !*base)
      base = "/tmp";
    remove_stale(base);
    snprintf(dir, sizeof(dir), "%s/gpujit-pch-%ld-XXXXXX", base, (long)getpid());
    if (!mkdtemp(dir)) {
      dir[0] = '\0';
      dir_failed = true;
    } else
      dir_pid = getpid();
  }
  pthread_mutex_unlock(&lock);
  if (!dir[0])
    return gpujit__error(GPUJIT_EIO, "cannot create a PCH directory under %s: %s", base ? base : "/tmp",
                         strerror(errno)), NULL;
  return dir;
}

const char *gpujit__pch_dir_if_made(void)
{
  const char *made;
  pthread_mutex_lock(&lock);
  made = dir[0] ? dir : NULL;
  pthread_mutex_unlock(&lock);
  return made;
}

/* ---- before and after a compile ----------------------------------------------------------- */

bool gpujit__pch_plan(gpujit__pch *pch, const gpujit__pch_block *block, gpujit__strvec *flags, int *err)
{
  block_state *b;
  bool on = false;
  const char *d;
  *err = 0;
  pch->status = GPUJIT_PCH_STATUS_OFF;
  pch->reason[0] = '\0';
  if (pch->mode == GPUJIT_PCH_OFF)
    return false;
  pch->status = GPUJIT_PCH_STATUS_NONE;
  if (!gpujit__nvrtc_pch_api_get()) {
    snprintf(pch->reason, sizeof(pch->reason), "this NVRTC has no precompiled headers (needs CUDA 12.8+)");
    return false;
  }
  if (!block->has_include) {
    snprintf(pch->reason, sizeof(pch->reason), "the source does not start with an #include block");
    return false;
  }
  pthread_mutex_lock(&lock);
  if ((b = state_of(block->key))) {
    const char *changed;
    char probe_why[300] = "";
    b->seen++;
    /* NVRTC may take any PCH in the heap whose headers this compile starts with, also one gpujit
     * made for another block (the same #include lines behind another comment, say): every PCH
     * whose headers changed goes before NVRTC can see it, not only this block's. */
    for (size_t i = 0; i < blocks_count; i++)
      if (blocks[i].has_pch && (!stamps_hold(&blocks[i].made_from, &changed) ||
                                !gpujit__observed_holds(&blocks[i].probes, probe_why, sizeof(probe_why)))) {
        if (probe_why[0])
          changed = probe_why;
        if (&blocks[i] == b) {
          snprintf(pch->reason, sizeof(pch->reason), "%s changed since the PCH was made: making it again", changed);
          b->seen = 2; /* it paid before */
        }
        forget_pch(&blocks[i]);
      }
    on = b->has_pch || pch->mode == GPUJIT_PCH_ON || pch->more_expected || b->seen >= 2;
  }
  pthread_mutex_unlock(&lock);
  if (on) {
    size_t n = 0;
    const char *const *list = pch->headers ? pch->headers(pch->headers_ctx, &n) : NULL;
    if (!list) {
      snprintf(pch->reason, sizeof(pch->reason),
               "the headers it reads are not known (the include scan could not follow them), so a PCH "
               "could not be checked for staleness");
      return false;
    }
    if (!(pch->stamps = stamps_take(list, n))) {
      snprintf(pch->reason, sizeof(pch->reason), "a header could not be stat'ed: no PCH");
      return false;
    }
    if (one_file_twice(pch->stamps, pch->reason, sizeof(pch->reason))) {
      gpujit__pch_release(pch);
      return false;
    }
  }
  if (!on) {
    snprintf(pch->reason, sizeof(pch->reason),
             "first module with this include block and these options in this process: "
             "a PCH would cost more than it saves");
    return false;
  }
  if (!(d = gpujit__pch_dir())) {
    snprintf(pch->reason, sizeof(pch->reason), "%s", gpujit_error_last());
    gpujit_error_clear();
    gpujit__pch_release(pch);
    return false;
  }
  if ((*err = gpujit__strvec_push(flags, "-pch")) < 0 || (*err = gpujit__strvec_pushf(flags, "--pch-dir=%s", d)) < 0 ||
      (*err = gpujit__strvec_push(flags, "--pch-messages=true")) < 0 ||
      (*err = gpujit__strvec_push(flags, "--pch-verbose=true")) < 0)
    return false;
  return true;
}

/* Lines NVRTC writes for the PCH, and the diagnostics it raises about one. */
/* The file named in `"SRC": creating precompiled header file "FILE"`. */
static void message_file(char *out, size_t size, const char *line, size_t len)
{
  const char *q = memmem(line, len, "header file \"", 13), *e;
  out[0] = '\0';
  if (!q)
    return;
  q += 13;
  if ((e = memchr(q, '"', len - (size_t)(q - line))))
    snprintf(out, size, "%.*s", (int)(e - q), q);
}

static bool is_pch_message(const char *line, size_t len)
{
  return line[0] == '"' && memmem(line, len, "precompiled header file", 23) &&
         (memmem(line, len, ": creating ", 11) || memmem(line, len, ": using ", 8));
}

static const char *pch_warning(const char *line, size_t len)
{
  static const char *const codes[] = {"#629-D", "#630-D", "#639-D", "#20283-D"};
  for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
    if (memmem(line, len, codes[i], strlen(codes[i])))
      return codes[i];
  return NULL;
}

void gpujit__pch_strip_log(gpujit__buf *log, gpujit__pch *pch)
{
  gpujit__buf out = {0};
  const char *p = log->data, *end = log->data ? log->data + log->len : NULL;
  bool skipping = false, other_warnings = false, created = false, used = false;
  const char *remark = NULL;
  size_t remark_at = 0;
  if (!p)
    return;
  while (p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    size_t len = eol ? (size_t)(eol - p) : (size_t)(end - p);
    const char *code;
    if (skipping) { /* a PCH diagnostic runs to its blank line */
      if (len == 0)
        skipping = false;
    } else if (is_pch_message(p, len)) {
      if (memmem(p, len, ": using ", 8))
        used = true;
      else
        created = true;
      if (created && !used)
        message_file(pch->file, sizeof(pch->file), p, len);
    } else if ((code = pch_warning(p, len))) {
      const char *why = !strcmp(code, "#629-D")   ? "options differ from those of the process's PCH"
                        : !strcmp(code, "#630-D") ? "include block differs from that of the process's PCH"
                        : !strcmp(code, "#639-D") ? "PCH heap too small"
                        : memmem(p, len, "#line", 5) ? "a #line directive precedes the include block"
                                                     : "NVRTC could not create the PCH";
      if (!pch->reason[0] || !strcmp(code, "#20283-D"))
        snprintf(pch->reason, sizeof(pch->reason), "%s", why);
      skipping = true;
    } else if (len >= 7 && strncmp(p, "Remark:", 7) == 0 && memmem(p, len, "suppressed", 10)) {
      remark = p;
      remark_at = out.len;
      skipping = true; /* it and its blank line go back in below if other warnings remain */
    } else {
      if (memmem(p, len, "warning", 7) || memmem(p, len, "Warning", 7))
        other_warnings = true;
      gpujit__buf_put(&out, p, len);
      if (eol)
        gpujit__buf_puts(&out, "\n");
    }
    p = eol ? eol + 1 : end;
  }
  if (remark && other_warnings) {
    const char *eol = memchr(remark, '\n', (size_t)(end - remark));
    gpujit__buf tail = {0};
    size_t rlen = eol ? (size_t)(eol - remark) : (size_t)(end - remark);
    gpujit__buf_put(&tail, out.data ? out.data + remark_at : "", out.len - remark_at);
    out.len = remark_at;
    gpujit__buf_put(&out, remark, rlen);
    gpujit__buf_puts(&out, "\n\n");
    gpujit__buf_put(&out, tail.data ? tail.data : "", tail.len);
    gpujit__buf_free(&tail);
  }
  if (used)
    pch->status = GPUJIT_PCH_STATUS_USED;
  else if (created)
    pch->status = GPUJIT_PCH_STATUS_CREATED;
  gpujit__buf_free(log);
  *log = out;
  if (log->data)
    log->data[log->len] = '\0';
}

bool gpujit__pch_after(gpujit__pch *pch, const gpujit__pch_block *block, void *prog, gpujit__buf *log)
{
  const gpujit__nvrtc_pch_api *api = gpujit__nvrtc_pch_api_get();
  nvrtcResult created;
  size_t required = 0;
  bool retry = false;
  gpujit_pch_status hinted;

  pch->status = GPUJIT_PCH_STATUS_NONE;
  gpujit__pch_strip_log(log, pch);
  hinted = pch->status;
  if (!api)
    return false;
  created = api->nvrtcGetPCHCreateStatus((nvrtcProgram)prog);
  pthread_mutex_lock(&lock);
  if (created == NVRTC_SUCCESS || hinted == GPUJIT_PCH_STATUS_USED) {
    block_state *b = state_of(block->key);
    const char *changed = NULL;
    pch->status = hinted == GPUJIT_PCH_STATUS_USED ? GPUJIT_PCH_STATUS_USED : GPUJIT_PCH_STATUS_CREATED;
    if (pch->status == GPUJIT_PCH_STATUS_USED) {
      pch->reason[0] = '\0';
      /* NVRTC read a PCH instead of headers: what made each PCH it could have read is this
       * compile's to depend on too */
      size_t known = 0;
      for (size_t i = 0; pch->observed && i < blocks_count; i++)
        if (blocks[i].has_pch && ++known && gpujit__observed_merge(pch->observed, &blocks[i].probes) < 0)
          snprintf(pch->observed->why, sizeof(pch->observed->why), "out of memory");
      if (pch->observed && !known && !pch->observed->why[0])
        snprintf(pch->observed->why, sizeof(pch->observed->why),
                 "it used a precompiled header whose making was not observed");
    }
    if (created == NVRTC_SUCCESS && b) {
      if (pch->stamps && stamps_hold(pch->stamps, &changed)) { /* nothing changed during the compile */
        if (!strcmp(b->file, pch->file))
          b->file[0] = '\0'; /* NVRTC reused the name: the file is the new PCH */
        forget_pch(b);
        b->has_pch = true;
        b->made_from = *pch->stamps;
        free(pch->stamps);
        pch->stamps = NULL;
        gpujit__observed_free(&b->probes);
        snprintf(b->file, sizeof(b->file), "%s", pch->file);
        if (pch->observed && gpujit__observed_copy(&b->probes, pch->observed) == 0)
          gpujit__observed_forget(&b->probes, pch->source);
        if (!pch->observed || !b->probes.items || b->probes.why[0]) {
          snprintf(pch->reason, sizeof(pch->reason), "what made it could not be observed (%s): PCH removed",
                   b->probes.why[0] ? b->probes.why : "no record");
          forget_pch(b); /* not known: never to be reused */
          pch->status = GPUJIT_PCH_STATUS_REFUSED;
        }
      } else {
        if (pch->file[0])
          unlink(pch->file);
        b->has_pch = false;
        snprintf(pch->reason, sizeof(pch->reason), "%s changed during the compile: PCH removed",
                 changed ? changed : "a header");
        pch->status = GPUJIT_PCH_STATUS_REFUSED;
      }
    }
  } else if (created == NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED &&
             api->nvrtcGetPCHHeapSizeRequired((nvrtcProgram)prog, &required) == NVRTC_SUCCESS && required) {
    /* Grow to what NVRTC asked, with room: every PCH of the old heap is gone with it. */
    size_t want = (required + required / 4 + ((size_t)16 << 20) - 1) & ~(((size_t)16 << 20) - 1);
    if (api->nvrtcSetPCHHeapSize(want) == NVRTC_SUCCESS) {
      for (size_t i = 0; i < blocks_count; i++)
        blocks[i].has_pch = false;
      retry = !pch->retried && (pch->mode == GPUJIT_PCH_ON || pch->more_expected);
    }
    pch->status = GPUJIT_PCH_STATUS_REFUSED;
    snprintf(pch->reason, sizeof(pch->reason), "PCH heap too small: %zu MiB needed, heap grown to %zu MiB%s",
             required >> 20, want >> 20, retry ? ", compiling again" : " for the next compile");
  } else if (created == NVRTC_ERROR_PCH_CREATE) {
    pch->status = GPUJIT_PCH_STATUS_REFUSED;
    if (!pch->reason[0])
      snprintf(pch->reason, sizeof(pch->reason), "NVRTC could not create the PCH");
  } else if (pch->reason[0]) {
    pch->status = GPUJIT_PCH_STATUS_REFUSED; /* an existing PCH did not fit and none was made */
  } else {
    snprintf(pch->reason, sizeof(pch->reason), "NVRTC chose not to create a PCH for this include block");
  }
  pthread_mutex_unlock(&lock);
  if (api->nvrtcGetPCHHeapSize(&pch->heap_bytes) != NVRTC_SUCCESS)
    pch->heap_bytes = 0;
  if (retry)
    pch->retried = true;
  else
    gpujit__pch_release(pch);
  return retry;
}

void gpujit__pch_release(gpujit__pch *pch)
{
  stamps_free(pch->stamps);
  free(pch->stamps);
  pch->stamps = NULL;
}
