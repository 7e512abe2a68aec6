/*
 * The build server (gpujit_server_run): one poll loop over its socket, its clients and the
 * worker processes of project builds, which keep NVRTC and their precompiled headers between
 * requests. A request goes to the worker holding its include block's PCH when one is idle; a
 * worker that would hold more blocks than max_pch is restarted first (memory stays bounded).
 */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <xxhash.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/lockfile.h"
#include "base/fs.h"
#include "compile/pch/pch.h"
#include "compile/toolkit/toolkit.h"
#include "project/pool.h"
#include "project/wire.h"
#include "server/protocol.h"
#include "server/socket.h"
#include "server/watch.h"

#define MAX_CONNS 64
#define MAX_HELD 16

typedef struct held { /* a PCH a worker holds */
  uint64_t block;
  char label[160];
  uint64_t hits;
  double bytes;
} held;

typedef struct slot {
  gpujit__worker w;
  bool alive;
  int conn;     /* the client whose job it runs, -1 idle */
  bool storing; /* answered early, its cache store not over: busy still (a STORED frame ends it) */
  held pch[MAX_HELD];
  size_t npch;
  uint64_t jobs;
  double last_us;
  uint64_t job_block;
  char job_label[160];
  bool job_has_block;
} slot;

typedef struct conn {
  int fd; /* -1: free, or gone (its job's result is dropped) */
  bool used;
  gpujit__frame_reader reader;
  cJSON *job; /* waiting for a worker */
  uint64_t block;
  bool has_block;
  char label[160];
  double queued_us;
} conn;

typedef struct server {
  gpujit_server_options o;
  char sock[PATH_MAX], lock[PATH_MAX + 8], worker[PATH_MAX];
  int lfd, lock_fd;
  slot *slots;
  conn conns[MAX_CONNS];
  double start_us, last_us;
  uint64_t requests, built, refused;
  gpujit__watch *watch; /* shared dependency groups kept verified (made on the first vouch) */
  gpujit_cache *cache;
} server;

static volatile sig_atomic_t stop_signal;
static void on_signal(int sig) { stop_signal = sig; }

/* A request's include block, as the workers' PCHs know it (compile/pch/pch.c) with its options, and
 * the block's #include lines: how status names it. */
static void block_of(conn *c, const cJSON *job)
{
  const cJSON *files = cJSON_GetObjectItemCaseSensitive(job, "files");
  const cJSON *first = cJSON_GetArrayItem(files, 0);
  char *opts = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(job, "options"));
  gpujit__buf src = {0};
  gpujit__pch_block block = {0};
  c->has_block = false;
  c->label[0] = '\0';
  if (cJSON_IsString(first) && cJSON_GetArraySize(files) == 1 && gpujit__file_read(&src, first->valuestring) == 0 &&
      src.data) {
    uint64_t key[2];
    size_t used = 0;
    gpujit__pch_block_of(&block, src.data, src.len, NULL, NULL);
    c->has_block = block.has_include;
    key[0] = block.key;
    key[1] = XXH3_64bits(opts ? opts : "", opts ? strlen(opts) : 0);
    c->block = XXH3_64bits(key, sizeof(key));
    for (const char *p = src.data; p && *p && used + 1 < sizeof(c->label);) {
      const char *eol = strchr(p, '\n');
      int n = eol ? (int)(eol - p) : (int)strlen(p);
      while (n > 0 && (*p == ' ' || *p == '\t'))
        p++, n--;
      if (n > 0 && *p != '#' && *p != '/')
        break; /* the first line of code ends the block */
      if (n >= 8 && (!strncmp(p, "#include", 8) || !strncmp(p, "# include", 9)))
        used += (size_t)snprintf(c->label + used, sizeof(c->label) - used, "%s%.*s", used ? "; " : "", n, p);
      p = eol ? eol + 1 : NULL;
    }
  }
  gpujit_error_clear();
  free(opts);
  gpujit__buf_free(&src);
}

static held *find_held(slot *s, uint64_t block)
{
  for (size_t i = 0; i < s->npch; i++)
    if (s->pch[i].block == block)
      return &s->pch[i];
  return NULL;
}

