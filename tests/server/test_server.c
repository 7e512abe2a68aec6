/* The warm build server, with real NVRTC: the same bytes, diagnostics and codes as in-process;
 * PCH reuse across requests; who may connect; a server killed, stale or idle; a header edit
 * inside the PCH's include block. Each test runs its own server in a child process. */
#include <cjson/cJSON.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mount.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "helpers.h"

#include "gpujit.h"
#include "base/clock.h"
#include "compile/toolkit/toolkit.h"
#include "project/wire.h"
#include "server/protocol.h"
#include "server/socket.h"

typedef struct fx {
  char *dir, *sockdir, *sock, *cache;
  pid_t server;
  gpujit_server_options so;
  gpujit_cache *c;
} fx;

static void start_server(fx *f, double idle_s)
{
  int p[2];
  char buf[8] = "";
  assert_int_equal(pipe(p), 0);
  f->so.idle_timeout_s = idle_s;
  f->server = fork();
  assert_true(f->server >= 0);
  if (f->server == 0) {
    close(p[0]);
    _exit(gpujit_server_run(&f->so, p[1]) == 0 ? 0 : 1);
  }
  close(p[1]);
  assert_true(read(p[0], buf, sizeof(buf) - 1) > 0); /* "ready" */
  close(p[0]);
  assert_string_equal(buf, "ready\n");
}

static int setup(void **state)
{
  fx *f = calloc(1, sizeof(*f));
  gpujit_cache_options co = GPUJIT_CACHE_OPTIONS_INIT;
  f->dir = th_tmpdir();
  f->sockdir = th_path(f->dir, "run");
  f->sock = th_path(f->sockdir, "server.sock");
  f->cache = th_path(f->dir, "cache");
  mkdir(f->sockdir, 0700);
  gpujit_server_options_init(&f->so, GPUJIT_SERVER_OPTIONS_VERSION);
  f->so.cache_dir = f->cache;
  f->so.socket_path = f->sock;
  f->so.worker_path = GPUJIT_WORKER_PATH;
  f->so.workers = 1;
  co.dir = f->cache;
  assert_int_equal(gpujit_cache_open(&f->c, &co), 0);
  *state = f;
  return 0;
}

static int teardown(void **state)
{
  fx *f = *state;
  if (f->server > 0) {
    kill(f->server, SIGTERM);
    waitpid(f->server, NULL, 0);
  }
  gpujit_cache_free(f->c);
  th_rmrf(f->dir);
  free(f->dir), free(f->sockdir), free(f->sock), free(f->cache), free(f);
  return 0;
}

static gpujit_module_options opts_with(fx *f)
{
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  o.arch = "sm_90";
  o.cache = f->c;
  return o;
}

/* A log without ptxas's "Compile time = … ms" line, which no two compiles share. */
static char *stable_log(const char *log)
{
  char *out = strdup(log), *p;
  while ((p = strstr(out, "Compile time = "))) {
    char *bol = p, *eol = strchr(p, '\n');
    while (bol > out && bol[-1] != '\n')
      bol--;
    memmove(bol, eol ? eol + 1 : p + strlen(p), strlen(eol ? eol + 1 : p + strlen(p)) + 1);
  }
  return out;
}

static void same_module(const gpujit_module *a, const gpujit_module *b)
{
  char *la = stable_log(gpujit_module_log(a)), *lb = stable_log(gpujit_module_log(b));
  size_t na, nb;
  const void *ia = gpujit_module_image(a, &na), *ib = gpujit_module_image(b, &nb);
  assert_int_equal(na, nb);
  assert_memory_equal(ia, ib, na);
  assert_string_equal(la, lb);
  assert_non_null(strstr(la, "Used 8 registers"));
  free(la), free(lb);
  assert_int_equal(gpujit_module_kernel_count(a), gpujit_module_kernel_count(b));
  assert_string_equal(gpujit_module_kernel(a, 0), gpujit_module_kernel(b, 0));
}

