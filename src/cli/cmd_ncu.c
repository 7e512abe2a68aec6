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

typedef struct ncu_cmd {
  const char *metric, *kernel, *path, *file; /* --file: only lines of files whose path holds it */
  bool json;
  const char *json_file;
  long top; /* 0: every line */
} ncu_cmd;

static int parse(cli_ctx *ctx, int argc, char **argv, ncu_cmd *n, bool *help)
{
  cli_args a = {.argc = argc, .i = 2, .argv = argv, .cmd = "ncu"};
  for (; a.i < argc; a.i++) {
    const char *arg = argv[a.i];
    if (cli_end_of_options(&a)) {
      continue;
    } else if (cli_opt(&a, "-h", false) || cli_opt(&a, "--help", false)) {
      *help = true;
      return EXIT_OK;
    } else if (cli_opt(&a, "--metric", true)) {
      n->metric = a.value;
    } else if (cli_opt(&a, "--kernel", true)) {
      n->kernel = a.value;
    } else if (cli_opt(&a, "--file", true)) {
      n->file = a.value;
    } else if (cli_opt(&a, "--top", true)) {
      if (!a.failed && !cli_parse_int(a.value, 0, 1000000, &n->top))
        return cli_usage_error(ctx, "ncu", "invalid --top '%s'", a.value);
    } else if (cli_json_opt(&a, &n->json, &n->json_file)) {
    } else if (cli_is_option(&a)) {
      return cli_unknown_option(ctx, &a, "ncu");
    } else if (!n->path) {
      n->path = arg;
    } else {
      return cli_usage_error(ctx, "ncu", "one CSV file at a time ('%s' is extra)", arg);
    }
    if (a.failed)
      return cli_usage_error(ctx, "ncu", "option '%s' needs a value", arg);
  }
  return n->path ? EXIT_OK : cli_usage_error(ctx, "ncu", "no report or CSV file given");
}

/* The table, from a report (ncu exports the page it needs) or from a CSV export. */
static int load(cli_ctx *ctx, const ncu_cmd *n, gpujit_ncu_hotspots **h)
{
  size_t len;
  char *csv = slurp(n->path, &len);
  int err;
  if (!csv) {
    fprintf(stderr, "%s: error: %s: %s\n", ctx->prog, n->path, strerror(errno ? errno : ENOMEM));
    return EXIT_IO;
  }
  /* A report (its magic, or its name): let ncu export the page the table needs. */
  if ((len >= 4 && !memcmp(csv, "NVR\0", 4)) ||
      (strlen(n->path) > 8 && !strcmp(n->path + strlen(n->path) - 8, ".ncu-rep"))) {
    free(csv);
    if (!strcmp(n->path, "-"))
      return cli_usage_error(ctx, "ncu", "a report is read from a file, not standard input");
    if ((err = gpujit_ncu_hotspots_from_report(h, n->path, n->metric, n->kernel)) < 0)
      return cli_fail(ctx, err);
    return EXIT_OK;
  }
  err = gpujit_ncu_hotspots_parse(h, csv, len, n->metric, n->kernel);
  free(csv);
  if (err < 0) {
    fprintf(stderr, "%s: error: %s: %s\n", ctx->prog, n->path, gpujit_error_last());
    return cli_exit_code(err);
  }
  return EXIT_OK;
}

/* The i-th line shown (--file, --top): NULL past the last. */
static const gpujit_ncu_line *shown_line(const ncu_cmd *n, const gpujit_ncu_hotspots *h, size_t *i, long *shown)
{
  for (; *i < gpujit_ncu_hotspots_count(h) && (n->top == 0 || *shown < n->top); (*i)++) {
    const gpujit_ncu_line *l = gpujit_ncu_hotspots_line(h, *i);
    if (n->file && !strstr(l->file, n->file))
      continue;
    (*shown)++, (*i)++;
    return l;
  }
  return NULL;
}

static int emit_json(cli_ctx *ctx, const ncu_cmd *n, const gpujit_ncu_hotspots *h)
{
  cJSON *root = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(root, "lines");
  const gpujit_ncu_line *l;
  size_t i = 0;
  long shown = 0;
  cJSON_AddStringToObject(root, "metric", gpujit_ncu_hotspots_metric(h));
  cJSON_AddStringToObject(root, "rows", gpujit_ncu_hotspots_rows(h) == GPUJIT_NCU_BY_INSTRUCTION ? "instruction" : "line");
  while ((l = shown_line(n, h, &i, &shown))) {
    cJSON *o = cJSON_CreateObject();
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
  return cli_json_emit(ctx, root, "gpujit-ncu-hotspots", n->json_file);
}

static void print_table(const ncu_cmd *n, const gpujit_ncu_hotspots *h)
{
  bool by_insn = gpujit_ncu_hotspots_rows(h) == GPUJIT_NCU_BY_INSTRUCTION;
  const gpujit_ncu_line *l;
  size_t i = 0;
  long shown = 0;
  if (by_insn)
    printf("%s, by SASS instruction (this export has no CUDA lines; %s gives them)\n", gpujit_ncu_hotspots_metric(h),
           GPUJIT_NCU_SOURCE_COMMAND);
  else
    printf("%s, by CUDA source line\n", gpujit_ncu_hotspots_metric(h));
  printf("%10s %6s  %-28s %s\n", "value", "share", by_insn ? "kernel@address" : "file:line", "source");
  while ((l = shown_line(n, h, &i, &shown))) {
    const char *base = strrchr(l->file, '/'), *src = l->source;
    char where[300];
    while (*src == ' ' || *src == '\t')
      src++;
    if (l->address)
      snprintf(where, sizeof(where), "%s@%s", l->function, l->address);
    else
      snprintf(where, sizeof(where), "%s:%d", base ? base + 1 : l->file, l->line);
    printf("%10.0f %5.1f%%  %-28s %s\n", l->value, l->share * 100, where, src);
  }
}

int cmd_ncu(cli_ctx *ctx, int argc, char **argv)
{
  ncu_cmd n = {.top = 15};
  gpujit_ncu_hotspots *h = NULL;
  bool help = false;
  int rc;
  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    ncu_help();
    return argc < 2 ? EXIT_USAGE : EXIT_OK;
  }
  if (strcmp(argv[1], "hotspots") != 0)
    return cli_usage_error(ctx, "ncu", "unknown subcommand '%s' (expected 'hotspots')", argv[1]);
  if ((rc = parse(ctx, argc, argv, &n, &help)) != EXIT_OK || help) {
    if (help)
      ncu_help();
    return rc;
  }
  if ((rc = load(ctx, &n, &h)) != EXIT_OK)
    return rc;
  if (n.json)
    rc = emit_json(ctx, &n, h);
  else
    print_table(&n, h);
  gpujit_ncu_hotspots_free(h);
  return rc;
}