/* A whole frame to a client: its socket blocks for the write (SO_SNDTIMEO bounds a stuck one). */
static void send_frame(int fd, uint32_t type, const void *data, size_t len)
{
  int flags = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  if (gpujit__frame_write(fd, type, data, len) < 0)
    gpujit_error_clear();
  fcntl(fd, F_SETFL, flags);
}

static void send_json(int fd, uint32_t type, cJSON *j)
{
  char *text = cJSON_PrintUnformatted(j);
  if (text)
    send_frame(fd, type, text, strlen(text));
  free(text);
}

static void conn_close(server *s, int i)
{
  conn *c = &s->conns[i];
  if (c->fd >= 0)
    close(c->fd);
  c->fd = -1;
  cJSON_Delete(c->job);
  c->job = NULL;
  gpujit__buf_free(&c->reader.in);
  /* still `used` while a worker runs its job */
  c->used = false;
  for (int k = 0; k < s->o.workers; k++)
    if (s->slots[k].conn == i)
      c->used = true;
}

static int spawn(server *s, slot *sl, int index)
{
  int err = gpujit__worker_spawn(&sl->w, s->worker, index);
  sl->alive = err == 0;
  sl->conn = -1;
  sl->npch = 0;
  return err;
}

static bool busy_slot(const slot *sl) { return sl->conn >= 0 || sl->storing; }

static void retire(slot *sl, bool kill_it)
{
  if (sl->alive)
    gpujit__worker_stop(&sl->w, kill_it, NULL, 0);
  sl->alive = sl->storing = false;
  sl->npch = 0;
}

/* The worker for a block: an idle one holding it, else the idle one used least recently. */
static slot *choose(server *s, const conn *c, int *index)
{
  slot *best = NULL;
  for (int k = 0; k < s->o.workers; k++) {
    slot *sl = &s->slots[k];
    if (busy_slot(sl)) /* a storing worker would take the job only after its store */
      continue;
    if (sl->alive && c->has_block && find_held(sl, c->block)) {
      *index = k;
      return sl;
    }
    /* a running worker before one yet to start (NVRTC is loaded there); then the least used */
    if (!best || (sl->alive && !best->alive) || (sl->alive == best->alive && sl->last_us < best->last_us)) {
      best = sl;
      *index = k;
    }
  }
  return best;
}

static void dispatch(server *s)
{
  for (;;) {
    int ci = -1, k = -1;
    for (int i = 0; i < MAX_CONNS; i++) /* the longest waiting first */
      if (s->conns[i].job && (ci < 0 || s->conns[i].queued_us < s->conns[ci].queued_us))
        ci = i;
    if (ci < 0)
      return;
    conn *c = &s->conns[ci];
    slot *sl = choose(s, c, &k);
    if (!sl)
      return;
    /* memory bound: a worker at its PCH limit starts afresh before it takes another block */
    if (sl->alive && c->has_block && !find_held(sl, c->block) && sl->npch >= (size_t)s->o.max_pch)
      retire(sl, false);
    if (!sl->alive && spawn(s, sl, k + 1) < 0) {
      cJSON *ack = cJSON_CreateObject();
      cJSON_AddStringToObject(ack, "error", gpujit_error_last());
      send_json(c->fd, GPUJIT__FRAME_RESULT, ack);
      cJSON_Delete(ack);
      conn_close(s, ci);
      continue;
    }
    cJSON_ReplaceItemInObjectCaseSensitive(c->job, "id", cJSON_CreateNumber(ci));
    cJSON_ReplaceItemInObjectCaseSensitive(c->job, "pch_more", cJSON_CreateTrue()); /* edits follow */
    cJSON_DeleteItemFromObjectCaseSensitive(c->job, "answer_early");
    cJSON_AddTrueToObject(c->job, "answer_early"); /* the client goes on while the entry is stored */
    cJSON_DeleteItemFromObjectCaseSensitive(c->job, "keep_scans");
    cJSON_AddTrueToObject(c->job, "keep_scans"); /* edits of the same sources follow */
    char *text = cJSON_PrintUnformatted(c->job);
    int err = text ? gpujit__frame_write(sl->w.job_fd, GPUJIT__FRAME_JOB, text, strlen(text)) : GPUJIT_ENOMEM;
    free(text);
    cJSON_Delete(c->job);
    c->job = NULL;
    if (err < 0) { /* the worker is gone: the client builds in-process */
      retire(sl, true);
      conn_close(s, ci);
      continue;
    }
    sl->conn = ci;
    sl->job_block = c->block;
    sl->job_has_block = c->has_block;
    snprintf(sl->job_label, sizeof(sl->job_label), "%s", c->label);
  }
}

