/* The build server's client side: hits here, misses to the server, anything wrong in-process;
 * status and stop. */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/lockfile.h"
#include "base/fs.h"
#include "cache/store/handle.h"
#include "cache/records/groups.h"
#include "cache/store/store.h"
#include "compile/nvrtc/options.h"
#include "compile/toolkit/toolkit.h"
#include "gpujit/server.h"
#include "gpujit/trace.h"
#include "module/build.h"
#include "module/history.h"
#include "project/project.h"
#include "server/protocol.h"
#include "server/socket.h"
#include "server/watch.h"
#include "trace/sink.h"

#define ACK_MS 2000 /* a server that does not take a request in this long is hung */
#define VOUCH_MS 250 /* a group the server has not watched yet: it loads, watches and checks it */

/* A request's text: the op, this build's identity and toolkit (what identifies it, and where it
 * is: its include directories are under the root), the job (taken) with this process's working
 * directory, against which the job's relative paths — and NVRTC's relative probes — resolve. */
static char *request_text(const char *op, cJSON *job)
{
  cJSON *req = cJSON_CreateObject();
  char *text, cwd[PATH_MAX];
  cJSON_AddStringToObject(req, "op", op);
  cJSON_AddStringToObject(req, "build", gpujit__build_identity());
  cJSON_AddStringToObject(req, "toolkit", gpujit__toolkit_id());
  cJSON_AddStringToObject(req, "toolkit_root", gpujit__cuda_root());
  gpujit__env_to_json(req); /* what NVRTC would see here: a server whose workers see otherwise refuses */
  if (job && getcwd(cwd, sizeof(cwd)) && !cJSON_GetObjectItemCaseSensitive(job, "cwd"))
    cJSON_AddStringToObject(job, "cwd", cwd);
  if (job)
    cJSON_AddItemToObject(req, "job", job);
  text = cJSON_PrintUnformatted(req);
  cJSON_Delete(req);
  return text;
}

static int send_request(int fd, const char *op, cJSON *job)
{
  char *text = request_text(op, job);
  int err = text ? gpujit__frame_write(fd, GPUJIT__FRAME_JOB, text, strlen(text)) : GPUJIT_ENOMEM;
  free(text);
  return err;
}

/* One frame within `ms` (-1: no limit). @return 1, 0 (timed out or closed: *why says), or error. */
static int read_frame(int fd, int ms, uint32_t *type, gpujit__buf *out, const char **why)
{
  int r;
  if (!gpujit__wait_readable(fd, ms)) {
    *why = "no answer in time";
    return 0;
  }
  r = gpujit__frame_read(fd, type, out);
  if (r <= 0) {
    *why = "the connection closed";
    gpujit_error_clear();
    return 0;
  }
  return 1;
}

/* A job as a project build sends it to a worker, fit for the server's (absolute paths, the
 * arch resolved). */
static cJSON *job_json(const char *const *paths, size_t count, const gpujit_module_options *o)
{
  cJSON *job = gpujit__job_json(0, paths, count, gpujit__options_to_json(o), o->cache, o->trace != NULL, true);
  if (job && gpujit__job_portable(job, o->cache) < 0) {
    cJSON_Delete(job);
    return NULL;
  }
  return job;
}

/* Asking the server whether a shared dependency group holds (server/watch.c): one request per
 * group a lookup meets, none once the server is found absent. */
typedef struct voucher_ctx {
  const gpujit_server_options *so;
  const char *cache;
  bool absent;
} voucher_ctx;

/* No socket: no server to ask (a lookup then checks groups itself, and may begin ahead). */
static bool server_absent(void *p)
{
  voucher_ctx *v = p;
  char sock[PATH_MAX];
  struct stat st;
  if (!v->absent && (gpujit__server_paths(sock, sizeof(sock), NULL, 0, v->so) < 0 || stat(sock, &st) != 0))
    v->absent = true;
  gpujit_error_clear();
  return v->absent;
}

