/* Records of the injection library: JSON lines, one file per process (inject/record.h). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "inject/protocol.h"
#include "inject/record.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char dir[4096], flags[256];
static bool active;
/* This process's records file, by path: every write opens it anew (O_APPEND), so no descriptor
 * of gpujit's lives on in the program, which may close or dup2 over any number (closerange) and
 * open its own files there. file_pid: the process whose file `file` is (a forked child makes its own). */
static char file[sizeof(dir) + 64];
static pid_t file_pid;
static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t note_lock = PTHREAD_MUTEX_INITIALIZER;
static char noted[16][32];
static uint64_t lost;
static pid_t started_pid; /* the process this image was loaded in (set before every other constructor of
                           * the library runs): a forked child is not it */

__attribute__((constructor(101))) static void remember_started_pid(void) { started_pid = getpid(); }

/* getpid and gettid, asked for every record, kept: a fork's child learns its own below */
static pid_t self_pid;
static __thread uint32_t self_tid;

static pthread_mutex_t *fork_locks[16];
static int n_fork_locks;

static void on_fork_child(void)
{
  /* the child writes a file of its own; the parent's descriptor is left to the parent */
  self_pid = getpid();
  self_tid = 0;
  file_pid = 0;
  memset(noted, 0, sizeof(noted));
  lost = 0;
  /* A lock another thread held at the fork stays held in the child, whose copy of that thread
   * does not exist: every lock of the library starts free here (the child never waits on it). */
  for (int i = 0; i < n_fork_locks; i++)
    pthread_mutex_init(fork_locks[i], NULL);
}

/* Each file's locks, registered by its constructor (before any thread of the program). */
void gji_fork_safe(pthread_mutex_t *m)
{
  if (n_fork_locks < (int)(sizeof(fork_locks) / sizeof(fork_locks[0])))
    fork_locks[n_fork_locks++] = m;
}

static void write_lines(const char *s, size_t n);

__attribute__((constructor)) static void register_fork_handler(void)
{
  gji_fork_safe(&open_lock);
  gji_fork_safe(&note_lock);
  pthread_atfork(NULL, NULL, on_fork_child);
  gji_batch_writer(write_lines);
}

static void init(void)
{
  const char *d = getenv(GPUJIT_ENV(DIR)), *f = getenv(GPUJIT_ENV(FLAGS));
  if (d && *d && strlen(d) < sizeof(dir) - 64) {
    snprintf(dir, sizeof(dir), "%s", d);
    /* a directory made read-only for this process is still the run's: its first record finds
     * that it cannot make its file, and says so where it can (records_lost) */
    active = access(dir, W_OK) == 0 || errno == EACCES || errno == EROFS;
  }
  snprintf(flags, sizeof(flags), ",%s,", f ? f : "");
  self_pid = getpid();
}

bool gji_active(void)
{
  pthread_once(&once, init);
  return __atomic_load_n(&active, __ATOMIC_ACQUIRE);
}

bool gji_flag(const char *name)
{
  char key[64];
  pthread_once(&once, init);
  snprintf(key, sizeof(key), ",%s,", name);
  return strstr(flags, key) != NULL;
}

const char *gji_dir(void)
{
  pthread_once(&once, init);
  return dir;
}

void gji_inproc_begin(const char *records, const char *words)
{
  pthread_once(&once, init);
  pthread_mutex_lock(&open_lock);
  snprintf(dir, sizeof(dir), "%s", records);
  snprintf(flags, sizeof(flags), ",%s,", words ? words : "");
  file_pid = 0; /* a new session writes a new file, its notes said again, its losses its own */
  memset(noted, 0, sizeof(noted));
  lost = 0;
  self_pid = getpid();
  __atomic_store_n(&active, dir[0] != '\0', __ATOMIC_RELEASE);
  pthread_mutex_unlock(&open_lock);
}

/* No exit record: the process goes on; its session is read as a range, which nothing ends early. */
void gji_inproc_end(void)
{
  gji_later_flush();
  __atomic_store_n(&active, false, __ATOMIC_RELEASE);
}

uint64_t gji_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint32_t gji_tid(void)
{
  if (!self_tid)
    self_tid = (uint32_t)syscall(SYS_gettid);
  return self_tid;
}

static pid_t gji_pid(void)
{
  pthread_once(&once, init);
  return self_pid;
}

/* getpid(), not the pid kept: a vfork child shares this memory (and runs no fork handlers). */
bool gji_owns_file(void)
{
  return file_pid == getpid();
}

