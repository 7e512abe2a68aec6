/* `gpujit run`: build, load and run kernels under the timing layer; compile vs execute report.
 * The command is its phases in order — options, plan, build, then the execute half (run_exec.c):
 * device, load, buffers, warm-up, measure, copy-back, timing — and the report and trace. */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run.h"

/* ---- options ---------------------------------------------------------------------------- */

typedef enum opt_kind { OPT_HELP, OPT_STR, OPT_INT, OPT_FLAG, OPT_ARG, OPT_NOISE, OPT_TIMEOUT, OPT_TIMER } opt_kind;

typedef struct run_option {
  const char *name;
  opt_kind kind;
  size_t field; /* offsetof(run_opts, ...) for OPT_STR, OPT_INT, OPT_FLAG */
  long min, max; /* OPT_INT's range */
  const char *hint; /* OPT_INT: after "invalid --x 'V'" */
} run_option;

/* In the order they are tried (the nearest name to an unknown option is looked for among them). */
static const run_option options[] = {
    {"-h", OPT_HELP, 0, 0, 0, NULL},
    {"--help", OPT_HELP, 0, 0, 0, NULL},
    {"--kernel", OPT_STR, offsetof(run_opts, kernel), 0, 0, NULL},
    {"--grid", OPT_STR, offsetof(run_opts, grid), 0, 0, NULL},
    {"--block", OPT_STR, offsetof(run_opts, block), 0, 0, NULL},
    {"--shared", OPT_INT, offsetof(run_opts, shared), 0, 1 << 30, ""},
    {"--arg", OPT_ARG, 0, 0, 0, NULL},
    {"--launch", OPT_STR, offsetof(run_opts, launch_file), 0, 0, NULL},
    {"--warmup", OPT_INT, offsetof(run_opts, warmup), 0, 1000000, ""},
    {"--repeat", OPT_INT, offsetof(run_opts, repeat), 1, 10000000, " (at least 1)"},
    {"--device", OPT_INT, offsetof(run_opts, device), 0, 1024, ""},
    {"--noise", OPT_NOISE, 0, 0, 0, NULL},
    {"--timeout", OPT_TIMEOUT, 0, 0, 0, NULL},
    {"--bench", OPT_FLAG, offsetof(run_opts, bench), 0, 0, NULL},
    {"--l2-flush", OPT_FLAG, offsetof(run_opts, l2_flush), 0, 0, NULL},
    {"--timer", OPT_TIMER, 0, 0, 0, NULL},
    {"--timeline", OPT_FLAG, offsetof(run_opts, timeline), 0, 0, NULL},
    {"--ncu-command", OPT_FLAG, offsetof(run_opts, ncu), 0, 0, NULL},
};

static bool parse_timer(const char *s, gpujit_timer_source *out)
{
  for (int i = GPUJIT_TIMER_EVENTS; i <= GPUJIT_TIMER_CUPTI_CONCURRENT; i++)
    if (!strcmp(s, gpujit_timer_source_name((gpujit_timer_source)i))) {
      *out = (gpujit_timer_source)i;
      return true;
    }
  return false;
}

/* A fraction in (0, 1) or a positive number of seconds: false when the value is not one. */
static bool parse_real(const char *s, double *out, bool fraction)
{
  char *end;
  *out = strtod(s, &end);
  return !*end && *out > 0 && (!fraction || *out < 1);
}

/* Apply one option of the table, its value (if any) in a->value. Returns an exit code. */
static int apply_option(run_cmd *c, const run_option *o, cli_args *a)
{
  char *field = (char *)&c->o + o->field;
  switch (o->kind) {
  case OPT_STR:
    *(const char **)(void *)field = a->value;
    return EXIT_OK;
  case OPT_FLAG:
    *(bool *)(void *)field = true;
    return EXIT_OK;
  case OPT_INT:
    if (!a->failed && !cli_parse_int(a->value, o->min, o->max, (long *)(void *)field))
      return cli_usage_error(c->ctx, "run", "invalid %s '%s'%s", o->name, a->value, o->hint);
    return EXIT_OK;
  case OPT_ARG:
    if (a->failed)
      return EXIT_OK; /* "needs a value" */
    if (c->o.nargs == MAX_ARGS)
      return cli_usage_error(c->ctx, "run", "at most %d --arg", MAX_ARGS);
    if (gpujit_arg_spec_parse(&c->o.args[c->o.nargs++], a->value) < 0)
      return cli_usage_error(c->ctx, "run", "%s", gpujit_error_last());
    return EXIT_OK;
  case OPT_NOISE:
    if (!a->failed && !parse_real(a->value, &c->o.noise, true))
      return cli_usage_error(c->ctx, "run", "invalid --noise '%s' (a fraction, e.g. 0.005)", a->value);
    return EXIT_OK;
  case OPT_TIMEOUT:
    if (!a->failed && !parse_real(a->value, &c->o.timeout, false))
      return cli_usage_error(c->ctx, "run", "invalid --timeout '%s' (seconds)", a->value);
    return EXIT_OK;
  case OPT_TIMER:
    if (a->failed || !parse_timer(a->value, &c->o.timer))
      return cli_usage_error(c->ctx, "run", "invalid --timer '%s' (events, cupti or cupti-concurrent)",
                             a->value ? a->value : "");
    return EXIT_OK;
  case OPT_HELP:
    break;
  }
  return EXIT_OK;
}

