/* `gpujit trace analyze`: aggregate compile-time traces across modules. */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void trace_help(void)
{
  printf("usage: gpujit trace analyze [--top N] [--json[=FILE]] TRACE.json|DIR...\n"
         "       gpujit trace diff [options] BASE NEW   (gpujit trace diff --help)\n\n"
         "Aggregate gpujit traces, or raw NVRTC/nvcc --fdevice-time-trace files: time per\n"
         "phase, the most expensive headers, template instantiations (grouped by template and\n"
         "individually), functions (IR generation, optimization, ptxas), and modules.\n\n"
         "options:\n"
         "  --top N        rows per table (default 10; 0 for all)\n"
         "  --json[=FILE]  print JSON (docs/json.md), or write it to FILE\n"
         "  -h, --help     this help\n");
}

static void print_table(const gpujit_trace_analysis *an, gpujit_trace_table t, size_t top)
{
  size_t n = gpujit_trace_analysis_count(an, t);
  double total = 0;
  for (size_t i = 0; i < n; i++)
    total += gpujit_trace_analysis_row(an, t, i)->total_us;
  printf("\n%s (%zu)\n", gpujit_trace_table_name(t), n);
  if (!n) {
    printf("  (none)\n");
    return;
  }
  printf("  %10s %10s %6s  %s\n", "total ms", "max ms", "count", "name");
  for (size_t i = 0; i < n && (top == 0 || i < top); i++) {
    const gpujit_trace_stat *r = gpujit_trace_analysis_row(an, t, i);
    printf("  %10.3f %10.3f %6llu  %s\n", r->total_us / 1e3, r->max_us / 1e3,
           (unsigned long long)r->count, r->name);
  }
  if (top && n > top)
    printf("  … %zu more\n", n - top);
  (void)total;
}

static int emit_json(cli_ctx *ctx, const gpujit_trace_analysis *an, size_t top, const char *file)
{
  cJSON *root = cJSON_CreateObject(), *tables;
  size_t files, events;
  gpujit_trace_analysis_totals(an, &files, &events);
  cJSON_AddNumberToObject(root, "files", (double)files);
  cJSON_AddNumberToObject(root, "events", (double)events);
  {
    size_t unmeasured, recorded = gpujit_trace_analysis_recorded(an, &unmeasured);
    cJSON_AddNumberToObject(root, "recorded", (double)recorded);
    cJSON_AddNumberToObject(root, "unmeasured", (double)unmeasured);
  }
  /* the keys of gpujit.trace.analyze() and of trace diff's tables: milliseconds, under "tables" */
  tables = cJSON_AddObjectToObject(root, "tables");
  for (int t = 0; t < GPUJIT_TRACE_TABLE_COUNT; t++) {
    cJSON *arr = cJSON_AddArrayToObject(tables, gpujit_trace_table_name((gpujit_trace_table)t));
    size_t n = gpujit_trace_analysis_count(an, (gpujit_trace_table)t);
    for (size_t i = 0; i < n && (top == 0 || i < top); i++) {
      const gpujit_trace_stat *r = gpujit_trace_analysis_row(an, (gpujit_trace_table)t, i);
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "name", r->name);
      cJSON_AddNumberToObject(o, "total_ms", r->total_us / 1e3);
      cJSON_AddNumberToObject(o, "max_ms", r->max_us / 1e3);
      cJSON_AddNumberToObject(o, "count", (double)r->count);
      cJSON_AddItemToArray(arr, o);
    }
  }
  return cli_json_emit(ctx, root, "gpujit-trace-analysis", file);
}

int cmd_trace(cli_ctx *ctx, int argc, char **argv)
{
  cli_args a = {.argc = argc, .i = 2, .argv = argv, .cmd = "trace"};
  gpujit_trace_analysis *an = NULL;
  bool json = false;
  const char *json_file = NULL;
  long top = 10;
  int err, rc = EXIT_OK, nfiles = 0;

  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    trace_help();
    return argc < 2 ? EXIT_USAGE : EXIT_OK;
  }
  if (strcmp(argv[1], "diff") == 0)
    return cmd_trace_diff(ctx, argc, argv);
  if (strcmp(argv[1], "analyze") != 0)
    return cli_usage_error(ctx, "trace", "unknown subcommand '%s' (expected 'analyze' or 'diff')", argv[1]);
  if ((err = gpujit_trace_analysis_create(&an)) < 0)
    return cli_fail(ctx, err);
  for (; a.i < argc; a.i++) {
    const char *arg = argv[a.i];
    if (cli_end_of_options(&a)) {
      continue;
    } else if (cli_opt(&a, "-h", false) || cli_opt(&a, "--help", false)) {
      trace_help();
      goto done;
    } else if (cli_opt(&a, "--top", true)) {
      if (a.failed || !cli_parse_int(a.value, 0, 1000000, &top)) {
        rc = cli_usage_error(ctx, "trace", "invalid --top '%s': expected a number >= 0",
                             a.value ? a.value : "");
        goto done;
      }
    } else if (cli_json_opt(&a, &json, &json_file)) {
      if (a.failed) {
        rc = cli_usage_error(ctx, "trace", "option '%s' needs a value", arg);
        goto done;
      }
    } else if (cli_is_option(&a)) {
      rc = cli_unknown_option(ctx, &a, "trace");
      goto done;
    } else {
      nfiles++;
      if ((err = gpujit_trace_analysis_add_path(an, arg, NULL)) < 0) {
        rc = cli_fail(ctx, err);
        goto done;
      }
    }
  }
  if (!nfiles) {
    rc = cli_usage_error(ctx, "trace", "no trace files given");
    goto done;
  }
  if (json) {
    rc = emit_json(ctx, an, (size_t)top, json_file);
  } else {
    size_t files, events;
    gpujit_trace_analysis_totals(an, &files, &events);
    size_t unmeasured, recorded = gpujit_trace_analysis_recorded(an, &unmeasured);
    printf("%zu trace%s, %zu events\n", files, files == 1 ? "" : "s", events);
    if (recorded)
      printf("%zu cache hit%s counted with the compile profile recorded when the entry was built\n", recorded,
             recorded == 1 ? "" : "s");
    if (unmeasured)
      printf("%zu cache hit%s without a recorded profile (entries built without --time-trace): compile cost unknown\n",
             unmeasured, unmeasured == 1 ? "" : "s");
    for (int t = 0; t < GPUJIT_TRACE_TABLE_COUNT; t++)
      print_table(an, (gpujit_trace_table)t, (size_t)top);
  }
done:
  gpujit_trace_analysis_free(an);
  return rc;
}
