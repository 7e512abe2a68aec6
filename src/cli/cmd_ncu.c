/* `gpujit ncu hotspots`: a per-line hot-spot table from ncu's --page source CSV. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void ncu_help(void)
{
  printf("usage: gpujit ncu hotspots [--metric NAME] [--kernel NAME] [--file TEXT] [--top N] [--json[=FILE]]\n"
         "                            REPORT.ncu-rep | SOURCE.csv\n\n"
         "A table of the CUDA source lines that cost the most (default metric: \"%s\"),\n"
         "from a report (ncu exports its source page: ncu is found through $GPUJIT_NCU, PATH or\n"
         "the toolkit) or from an export of it:\n"
         "  %s > SOURCE.csv\n"
         "ncu's default source export (or --print-source sass) has no CUDA lines: the table is\n"
         "then by SASS instruction. Exports without metrics (--print-source cuda or ptx) and other\n"
         "pages are refused with the command that makes a good one.\n"
         "--file keeps the lines of files whose path contains TEXT (e.g. your own .cu).\n"
         "'-' reads standard input.\n",
         GPUJIT_NCU_DEFAULT_METRIC, GPUJIT_NCU_SOURCE_COMMAND);
}

static char *slurp(const char *path, size_t *len)
{
  FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
  char *buf = NULL;
  size_t cap = 0, n;
  *len = 0;
  if (!f)
    return NULL;
  for (;;) {
    if (*len + 65536 + 1 > cap) {
      char *p = realloc(buf, cap = (*len + 65536) * 2);
      if (!p) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = p;
    }
    n = fread(buf + *len, 1, 65536, f);
    *len += n;
    if (n == 0)
      break;
  }
  if (buf)
    buf[*len] = '\0';
  if (f != stdin)
    fclose(f);
  return buf;
}

int cmd_ncu(cli_ctx *ctx, int argc, char **argv)
{
  cli_args a = {.argc = argc, .i = 2, .argv = argv, .cmd = "ncu"};
  const char *metric = NULL, *kernel = NULL, *path = NULL, *file = NULL;
  gpujit_ncu_hotspots *h = NULL;
  bool json = false;
  const char *json_file = NULL;
  long top = 15;
  char *csv;
  size_t len;
  int err, rc = EXIT_OK;

  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    ncu_help();
    return argc < 2 ? EXIT_USAGE : EXIT_OK;
  }
  if (strcmp(argv[1], "hotspots") != 0)
    return cli_usage_error(ctx, "ncu", "unknown subcommand '%s' (expected 'hotspots')", argv[1]);
  for (; a.i < argc; a.i++) {
    const char *arg = argv[a.i];
    if (cli_end_of_options(&a)) {
      continue;
    } else if (cli_opt(&a, "-h", false) || cli_opt(&a, "--help", false)) {
      ncu_help();
      return EXIT_OK;
    } else if (cli_opt(&a, "--metric", true)) {
      metric = a.value;
    } else if (cli_opt(&a, "--kernel", true)) {
      kernel = a.value;
    } else if (cli_opt(&a, "--file", true)) {
      file = a.value;
    } else if (cli_opt(&a, "--top", true)) {
      if (!a.failed && !cli_parse_int(a.value, 0, 1000000, &top))
        return cli_usage_error(ctx, "ncu", "invalid --top '%s'", a.value);
    } else if (cli_json_opt(&a, &json, &json_file)) {
    } else if (cli_is_option(&a)) {
      return cli_unknown_option(ctx, &a, "ncu");
    } else if (!path) {
      path = arg;
    } else {
      return cli_usage_error(ctx, "ncu", "one CSV file at a time ('%s' is extra)", arg);
    }
    if (a.failed)
      return cli_usage_error(ctx, "ncu", "option '%s' needs a value", arg);
  }
  if (!path)
    return cli_usage_error(ctx, "ncu", "no report or CSV file given");
  if (!(csv = slurp(path, &len))) {
    fprintf(stderr, "%s: error: %s: %s\n", ctx->prog, path, strerror(errno ? errno : ENOMEM));
    return EXIT_IO;
  }
  /* A report (its magic, or its name): let ncu export the page the table needs. */
  if ((len >= 4 && !memcmp(csv, "NVR\0", 4)) ||
      (strlen(path) > 8 && !strcmp(path + strlen(path) - 8, ".ncu-rep"))) {
    free(csv);
    if (!strcmp(path, "-"))
      return cli_usage_error(ctx, "ncu", "a report is read from a file, not standard input");
    if ((err = gpujit_ncu_hotspots_from_report(&h, path, metric, kernel)) < 0)
      return cli_fail(ctx, err);
  } else {
    err = gpujit_ncu_hotspots_parse(&h, csv, len, metric, kernel);
    free(csv);
    if (err < 0) {
      fprintf(stderr, "%s: error: %s: %s\n", ctx->prog, path, gpujit_error_last());
      return cli_exit_code(err);
    }
  }
  if (json) {
    long shown = 0;
    cJSON *root = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(root, "lines");
    cJSON_AddStringToObject(root, "metric", gpujit_ncu_hotspots_metric(h));
    cJSON_AddStringToObject(root, "rows",
                            gpujit_ncu_hotspots_rows(h) == GPUJIT_NCU_BY_INSTRUCTION ? "instruction" : "line");
    for (size_t i = 0; i < gpujit_ncu_hotspots_count(h) && (top == 0 || shown < top); i++) {
      const gpujit_ncu_line *l = gpujit_ncu_hotspots_line(h, i);
      cJSON *o;
      if (file && !strstr(l->file, file))
        continue;
      shown++;
      o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "file", l->file);
      cJSON_AddStringToObject(o, "function", l->function);
      cJSON_AddNumberToObject(o, "line", l->line);
      cJSON_AddNumberToObject(o, "value", l->value);
      cJSON_AddNumberToObject(o, "share", l->share);
      cJSON_AddStringToObject(o, "source", l->source);
      if (l->address)
        cJSON_AddStringToObject(o, "address", l->address);
      cJSON_AddItemToArray(arr, o);
    }
    rc = cli_json_emit(ctx, root, "gpujit-ncu-hotspots", json_file);
  } else {
    long shown = 0;
    bool by_insn = gpujit_ncu_hotspots_rows(h) == GPUJIT_NCU_BY_INSTRUCTION;
    if (by_insn)
      printf("%s, by SASS instruction (this export has no CUDA lines; %s gives them)\n",
             gpujit_ncu_hotspots_metric(h), GPUJIT_NCU_SOURCE_COMMAND);
    else
      printf("%s, by CUDA source line\n", gpujit_ncu_hotspots_metric(h));
    printf("%10s %6s  %-28s %s\n", "value", "share", by_insn ? "kernel@address" : "file:line", "source");
    for (size_t i = 0; i < gpujit_ncu_hotspots_count(h) && (top == 0 || shown < top); i++) {
      const gpujit_ncu_line *l = gpujit_ncu_hotspots_line(h, i);
      const char *base = strrchr(l->file, '/');
      if (file && !strstr(l->file, file))
        continue;
      shown++;
      char where[300];
      const char *src = l->source;
      while (*src == ' ' || *src == '\t')
        src++;
      if (l->address)
        snprintf(where, sizeof(where), "%s@%s", l->function, l->address);
      else
        snprintf(where, sizeof(where), "%s:%d", base ? base + 1 : l->file, l->line);
      printf("%10.0f %5.1f%%  %-28s %s\n", l->value, l->share * 100, where, src);
    }
  }
  gpujit_ncu_hotspots_free(h);
  return rc;
}