/* One argument: an option of the table, a module option, or an error. *help: -h was given. */
static int parse_one(run_cmd *c, cli_args *a, bool *help)
{
  int m_r;
  if (cli_end_of_options(a))
    return EXIT_OK;
  for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++)
    if (cli_opt(a, options[i].name, options[i].kind != OPT_HELP && options[i].kind != OPT_FLAG)) {
      *help = options[i].kind == OPT_HELP;
      return *help ? EXIT_OK : apply_option(c, &options[i], a);
    }
  if ((m_r = cli_module_opt(c->ctx, a, &c->ma)) != 0)
    return m_r < 0 ? -m_r : EXIT_OK;
  return cli_unknown_option(c->ctx, a, "run");
}

/* Options, the command's own and the module's. *stop: nothing more to do (--help). */
static int run_parse(run_cmd *c, bool *stop)
{
  cli_args a = {.argc = c->argc, .i = 1, .argv = c->argv, .cmd = "run"};
  int rc;
  for (; a.i < c->argc; a.i++) {
    const char *arg = c->argv[a.i];
    if ((rc = parse_one(c, &a, stop)) != EXIT_OK)
      return rc;
    if (*stop) {
      run_help();
      return EXIT_OK;
    }
    if (a.failed)
      return cli_usage_error(c->ctx, "run", "option '%s' needs a value", arg);
  }
  return EXIT_OK;
}

/* ---- plan and build --------------------------------------------------------------------- */

/* One launch from the command line, or a launch file. */
static int run_plan(run_cmd *c)
{
  const run_opts *o = &c->o;
  launch *l = &c->r.launches[0];
  if (o->launch_file) {
    if (o->kernel || o->grid || o->block || o->nargs)
      return cli_usage_error(c->ctx, "run", "--launch excludes --kernel, --grid, --block and --arg");
    return load_launch_file(c->ctx, &c->r, o->launch_file);
  }
  if (!o->grid || !o->block)
    return cli_usage_error(c->ctx, "run", "give --grid and --block (or --launch SPEC.json)");
  if (!parse_dims(o->grid, l->grid) || !parse_dims(o->block, l->block)) {
    bool grid_ok = parse_dims(o->grid, l->grid);
    return cli_usage_error(c->ctx, "run", "invalid --%s '%s': expected X[,Y,Z] of positive numbers",
                           grid_ok ? "block" : "grid", grid_ok ? o->block : o->grid);
  }
  snprintf(l->kernel, sizeof(l->kernel), "%s", o->kernel ? o->kernel : "");
  l->shared = (unsigned)o->shared;
  memcpy(l->args, o->args, o->nargs * sizeof(o->args[0]));
  l->nargs = o->nargs;
  c->r.nlaunches = 1;
  return EXIT_OK;
}

/* Build the module; the one kernel when none was named; the plan checked against the module. */
static int run_build(run_cmd *c)
{
  int rc;
  if ((rc = cli_module_prepare(c->ctx, &c->ma, "run", true)) != EXIT_OK ||
      (rc = cli_module_build(c->ctx, &c->ma, &c->m)) != EXIT_OK)
    return rc;
  if (!c->o.launch_file && !c->o.kernel) {
    if (gpujit_module_kernel_count(c->m) != 1)
      return cli_usage_error(c->ctx, "run", "the module has %zu kernels: name one with --kernel",
                             gpujit_module_kernel_count(c->m));
    snprintf(c->r.launches[0].kernel, sizeof(c->r.launches[0].kernel), "%s", gpujit_module_kernel(c->m, 0));
  }
  return validate_plan(c->ctx, &c->r, c->m);
}