static void test_server__same_result_and_errors(void **state)
{
  fx *f = *state;
  char *good = th_write(f->dir, "good.cu", "extern \"C\" __global__ void k(float *x) { x[threadIdx.x] *= 2.0f; }\n");
  char *bad = th_write(f->dir, "bad.cu", "extern \"C\" __global__ void k(float *x) {\n  x[0] = undefined_name;\n}\n");
  const char *gp[] = {good}, *bp[] = {bad};
  gpujit_module_options o = opts_with(f), here = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_module *m = NULL, *local = NULL;
  char *msg, *log;
  int served = -1, err, err_here;
  start_server(f, 60);
  here.arch = "sm_90";
  assert_int_equal(gpujit_server_build_files(&m, gp, 1, &o, &f->so, &served), 0);
  assert_int_equal(served, 1);
  assert_int_equal(gpujit_module_cache_status(m), GPUJIT_CACHE_MISS);
  assert_int_equal(gpujit_module_build_files(&local, gp, 1, &here), 0);
  same_module(m, local);
  gpujit_module_free(m);
  /* the entry the server's worker stored is a hit here, served without the server */
  m = NULL;
  assert_int_equal(gpujit_server_build_files(&m, gp, 1, &o, &f->so, &served), 0);
  assert_int_equal(served, 0);
  assert_int_equal(gpujit_module_cache_status(m), GPUJIT_CACHE_HIT);
  same_module(m, local);
  gpujit_module_free(m);
  gpujit_module_free(local);
  /* a failing module: the same code, message and log */
  err = gpujit_server_build_files(&m, bp, 1, &o, &f->so, &served);
  assert_int_equal(served, 1);
  msg = strdup(gpujit_error_last());
  log = strdup(gpujit_error_log());
  err_here = gpujit_module_build_files(&local, bp, 1, &here);
  assert_int_equal(err, GPUJIT_ECOMPILE);
  assert_int_equal(err, err_here);
  assert_string_equal(msg, gpujit_error_last());
  assert_string_equal(log, gpujit_error_log());
  assert_non_null(strstr(log, "undefined_name"));
  free(msg), free(log), free(good), free(bad);
}

#define HEAVY "#include <cuda/std/type_traits>\n#include \"scale.cuh\"\n"

/* A PCH made for the first request is used by the next, of the same include block; a header of
 * that block edited in between is followed, never served from the stale PCH. */
static void test_server__pch_reuse_and_header_edit(void **state)
{
  fx *f = *state;
  char *hdr = th_write(f->dir, "scale.cuh", "#define SCALE 2.0f\n");
  char *src = th_write(f->dir, "k.cu", HEAVY "extern \"C\" __global__ void k(float *x) { x[0] *= SCALE; }\n");
  const char *paths[] = {src};
  gpujit_module_options o = opts_with(f), here = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_module *m = NULL, *local = NULL;
  char *status = NULL;
  cJSON *j;
  int served = 0;
  start_server(f, 60);
  here.arch = "sm_90";
  here.pch = GPUJIT_PCH_OFF; /* a PCH never changes what a module compiles to */
  assert_int_equal(gpujit_server_build_files(&m, paths, 1, &o, &f->so, &served), 0);
  assert_int_equal(served, 1);
  assert_int_equal(gpujit_module_pch(m, NULL), GPUJIT_PCH_STATUS_CREATED);
  assert_int_equal(gpujit_module_build_files(&local, paths, 1, &here), 0);
  same_module(m, local);
  gpujit_module_free(m);
  gpujit_module_free(local);
  free(th_write(f->dir, "k.cu", HEAVY "extern \"C\" __global__ void k(float *x) { x[1] *= SCALE; }\n"));
  assert_int_equal(gpujit_server_build_files(&m, paths, 1, &o, &f->so, &served), 0);
  assert_int_equal(gpujit_module_pch(m, NULL), GPUJIT_PCH_STATUS_USED);
  assert_int_equal(gpujit_module_build_files(&local, paths, 1, &here), 0);
  same_module(m, local);
  gpujit_module_free(m);
  gpujit_module_free(local);
  /* status: the worker holds one PCH of this block, used once */
  assert_int_equal(gpujit_server_status(&status, &f->so), 0);
  j = cJSON_Parse(status);
  {
    cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "workers"), 0);
    cJSON *h = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(w, "pch"), 0);
    assert_non_null(h);
    assert_non_null(strstr(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(h, "include")), "scale.cuh"));
    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(h, "hits")), 1);
    assert_true(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(h, "bytes")) > 0);
    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "pchs")), 1);
    assert_true(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "memory_bytes")) > 0);
  }
  cJSON_Delete(j);
  gpujit_free(status);
  /* the header inside the PCH's block changes: the next build follows it */
  sleep(1); /* a new mtime second as well as new bytes */
  free(th_write(f->dir, "scale.cuh", "#define SCALE 3.0f\n"));
  assert_int_equal(gpujit_server_build_files(&m, paths, 1, &o, &f->so, &served), 0);
  assert_int_equal(served, 1);
  assert_int_not_equal(gpujit_module_pch(m, NULL), GPUJIT_PCH_STATUS_USED);
  assert_int_equal(gpujit_module_build_files(&local, paths, 1, &here), 0);
  same_module(m, local);
  gpujit_module_free(m);
  gpujit_module_free(local);
  free(hdr), free(src);
}

