/* `gpujit server start|stop|status|run`: the warm build server, and its start on demand. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"

extern char **environ;

static void server_help(void)
{
  printf("usage: gpujit server start|stop|status|run [options]\n\n"
         "A per-user build server keeps NVRTC loaded and its precompiled headers warm between\n"
         "gpujit calls: edit a header-heavy kernel, build again, and the front end is not paid\n"
         "again. While one runs, `gpujit build` and `gpujit run` send cache misses to it (hits\n"
         "are served in the calling process); with none, they compile in-process. Output,\n"
         "diagnostics and exit codes are the same either way.\n\n"
         "  start                start one in the background (nothing if one runs)\n"
         "  stop                 stop it\n"
         "  status               uptime, workers, precompiled headers held, memory\n"
         "  run                  run one in the foreground\n\n"
         "options:\n"
         "  --cache-dir DIR      the cache it serves: one server per user and cache directory\n"
         "  --workers N          worker processes (default 2)\n"
         "  --max-pch N          include blocks a worker keeps PCHs for before it restarts (default 4)\n"
         "  --idle-timeout S     exit after S seconds without a request (default 900)\n"
         "  --auto               start: also start it on demand from now on (a setting in the cache\n"
         "                       directory; stop --auto removes it). GPUJIT_SERVER=1 does the same\n"
         "                       for one shell, GPUJIT_SERVER=0 keeps every build in-process\n"
         "  --json[=FILE]        status as JSON (docs/json.md), or written to FILE\n"
         "  -q, -v               quiet, or verbose\n"
         "  -h, --help           this help\n");
}

int cli_server_current(const gpujit_server_options *so)
{
  char *text = NULL;
  cJSON *j;
  int r = -1;
  if (gpujit_server_status(&text, so) < 0) {
    gpujit_error_clear();
    return -1;
  }
  if ((j = cJSON_Parse(text)))
    r = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "compatible")) ? 1 : 0;
  cJSON_Delete(j);
  gpujit_free(text);
  return r;
}

/* Start `gpujit server run` detached; with `wait`, until it listens (or fails). */
int cli_server_spawn(const gpujit_server_options *so, bool wait, char *why, size_t why_size)
{
  char exe[PATH_MAX], fdarg[32], workers[32], maxpch[32], idle[64];
  char *argv[16];
  int n = 0, pipefd[2] = {-1, -1}, err;
  ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  posix_spawnattr_t at;
  posix_spawn_file_actions_t fa;
  pid_t pid;
  if (len <= 0) {
    snprintf(why, why_size, "cannot find this program: %s", strerror(errno));
    return -1;
  }
  exe[len] = '\0';
  if (wait && pipe2(pipefd, O_CLOEXEC) < 0) {
    snprintf(why, why_size, "pipe: %s", strerror(errno));
    return -1;
  }
  argv[n++] = exe;
  argv[n++] = "server";
  argv[n++] = "run";
  if (so->cache_dir)
    argv[n++] = "--cache-dir", argv[n++] = (char *)so->cache_dir;
  if (so->workers > 0)
    snprintf(workers, sizeof(workers), "%d", so->workers), argv[n++] = "--workers", argv[n++] = workers;
  if (so->max_pch > 0)
    snprintf(maxpch, sizeof(maxpch), "%d", so->max_pch), argv[n++] = "--max-pch", argv[n++] = maxpch;
  if (so->idle_timeout_s > 0)
    snprintf(idle, sizeof(idle), "%g", so->idle_timeout_s), argv[n++] = "--idle-timeout", argv[n++] = idle;
  if (wait)
    snprintf(fdarg, sizeof(fdarg), "%d", 3), argv[n++] = "--ready-fd", argv[n++] = fdarg;
  argv[n] = NULL;
  posix_spawnattr_init(&at);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSID); /* not the terminal's: it outlives this shell's ^C */
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  if (wait)
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 3);
  err = posix_spawn(&pid, exe, &fa, &at, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  if (pipefd[1] >= 0)
    close(pipefd[1]);
  if (err) {
    snprintf(why, why_size, "cannot start %s: %s", exe, strerror(err));
    if (pipefd[0] >= 0)
      close(pipefd[0]);
    return -1;
  }
  if (!wait)
    return 0; /* it is reaped by init once this process exits */
  {
    struct pollfd p = {pipefd[0], POLLIN, 0};
    char buf[16] = "";
    ssize_t got = poll(&p, 1, 15000) > 0 ? read(pipefd[0], buf, sizeof(buf) - 1) : -1;
    close(pipefd[0]);
    if (got > 0 && !strncmp(buf, "ready", 5))
      return (int)pid;
    int status = 0;
    if (got == 0) /* it closed the pipe without a word: it is exiting */
      waitpid(pid, &status, 0);
    if ((got == 0 || waitpid(pid, &status, WNOHANG) == pid) && WIFEXITED(status))
      snprintf(why, why_size, "the server exited with status %d before it listened", WEXITSTATUS(status));
    else
      snprintf(why, why_size, "the server did not start listening in 15 s");
    return -1;
  }
}