/* What a result says of the worker's PCHs. */
static void account(slot *sl, const cJSON *res)
{
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(res, "module");
  const cJSON *pch = cJSON_GetObjectItemCaseSensitive(m, "pch");
  const cJSON *bytes = cJSON_GetObjectItemCaseSensitive(m, "pch_bytes");
  held *h;
  sl->jobs++;
  if (!sl->job_has_block || !cJSON_IsNumber(pch))
    return;
  if (pch->valueint != GPUJIT_PCH_STATUS_CREATED && pch->valueint != GPUJIT_PCH_STATUS_USED)
    return;
  if (!(h = find_held(sl, sl->job_block))) {
    if (sl->npch == MAX_HELD)
      return;
    h = &sl->pch[sl->npch++];
    memset(h, 0, sizeof(*h));
    h->block = sl->job_block;
    snprintf(h->label, sizeof(h->label), "%s", sl->job_label);
  }
  if (pch->valueint == GPUJIT_PCH_STATUS_USED)
    h->hits++;
  /* the PCH file's size when it was made; NVRTC's heap size only when nothing better is known */
  if (cJSON_IsNumber(bytes) && bytes->valuedouble > 0 && (h->bytes == 0 || pch->valueint == GPUJIT_PCH_STATUS_CREATED))
    h->bytes = bytes->valuedouble;
}

/* A worker's frames go to its client as they are, the last ends its part; STORED ends an early answer's store. */
static void from_worker(server *s, int k)
{
  slot *sl = &s->slots[k];
  gpujit__buf frame = {0};
  uint32_t type;
  int open = gpujit__frame_fill(&sl->w.reader, sl->w.result_fd), got;
  while ((got = gpujit__frame_take(&sl->w.reader, &type, &frame)) == 1) {
    conn *c = sl->conn >= 0 ? &s->conns[sl->conn] : NULL;
    bool last = type == GPUJIT__FRAME_IMAGE;
    if (type == GPUJIT__FRAME_STORED) {
      sl->storing = false;
      continue;
    }
    if (type == GPUJIT__FRAME_RESULT) {
      cJSON *res = cJSON_ParseWithLength(frame.data, frame.len);
      const cJSON *e = cJSON_GetObjectItemCaseSensitive(res, "error");
      account(sl, res);
      last = !(cJSON_IsNumber(e) && e->valueint == 0);
      sl->storing = !last && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "store_follows"));
      cJSON_Delete(res);
    }
    if (c && c->fd >= 0)
      send_frame(c->fd, type, frame.data, frame.len);
    if (last && sl->conn >= 0) {
      int ci = sl->conn;
      sl->conn = -1;
      sl->last_us = gpujit__now_us();
      s->built++;
      conn_close(s, ci);
    }
  }
  gpujit__buf_free(&frame);
  if (open <= 0 || got < 0) { /* the worker died: its client builds in-process */
    if (sl->conn >= 0) {
      int ci = sl->conn;
      sl->conn = -1;
      conn_close(s, ci);
    }
    retire(sl, true);
  }
}

static long rss_of(pid_t pid)
{
  char path[64];
  long pages = 0, rss = 0;
  FILE *f;
  snprintf(path, sizeof(path), "/proc/%ld/statm", (long)pid);
  if (!(f = fopen(path, "r")))
    return 0;
  if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
    rss = 0;
  fclose(f);
  return rss * sysconf(_SC_PAGESIZE);
}

