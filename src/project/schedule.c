/* A project build (gpujit_project_build): hits served here, misses sent to worker processes —
 * the longest expected first, modules of one include block kept on the worker holding its PCH —
 * results written as they come, one trace with a track per worker. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/fs.h"
#include "cache/store/store.h"
#include "compile/pch/pch.h"
#include "gpujit/trace.h"
#include "module/build.h"
#include "module/history.h"
#include "module/module.h"
#include "project/plan.h"
#include "project/pool.h"
#include "project/project.h"
#include "project/wire.h"
#include "trace/sink.h"

int gpujit_project_options_init(gpujit_project_options *opts, unsigned int version)
{
  static const gpujit_project_options init = GPUJIT_PROJECT_OPTIONS_INIT;
  if (!opts)
    return gpujit__error(GPUJIT_EINVAL, "options: NULL");
  if (version != GPUJIT_PROJECT_OPTIONS_VERSION)
    return gpujit__error(GPUJIT_EVERSION, "project options version %u is not supported", version);
  *opts = init;
  return 0;
}

static void progress(gpujit__run *r)
{
  gpujit_project_progress pr = {0};
  double left = 0, scale;
  if (!r->o->on_progress)
    return;
  pr.total = r->p->count;
  pr.done = r->done;
  pr.running = r->running;
  pr.hits = r->hits;
  pr.failed = r->failed;
  pr.elapsed_ms = (gpujit__now_us() - r->t0) / 1e3;
  for (size_t i = 0; i < r->npending; i++)
    left += r->p->mods[r->pending[i]].expected_ms;
  for (size_t k = 0; r->w && k < r->nw; k++)
    if (r->w[k].pid > 0 && r->w[k].job >= 0)
      left += r->p->mods[r->w[k].job].expected_ms;
  scale = gpujit__scale_of(r);
  pr.eta_ms = r->done == 0 && r->npending + r->running ? -1 : left * scale / (double)(r->nw ? r->nw : 1);
  r->o->on_progress(r->o->user, &pr);
}

static void ended(gpujit__run *r, size_t i)
{
  const gpujit_project_result *res = &r->p->mods[i].r;
  r->done++;
  if (res->status == GPUJIT_PROJECT_HIT)
    r->hits++;
  if (res->status == GPUJIT_PROJECT_FAILED)
    r->failed++;
  if (res->status == GPUJIT_PROJECT_BUILT && r->p->mods[i].expected_ms > 0 && res->pch != GPUJIT_PCH_STATUS_USED) {
    r->expected_done += r->p->mods[i].expected_ms;
    r->actual_done += res->compile_ms * (res->pch == GPUJIT_PCH_STATUS_CREATED ? 1 / 1.45 : 1);
  } else if (res->status == GPUJIT_PROJECT_BUILT && r->p->mods[i].expected_ms > 0) {
    r->used_expected += r->p->mods[i].expected_ms * gpujit__scale_of(r);
    r->used_actual += res->compile_ms;
  }
  if (r->o->on_module)
    r->o->on_module(r->o->user, res);
  progress(r);
}

/* Write a module's image where asked; the module then becomes the result. */
static void deliver(gpujit__run *r, size_t i, gpujit_project_status status, gpujit_module *m)
{
  gpujit__project_module *pm = &r->p->mods[i];
  if (pm->output) {
    char *dir = gpujit__dirname(pm->output);
    int err = dir ? gpujit__mkdirs(dir, 0777) : GPUJIT_ENOMEM;
    free(dir);
    if (err == 0) /* same bytes: left alone; else atomic, not fsynced (like make and ninja) */
      err = gpujit_module_write(m, pm->output);
    if (err < 0) {
      char msg[600];
      snprintf(msg, sizeof(msg), "%s", gpujit_error_last());
      gpujit_module_free(m);
      gpujit__project_finish(r->p, i, GPUJIT_PROJECT_FAILED, NULL, err, msg, "", false);
      return;
    }
  }
  gpujit__project_finish(r->p, i, status, m, 0, NULL, NULL, r->o->keep_modules != 0);
}