static void put(gji_line *l, const char *s, size_t n)
{
  if (l->len + n + 3 > sizeof(l->buf)) { /* room kept for "}\n" */
    l->cut = true;
    n = l->len + 3 < sizeof(l->buf) ? sizeof(l->buf) - 3 - l->len : 0;
  }
  memcpy(l->buf + l->len, s, n);
  l->len += n;
}

static void putf(gji_line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(gji_line *l, const char *fmt, ...)
{
  char tmp[512];
  va_list ap;
  int n;
  va_start(ap, fmt);
  n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
  va_end(ap);
  if (n > 0)
    put(l, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static void key(gji_line *l, const char *k)
{
  if (!l->first)
    put(l, ",", 1);
  put(l, "\"", 1);
  put(l, k, strlen(k));
  put(l, "\":", 2);
  l->first = false;
}

/* Digits of v in base 10 or 16, without printf (a kernel record has eight numbers). */
static void digits(gji_line *l, uint64_t v, unsigned base)
{
  char tmp[24];
  size_t n = sizeof(tmp);
  do {
    tmp[--n] = "0123456789abcdef"[v % base];
    v /= base;
  } while (v);
  put(l, tmp + n, sizeof(tmp) - n);
}

static void quoted(gji_line *l, const char *s, size_t n)
{
  put(l, "\"", 1);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (l->len + 8 > sizeof(l->buf) - 256) { /* room for the fields after it and the end */
      l->cut = true;
      break;
    }
    if (c == '"' || c == '\\') {
      char e[2] = {'\\', (char)c};
      put(l, e, 2);
    } else if (c < 0x20) {
      putf(l, "\\u%04x", c);
    } else {
      put(l, (const char *)&c, 1);
    }
  }
  put(l, "\"", 1);
}

static void open_file(void);
static void on_exit_handler(int status, void *arg);

void gji_begin_on(gji_line *l, const char *k, uint32_t tid)
{
  l->len = 0;
  l->cut = false;
  l->first = true;
  put(l, "{", 1);
  gji_str(l, "k", k);
  gji_i64(l, "pid", gji_pid());
  gji_u64(l, "tid", tid);
}

void gji_begin(gji_line *l, const char *k) { gji_begin_on(l, k, gji_tid()); }

void gji_str(gji_line *l, const char *k, const char *v)
{
  gji_strn(l, k, v ? v : "", v ? strlen(v) : 0);
}

void gji_strn(gji_line *l, const char *k, const char *v, size_t n)
{
  key(l, k);
  quoted(l, v, n);
}

void gji_u64(gji_line *l, const char *k, uint64_t v)
{
  key(l, k);
  digits(l, v, 10);
}

void gji_i64(gji_line *l, const char *k, int64_t v)
{
  key(l, k);
  if (v < 0)
    put(l, "-", 1);
  digits(l, v < 0 ? 0 - (uint64_t)v : (uint64_t)v, 10);
}

void gji_dbl(gji_line *l, const char *k, double v)
{
  key(l, k);
  putf(l, "%.17g", v);
}

void gji_hex(gji_line *l, const char *k, uint64_t v)
{
  key(l, k);
  put(l, "\"0x", 3);
  digits(l, v, 16);
  put(l, "\"", 1);
}

void gji_strs(gji_line *l, const char *k, const char *const *v, int n)
{
  key(l, k);
  put(l, "[", 1);
  for (int i = 0; i < n; i++) {
    if (i)
      put(l, ",", 1);
    quoted(l, v[i] ? v[i] : "", v[i] ? strlen(v[i]) : 0);
  }
  put(l, "]", 1);
}

void gji_raw(gji_line *l, const char *k, const char *json)
{
  key(l, k);
  put(l, json, strlen(json));
}

/* A write that failed (a full disk, a quota): the lines are counted lost, and an empty file
 * `lost-PID-ERRNO` beside the records says so — it needs no data block, so it can be made where
 * the records could not be written. Once per process and error. */
static void records_lost(const char *s, size_t n, int err)
{
  static pid_t marked_pid;
  static int marked_err;
  char path[sizeof(dir) + 64];
  uint64_t lines = 0;
  int f;
  for (const char *p = s; (p = memchr(p, '\n', (size_t)(s + n - p))); p++)
    lines++;
  gji_lost(lines ? lines : 1);
  if (marked_pid == getpid() && marked_err == err)
    return;
  marked_pid = getpid();
  marked_err = err;
  snprintf(path, sizeof(path), "%s/" GPUJIT_RECORD_LOST_FORMAT, dir, (int)getpid(), err);
  if ((f = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) >= 0) {
    close(f);
    return;
  }
  /* no new file here: the one the profile made before the run takes a line */
  snprintf(path, sizeof(path), "%s/" GPUJIT_RECORD_LOST_FILE, dir);
  if ((f = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY)) >= 0) {
    char line[32];
    int len = snprintf(line, sizeof(line), "%d %d\n", (int)getpid(), err);
    ssize_t w = write(f, line, (size_t)len); /* nowhere left to say it otherwise */
    (void)w;
    close(f);
  }
}

static void write_line(const char *s, size_t n)
{
  /* O_NOFOLLOW: the records directory is gpujit's; a link put there is not written through */
  int f = open(file, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
  if (f < 0) {
    records_lost(s, n, errno);
    return;
  }
  while (n > 0) {
    ssize_t w = write(f, s, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      records_lost(s, n, w < 0 ? errno : EIO);
      break;
    }
    s += w, n -= (size_t)w;
  }
  close(f);
}

/* The line closed; false where it is not to be written (no profile, or no file of this process's). */
static bool finish(gji_line *l)
{
  if (!gji_active())
    return false;
  if (l->cut) /* a string was cut short: the line stays valid and says so */
    put(l, ",\"cut\":true", 11);
  put(l, "}\n", 2);
  if (file_pid != gji_pid())
    open_file();
  return file_pid == gji_pid();
}

void gji_end(gji_line *l)
{
  if (!finish(l))
    return;
  gji_later_flush(); /* the lines kept for later go first: the file keeps the order they came in */
  if (!gji_batch_take(l->buf, l->len))
    write_line(l->buf, l->len);
}

void gji_end_later(gji_line *l, uint64_t now)
{
  if (finish(l))
    gji_later_keep(l->buf, l->len, now);
}

/* Whole lines written now, where this process's records file is its own (record_batch.c's writes). */
static void write_lines(const char *s, size_t n)
{
  if (file_pid == gji_pid())
    write_line(s, n);
}

/* The parent of `pid` from /proc (0 when unknown). */
static int parent_of(int pid)
{
  char path[64], buf[512], *p;
  int f, ppid = 0;
  ssize_t n;
  snprintf(path, sizeof(path), "/proc/%d/stat", pid);
  if ((f = open(path, O_RDONLY | O_CLOEXEC)) < 0)
    return 0;
  n = read(f, buf, sizeof(buf) - 1);
  close(f);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  if ((p = strrchr(buf, ')')) != NULL && sscanf(p + 1, " %*c %d", &ppid) != 1) /* "pid (comm) S ppid" */
    ppid = 0;
  return ppid;
}

/* "ancestors": the parent's parent and up (to 16), so the report ties a compile in a grandchild
 * (a compiler driver's shell, a worker pool's worker) to the compile that started it. */
static void ancestors(gji_line *l)
{
  char json[256];
  size_t len = 0;
  int pid = getppid();
  json[len++] = '[';
  for (int i = 0; i < 16 && (pid = parent_of(pid)) > 1 && len < sizeof(json) - 16; i++)
    len += (size_t)snprintf(json + len, sizeof(json) - len, "%s%d", i ? "," : "", pid);
  json[len++] = ']';
  json[len] = '\0';
  gji_raw(l, "ancestors", json);
}

/* This process's file, opened on its first record (a forked child opens its own). */
static void open_file(void)
{
  char exe[1024] = "", cmd[2048];
  gji_line l;
  ssize_t n;
  int f;
  pthread_mutex_lock(&open_lock);
  if (file_pid == gji_pid()) {
    pthread_mutex_unlock(&open_lock);
    return;
  }
  snprintf(file, sizeof(file), "%s/" GPUJIT_RECORD_FILE_FORMAT, dir, (int)getpid(), (unsigned long long)gji_now());
  f = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (f < 0) {
    int err = errno;
    pthread_mutex_unlock(&open_lock);
    records_lost("", 0, err); /* not a word lost without one said */
    return;
  }
  close(f);
  file_pid = gji_pid();
  pthread_mutex_unlock(&open_lock);
  {
    static bool registered;
    if (!__atomic_exchange_n(&registered, true, __ATOMIC_ACQ_REL)) /* inherited by forked children */
      on_exit(on_exit_handler, NULL); /* with the status exit() was given: main's return too */
  }
  if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) > 0)
    exe[n] = '\0';
  gji_begin(&l, GPUJIT_KIND(PROC));
  gji_i64(&l, "v", GPUJIT_RECORD_VERSION);
  gji_i64(&l, "ppid", getppid());
  ancestors(&l);
  gji_str(&l, "exe", exe);
  if ((f = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC)) >= 0) {
    n = read(f, cmd, sizeof(cmd) - 1);
    close(f);
    for (ssize_t i = 0; i + 1 < n; i++)
      if (cmd[i] == '\0')
        cmd[i] = ' ';
    gji_strn(&l, "cmd", cmd, n > 0 ? (size_t)n - (cmd[n - 1] == '\0') : 0);
  }
  { /* a Python started (not forked: a child writes the hook's file only when it records) while
     * the hook is on: the report expects the hook's own file beside this one */
    const char *base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
    if (!strncmp(base, "python", 6) && getenv(GPUJIT_ENV(HOOK)) && getpid() == started_pid)
      gji_i64(&l, "hook", 1);
  }
  gji_u64(&l, "t", gji_now());
  gji_end(&l);
}