static bool server_vouches(void *p, const char *digest)
{
  voucher_ctx *v = p;
  char sock[PATH_MAX], ns[128];
  cJSON *req = cJSON_CreateObject(), *ans = NULL;
  gpujit__buf frame = {0};
  const char *lost = NULL;
  char *text = NULL;
  uint32_t type;
  bool held = false;
  int fd = -1;
  if (v->absent || gpujit__server_paths(sock, sizeof(sock), NULL, 0, v->so) < 0 ||
      (fd = gpujit__server_connect(sock)) < 0) {
    v->absent = true;
    gpujit_error_clear();
    cJSON_Delete(req);
    return false;
  }
  gpujit__watch_namespace(ns, sizeof(ns));
  cJSON_AddStringToObject(req, "op", "vouch");
  cJSON_AddStringToObject(req, "build", gpujit__build_identity());
  cJSON_AddStringToObject(req, "toolkit", gpujit__toolkit_id());
  cJSON_AddStringToObject(req, "cache", v->cache);
  cJSON_AddStringToObject(req, "namespace", ns);
  cJSON_AddItemToObject(req, "groups", cJSON_CreateStringArray(&digest, 1));
  if ((text = cJSON_PrintUnformatted(req)) && gpujit__frame_write(fd, GPUJIT__FRAME_JOB, text, strlen(text)) == 0 &&
      read_frame(fd, VOUCH_MS, &type, &frame, &lost) == 1 && type == GPUJIT__FRAME_RESULT &&
      (ans = cJSON_ParseWithLength(frame.data, frame.len)))
    held = cJSON_IsTrue(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(ans, "held"), 0));
  if (!held) {
    const char *why = ans ? cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ans, "why")) : NULL;
    gpujit__log(GPUJIT_LOG_DEBUG, "server: group %s checked here: %s", digest, lost ? lost : why ? why : "no answer");
  }
  gpujit_error_clear();
  close(fd);
  free(text);
  cJSON_Delete(req);
  cJSON_Delete(ans);
  gpujit__buf_free(&frame);
  return held;
}

/* The server's answer to a build: 1 with *out or an error set from the worker's result, 0 when
 * the build must happen here (`why` says why). */
static int remote_build(gpujit_module **out, int *result, const char *const *paths, size_t count,
                        const gpujit_module_options *o, const gpujit_server_options *so, char *why, size_t why_size)
{
  char sock[PATH_MAX], arch[32];
  gpujit__buf frame = {0};
  cJSON *ack = NULL, *res = NULL, *job;
  const char *lost = NULL;
  uint32_t type;
  double expected;
  int fd = GPUJIT_EINVAL, wait_ms, r = 0;

  if (gpujit__server_paths(sock, sizeof(sock), NULL, 0, so) < 0 || (fd = gpujit__server_connect(sock)) < 0) {
    snprintf(why, why_size, "%s", gpujit_error_last());
    if (fd == GPUJIT_ENOENT) /* none runs: the usual case, said only in the debug log */
      why[0] = '\0';
    gpujit_error_clear();
    return 0;
  }
  if (gpujit__resolve_arch(arch, sizeof(arch), o->arch, o->cache) < 0) {
    close(fd);
    return (*result = gpujit__error(GPUJIT_EINVAL, "%s", gpujit_error_last())), 1;
  }
  if (!(job = job_json(paths, count, o)) || send_request(fd, "build", job) < 0) {
    lost = "the request could not be sent";
    goto done;
  }
  if (read_frame(fd, ACK_MS, &type, &frame, &lost) != 1)
    goto done;
  ack = cJSON_ParseWithLength(frame.data, frame.len);
  if (type != GPUJIT__FRAME_ACK || !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ack, "ok"))) {
    const char *w = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ack, "why"));
    snprintf(why, why_size, "%s", w ? w : "the server refused the request");
    goto done;
  }
  /* Never wait much longer than the compile itself would take: its recorded time, with room. */
  expected = gpujit__history_get(o->cache, paths, count, arch);
  wait_ms = expected > 0 ? (int)(expected * 3 + 5000) : 300000;
  if (read_frame(fd, wait_ms, &type, &frame, &lost) != 1 || type != GPUJIT__FRAME_RESULT ||
      !(res = cJSON_ParseWithLength(frame.data, frame.len))) {
    lost = lost ? lost : "a malformed answer";
    goto done;
  }
  {
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(res, "error"), *tr = cJSON_GetObjectItemCaseSensitive(res, "trace");
    if (!cJSON_IsNumber(e)) {
      lost = "a result without a status";
      goto done;
    }
    if (o->trace && cJSON_IsString(tr)) {
      int64_t track = 0;
      char name[64];
      const cJSON *pid = cJSON_GetObjectItemCaseSensitive(res, "pid");
      snprintf(name, sizeof(name), "build server");
      if (gpujit_trace_track(o->trace, &track, name) < 0 ||
          gpujit__trace_merge_process(o->trace, tr->valuestring, strlen(tr->valuestring),
                                      cJSON_IsNumber(pid) ? (int64_t)pid->valuedouble : 0, track, "server") < 0)
        gpujit_error_clear();
    }
    if (e->valueint != 0) { /* the build failed there as it would have here */
      const char *msg = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(res, "message"));
      const char *log = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(res, "log"));
      *result = gpujit__error(e->valueint, "%s", msg ? msg : "build failed");
      gpujit__error_set_log(log ? log : "");
      r = 1;
      goto done;
    }
  }
  if (read_frame(fd, 10000, &type, &frame, &lost) != 1 || type != GPUJIT__FRAME_IMAGE)
    goto done;
  if ((*result = gpujit__module_from_json(out, cJSON_GetObjectItemCaseSensitive(res, "module"), &frame)) < 0) {
    lost = "an unreadable module";
    *result = 0;
    gpujit_error_clear();
    goto done;
  }
  r = 1;