static cJSON *status_json(server *s)
{
  cJSON *j = cJSON_CreateObject(), *ws, *lim;
  double now = gpujit__now_us(), memory = (double)rss_of(getpid());
  size_t pchs = 0;
  cJSON_AddStringToObject(j, "gpujit", GPUJIT_VERSION_STRING);
  cJSON_AddStringToObject(j, "build", gpujit__build_identity());
  cJSON_AddStringToObject(j, "toolkit", gpujit__toolkit_id());
  cJSON_AddNumberToObject(j, "pid", getpid());
  cJSON_AddStringToObject(j, "socket", s->sock);
  cJSON_AddStringToObject(j, "cache_dir", s->o.cache_dir ? s->o.cache_dir : "");
  cJSON_AddNumberToObject(j, "uptime_s", (now - s->start_us) / 1e6);
  cJSON_AddNumberToObject(j, "idle_s", (now - s->last_us) / 1e6);
  cJSON_AddNumberToObject(j, "requests", (double)s->requests);
  cJSON_AddNumberToObject(j, "built", (double)s->built);
  cJSON_AddNumberToObject(j, "refused", (double)s->refused);
  ws = cJSON_AddArrayToObject(j, "workers");
  for (int k = 0; k < s->o.workers; k++) {
    slot *sl = &s->slots[k];
    cJSON *w = cJSON_CreateObject(), *arr;
    long rss = sl->alive ? rss_of(sl->w.pid) : 0;
    memory += (double)rss;
    cJSON_AddNumberToObject(w, "index", k + 1);
    cJSON_AddNumberToObject(w, "pid", sl->alive ? sl->w.pid : 0);
    cJSON_AddBoolToObject(w, "busy", busy_slot(sl));
    cJSON_AddBoolToObject(w, "storing", sl->storing);
    cJSON_AddNumberToObject(w, "jobs", (double)sl->jobs);
    cJSON_AddNumberToObject(w, "rss_bytes", (double)rss);
    arr = cJSON_AddArrayToObject(w, "pch");
    for (size_t i = 0; i < sl->npch; i++) {
      cJSON *h = cJSON_CreateObject();
      char hex[24];
      snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)sl->pch[i].block);
      cJSON_AddStringToObject(h, "block", hex);
      cJSON_AddStringToObject(h, "include", sl->pch[i].label);
      cJSON_AddNumberToObject(h, "bytes", sl->pch[i].bytes);
      cJSON_AddNumberToObject(h, "hits", (double)sl->pch[i].hits);
      cJSON_AddItemToArray(arr, h);
      pchs++;
    }
    cJSON_AddItemToArray(ws, w);
  }
  cJSON_AddNumberToObject(j, "pchs", (double)pchs);
  if (s->watch)
    gpujit__watch_status(s->watch, cJSON_AddObjectToObject(j, "watched_groups"));
  cJSON_AddNumberToObject(j, "memory_bytes", memory);
  lim = cJSON_AddObjectToObject(j, "limits");
  cJSON_AddNumberToObject(lim, "workers", s->o.workers);
  cJSON_AddNumberToObject(lim, "max_pch_per_worker", s->o.max_pch);
  cJSON_AddNumberToObject(lim, "idle_timeout_s", s->o.idle_timeout_s);
  return j;
}