void gji_open_now(void)
{
  if (gji_active() && file_pid != gji_pid())
    open_file();
}

void gji_note(const char *what, const char *fmt, ...)
{
  char msg[1024];
  gji_line l;
  va_list ap;
  bool first = true;
  pthread_mutex_lock(&note_lock);
  for (int i = 0; i < 16; i++) {
    if (!strcmp(noted[i], what)) {
      first = false;
      break;
    }
    if (!noted[i][0]) {
      snprintf(noted[i], sizeof(noted[i]), "%s", what);
      break;
    }
  }
  pthread_mutex_unlock(&note_lock);
  if (!first)
    return;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  gji_begin(&l, GPUJIT_KIND(NOTE));
  gji_str(&l, "what", what);
  gji_str(&l, "msg", msg);
  gji_u64(&l, "t", gji_now());
  gji_end(&l);
}

void gji_hash(char out[33], const void *data, size_t size)
{
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits(data, size));
  for (int i = 0; i < 16; i++)
    snprintf(out + 2 * i, 3, "%02x", c.digest[i]);
}

void gji_lost(uint64_t n)
{
  __atomic_add_fetch(&lost, n, __ATOMIC_RELAXED);
}

/* Last: what this process could not keep, and that it ended (a process without this record
 * crashed, was killed or exec'd another program). Written by the first of: an exit handler
 * (registered with this process's first record, so it runs before the handlers libraries
 * registered earlier, whose crashes would not unsay a normal end), _exit (Python's os._exit,
 * multiprocessing's workers) or this library's destructor. */
