/* The worker's loop (project/worker.h). One job at a time: NVRTC serialises compiles inside a
 * process anyway, and the process is what keeps the precompiled headers. */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "compile/includes/includes.h"
#include "gpujit/cache.h"
#include "gpujit/trace.h"
#include "module/build.h"
#include "module/module.h"
#include "project/wire.h"
#include "project/worker.h"

typedef struct worker_state {
  gpujit_cache *cache;
  char *cache_dir, *base_dir;
} worker_state;

static bool same(const char *a, const char *b) { return (!a && !b) || (a && b && !strcmp(a, b)); }

static const char *opt_str(const cJSON *j, const char *name)
{
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, name);
  return cJSON_IsString(s) ? s->valuestring : NULL;
}

/* The cache the job names, kept open between jobs. */
static gpujit_cache *cache_for(worker_state *w, const char *dir, const char *base)
{
  gpujit_cache_options co = GPUJIT_CACHE_OPTIONS_INIT;
  if (!dir)
    return NULL;
  if (w->cache && same(dir, w->cache_dir) && same(base, w->base_dir))
    return w->cache;
  gpujit_cache_free(w->cache);
  free(w->cache_dir);
  free(w->base_dir);
  w->cache = NULL;
  w->cache_dir = gpujit__strdup(dir);
  w->base_dir = base ? gpujit__strdup(base) : NULL;
  co.dir = dir;
  co.base_dir = base;
  if (gpujit_cache_open(&w->cache, &co) < 0) {
    gpujit_error_clear();
    w->cache = NULL;
  }
  return w->cache;
}

/* A result: the module JSON, then its image in a frame of its own. */
static int send_result(int out_fd, cJSON *res, const gpujit_module *m)
{
  char *text = cJSON_PrintUnformatted(res);
  int err = text ? gpujit__frame_write(out_fd, GPUJIT__FRAME_RESULT, text, strlen(text))
                 : gpujit__error(GPUJIT_ENOMEM, "out of memory");
  if (err == 0 && m)
    err = gpujit__frame_write(out_fd, GPUJIT__FRAME_IMAGE, m->image.data, m->image.len);
  free(text);
  return err;
}

/* The module is final: answer now, and let the cache store follow while the client goes on. */
typedef struct early {
  int out_fd;
  cJSON *res;
  bool sent;
  int err;
} early;

static void answer_early(gpujit_module *m, void *payload)
{
  early *e = payload;
  cJSON *copy = cJSON_Duplicate(e->res, 1);
  cJSON_AddNumberToObject(copy, "error", 0);
  cJSON_AddTrueToObject(copy, "store_follows"); /* a STORED frame ends the job */
  cJSON_AddItemToObject(copy, "module", gpujit__module_to_json(m));
  e->err = send_result(e->out_fd, copy, m);
  e->sent = true;
  cJSON_Delete(copy);
}

static int run_job(worker_state *w, int out_fd, const cJSON *job)
{
  const cJSON *files = cJSON_GetObjectItemCaseSensitive(job, "files"), *f;
  gpujit__options_holder h;
  gpujit__build_ctl ctl = {0};
  gpujit_trace *trace = NULL;
  gpujit_module *m = NULL;
  const char **paths = NULL;
  cJSON *res = cJSON_CreateObject();
  early e = {out_fd, res, false, 0};
  size_t n = 0;
  int err;

  cJSON_AddItemToObject(res, "id", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(job, "id"), 1));
  cJSON_AddNumberToObject(res, "pid", getpid()); /* its trace's main thread */
  err = gpujit__options_from_json(&h, cJSON_GetObjectItemCaseSensitive(job, "options"), "job");
  /* a build server's client: its relative paths, and NVRTC's relative probes, mean what they
   * mean in its working directory */
  if (err == 0 && opt_str(job, "cwd") && chdir(opt_str(job, "cwd")) != 0)
    err = gpujit__error(GPUJIT_EIO, "cannot work in the client's directory %s: %s", opt_str(job, "cwd"),
                        strerror(errno));
  if (err == 0 && !(paths = calloc((size_t)cJSON_GetArraySize(files) + 1, sizeof(*paths))))
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
  if (err == 0) {
    cJSON_ArrayForEach(f, files)
      if (cJSON_IsString(f))
        paths[n++] = f->valuestring;
    h.o.cache = cache_for(w, opt_str(job, "cache_dir"), opt_str(job, "base_dir"));
    ctl.pch_more = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(job, "pch_more"));
    /* a build server's worker builds the same sources again and again (the edit loop scans the
     * same headers before every compile): its scans are kept while their files are unchanged
     * (4 of them: CUB's are ~7 MB each). A project's workers build each module once. */
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(job, "keep_scans")))
      gpujit__includes_memo_enable(4);
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(job, "trace"))) {
      gpujit_trace_options to = GPUJIT_TRACE_OPTIONS_INIT;
      to.process_name = "gpujit worker";
      if (gpujit_trace_create(&trace, &to) < 0)
        gpujit_error_clear();
      h.o.trace = trace;
    }
    /* a traced job answers at the end: its trace holds the whole build, the store included */
    if (!trace && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(job, "answer_early"))) {
      ctl.built = answer_early;
      ctl.built_payload = &e;
    }
    err = gpujit__module_build_files_ctl(&m, paths, n, &h.o, &ctl);
  }
  if (e.sent) { /* the store is over (stored or not: a lookup now sees what it left) */
    err = e.err < 0 ? e.err : gpujit__frame_write(out_fd, GPUJIT__FRAME_STORED, "", 0);
    goto done;
  }
  cJSON_AddNumberToObject(res, "error", err);
  if (err < 0) {
    cJSON_AddStringToObject(res, "message", gpujit_error_last());
    cJSON_AddStringToObject(res, "log", gpujit_error_log());
  } else {
    cJSON_AddItemToObject(res, "module", gpujit__module_to_json(m));
  }
  if (trace) {
    char *json = NULL;
    if (gpujit_trace_to_json(&json, NULL, trace) == 0)
      cJSON_AddStringToObject(res, "trace", json);
    gpujit_free(json);
  }
  err = send_result(out_fd, res, m);
done:
  cJSON_Delete(res);
  gpujit_module_free(m);
  gpujit_trace_free(trace);
  free(paths);
  gpujit__options_holder_free(&h);
  return err;
}

int gpujit__worker_main(int in_fd, int out_fd)
{
  worker_state w = {0};
  gpujit__buf frame = {0};
  uint32_t type;
  int r, status = 0;
  /* a worker compiles module after module of the same headers: each scan after the first takes
   * them from memory while their files are unchanged (CUB's block headers: ~7 MB) */
  gpujit__inc_files_keep((size_t)256 << 20);
  while ((r = gpujit__frame_read(in_fd, &type, &frame)) == 1) {
    cJSON *job;
    if (type != GPUJIT__FRAME_JOB || !(job = cJSON_ParseWithLength(frame.data, frame.len))) {
      status = 2;
      break;
    }
    r = run_job(&w, out_fd, job);
    cJSON_Delete(job);
    if (r < 0) { /* the coordinator is gone */
      status = 1;
      break;
    }
  }
  if (r < 0)
    status = 1;
  gpujit__buf_free(&frame);
  gpujit_cache_free(w.cache);
  free(w.cache_dir);
  free(w.base_dir);
  return status;
}