/* One request from client i. */
static void request(server *s, int i, const cJSON *req)
{
  conn *c = &s->conns[i];
  const char *op = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req, "op"));
  cJSON *ack = cJSON_CreateObject();
  char why[PATH_MAX * 2 + 160];
  s->requests++;
  cJSON_AddStringToObject(ack, "build", gpujit__build_identity());
  cJSON_AddNumberToObject(ack, "pid", getpid());
  if (op && !strcmp(op, "stop")) {
    cJSON_AddBoolToObject(ack, "ok", true);
    send_json(c->fd, GPUJIT__FRAME_ACK, ack);
    stop_signal = -1;
    conn_close(s, i);
  } else if (op && !strcmp(op, "vouch")) {
    cJSON *a = gpujit__watch_answer(&s->watch, &s->cache, s->o.cache_dir, req, c->fd);
    send_json(c->fd, GPUJIT__FRAME_RESULT, a);
    cJSON_Delete(a);
    conn_close(s, i);
  } else if (op && !strcmp(op, "status")) {
    cJSON *st = status_json(s);
    send_json(c->fd, GPUJIT__FRAME_RESULT, st);
    cJSON_Delete(st);
    conn_close(s, i);
  } else if (gpujit__server_refuses(req, op, c->fd, why, sizeof(why))) {
    cJSON_AddBoolToObject(ack, "ok", false);
    cJSON_AddStringToObject(ack, "why", why);
    send_json(c->fd, GPUJIT__FRAME_ACK, ack);
    s->refused++;
    conn_close(s, i);
  } else {
    c->job = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(req, "job"), 1);
    c->queued_us = gpujit__now_us();
    block_of(c, c->job);
    cJSON_AddBoolToObject(ack, "ok", true);
    send_json(c->fd, GPUJIT__FRAME_ACK, ack);
  }
  cJSON_Delete(ack);
}

static void from_client(server *s, int i)
{
  conn *c = &s->conns[i];
  gpujit__buf frame = {0};
  uint32_t type;
  int open = gpujit__frame_fill(&c->reader, c->fd), got;
  while (c->fd >= 0 && (got = gpujit__frame_take(&c->reader, &type, &frame)) == 1) {
    cJSON *req = type == GPUJIT__FRAME_JOB ? cJSON_ParseWithLength(frame.data, frame.len) : NULL;
    if (!req) {
      conn_close(s, i);
      break;
    }
    request(s, i, req);
    cJSON_Delete(req);
  }
  gpujit__buf_free(&frame);
  if (c->fd >= 0 && open <= 0) /* the client went away: its job's result will be dropped */
    conn_close(s, i);
}

static void accept_one(server *s)
{
  char why[160];
  int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
  struct timeval tv = {5, 0};
  if (fd < 0)
    return;
  if (!gpujit__peer_is(fd, geteuid(), why, sizeof(why))) { /* another user's connection */
    s->refused++;
    close(fd);
    return;
  }
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  for (int i = 0; i < MAX_CONNS; i++)
    if (!s->conns[i].used) {
      memset(&s->conns[i], 0, sizeof(s->conns[i]));
      s->conns[i].fd = fd;
      s->conns[i].used = true;
      s->last_us = gpujit__now_us();
      return;
    }
  close(fd); /* full: that client builds in-process */
}