static void print_status(const char *json)
{
  cJSON *j = cJSON_Parse(json), *w, *h;
  char a[32];
  if (!j)
    return;
  if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "compatible")))
    printf("(of another build of gpujit or toolkit: builds do not use it; `gpujit server start` replaces it)\n");
  printf("gpujit server pid %.0f  up %.0f s  idle %.0f s  socket %s\n",
         cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "pid")),
         cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "uptime_s")),
         cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "idle_s")),
         cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "socket")));
  printf("  requests %.0f, built %.0f, refused %.0f; memory %s (server and workers, resident)\n",
         cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "requests")),
         cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "built")),
         cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "refused")),
         cli_size(a, sizeof(a), cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "memory_bytes"))));
  cJSON *lim = cJSON_GetObjectItemCaseSensitive(j, "limits");
  printf("  limits: %.0f workers, %.0f PCHs per worker, idle exit after %.0f s\n",
         cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(lim, "workers")),
         cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(lim, "max_pch_per_worker")),
         cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(lim, "idle_timeout_s")));
  cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(j, "workers")) {
    double pid = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(w, "pid"));
    printf("  worker %.0f: ", cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(w, "index")));
    if (pid <= 0) {
      printf("not started\n");
      continue;
    }
    printf("pid %.0f, %s, %.0f jobs, %s\n", pid,
           cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(w, "busy")) ? "busy" : "idle",
           cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(w, "jobs")),
           cli_size(a, sizeof(a), cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(w, "rss_bytes"))));
    cJSON_ArrayForEach(h, cJSON_GetObjectItemCaseSensitive(w, "pch"))
      printf("    PCH %s  %s  %.0f hits  %s\n", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(h, "block")),
             cli_size(a, sizeof(a), cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(h, "bytes"))),
             cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(h, "hits")),
             cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(h, "include")));
  }
  cJSON_Delete(j);
}

typedef struct server_cmd {
  cli_ctx *ctx;
  gpujit_server_options so;
  bool json, autostart;
  const char *json_file;
  int ready_fd;
} server_cmd;

/* A whole number option into *out (0 when its value is missing: "needs a value" follows). */
static int int_option(server_cmd *c, cli_args *a, const char *name, long max, int *out)
{
  long v;
  if (!a->failed && !cli_parse_int(a->value, 1, max, &v))
    return cli_usage_error(c->ctx, "server", "invalid %s '%s': expected 1..%ld", name, a->value, max);
  *out = a->failed ? 0 : (int)v;
  return EXIT_OK;
}

/* One argument. *help: -h was given. */
static int parse_one(server_cmd *c, cli_args *a, bool *help)
{
  if (cli_end_of_options(a)) {
    return EXIT_OK;
  } else if (cli_opt(a, "-h", false) || cli_opt(a, "--help", false)) {
    *help = true;
  } else if (cli_opt(a, "--cache-dir", true)) {
    c->so.cache_dir = a->value;
  } else if (cli_opt(a, "--workers", true)) {
    return int_option(c, a, "--workers", 64, &c->so.workers);
  } else if (cli_opt(a, "--max-pch", true)) {
    return int_option(c, a, "--max-pch", 16, &c->so.max_pch);
  } else if (cli_opt(a, "--idle-timeout", true)) {
    char *end;
    c->so.idle_timeout_s = a->failed ? 0 : strtod(a->value, &end);
    if (!a->failed && (*end || c->so.idle_timeout_s <= 0))
      return cli_usage_error(c->ctx, "server", "invalid --idle-timeout '%s': expected seconds > 0", a->value);
  } else if (cli_opt(a, "--ready-fd", true)) {
    c->ready_fd = a->failed ? -1 : atoi(a->value);
  } else if (cli_json_opt(a, &c->json, &c->json_file)) {
  } else if (cli_opt(a, "-q", false) || cli_opt(a, "--quiet", false)) {
    cli_set_verbosity(c->ctx, -1);
  } else if (cli_opt(a, "-v", false) || cli_opt(a, "--verbose", false)) {
    cli_set_verbosity(c->ctx, 1);
  } else if (cli_opt(a, "--auto", false)) {
    c->autostart = true;
  } else {
    return cli_unknown_option(c->ctx, a, "server");
  }
  return EXIT_OK;
}