/* A server killed mid-request: the client builds the module itself. */
typedef struct killer {
  pid_t pid;
  int ms;
} killer;

/* A project build's misses go to the server's warm worker: its outputs, failures and exit code
 * are a build's without the server; an edited module then uses the PCH the first build made
 * there; paths relative to the client's directory reach a server started elsewhere; with the
 * server gone, the build's own workers take the misses. */
static void project_with(gpujit_project **p, const char *good, const char *bad, const char *out)
{
  gpujit_module_options mo = GPUJIT_MODULE_OPTIONS_INIT;
  const char *g[] = {good}, *b[] = {bad};
  mo.arch = "sm_90";
  assert_int_equal(gpujit_project_create(p), 0);
  assert_int_equal(gpujit_project_add(*p, "good", g, 1, &mo, out), 0);
  assert_int_equal(gpujit_project_add(*p, "bad", b, 1, &mo, NULL), 0);
}

static void test_server__project_build(void **state)
{
  fx *f = *state;
  char *hdr = th_write(f->dir, "scale.cuh", "#define SCALE 2.0f\n");
  char *good = th_write(f->dir, "good.cu", HEAVY "extern \"C\" __global__ void k(float *x) { x[0] *= SCALE; }\n");
  char *bad = th_write(f->dir, "bad.cu", "extern \"C\" __global__ void k(float *x) {\n  x[0] = undefined_name;\n}\n");
  char *out = th_path(f->dir, "good.cubin"), *ref = th_path(f->dir, "ref.cubin"), cwd[4096];
  gpujit_project_options po = GPUJIT_PROJECT_OPTIONS_INIT, here = GPUJIT_PROJECT_OPTIONS_INIT;
  gpujit_project *p = NULL, *q = NULL;
  size_t served = 99, na, nb;
  char *a, *b, *msg;
  assert_non_null(getcwd(cwd, sizeof(cwd)));
  start_server(f, 60);
  assert_int_equal(chdir(f->dir), 0); /* the server's directory is not the client's */
  po.cache = f->c;
  po.jobs = 1; /* one slot: both modules through the server */
  po.worker_path = GPUJIT_WORKER_PATH;
  here.jobs = 2;
  here.worker_path = GPUJIT_WORKER_PATH;
  project_with(&p, "good.cu", "bad.cu", out);
  assert_int_equal(gpujit_server_build_project(p, &po, &f->so, &served), GPUJIT_ECOMPILE);
  assert_int_equal(served, 2);
  assert_int_equal(gpujit_project_result_get(p, 0)->status, GPUJIT_PROJECT_BUILT);
  assert_int_equal(gpujit_project_result_get(p, 1)->status, GPUJIT_PROJECT_FAILED);
  msg = strdup(gpujit_project_result_get(p, 1)->message);
  /* the same project built without the server (uncached): the same bytes and failure */
  project_with(&q, good, bad, ref);
  assert_int_equal(gpujit_project_build(q, &here), GPUJIT_ECOMPILE);
  a = th_read(out, &na);
  b = th_read(ref, &nb);
  assert_int_equal(na, nb);
  assert_memory_equal(a, b, na);
  assert_string_equal(msg, gpujit_project_result_get(q, 1)->message);
  assert_int_equal(gpujit_project_result_get(q, 1)->error, gpujit_project_result_get(p, 1)->error);
  assert_non_null(strstr(gpujit_project_result_get(p, 1)->log, "undefined_name"));
  free(a), free(b), free(msg);
  gpujit_project_free(q);
  /* an edit, two slots: the server takes as many jobs at once as it has workers (one), the
   * other slot starts a worker here; the longest module (good: an include block) goes first,
   * to the server, whose worker still holds the PCH of its include block */
  free(th_write(f->dir, "good.cu", HEAVY "extern \"C\" __global__ void k(float *x) { x[1] *= SCALE; }\n"));
  po.jobs = 2;
  assert_int_equal(gpujit_server_build_project(p, &po, &f->so, &served), GPUJIT_ECOMPILE);
  assert_int_equal(served, 1);
  assert_int_equal(gpujit_project_result_get(p, 0)->status, GPUJIT_PROJECT_BUILT);
  assert_int_equal(gpujit_project_result_get(p, 0)->pch, GPUJIT_PCH_STATUS_USED);
  /* the server gone: the build's own workers */
  kill(f->server, SIGKILL);
  waitpid(f->server, NULL, 0);
  f->server = 0;
  free(th_write(f->dir, "good.cu", HEAVY "extern \"C\" __global__ void k(float *x) { x[2] *= SCALE; }\n"));
  assert_int_equal(gpujit_server_build_project(p, &po, &f->so, &served), GPUJIT_ECOMPILE);
  assert_int_equal(served, 0);
  assert_int_equal(gpujit_project_result_get(p, 0)->status, GPUJIT_PROJECT_BUILT);
  assert_int_equal(gpujit_project_result_get(p, 1)->status, GPUJIT_PROJECT_FAILED);
  assert_int_equal(chdir(cwd), 0);
  gpujit_project_free(p);
  free(hdr), free(good), free(bad), free(out), free(ref);
}