done:
  if (lost && !why[0])
    snprintf(why, why_size, "the server was lost mid-request: %s", lost);
  close(fd);
  cJSON_Delete(ack);
  cJSON_Delete(res);
  gpujit__buf_free(&frame);
  return r;
}

int gpujit_server_build_files(gpujit_module **out, const char *const *paths, size_t count,
                              const gpujit_module_options *opts, const gpujit_server_options *server, int *served)
{
  gpujit_module_options o;
  gpujit__build_ctl ctl = {.lookup_only = true};
  char why[600] = "";
  int err, result = 0;

  if (served)
    *served = 0;
  if (!out || !paths || count == 0)
    return gpujit_module_build_files(out, paths, count, opts);
  gpujit__options_current(&o, opts);
  /* remote stores are read and written by this process (a worker would not write them): the
   * whole build stays here, each store asked once */
  if (o.cache && o.cache->remote)
    return gpujit_module_build_files(out, paths, count, opts);
  /* a hit is served here: no round trip is faster; a running server vouches for the shared
   * dependency groups it keeps watched, which this process would otherwise stat file by file */
  if (o.cache) {
    voucher_ctx vc = {server, gpujit_cache_path(o.cache), false};
    gpujit__voucher v = {server_vouches, server_absent, &vc};
    const gpujit__voucher *before = gpujit__group_voucher(&v);
    err = gpujit__module_build_files_ctl(out, paths, count, &o, &ctl);
    gpujit__group_voucher(before);
    if (err == 0 || !ctl.missed)
      return err;
    gpujit_error_clear();
  }
  if (remote_build(out, &result, paths, count, &o, server, why, sizeof(why))) {
    if (served)
      *served = 1;
    return result;
  }
  if (why[0])
    gpujit__log(GPUJIT_LOG_INFO, "server: %s: building in-process", why);
  else
    gpujit__log(GPUJIT_LOG_DEBUG, "server: none runs for this cache: building in-process");
  return gpujit_module_build_files(out, paths, count, opts);
}

/* Whether a server's status says it takes this process's builds: the same build of gpujit, the
 * same toolkit. */