static int server_run(server_cmd *c)
{
  int err = gpujit_server_run(&c->so, c->ready_fd);
  return err < 0 ? cli_fail(c->ctx, err) : EXIT_OK;
}

static int server_status(server_cmd *c)
{
  char *text = NULL;
  int err, rc = EXIT_OK;
  if ((err = gpujit_server_status(&text, &c->so)) == GPUJIT_ENOENT) {
    if (c->json) {
      cJSON *o = cJSON_CreateObject();
      cJSON_AddBoolToObject(o, "running", false);
      cli_json_emit(c->ctx, o, "gpujit-server-status", c->json_file);
    } else if (c->ctx->verbose >= 0) {
      printf("no gpujit server runs for this cache (builds compile in-process)\n");
    }
    return EXIT_FAILURE_; /* as `systemctl status` does: scripts test for a server with it */
  }
  if (err < 0)
    return cli_fail(c->ctx, err);
  if (c->json) { /* the server's answer, as the document (with "running": true) */
    cJSON *o = cJSON_Parse(text);
    if (o && !cJSON_GetObjectItemCaseSensitive(o, "running"))
      cJSON_AddBoolToObject(o, "running", true);
    rc = o ? cli_json_emit(c->ctx, o, "gpujit-server-status", c->json_file) : EXIT_INPUT;
  } else {
    print_status(text);
  }
  gpujit_free(text);
  return rc;
}

static int server_stop(server_cmd *c)
{
  int err;
  if (c->autostart && (err = gpujit_server_autostart_set(&c->so, 0)) < 0)
    return cli_fail(c->ctx, err);
  err = gpujit_server_stop(&c->so);
  if (err == GPUJIT_ENOENT) {
    if (c->ctx->verbose >= 0)
      printf("no gpujit server was running\n");
    return EXIT_OK;
  }
  if (err < 0)
    return cli_fail(c->ctx, err);
  if (c->ctx->verbose >= 0)
    printf("gpujit server stopped\n");
  return EXIT_OK;
}

static int server_start(server_cmd *c)
{
  char why[512], path[PATH_MAX];
  int err, pid;
  if (c->autostart && gpujit_server_autostart_set(&c->so, 1) < 0)
    cli_warn(c->ctx, "%s", gpujit_error_last());
  switch (cli_server_current(&c->so)) {
  case 1:
    if (c->ctx->verbose >= 0)
      printf("a gpujit server already runs for this cache\n");
    return EXIT_OK;
  case 0:
    if (c->ctx->verbose >= 0)
      printf("a gpujit server of another build or toolkit runs for this cache: replacing it\n");
    if ((err = gpujit_server_stop(&c->so)) < 0)
      return cli_fail(c->ctx, err);
    break;
  default:
    break;
  }
  if ((pid = cli_server_spawn(&c->so, true, why, sizeof(why))) < 0) {
    fprintf(stderr, "gpujit: error: %s\n", why);
    return EXIT_FAILURE_;
  }
  if (gpujit_server_socket_path(path, sizeof(path), &c->so) < 0)
    path[0] = '\0';
  if (c->ctx->verbose >= 0)
    printf("gpujit server started (pid %d, socket %s)\n", pid, path);
  return EXIT_OK;
}

static const struct {
  const char *name;
  int (*fn)(server_cmd *c);
} server_verbs[] = {{"start", server_start}, {"stop", server_stop}, {"status", server_status}, {"run", server_run}};

int cmd_server(cli_ctx *ctx, int argc, char **argv)
{
  server_cmd c = {.ctx = ctx, .so = GPUJIT_SERVER_OPTIONS_INIT, .ready_fd = -1};
  cli_args a = {.argc = argc, .i = 2, .argv = argv, .cmd = "server"};
  const char *verb = argc > 1 ? argv[1] : NULL;
  int (*fn)(server_cmd *) = NULL;
  bool help = false;
  int rc;
  if (!verb || !strcmp(verb, "-h") || !strcmp(verb, "--help")) {
    server_help();
    return verb ? EXIT_OK : EXIT_USAGE;
  }
  for (size_t i = 0; i < sizeof(server_verbs) / sizeof(server_verbs[0]); i++)
    if (!strcmp(verb, server_verbs[i].name))
      fn = server_verbs[i].fn;
  if (!fn)
    return cli_usage_error(ctx, "server", "unknown server command '%s' (start, stop, status, run)", verb);
  for (; a.i < argc; a.i++) {
    const char *arg = argv[a.i];
    if ((rc = parse_one(&c, &a, &help)) != EXIT_OK)
      return rc;
    if (help) {
      server_help();
      return EXIT_OK;
    }
    if (a.failed)
      return cli_usage_error(ctx, "server", "option '%s' needs a value", arg);
  }
  return fn(&c);
}