/* A server that does not take a project's job in 2 s (stopped here) is hung: the build's own
 * workers take it, and the build succeeds. */
static void test_server__project_hung_server(void **state)
{
  fx *f = *state;
  char *src = th_write(f->dir, "t.cu", "extern \"C\" __global__ void t(int *p) { p[0] = 3; }\n");
  const char *files[] = {src};
  gpujit_project_options po = GPUJIT_PROJECT_OPTIONS_INIT;
  gpujit_module_options mo = GPUJIT_MODULE_OPTIONS_INIT;
  gpujit_project *p = NULL;
  size_t served = 99;
  double t0;
  start_server(f, 60);
  kill(f->server, SIGSTOP);
  mo.arch = "sm_90";
  po.cache = f->c;
  po.jobs = 1;
  po.worker_path = GPUJIT_WORKER_PATH;
  assert_int_equal(gpujit_project_create(&p), 0);
  assert_int_equal(gpujit_project_add(p, "t", files, 1, &mo, NULL), 0);
  t0 = gpujit__now_us();
  assert_int_equal(gpujit_server_build_project(p, &po, &f->so, &served), 0);
  assert_int_equal(served, 0);
  assert_int_equal(gpujit_project_result_get(p, 0)->status, GPUJIT_PROJECT_BUILT);
  assert_true((gpujit__now_us() - t0) / 1e6 >= 2.0); /* it was given its 2 s, no more is asserted */
  kill(f->server, SIGCONT);
  gpujit_project_free(p);
  free(src);
}

static void *kill_later(void *p)
{
  killer *k = p;
  usleep((useconds_t)k->ms * 1000);
  kill(k->pid, SIGKILL);
  return NULL;
}

static void test_server__killed_mid_request(void **state)
{
  fx *f = *state;
  char *src = th_write(f->dir, "slow.cu",
                       "#include <cub/block/block_reduce.cuh>\n"
                       "extern \"C\" __global__ void k(float *p) { using R = cub::BlockReduce<float, 128>;\n"
                       "  __shared__ typename R::TempStorage s; float v = R(s).Sum(p[threadIdx.x]); if (!threadIdx.x) p[0] = v; }\n");
  const char *paths[] = {src};
  gpujit_module_options o = opts_with(f);
  gpujit_module *m = NULL;
  pthread_t t;
  killer k;
  int served = -1;
  start_server(f, 60);
  k.pid = f->server;
  k.ms = 300;
  pthread_create(&t, NULL, kill_later, &k);
  assert_int_equal(gpujit_server_build_files(&m, paths, 1, &o, &f->so, &served), 0);
  pthread_join(t, NULL);
  waitpid(f->server, NULL, 0);
  f->server = 0;
  assert_int_equal(served, 0);
  assert_string_equal(gpujit_module_kernel(m, 0), "k");
  gpujit_module_free(m);
  /* and with no server at all: in-process, no error */
  free(th_write(f->dir, "slow.cu", "extern \"C\" __global__ void k2(float *p) { p[0] = 1; }\n"));
  assert_int_equal(gpujit_server_build_files(&m, paths, 1, &o, &f->so, &served), 0);
  assert_int_equal(served, 0);
  assert_int_equal(gpujit_server_status(&(char *){NULL}, &f->so), GPUJIT_ENOENT);
  gpujit_module_free(m);
  free(src);
}

/* A client of another build is refused by the server; the build happens in-process. */
/* A client whose toolkit is elsewhere (the same NVRTC, maybe other headers) is never compiled for
 * with the server's own: the request is refused, naming both roots. */