static bool takes_our_builds(const cJSON *status)
{
  const char *b = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(status, "build"));
  const char *t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(status, "toolkit"));
  return b && t && !strcmp(b, gpujit__build_identity()) && !strcmp(t, gpujit__toolkit_id());
}

static int ask(const gpujit_server_options *so, const char *op, cJSON **answer, int ms)
{
  char sock[PATH_MAX];
  gpujit__buf frame = {0};
  const char *why = NULL;
  uint32_t type;
  int fd, err = 0;
  if ((err = gpujit__server_paths(sock, sizeof(sock), NULL, 0, so)) < 0)
    return err;
  if ((fd = gpujit__server_connect(sock)) < 0)
    return fd;
  if ((err = send_request(fd, op, NULL)) == 0) {
    if (read_frame(fd, ms, &type, &frame, &why) != 1)
      err = gpujit__error(GPUJIT_EIO, "server at %s: %s", sock, why);
    else if (!(*answer = cJSON_ParseWithLength(frame.data, frame.len)))
      err = gpujit__error(GPUJIT_EIO, "server at %s: a malformed answer", sock);
  }
  close(fd);
  gpujit__buf_free(&frame);
  return err;
}

int gpujit_server_status(char **out, const gpujit_server_options *so)
{
  cJSON *j = NULL;
  int err;
  if (!out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_server_status: NULL out");
  *out = NULL;
  if ((err = ask(so, "status", &j, ACK_MS * 5)) < 0)
    return err;
  if (cJSON_GetObjectItemCaseSensitive(j, "ok")) { /* an ACK: it refused us */
    const char *w = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "why"));
    err = gpujit__error(GPUJIT_EUNSUPPORTED, "%s", w ? w : "the server refused");
  } else {
    cJSON_AddBoolToObject(j, "compatible", takes_our_builds(j));
  }
  if (err == 0 && !(*out = cJSON_Print(j))) {
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  cJSON_Delete(j);
  return err;
}

int gpujit_server_stop(const gpujit_server_options *so)
{
  char sock[PATH_MAX], lock[PATH_MAX + 8];
  cJSON *j = NULL;
  int err = ask(so, "stop", &j, ACK_MS * 5);
  cJSON_Delete(j);
  if (err < 0 || gpujit__server_paths(sock, sizeof(sock), lock, sizeof(lock), so) < 0)
    return err;
  /* stopped when it has let go of its lock: a server started next finds the socket free */
  for (int i = 0; i < 1000; i++) {
    int fd = gpujit__lockfile_open(lock, O_RDWR, 0);
    bool free_now = fd < 0 || gpujit__lockfile_lock(fd, LOCK_EX | LOCK_NB) == 0;
    gpujit__lockfile_close(fd);
    if (free_now)
      return 0;
    usleep(10000);
  }
  return gpujit__error(GPUJIT_EBUSY, "the server at %s did not exit within 10 s", sock);
}

/* The start-on-demand setting: a file in the cache directory. */
static char *autostart_path(const gpujit_server_options *so)
{
  char *dir = so && so->cache_dir ? gpujit__abspath(so->cache_dir) : gpujit__cache_default_dir(NULL), *path = NULL;
  if (dir && (path = malloc(strlen(dir) + 32)))
    sprintf(path, "%s/server-autostart", dir);
  free(dir);
  return path;
}

/* The one reading of GPUJIT_SERVER: the CLI's "use a server at all" and the library's "start
 * one on demand" took "yes" or "2" two ways (on for one, off for the other). */