static int listen_on(server *s)
{
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  s->lock_fd = gpujit__lockfile_open(s->lock, O_RDWR | O_CREAT, 0600);
  if (s->lock_fd < 0)
    return gpujit__error(GPUJIT_EIO, "%s: %s", s->lock, strerror(errno));
  if (gpujit__lockfile_lock(s->lock_fd, LOCK_EX | LOCK_NB) < 0)
    return gpujit__error(GPUJIT_EBUSY, "a server already serves %s", s->sock);
  unlink(s->sock); /* a dead server's: the lock says none is alive */
  strcpy(a.sun_path, s->sock);
  if ((s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0 ||
      bind(s->lfd, (struct sockaddr *)&a, sizeof(a)) < 0 || chmod(s->sock, 0600) < 0 || listen(s->lfd, 64) < 0)
    return gpujit__error(GPUJIT_EIO, "cannot listen on %s: %s", s->sock, strerror(errno));
  return 0;
}

static void loop(server *s)
{
  struct pollfd p[1 + MAX_CONNS + 64];
  int who[1 + MAX_CONNS + 64];
  while (!stop_signal) {
    int n = 0, busy = 0, timeout;
    double idle_ms;
    p[n] = (struct pollfd){s->lfd, POLLIN, 0}, who[n++] = -1;
    for (int i = 0; i < MAX_CONNS; i++)
      if (s->conns[i].used && s->conns[i].fd >= 0)
        p[n] = (struct pollfd){s->conns[i].fd, POLLIN, 0}, who[n++] = i, busy++;
    for (int k = 0; k < s->o.workers && k < 64; k++)
      if (s->slots[k].alive) {
        p[n] = (struct pollfd){s->slots[k].w.result_fd, POLLIN, 0}, who[n++] = 1000 + k;
        busy += busy_slot(&s->slots[k]);
      }
    if (busy)
      s->last_us = gpujit__now_us();
    idle_ms = s->o.idle_timeout_s * 1e3 - (gpujit__now_us() - s->last_us) / 1e3;
    if (idle_ms <= 0)
      break; /* idle: exit by itself */
    timeout = idle_ms > 60000 ? 60000 : (int)idle_ms + 1;
    if (poll(p, (nfds_t)n, timeout) < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    for (int i = 0; i < n; i++) {
      if (!p[i].revents)
        continue;
      if (who[i] == -1)
        accept_one(s);
      else if (who[i] >= 1000)
        from_worker(s, who[i] - 1000);
      else if (s->conns[who[i]].fd == p[i].fd)
        from_client(s, who[i]);
    }
    for (int k = 0; k < s->o.workers; k++) /* keep their stderr pipes from filling */
      if (s->slots[k].alive)
        gpujit__worker_drain_stderr(&s->slots[k].w);
    dispatch(s);
  }
}

int gpujit_server_run(const gpujit_server_options *opts, int ready_fd)
{
  static const gpujit_server_options init = GPUJIT_SERVER_OPTIONS_INIT;
  server s;
  struct sigaction sa = {0}, old_term, old_int, old_pipe;
  int err;
  memset(&s, 0, sizeof(s));
  s.o = opts ? *opts : init;
  s.lfd = s.lock_fd = -1;
  if (s.o.version != GPUJIT_SERVER_OPTIONS_VERSION)
    return gpujit__error(GPUJIT_EVERSION, "server options version %u is not supported", s.o.version);
  if (s.o.workers <= 0)
    s.o.workers = 2;
  if (s.o.workers > 64)
    s.o.workers = 64;
  if (s.o.max_pch <= 0)
    s.o.max_pch = 4;
  if (s.o.max_pch > MAX_HELD)
    s.o.max_pch = MAX_HELD;
  if (s.o.idle_timeout_s <= 0)
    s.o.idle_timeout_s = 900;
  if ((err = gpujit__server_paths(s.sock, sizeof(s.sock), s.lock, sizeof(s.lock), &s.o)) < 0 ||
      (err = gpujit__worker_locate(s.worker, sizeof(s.worker), s.o.worker_path)) < 0)
    return err;
  if (!(s.slots = calloc((size_t)s.o.workers, sizeof(*s.slots))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  for (int k = 0; k < s.o.workers; k++)
    s.slots[k].conn = -1;
  for (int i = 0; i < MAX_CONNS; i++)
    s.conns[i].fd = -1;
  if ((err = listen_on(&s)) < 0)
    goto done;
  /* the first worker now: the first request should not wait for NVRTC to load */
  if ((err = spawn(&s, &s.slots[0], 1)) < 0)
    goto done;
  stop_signal = 0;
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, &old_term);
  sigaction(SIGINT, &sa, &old_int);
  sa.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &sa, &old_pipe);
  s.start_us = s.last_us = gpujit__now_us();
  if (ready_fd >= 0) {
    if (write(ready_fd, "ready\n", 6) < 0)
      gpujit_error_clear();
    close(ready_fd);
  }
  loop(&s);
  sigaction(SIGTERM, &old_term, NULL);
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGPIPE, &old_pipe, NULL);
done:
  for (int i = 0; i < MAX_CONNS; i++)
    if (s.conns[i].used)
      conn_close(&s, i);
  for (int k = 0; k < s.o.workers; k++)
    retire(&s.slots[k], s.slots[k].conn >= 0);
  free(s.slots);
  gpujit__watch_free(s.watch);
  gpujit_cache_free(s.cache);
  if (s.lfd >= 0) {
    close(s.lfd);
    unlink(s.sock);
  }
  gpujit__lockfile_close(s.lock_fd);
  return err;
}