static void test_server__other_toolkit_root_refused(void **state)
{
  fx *f = *state;
  gpujit__buf frame = {0};
  uint32_t type;
  cJSON *ack, *req = cJSON_CreateObject();
  char *text;
  int fd;
  cJSON_AddStringToObject(req, "op", "build");
  cJSON_AddStringToObject(req, "build", gpujit__build_identity());
  cJSON_AddStringToObject(req, "toolkit", gpujit__toolkit_id());
  cJSON_AddStringToObject(req, "toolkit_root", "/elsewhere/cuda");
  cJSON_AddItemToObject(req, "job", cJSON_CreateObject());
  text = cJSON_PrintUnformatted(req);
  start_server(f, 60);
  fd = gpujit__server_connect(f->sock);
  assert_true(fd >= 0);
  assert_int_equal(gpujit__frame_write(fd, GPUJIT__FRAME_JOB, text, strlen(text)), 0);
  assert_int_equal(gpujit__frame_read(fd, &type, &frame), 1);
  assert_int_equal(type, GPUJIT__FRAME_ACK);
  ack = cJSON_ParseWithLength(frame.data, frame.len);
  assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(ack, "ok")));
  assert_non_null(strstr(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ack, "why")),
                         "the client's is at /elsewhere/cuda"));
  cJSON_Delete(ack);
  cJSON_Delete(req);
  free(text);
  close(fd);
  gpujit__buf_free(&frame);
}

/* A client working elsewhere than the server, with a relative -I: what the server builds is what
 * the client would build in its own directory (its worker works in the client's directory, where
 * NVRTC's own relative probes — "__nv_name_map", "." — are replayed by the client's lookups). */
static void test_server__client_working_directory(void **state)
{
  fx *f = *state;
  char *a = th_path(f->dir, "a"), *inc = th_path(f->dir, "a/inc");
  char *src = (mkdir(a, 0755), mkdir(inc, 0755), th_write(f->dir, "a/k.cu", "#include \"w.h\"\nextern \"C\" __global__ void k(int *x) { x[0] = W; }\n"));
  char *h = th_write(f->dir, "a/inc/w.h", "#define W 41\n"), *cwd = getcwd(NULL, 0);
  const char *paths[] = {src}, *dirs[] = {"inc"};
  gpujit_module_options o = opts_with(f);
  gpujit_module *m = NULL, *local = NULL;
  int served = 0;
  size_t n1, n2;
  const void *i1, *i2;
  o.include_dirs = dirs;
  o.include_dirs_count = 1;
  start_server(f, 60); /* started here; the client then works in a/ */
  assert_int_equal(chdir(a), 0);
  assert_int_equal(gpujit_server_build_files(&m, paths, 1, &o, &f->so, &served), 0);
  assert_int_equal(served, 1);
  o.cache = NULL;
  assert_int_equal(gpujit_module_build_files(&local, paths, 1, &o), 0);
  i1 = gpujit_module_image(m, &n1);
  i2 = gpujit_module_image(local, &n2);
  assert_int_equal(n1, n2);
  assert_memory_equal(i1, i2, n1);
  assert_int_equal(chdir(cwd), 0);
  gpujit_module_free(m);
  gpujit_module_free(local);
  free(a);
  free(inc);
  free(src);
  free(h);
  free(cwd);
}

static void test_server__stale_client_refused(void **state)
{
  fx *f = *state;
  char *src = th_write(f->dir, "s.cu", "extern \"C\" __global__ void s(float *x) { x[0] = 3; }\n");
  const char *paths[] = {src};
  gpujit_module_options o = opts_with(f);
  gpujit_module *m = NULL;
  gpujit__buf frame = {0};
  uint32_t type;
  cJSON *ack;
  int fd, served = -1;
  const char *req = "{\"op\":\"build\",\"build\":\"0.0.1 /elsewhere/libgpujit.so 1 2\",\"toolkit\":\"x\",\"job\":{}}";
  start_server(f, 60);
  fd = gpujit__server_connect(f->sock);
  assert_true(fd >= 0);
  assert_int_equal(gpujit__frame_write(fd, GPUJIT__FRAME_JOB, req, strlen(req)), 0);
  assert_int_equal(gpujit__frame_read(fd, &type, &frame), 1);
  assert_int_equal(type, GPUJIT__FRAME_ACK);
  ack = cJSON_ParseWithLength(frame.data, frame.len);
  assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(ack, "ok")));
  assert_non_null(strstr(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ack, "why")), "stale server"));
  cJSON_Delete(ack);
  close(fd);
  gpujit__buf_free(&frame);
  /* this client is of the server's build: served */
  assert_int_equal(gpujit_server_build_files(&m, paths, 1, &o, &f->so, &served), 0);
  assert_int_equal(served, 1);
  gpujit_module_free(m);
  free(src);
}