/* Phase one, in this process: every hit served, every miss planned. */
static int serve_hits(gpujit__run *r)
{
  for (size_t i = 0; i < r->p->count; i++) {
    gpujit__project_module *pm = &r->p->mods[i];
    gpujit__options_holder h;
    gpujit__build_ctl ctl = {.lookup_only = true};
    gpujit_module *m = NULL;
    double t = gpujit__now_us();
    int err;
    if (r->o->cancel && *r->o->cancel)
      return GPUJIT_ECANCELLED;
    if ((err = gpujit__options_from_json(&h, pm->options, pm->name)) == 0) {
      h.o.cache = r->o->cache;
      h.o.trace = r->o->trace;
      err = gpujit__module_build_files_ctl(&m, (const char *const *)pm->files, pm->files_count, &h.o, &ctl);
    }
    pm->r.start_ms = (t - r->t0) / 1e3;
    pm->r.wall_ms = (gpujit__now_us() - t) / 1e3;
    if (err == 0) {
      deliver(r, i, GPUJIT_PROJECT_HIT, m);
      ended(r, i);
    } else if (ctl.missed) {
      free(pm->miss_reason); /* said again when it is built: why this lookup missed */
      pm->miss_reason = gpujit__strdup(ctl.miss_reason);
      pm->r.miss_reason = pm->miss_reason ? pm->miss_reason : "";
      gpujit__plan_module(r, pm, &h.o);
      r->pending[r->npending++] = i;
    } else {
      gpujit__project_finish(r->p, i, GPUJIT_PROJECT_FAILED, NULL, err, gpujit_error_last(), gpujit_error_log(), false);
      ended(r, i);
    }
    gpujit__options_holder_free(&h);
  }
  return 0;
}

static int send_job(gpujit__run *r, gpujit__worker *w, long i, bool more)
{
  gpujit__project_module *pm = &r->p->mods[i];
  cJSON *job, *opts = cJSON_Duplicate(pm->options, 1);
  char *text;
  int err;
  if (!r->o->pch)
    cJSON_ReplaceItemInObjectCaseSensitive(opts, "pch", cJSON_CreateNumber(GPUJIT_PCH_OFF));
  job = gpujit__job_json(i, (const char *const *)pm->files, pm->files_count, opts, r->o->cache, r->o->trace != NULL,
                         more);
  if (w->remote) { /* the build server's request carries the job, as its workers can build it */
    if (job && gpujit__job_portable(job, r->o->cache) < 0) {
      cJSON_Delete(job);
      job = NULL;
    }
    text = job ? r->via->request(r->via->ctx, job) : NULL;
    w->acked = false;
  } else {
    text = cJSON_PrintUnformatted(job);
    cJSON_Delete(job);
  }
  err = text ? gpujit__frame_write(w->job_fd, GPUJIT__FRAME_JOB, text, strlen(text)) : GPUJIT_ENOMEM;
  free(text);
  if (err == 0) {
    w->job = i;
    w->job_start_us = gpujit__now_us();
    w->block = pm->block;
    w->has_block = pm->has_block;
    w->creating = more;
    pm->r.start_ms = (w->job_start_us - r->t0) / 1e3;
    pm->r.worker = w->index;
    r->running++;
  }
  return err;
}

/* The build server stops taking this build's jobs: why, said once (a debug line when none runs). */
static void via_lost(gpujit__run *r, int err, const char *why)
{
  if (r->via_lost)
    return;
  r->via_lost = true;
  snprintf(r->via->lost, sizeof(r->via->lost), "%s", why);
  gpujit__log(err == GPUJIT_ENOENT ? GPUJIT_LOG_DEBUG : GPUJIT_LOG_INFO,
              "build server: %s: this build's worker processes take its misses", why);
}