/* --ncu-command: the command that would run (this one, under ncu) instead of running it. */
static int run_ncu(run_cmd *c)
{
  char **full = calloc((size_t)c->argc + 2, sizeof(*full)), self[4096];
  const char *launched[MAX_LAUNCHES];
  ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (!full) {
    fprintf(stderr, "%s: run: out of memory\n", c->ctx->prog);
    return EXIT_FAILURE_;
  }
  self[len > 0 ? len : 0] = '\0';
  full[0] = len > 0 ? self : "gpujit";
  for (int i = 0; i < c->argc; i++)
    full[i + 1] = c->argv[i];
  for (size_t i = 0; i < c->r.nlaunches; i++) /* symbols, resolved by validate_plan */
    launched[i] = c->r.launches[i].kernel;
  cli_print_ncu_commands(c->m, c->ma.cache, c->argc + 1, full, launched, c->r.nlaunches);
  free(full);
  return EXIT_OK;
}

/* ---- report and trace ------------------------------------------------------------------- */

static int run_emit_json(run_cmd *c)
{
  int rc;
  if (!c->ma.json)
    return EXIT_OK;
  compile_report(c->m, c->mj, c->ma.cache != NULL, c->load_ms, c->first_ms);
  rc = cli_json_emit(c->ctx, c->out, "gpujit-run", c->ma.json_file);
  c->out = NULL;
  return rc;
}

static int run_write_trace(run_cmd *c)
{
  char path[4200];
  int err;
  if (!c->ma.want_trace)
    return EXIT_OK;
  if (c->ma.trace_arg)
    snprintf(path, sizeof(path), "%s", c->ma.trace_arg);
  else
    snprintf(path, sizeof(path), "%s.trace.json", gpujit_module_name(c->m));
  gpujit_trace_set_meta(c->ma.trace, "module", gpujit_module_name(c->m));
  if ((err = gpujit_trace_write(c->ma.trace, path)) < 0)
    return cli_fail(c->ctx, err);
  if (!c->ma.json && c->ctx->verbose >= 0)
    printf("trace %s\n", path);
  return EXIT_OK;
}

/* The execute half, then the report: an unwritable --json=FILE still lets the trace be written. */
static int run_execute(run_cmd *c)
{
  static int (*const phases[])(run_cmd *) = {run_open_device, run_load,    run_buffers,      run_warm,
                                             run_measure,     run_copy_back, run_finish_timing};
  int rc, trace_rc;
  phase_times(c->m, c->phases);
  for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++)
    if ((rc = phases[i](c)) != EXIT_OK)
      return rc;
  rc = run_emit_json(c);
  trace_rc = run_write_trace(c);
  return trace_rc != EXIT_OK ? trace_rc : rc;
}

static void run_cmd_free(run_cmd *c)
{
  if (c->timer)
    gpujit_timer_stop(c->timer, NULL);
  free(c->res);
  gpujit_region_report_free(c->regions);
  for (size_t i = 0; i < c->r.nbuffers; i++)
    if (c->r.buffers[i].ptr)
      gpujit_mem_free(c->r.dev, c->r.buffers[i].ptr);
  gpujit_loaded_free(c->loaded);
  gpujit_device_free(c->r.dev);
  gpujit_module_free(c->m);
  cli_module_args_free(&c->ma);
  cJSON_Delete(c->out);
  free(c);
}

int cmd_run(cli_ctx *ctx, int argc, char **argv)
{
  run_cmd *c = calloc(1, sizeof(*c));
  bool stop = false;
  int rc;
  if (!c) {
    fprintf(stderr, "%s: run: out of memory\n", ctx->prog);
    return EXIT_FAILURE_;
  }
  c->ctx = ctx, c->argc = argc, c->argv = argv;
  c->o.warmup = 3, c->o.repeat = 20, c->o.device = -1, c->o.noise = 0.005, c->o.timeout = 15;
  c->o.timer = GPUJIT_TIMER_EVENTS;
  c->load_ms = -1, c->first_ms = -1;
  c->out = cJSON_CreateObject();
  c->mj = cJSON_AddObjectToObject(c->out, "module");
  cli_module_args_init(&c->ma);
  if ((rc = run_parse(c, &stop)) == EXIT_OK && !stop && (rc = run_plan(c)) == EXIT_OK &&
      (rc = run_build(c)) == EXIT_OK)
    rc = c->o.ncu ? run_ncu(c) : run_execute(c);
  run_cmd_free(c);
  return rc;
}