/* A fake server that refuses as a stale one does: the client builds in-process. */
static void test_server__client_falls_back_from_stale(void **state)
{
  fx *f = *state;
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  char *src = th_write(f->dir, "t.cu", "extern \"C\" __global__ void t(float *x) { x[0] = 4; }\n");
  const char *paths[] = {src};
  gpujit_module_options o = opts_with(f);
  gpujit_module *m = NULL;
  int lfd = socket(AF_UNIX, SOCK_STREAM, 0), served = -1;
  pid_t fake;
  strcpy(a.sun_path, f->sock);
  assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
  assert_int_equal(listen(lfd, 4), 0);
  fake = fork();
  if (fake == 0) {
    int c = accept(lfd, NULL, NULL);
    gpujit__buf in = {0};
    uint32_t type;
    const char *no = "{\"ok\":false,\"why\":\"stale server: it is gpujit 0.0.1\"}";
    if (gpujit__frame_read(c, &type, &in) == 1)
      gpujit__frame_write(c, GPUJIT__FRAME_ACK, no, strlen(no));
    _exit(0);
  }
  close(lfd);
  assert_int_equal(gpujit_server_build_files(&m, paths, 1, &o, &f->so, &served), 0);
  assert_int_equal(served, 0);
  assert_string_equal(gpujit_module_kernel(m, 0), "t");
  waitpid(fake, NULL, 0);
  gpujit_module_free(m);
  free(src);
}

/* Only this user: the credential check itself, and, as root, a connection from another uid. */
static void test_server__other_users_refused(void **state)
{
  fx *f = *state;
  int sv[2];
  char why[160];
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  assert_true(gpujit__peer_is(sv[0], geteuid(), why, sizeof(why)));
  assert_false(gpujit__peer_is(sv[0], geteuid() + 1, why, sizeof(why)));
  assert_non_null(strstr(why, "runs as uid"));
  close(sv[0]), close(sv[1]);
  if (geteuid() != 0) {
    print_message("the connection from another uid needs root to make one: checked through the credential path only\n");
    return;
  }
  start_server(f, 60);
  /* let another uid reach the socket file: only the credential check stands in the way */
  chmod(f->dir, 0755);
  chmod(f->sockdir, 0755);
  chmod(f->sock, 0666);
  pid_t child = fork();
  if (child == 0) {
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    char buf[16];
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    const char *req = "{\"op\":\"status\"}";
    if (setgid(65534) < 0 || setuid(65534) < 0)
      _exit(3);
    strcpy(a.sun_path, f->sock);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
      _exit(4); /* the server must see it and refuse it */
    gpujit__frame_write(fd, GPUJIT__FRAME_JOB, req, strlen(req));
    _exit(read(fd, buf, sizeof(buf)) > 0 ? 1 : 0); /* an answer would be a failure */
  }
  int st = 0;
  waitpid(child, &st, 0);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 0);
  {
    char *status = NULL;
    cJSON *j;
    assert_int_equal(gpujit_server_status(&status, &f->so), 0);
    j = cJSON_Parse(status);
    assert_int_equal((int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "refused")), 1);
    cJSON_Delete(j);
    gpujit_free(status);
  }
}

static void test_server__idle_exit_and_one_per_socket(void **state)
{
  fx *f = *state;
  int st = 0;
  double t0;
  start_server(f, 1.0);
  /* a second server on the same socket is refused */
  assert_int_equal(gpujit_server_run(&f->so, -1), GPUJIT_EBUSY);
  t0 = gpujit__now_us() / 1e3;
  assert_int_equal(waitpid(f->server, &st, 0), f->server);
  f->server = 0;
  assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  assert_true(gpujit__now_us() / 1e3 - t0 < 5000);
  assert_false(th_exists(f->sock));
  assert_int_equal(gpujit_server_stop(&f->so), GPUJIT_ENOENT);
}

/* The worker's answer and then its store, while the client goes on: `status` shows it busy, storing,
 * until the store is over; once not busy, the entry is a hit here without the server. (The store's
 * last rename is slowed in the worker, so that this is seen whatever the machine's speed.) */
static bool worker_storing(fx *f, bool *busy)
{
  char *status = NULL;
  cJSON *j, *w;
  bool storing;
  assert_int_equal(gpujit_server_status(&status, &f->so), 0);
  j = cJSON_Parse(status);
  w = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "workers"), 0);
  assert_non_null(w);
  storing = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(w, "storing"));
  *busy = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(w, "busy"));
  cJSON_Delete(j);
  gpujit_free(status);
  return storing;
}