/* Slot w as a connection to the build server for its next job. @return 0, or -1 (lost). */
static int connect_remote(gpujit__run *r, gpujit__worker *w, int slot)
{
  char name[96];
  int pid = 0, fd = r->via->connect(r->via->ctx, &pid), dupfd = -1;
  if (fd < 0 || pid <= 0 || (dupfd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0) {
    via_lost(r, fd, fd < 0 ? gpujit_error_last() : "its connection could not be set up");
    gpujit_error_clear();
    if (fd >= 0)
      close(fd);
    return -1;
  }
  fcntl(fd, F_SETFL, O_NONBLOCK);
  w->remote = true;
  w->acked = false;
  w->pid = pid;
  w->index = slot;
  w->result_fd = fd;
  w->job_fd = dupfd; /* two descriptors of one socket: each closed once */
  w->err_fd = -1;
  if (r->o->trace && !w->tracked) {
    snprintf(name, sizeof(name), "build server %d (pid %d)", slot, pid);
    if (gpujit_trace_track(r->o->trace, &w->track, name) < 0)
      gpujit_error_clear();
    w->tracked = true;
  }
  return 0;
}

static int start_worker(gpujit__run *r, gpujit__worker *w, const char *path, int slot)
{
  char name[64];
  int err;
  if (r->via && !r->via_lost && (size_t)slot <= r->via_slots && connect_remote(r, w, slot) == 0)
    return 0;
  if (!path[0])
    return gpujit__error(GPUJIT_EWORKER, "no worker executable");
  w->remote = w->tracked = false;
  err = gpujit__worker_spawn(w, path, ++r->started);
  if (err == 0 && r->o->trace) {
    snprintf(name, sizeof(name), "worker %d (pid %ld)", w->index, (long)w->pid);
    if (gpujit_trace_track(r->o->trace, &w->track, name) < 0)
      gpujit_error_clear();
  }
  return err;
}

/* A worker's job ended: account for it and free the worker for the next. */
static void job_done(gpujit__run *r, gpujit__worker *w)
{
  gpujit__project_module *pm = &r->p->mods[w->job];
  pm->r.wall_ms = (gpujit__now_us() - w->job_start_us) / 1e3;
  if (w->remote) /* the server keeps its workers' PCHs: it chooses where a block goes */
    r->via->served++;
  else if (pm->has_block && (pm->r.pch == GPUJIT_PCH_STATUS_CREATED || pm->r.pch == GPUJIT_PCH_STATUS_USED))
    gpujit__hold(w, pm->block);
  if (w->creating && pm->has_block)
    gpujit__plan_creator_done(r, pm->block, pm->r.pch == GPUJIT_PCH_STATUS_CREATED);
  w->creating = false;
  w->last_end_us = gpujit__now_us();
  r->running--;
  ended(r, (size_t)w->job);
  w->job = -1;
}

/* The server did not build w's job (refused it, hung, gone): the job goes back to the pending
 * list for the build's own workers, and no further job goes to the server. */
static void remote_lost(gpujit__run *r, gpujit__worker *w, const char *why)
{
  if (w->job >= 0) {
    if (w->creating && r->p->mods[w->job].has_block)
      gpujit__plan_creator_done(r, r->p->mods[w->job].block, false);
    r->pending[r->npending++] = (size_t)w->job;
    r->running--;
    w->job = -1;
  }
  cJSON_Delete(w->result);
  w->result = NULL;
  gpujit__worker_stop(w, false, NULL, 0);
  via_lost(r, 0, why);
}

static void take_result(gpujit__run *r, gpujit__worker *w, uint32_t type, gpujit__buf *frame)
{
  if (w->remote && !w->acked) { /* the server's answer to the request comes first */
    cJSON *ack = type == GPUJIT__FRAME_ACK ? cJSON_ParseWithLength(frame->data, frame->len) : NULL;
    const char *why = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ack, "why"));
    char msg[512];
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ack, "ok"))) {
      w->acked = true;
    } else {
      snprintf(msg, sizeof(msg), "%s", why ? why : "the server refused the request");
      remote_lost(r, w, msg);
    }
    cJSON_Delete(ack);
    return;
  }
  if (type == GPUJIT__FRAME_RESULT) {
    cJSON *res = cJSON_ParseWithLength(frame->data, frame->len);
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(res, "error"), *tr = cJSON_GetObjectItemCaseSensitive(res, "trace");
    if (r->o->trace && cJSON_IsString(tr) &&
        gpujit__trace_merge_process(r->o->trace, tr->valuestring, strlen(tr->valuestring), (int64_t)w->pid, w->track,
                                    "worker") < 0)
      gpujit_error_clear();
    if (cJSON_IsNumber(e) && e->valueint == 0) {
      w->result = res; /* its image follows */
      return;
    }
    gpujit__project_finish(r->p, (size_t)w->job, GPUJIT_PROJECT_FAILED, NULL, cJSON_IsNumber(e) ? e->valueint : GPUJIT_EWORKER,
                           cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(res, "message")),
                           cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(res, "log")), false);
    cJSON_Delete(res);
    job_done(r, w);
  } else if (type == GPUJIT__FRAME_IMAGE && w->result) {
    gpujit_module *m = NULL;
    int err = gpujit__module_from_json(&m, cJSON_GetObjectItemCaseSensitive(w->result, "module"), frame);
    cJSON_Delete(w->result);
    w->result = NULL;
    if (err == 0)
      deliver(r, (size_t)w->job, GPUJIT_PROJECT_BUILT, m);
    else
      gpujit__project_finish(r->p, (size_t)w->job, GPUJIT_PROJECT_FAILED, NULL, err, gpujit_error_last(), "", false);
    job_done(r, w);
  }
}