int gpujit_server_env(int *out)
{
  const char *env = getenv("GPUJIT_SERVER");
  if (!out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_server_env: NULL out");
  *out = -1;
  if (!env || !*env)
    return 0;
  if (!strcmp(env, "0") || !strcmp(env, "1")) {
    *out = env[0] == '1';
    return 0;
  }
  return gpujit__error(GPUJIT_EINVAL, "GPUJIT_SERVER='%.64s%s' is not 0 or 1: ignored", env,
                       strlen(env) > 64 ? "..." : "");
}

int gpujit_server_autostart(const gpujit_server_options *so)
{
  char *path;
  int on;
  if (gpujit_server_env(&on) < 0) { /* the CLI warns, once: not at every build */
    gpujit__log(GPUJIT_LOG_DEBUG, "%s", gpujit_error_last());
    gpujit_error_clear();
  } else if (on >= 0)
    return on;
  if (!(path = autostart_path(so)))
    return 0;
  on = access(path, F_OK) == 0;
  free(path);
  return on;
}

int gpujit_server_autostart_set(const gpujit_server_options *so, int on)
{
  static const char text[] = "start a gpujit build server on demand for this cache (gpujit server stop --auto removes this)\n";
  char *path = autostart_path(so);
  int err = 0;
  if (!path)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  if (!on) {
    if (unlink(path) < 0 && errno != ENOENT)
      err = gpujit__error(GPUJIT_EIO, "cannot remove %s: %s", path, strerror(errno));
  } else {
    char *dir = gpujit__dirname(path);
    if (!dir || gpujit__mkdirs(dir, 0700) < 0 || gpujit__file_write_atomic_ex(path, text, sizeof(text) - 1, false) < 0)
      err = gpujit__error(GPUJIT_EIO, "cannot write %s (no start on demand): %s", path, gpujit_error_last());
    free(dir);
  }
  free(path);
  return err;
}

/* ---- project builds: the misses to the server's workers --------------------------------- */

typedef struct via_ctx {
  char sock[PATH_MAX];
  const gpujit_server_options *so;
} via_ctx;

/* How many jobs the server runs at once (its workers): so many of the build's slots go to it,
 * the rest to workers of the build's own — a full build is never narrower than without it. */
static int via_slots(void *ctx, char *why, size_t n)
{
  const via_ctx *v = ctx;
  cJSON *j = NULL;
  const char *b, *t;
  const cJSON *w;
  int err = ask(v->so, "status", &j, ACK_MS), slots = -1;
  if (err < 0) {
    snprintf(why, n, "%s", gpujit_error_last());
    gpujit_error_clear();
    return err == GPUJIT_ENOENT ? 0 : -1;
  }
  b = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "build"));
  t = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "toolkit"));
  w = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "limits"), "workers");
  if (!takes_our_builds(j))
    snprintf(why, n, "stale server: it is %s with toolkit %s; the client is %s with toolkit %s", b ? b : "?",
             t ? t : "?", gpujit__build_identity(), gpujit__toolkit_id());
  else if (!cJSON_IsNumber(w) || w->valueint < 1)
    snprintf(why, n, "a status without its worker count");
  else
    slots = w->valueint;
  cJSON_Delete(j);
  return slots;
}

static int via_connect(void *ctx, int *pid)
{
  struct ucred cred;
  socklen_t len = sizeof(cred);
  int fd = gpujit__server_connect(((const via_ctx *)ctx)->sock);
  if (fd < 0)
    return fd;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
    close(fd);
    return gpujit__error(GPUJIT_EIO, "SO_PEERCRED: %s", strerror(errno));
  }
  *pid = (int)cred.pid;
  return fd;
}

static char *via_request(void *ctx, cJSON *job)
{
  (void)ctx;
  return request_text("build", job);
}

int gpujit_server_build_project(gpujit_project *project, const gpujit_project_options *opts,
                                const gpujit_server_options *server, size_t *served)
{
  via_ctx ctx = {"", server};
  gpujit__project_via via = {via_slots, via_connect, via_request, &ctx, 0, ""};
  int err;
  if (served)
    *served = 0;
  /* remote stores are this process's to read and write; no server: as without one */
  if (!project || (opts && opts->cache && opts->cache->remote) ||
      gpujit__server_paths(ctx.sock, sizeof(ctx.sock), NULL, 0, server) < 0) {
    gpujit_error_clear();
    return gpujit_project_build(project, opts);
  }
  err = gpujit__project_build_via(project, opts, &via);
  if (served)
    *served = via.served;
  return err;
}