static void test_server__busy_until_stored(void **state)
{
  fx *f = *state;
  char *src = th_write(f->dir, "k.cu", "extern \"C\" __global__ void k(float *x) { x[threadIdx.x] += 3.0f; }\n");
  const char *paths[] = {src};
  gpujit_module_options o = opts_with(f);
  gpujit_module *m = NULL;
  const char *asan = getenv("ASAN_OPTIONS");
  char asan_opts[512];
  int served = -1, polls = 0;
  bool busy = false;
  double t0;
  /* the server's workers inherit its environment */
  snprintf(asan_opts, sizeof(asan_opts), "%s%sverify_asan_link_order=0", asan ? asan : "", asan ? ":" : "");
  setenv("ASAN_OPTIONS", asan_opts, 1);
  setenv("GPUJIT_SLOW_RENAME", "/manifests/", 1);
  setenv("GPUJIT_SLOW_RENAME_MS", "1500", 1);
  setenv("LD_PRELOAD", GPUJIT_SLOWSTORE_PATH, 1);
  start_server(f, 60);
  unsetenv("LD_PRELOAD");
  unsetenv("GPUJIT_SLOW_RENAME");
  t0 = gpujit__now_us() / 1e3;
  assert_int_equal(gpujit_server_build_files(&m, paths, 1, &o, &f->so, &served), 0);
  assert_int_equal(served, 1);
  assert_int_equal(gpujit_module_cache_status(m), GPUJIT_CACHE_MISS);
  gpujit_module_free(m);
  /* answered before the store: the worker is busy, storing */
  assert_true(gpujit__now_us() / 1e3 - t0 < 1500 + 10000);
  assert_true(worker_storing(f, &busy));
  assert_true(busy);
  while (worker_storing(f, &busy) || busy) {
    assert_true(++polls < 1000); /* 20 s */
    usleep(20000);
  }
  assert_true(gpujit__now_us() / 1e3 - t0 >= 1500); /* not idle before the slowed store was over */
  m = NULL;
  assert_int_equal(gpujit_server_build_files(&m, paths, 1, &o, &f->so, &served), 0);
  assert_int_equal(served, 0);
  assert_int_equal(gpujit_module_cache_status(m), GPUJIT_CACHE_HIT);
  gpujit_module_free(m);
  free(src);
}

/* A client whose paths are other files to the server — in another mount namespace, where
 * another directory is mounted over the source's — is refused by the server, from what the
 * kernel says of its process; it builds in-process and gets the module of its own files, not the
 * one the server's worker would build from the server's. */
static int build_in_other_namespace(fx *f, const char *dir, const char *seen, const char *over)
{
  const char *paths[] = {seen};
  gpujit_module_options o = opts_with(f);
  gpujit_module *m = NULL;
  int served = -1;
  char *ptx;
  size_t n;
  if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
    return 77;
  if (mount(over, dir, NULL, MS_BIND, NULL) != 0) /* over/k.cu now shows at src/k.cu, here alone */
    return 78;
  o.output = GPUJIT_OUTPUT_PTX;
  if (gpujit_server_build_files(&m, paths, 1, &o, &f->so, &served) != 0) {
    fprintf(stderr, "the build: %s\n", gpujit_error_last());
    return 2;
  }
  ptx = (char *)gpujit_module_image(m, &n);
  n = memmem(ptx, n, "222;", 4) ? 0 : memmem(ptx, n, "111;", 4) ? 3 : 4; /* 3: the server's file */
  gpujit_module_free(m);
  return n ? (int)n : served != 0 ? 5 : 0; /* the module first: what the user would get */
}

static void test_server__other_mount_namespace_refused(void **state)
{
  fx *f = *state;
  char *over = th_path(f->dir, "over"), *dir = th_path(f->dir, "src"), *src, *theirs;
  pid_t pid;
  int st = 0;
  assert_int_equal(mkdir(over, 0755), 0);
  assert_int_equal(mkdir(dir, 0755), 0);
  src = th_write(dir, "k.cu", "extern \"C\" __global__ void k(int *x) { x[0] = 111; }\n");
  theirs = th_write(over, "k.cu", "extern \"C\" __global__ void k(int *x) { x[0] = 222; }\n");
  /* the cache and socket stay visible there: only src/ is mounted over */
  start_server(f, 60);
  pid = fork();
  assert_true(pid >= 0);
  if (pid == 0)
    _exit(build_in_other_namespace(f, dir, src, over));
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st));
  if (WEXITSTATUS(st) == 77 || WEXITSTATUS(st) == 78) {
    print_message("skip: no private mount namespace here (unshare or mount not permitted)\n");
    skip();
  }
  if (WEXITSTATUS(st) != 0)
    fail_msg("the client in another mount namespace: %s (%d)", WEXITSTATUS(st) == 3 ? "got the server's module" :
             WEXITSTATUS(st) == 5 ? "was served" : "failed", WEXITSTATUS(st));
  free(over), free(dir), free(src), free(theirs);
}