/* The worker is gone (crashed, killed): its module failed with the reason; the build goes on. */
static void worker_died(gpujit__run *r, gpujit__worker *w)
{
  char why[128], msg[512];
  long job = w->job;
  int index = w->index;
  pid_t pid = w->pid;
  gpujit__worker_stop(w, true, why, sizeof(why));
  if (job >= 0) {
    snprintf(msg, sizeof(msg), "worker %d (pid %ld) %s while compiling %s", index, (long)pid, why, r->p->mods[job].name);
    gpujit__project_finish(r->p, (size_t)job, GPUJIT_PROJECT_FAILED, NULL, GPUJIT_EWORKER, msg,
                           w->err_tail.data ? w->err_tail.data : "", false);
    job_done(r, w);
  }
  cJSON_Delete(w->result);
  w->result = NULL;
  gpujit__buf_free(&w->err_tail);
}

static void read_worker(gpujit__run *r, gpujit__worker *w)
{
  gpujit__buf frame = {0};
  uint32_t type;
  int open = gpujit__frame_fill(&w->reader, w->result_fd), got = 0;
  while (w->pid > 0 && (got = gpujit__frame_take(&w->reader, &type, &frame)) == 1)
    take_result(r, w, type, &frame);
  gpujit__buf_free(&frame);
  if (w->pid <= 0)
    return; /* a server that refused the job: already closed */
  if (w->remote && w->job < 0)
    gpujit__worker_stop(w, false, NULL, 0); /* its one job is done; the next connects anew */
  else if (w->remote && (open <= 0 || got < 0))
    remote_lost(r, w, "the server was lost mid-request");
  else if (open <= 0 || got < 0)
    worker_died(r, w);
}

/* Without a worker executable: the misses compile here, one after another. */
static void build_here(gpujit__run *r)
{
  bool more;
  long i;
  while ((i = gpujit__choose(r, NULL, &more)) >= 0 && !(r->o->cancel && *r->o->cancel)) {
    gpujit__project_module *pm = &r->p->mods[i];
    gpujit__options_holder h;
    gpujit__build_ctl ctl = {.pch_more = more && r->o->pch};
    gpujit_module *m = NULL;
    double t = gpujit__now_us();
    int err = gpujit__options_from_json(&h, pm->options, pm->name);
    if (err == 0) {
      h.o.cache = r->o->cache;
      h.o.trace = r->o->trace;
      if (!r->o->pch)
        h.o.pch = GPUJIT_PCH_OFF;
      err = gpujit__module_build_files_ctl(&m, (const char *const *)pm->files, pm->files_count, &h.o, &ctl);
    }
    pm->r.start_ms = (t - r->t0) / 1e3;
    pm->r.wall_ms = (gpujit__now_us() - t) / 1e3;
    if (err == 0)
      deliver(r, (size_t)i, GPUJIT_PROJECT_BUILT, m);
    else
      gpujit__project_finish(r->p, (size_t)i, GPUJIT_PROJECT_FAILED, NULL, err, gpujit_error_last(), gpujit_error_log(), false);
    gpujit__options_holder_free(&h);
    ended(r, (size_t)i);
  }
}