static pid_t ended_pid;
static void (*gpu_flush)(void);
static void (*end_hook)(void);

void gji_set_end_hook(void (*fn)(void))
{
  end_hook = fn;
}

void gji_set_gpu_flush(void (*fn)(void))
{
  gpu_flush = fn;
}

void gji_exit_record(int status)
{
  gji_line l;
  if (!gji_active() || file_pid != getpid() || ended_pid == getpid())
    return;
  if (gpu_flush)
    gpu_flush();
  ended_pid = getpid();
  if (end_hook)
    end_hook();
  gji_begin(&l, GPUJIT_KIND(EXIT));
  gji_u64(&l, "t", gji_now());
  if (status >= 0)
    gji_i64(&l, "status", status);
  gji_u64(&l, "lost", __atomic_load_n(&lost, __ATOMIC_RELAXED));
  gji_end(&l);
}

static void on_exit_handler(int status, void *arg)
{
  (void)arg;
  gji_exit_record(status & 0xff);
}

/* A process whose first record came before main (a toolchain program says what it is from its
 * constructor) registered its exit handler before libc registered the loader's, so at exit the
 * destructors run first — this one among them, without the status. The record is then left to a
 * handler registered now, which exit runs after them with its status (only where nothing of the
 * GPU's is left to flush: CUPTI's own destructor may have run). */
__attribute__((destructor)) static void at_unload(void)
{
  if (!gpu_flush && file_pid == getpid() && ended_pid != getpid() && on_exit(on_exit_handler, NULL) == 0)
    return;
  gji_exit_record(-1);
}

__attribute__((visibility("default"), noreturn)) void _exit(int status);
void _exit(int status)
{
  void (*real)(int) = (void (*)(int))dlvsym(RTLD_NEXT, "_exit", "GLIBC_2.2.5"); /* libc's, after this library */
  gji_exit_record(status);
  if (real)
    real(status);
  for (;;)
    syscall(SYS_exit_group, status);
}