/* A client whose NVRTC would see another environment than the server's workers (NVRTCWIZ set
 * in the client alone) is refused, and the refusal names the variable; the client builds
 * in-process. With the same environment, it is served. */
static void test_server__other_nvrtc_environment_refused(void **state)
{
  fx *f = *state;
  char *src = th_write(f->dir, "e.cu", "extern \"C\" __global__ void e(int *x) { x[0] = 5; }\n");
  const char *paths[] = {src};
  gpujit_module_options o = opts_with(f);
  gpujit_module *m = NULL;
  gpujit__buf frame = {0};
  uint32_t type;
  cJSON *ack, *req = cJSON_CreateObject();
  char *text;
  int fd, served = -1;
  unsetenv("NVRTCWIZ");
  unsetenv("NVRTC_APPEND_FLAGS");
  start_server(f, 60);
  /* over the wire: the variable named, both values said */
  cJSON_AddStringToObject(req, "op", "build");
  cJSON_AddStringToObject(req, "build", gpujit__build_identity());
  cJSON_AddStringToObject(req, "toolkit", gpujit__toolkit_id());
  cJSON_AddStringToObject(req, "toolkit_root", gpujit__cuda_root());
  cJSON_AddStringToObject(cJSON_AddObjectToObject(req, "env"), "NVRTC_APPEND_FLAGS", "-DX=1");
  cJSON_AddItemToObject(req, "job", cJSON_CreateObject());
  text = cJSON_PrintUnformatted(req);
  fd = gpujit__server_connect(f->sock);
  assert_true(fd >= 0);
  assert_int_equal(gpujit__frame_write(fd, GPUJIT__FRAME_JOB, text, strlen(text)), 0);
  assert_int_equal(gpujit__frame_read(fd, &type, &frame), 1);
  assert_int_equal(type, GPUJIT__FRAME_ACK);
  ack = cJSON_ParseWithLength(frame.data, frame.len);
  assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(ack, "ok")));
  if (!strstr(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ack, "why")),
              "NVRTC_APPEND_FLAGS is '-DX=1' in the client, unset in the server"))
    fail_msg("why: %s", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ack, "why")));
  cJSON_Delete(ack), cJSON_Delete(req), free(text), close(fd), gpujit__buf_free(&frame);
  /* through the API: refused, built here */
  assert_int_equal(setenv("NVRTCWIZ", "gpujit-test", 1), 0);
  assert_int_equal(gpujit_server_build_files(&m, paths, 1, &o, &f->so, &served), 0);
  assert_int_equal(served, 0);
  gpujit_module_free(m);
  assert_int_equal(unsetenv("NVRTCWIZ"), 0);
  free(th_write(f->dir, "e.cu", "extern \"C\" __global__ void e(int *x) { x[0] = 6; }\n"));
  assert_int_equal(gpujit_server_build_files(&m, paths, 1, &o, &f->so, &served), 0);
  assert_int_equal(served, 1);
  gpujit_module_free(m);
  free(src);
}

int main(void)
{
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_server__same_result_and_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_server__pch_reuse_and_header_edit, setup, teardown),
      cmocka_unit_test_setup_teardown(test_server__killed_mid_request, setup, teardown),
      cmocka_unit_test_setup_teardown(test_server__project_build, setup, teardown),
      cmocka_unit_test_setup_teardown(test_server__project_hung_server, setup, teardown),
      cmocka_unit_test_setup_teardown(test_server__stale_client_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(test_server__other_toolkit_root_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(test_server__client_working_directory, setup, teardown),
      cmocka_unit_test_setup_teardown(test_server__client_falls_back_from_stale, setup, teardown),
      cmocka_unit_test_setup_teardown(test_server__other_users_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(test_server__idle_exit_and_one_per_socket, setup, teardown),
      cmocka_unit_test_setup_teardown(test_server__busy_until_stored, setup, teardown),
      cmocka_unit_test_setup_teardown(test_server__other_mount_namespace_refused, setup, teardown),
      cmocka_unit_test_setup_teardown(test_server__other_nvrtc_environment_refused, setup, teardown),
  };
  signal(SIGPIPE, SIG_IGN);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