static int work(gpujit__run *r, const char *path)
{
  struct pollfd *fds = calloc(r->nw * 2, sizeof(*fds));
  int err = 0;
  if (!fds)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  while (r->npending || r->running) {
    size_t n = 0;
    if (r->o->cancel && *r->o->cancel) {
      err = GPUJIT_ECANCELLED;
      break;
    }
    for (size_t k = 0; k < r->nw; k++) { /* every idle slot: a worker and a job */
      gpujit__worker *w = &r->w[k];
      bool more;
      long i;
      if (w->pid > 0 && w->job >= 0)
        continue;
      if (!r->npending)
        break;
      if (w->pid <= 0 && (err = start_worker(r, w, path, (int)k + 1)) < 0) {
        if (r->running == 0 && k == 0)
          goto done; /* no worker at all */
        gpujit_error_clear();
        err = 0;
        continue;
      }
      if ((i = gpujit__choose(r, w, &more)) < 0)
        continue; /* left for a worker holding its PCH: that worker's turn comes in this loop */
      if (send_job(r, w, i, more && r->o->pch) < 0) {
        gpujit_error_clear();
        w->job = i; /* it died before taking the job: fail the job with its reason */
        w->job_start_us = gpujit__now_us();
        r->running++;
        if (w->remote)
          remote_lost(r, w, "the request could not be sent");
        else
          worker_died(r, w);
      }
    }
    for (size_t k = 0; k < r->nw; k++) {
      if (r->w[k].pid <= 0)
        continue;
      fds[n].fd = r->w[k].result_fd;
      fds[n++].events = POLLIN;
      fds[n].fd = r->w[k].err_fd;
      fds[n++].events = POLLIN;
    }
    if (n == 0)
      break;
    if (poll(fds, n, 100) < 0 && errno != EINTR) {
      err = gpujit__error(GPUJIT_EIO, "poll: %s", strerror(errno));
      break;
    }
    for (size_t k = 0; k < r->nw; k++)
      if (r->w[k].pid > 0) {
        gpujit__worker_drain_stderr(&r->w[k]);
        read_worker(r, &r->w[k]);
        /* a server that does not take a request within 2 s is hung: never wait on it longer */
        if (r->w[k].remote && r->w[k].pid > 0 && r->w[k].job >= 0 && !r->w[k].acked &&
            gpujit__now_us() - r->w[k].job_start_us > 2e6)
          remote_lost(r, &r->w[k], "no answer in time");
      }
    progress(r);
  }
done:
  free(fds);
  return err;
}

/* The critical path: the worker that finished last bounds the build; its modules on a track. */
static void critical_path(gpujit__run *r)
{
  gpujit__worker *last = NULL;
  for (size_t k = 0; r->w && k < r->nw; k++)
    if (r->w[k].last_end_us && (!last || r->w[k].last_end_us > last->last_end_us))
      last = &r->w[k];
  r->p->summary.critical_ms = last ? (last->last_end_us - r->t0) / 1e3 : 0;
  if (last && r->o->trace) {
    int64_t tid;
    if (gpujit_trace_track(r->o->trace, &tid, "critical path") < 0) {
      gpujit_error_clear();
      return;
    }
    for (size_t i = 0; i < r->p->count; i++) {
      const gpujit_project_result *res = &r->p->mods[i].r;
      if (res->worker == last->index && res->status != GPUJIT_PROJECT_HIT)
        gpujit_trace_complete(r->o->trace, NULL, tid, "critical path", res->name, r->t0 + res->start_ms * 1e3,
                              res->wall_ms * 1e3);
    }
  }
}

int gpujit_project_build(gpujit_project *p, const gpujit_project_options *o)
{
  return gpujit__project_build_via(p, o, NULL);
}

int gpujit__project_build_via(gpujit_project *p, const gpujit_project_options *o, gpujit__project_via *via)
{
  gpujit_project_options defaults = GPUJIT_PROJECT_OPTIONS_INIT;
  gpujit__run r = {0};
  char path[PATH_MAX];
  int err = 0;
  long cores;

  if (!p)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_project_build: NULL project");
  if (!o)
    o = &defaults;
  if (o->version != GPUJIT_PROJECT_OPTIONS_VERSION)
    return gpujit__error(GPUJIT_EVERSION, "project options version %u is not supported", o->version);
  if (o->jobs < 0)
    return gpujit__error(GPUJIT_EINVAL, "invalid job count %d", o->jobs);
  gpujit__project_reset(p);
  r.p = p;
  r.o = o;
  r.via = via;
  r.t0 = gpujit__now_us();
  if (via) {
    via->served = 0;
    via->lost[0] = '\0';
  }
  cores = sysconf(_SC_NPROCESSORS_ONLN);
  r.nw = o->jobs > 0 ? (size_t)o->jobs : (size_t)(cores > 0 ? cores : 1);
  if (!(r.pending = calloc(p->count + 1, sizeof(*r.pending))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  if (o->trace)
    gpujit_trace_thread_name(o->trace, "project: cache hits, scheduling");
  if ((err = serve_hits(&r)) == 0 && r.npending) {
    if (r.nw > r.npending)
      r.nw = r.npending;
    /* which blocks get a PCH, made by how many workers, started first: before anything starts */
    if ((err = gpujit__plan_pch(&r)) < 0)
      goto out;
    if (via) {
      char why[512] = "";
      int n = via->slots(via->ctx, why, sizeof(why));
      if (n > 0)
        r.via_slots = (size_t)n;
      else
        via_lost(&r, n == 0 ? GPUJIT_ENOENT : 0, why);
    }
    path[0] = '\0';
    if (gpujit__worker_locate(path, sizeof(path), o->worker_path) < 0 && via) {
      gpujit_error_clear(); /* the server's workers, or in-process when it is lost */
      path[0] = '\0';
    }
    if (!path[0] && !via) {
      gpujit__log(GPUJIT_LOG_WARN, "%s: compiling in this process, one module at a time", gpujit_error_last());
      gpujit_error_clear();
      r.nw = 1;
      build_here(&r);
    } else if (!(r.w = calloc(r.nw, sizeof(*r.w)))) {
      err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
    } else {
      for (size_t k = 0; k < r.nw; k++) {
        r.w[k].job = -1;
        r.w[k].job_fd = r.w[k].result_fd = r.w[k].err_fd = -1; /* none open yet */
      }
      err = work(&r, path);
      if (err == GPUJIT_EWORKER) { /* not one worker would start */
        gpujit__log(GPUJIT_LOG_WARN, "%s: compiling in this process, one module at a time", gpujit_error_last());
        gpujit_error_clear();
        err = 0;
        build_here(&r);
      }
    }
  }
out:
  if (o->cancel && *o->cancel)
    err = GPUJIT_ECANCELLED;
  for (size_t k = 0; k < r.nw && r.w; k++) {
    gpujit__worker_stop(&r.w[k], err == GPUJIT_ECANCELLED, NULL, 0);
    cJSON_Delete(r.w[k].result);
    gpujit__buf_free(&r.w[k].err_tail);
  }
  critical_path(&r);
  for (size_t i = 0; i < p->count; i++) {
    gpujit_project_result *res = &p->mods[i].r;
    if (res->status == GPUJIT_PROJECT_PENDING)
      res->status = GPUJIT_PROJECT_CANCELLED;
    p->summary.hits += res->status == GPUJIT_PROJECT_HIT;
    p->summary.built += res->status == GPUJIT_PROJECT_BUILT;
    p->summary.failed += res->status == GPUJIT_PROJECT_FAILED;
    p->summary.cancelled += res->status == GPUJIT_PROJECT_CANCELLED;
    p->summary.compile_ms += res->compile_ms;
    p->summary.pch_created += res->pch == GPUJIT_PCH_STATUS_CREATED;
    p->summary.pch_used += res->pch == GPUJIT_PCH_STATUS_USED;
  }
  p->summary.workers = r.started;
  p->summary.wall_ms = (gpujit__now_us() - r.t0) / 1e3;
  free(r.w);
  free(r.pending);
  free(r.plans);
  if (err == GPUJIT_ECANCELLED)
    return gpujit__error(GPUJIT_ECANCELLED, "build cancelled: %zu of %zu modules done", r.done, p->count);
  if (err < 0)
    return err;
  if (p->summary.failed)
    return gpujit__error(GPUJIT_ECOMPILE, "%zu of %zu modules failed", p->summary.failed, p->count);
  return 0;
}
