/* `gpujit trace diff`: compare compile-time traces, and gate CI on the result. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void diff_help(void)
{
  printf("usage: gpujit trace diff [options] BASE NEW\n"
         "       gpujit trace diff [options] --base PATH... --new PATH...\n\n"
         "Compare compile-time traces: BASE (say, from the main branch) against NEW. Each side is\n"
         "a trace, a directory of traces (every *.json beneath it: project traces, one trace per\n"
         "module, repeated builds), or several --base/--new paths. Modules are matched by name;\n"
         "phases, headers, templates, instantiations and functions by name across modules.\n"
         "A module traced several times on a side is a set of samples: its value is their median,\n"
         "its noise their range, and a change within the measured noise is no change. Cache hits\n"
         "count with the compile profile their entry recorded (build with --time-trace).\n\n"
         "options:\n"
         "  --base PATH         a base trace or directory (repeatable)\n"
         "  --new PATH          a new trace or directory (repeatable)\n"
         "  --fail-above PCT    gate: fail when a module, or the whole compile time, is slower by\n"
         "                      more than PCT percent ...\n"
         "  --min-ms MS         ... and by at least MS milliseconds (default 0)\n"
         "  --top N             rows per table (default 10; 0 for all)\n"
         "  --json[=FILE]       print JSON (docs/json.md), or write it to FILE\n"
         "  --markdown          print Markdown (a pull-request comment)\n"
         "  -h, --help          this help\n\n"
         "exit codes:\n"
         "  0  no regression past the gate (or no gate asked for)\n"
         "  8  a regression past --fail-above / --min-ms\n"
         "  2  usage error; 4 unreadable file; 5 a trace that is malformed or holds no compile\n");
}

typedef enum out_format { TEXT, JSON, MARKDOWN } out_format;

typedef struct side_info {
  gpujit_trace_analysis *an;
  size_t traces, recorded, unmeasured, modules;
} side_info;

static const char *confidence(const gpujit_trace_diff_verdict *v, char *why, size_t n)
{
  if (v->min_samples <= 1) {
    snprintf(why, n, "one sample of a module on a side: the noise was not measured (give each side several traces, "
                     "e.g. three builds, to measure it)");
    return "low";
  }
  if (v->failed && v->worst_p > 0.05) {
    snprintf(why, n, "%u+ samples a side, but a regression this size arises by chance with p = %.3f", v->min_samples,
             v->worst_p);
    return "medium";
  }
  if (v->failed) {
    snprintf(why, n, "%u+ samples a side; every regression beyond the measured noise, p <= %.3f", v->min_samples,
             v->worst_p);
    return "high";
  }
  snprintf(why, n, "%u+ samples a side; no change beyond the measured noise and the gate", v->min_samples);
  return v->min_samples >= 3 ? "high" : "medium";
}

static const char *result_word(const gpujit_trace_diff_verdict *v)
{
  return !v->gated ? "no gate" : v->failed ? "FAIL" : "pass";
}

static void fmt_pct(char *buf, size_t n, const gpujit_trace_diff_row *r)
{
  if (r->change == GPUJIT_TRACE_ADDED)
    snprintf(buf, n, "new");
  else if (r->change == GPUJIT_TRACE_REMOVED)
    snprintf(buf, n, "gone");
  else if (r->change == GPUJIT_TRACE_UNMEASURED)
    snprintf(buf, n, "?");
  else
    snprintf(buf, n, "%+.1f%%", r->delta_pct);
}

static void fmt_samples(char *buf, size_t n, const gpujit_trace_diff_row *r)
{
  snprintf(buf, n, "%u/%u", r->base_samples, r->new_samples);
}

static void text_row(const gpujit_trace_diff_row *r, bool samples)
{
  char pct[32], smp[32];
  fmt_pct(pct, sizeof(pct), r);
  fmt_samples(smp, sizeof(smp), r);
  printf("  %-10s %10.1f %10.1f %+10.1f %9s %7s  %s%s\n", gpujit_trace_change_name(r->change), r->base_us / 1e3,
         r->new_us / 1e3, r->delta_us / 1e3, pct, samples ? smp : "", r->name, r->regression ? "  <- regression" : "");
}

static void md_row(const gpujit_trace_diff_row *r)
{
  char pct[32], smp[32];
  fmt_pct(pct, sizeof(pct), r);
  fmt_samples(smp, sizeof(smp), r);
  printf("| %s%s | %.1f | %.1f | %+.1f | %s | %s | `", r->regression ? "**regression** " : "",
         gpujit_trace_change_name(r->change), r->base_us / 1e3, r->new_us / 1e3, r->delta_us / 1e3, pct, smp);
  for (const char *p = r->name; *p; p++) /* a name never breaks the table */
    fputs(*p == '|' ? "\\|" : *p == '`' ? "'" : (char[]){*p, 0}, stdout);
  printf("` |\n");
}

static cJSON *json_row(const gpujit_trace_diff_row *r)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "name", r->name);
  cJSON_AddStringToObject(o, "change", gpujit_trace_change_name(r->change));
  cJSON_AddNumberToObject(o, "base_ms", r->base_us / 1e3);
  cJSON_AddNumberToObject(o, "new_ms", r->new_us / 1e3);
  cJSON_AddNumberToObject(o, "delta_ms", r->delta_us / 1e3);
  cJSON_AddNumberToObject(o, "delta_pct", r->delta_pct);
  cJSON_AddNumberToObject(o, "base_spread_ms", r->base_spread_us / 1e3);
  cJSON_AddNumberToObject(o, "new_spread_ms", r->new_spread_us / 1e3);
  cJSON_AddNumberToObject(o, "base_samples", r->base_samples);
  cJSON_AddNumberToObject(o, "new_samples", r->new_samples);
  if (r->p_value >= 0)
    cJSON_AddNumberToObject(o, "p_value", r->p_value);
  cJSON_AddBoolToObject(o, "regression", r->regression);
  return o;
}

static cJSON *json_side(const side_info *s)
{
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "traces", (double)s->traces);
  cJSON_AddNumberToObject(o, "module_builds", (double)s->modules);
  cJSON_AddNumberToObject(o, "recorded", (double)s->recorded);
  cJSON_AddNumberToObject(o, "unmeasured", (double)s->unmeasured);
  return o;
}

static int emit_json(cli_ctx *ctx, const gpujit_trace_diff *d, const side_info *b, const side_info *n, double pct,
                     double min_ms, size_t top, const char *file)
{
  gpujit_trace_diff_verdict v;
  char why[512];
  cJSON *root = cJSON_CreateObject(), *o, *tables;
  gpujit_trace_diff_outcome(d, &v);
  cJSON_AddItemToObject(root, "base", json_side(b));
  cJSON_AddItemToObject(root, "new", json_side(n));
  o = cJSON_AddObjectToObject(root, "gate");
  if (v.gated) {
    cJSON_AddNumberToObject(o, "fail_above_pct", pct);
    cJSON_AddNumberToObject(o, "min_ms", min_ms);
  }
  o = cJSON_AddObjectToObject(root, "verdict");
  cJSON_AddStringToObject(o, "result", v.gated ? (v.failed ? "fail" : "pass") : "no gate");
  cJSON_AddNumberToObject(o, "regressions", (double)v.regressions);
  cJSON_AddBoolToObject(o, "total_regressed", v.total_regressed);
  cJSON_AddNumberToObject(o, "slower", (double)v.slower);
  cJSON_AddNumberToObject(o, "faster", (double)v.faster);
  cJSON_AddNumberToObject(o, "added", (double)v.added);
  cJSON_AddNumberToObject(o, "removed", (double)v.removed);
  cJSON_AddNumberToObject(o, "unmeasured", (double)v.unmeasured);
  cJSON_AddNumberToObject(o, "min_samples", v.min_samples);
  cJSON_AddStringToObject(o, "confidence", confidence(&v, why, sizeof(why)));
  cJSON_AddStringToObject(o, "confidence_why", why);
  cJSON_AddItemToObject(root, "total", json_row(gpujit_trace_diff_total(d)));
  tables = cJSON_AddObjectToObject(root, "tables");
  for (int t = 0; t < GPUJIT_TRACE_TABLE_COUNT; t++) {
    cJSON *arr = cJSON_AddArrayToObject(tables, gpujit_trace_table_name((gpujit_trace_table)t));
    size_t count = gpujit_trace_diff_count(d, (gpujit_trace_table)t);
    for (size_t i = 0; i < count && (top == 0 || i < top || t == GPUJIT_TRACE_MODULES); i++)
      cJSON_AddItemToArray(arr, json_row(gpujit_trace_diff_row_at(d, (gpujit_trace_table)t, i)));
  }
  return cli_json_emit(ctx, root, "gpujit-trace-diff", file);
}

/* Modules by relative change, for the text and Markdown reports. */
static int cmp_pct(const void *pa, const void *pb)
{
  const gpujit_trace_diff_row *a = *(const gpujit_trace_diff_row *const *)pa, *b = *(const gpujit_trace_diff_row *const *)pb;
  return fabs(a->delta_pct) < fabs(b->delta_pct) ? 1 : fabs(a->delta_pct) > fabs(b->delta_pct) ? -1 : 0;
}

static size_t relative(const gpujit_trace_diff *d, const gpujit_trace_diff_row **out, size_t max)
{
  size_t n = 0, count = gpujit_trace_diff_count(d, GPUJIT_TRACE_MODULES);
  for (size_t i = 0; i < count && n < max; i++) {
    const gpujit_trace_diff_row *r = gpujit_trace_diff_row_at(d, GPUJIT_TRACE_MODULES, i);
    if (r->change == GPUJIT_TRACE_SLOWER || r->change == GPUJIT_TRACE_FASTER)
      out[n++] = r;
  }
  qsort(out, n, sizeof(*out), cmp_pct);
  return n;
}

static void print_report(const gpujit_trace_diff *d, const side_info *b, const side_info *n, double pct, double min_ms,
                         size_t top, bool md)
{
  const gpujit_trace_diff_row *total = gpujit_trace_diff_total(d), *rel[CLI_MAX_LIST];
  gpujit_trace_diff_verdict v;
  char why[512], gate[96] = "";
  const char *conf;
  static const gpujit_trace_table order[] = {GPUJIT_TRACE_MODULES, GPUJIT_TRACE_PHASES, GPUJIT_TRACE_HEADERS,
                                             GPUJIT_TRACE_TEMPLATES, GPUJIT_TRACE_INSTANTIATIONS,
                                             GPUJIT_TRACE_FUNCTIONS};
  size_t nrel = relative(d, rel, CLI_MAX_LIST);
  gpujit_trace_diff_outcome(d, &v);
  conf = confidence(&v, why, sizeof(why));
  if (v.gated)
    snprintf(gate, sizeof(gate), " (gate: slower by more than %g %% and %g ms)", pct, min_ms);
  printf(md ? "### Compile time: %s%s\n\n" : "compile-time diff: %s%s\n", result_word(&v), gate);
  printf(md ? "- whole compile: %.1f ms -> %.1f ms, %+.1f ms (%+.1f %%)\n" : "  whole compile  %.1f ms -> %.1f ms  %+.1f ms (%+.1f %%)\n",
         total->base_us / 1e3, total->new_us / 1e3, total->delta_us / 1e3, total->delta_pct);
  printf(md ? "- modules: %zu slower, %zu faster, %zu added, %zu removed, %zu unmeasured; %zu regressed%s\n"
            : "  modules        %zu slower, %zu faster, %zu added, %zu removed, %zu unmeasured; %zu regressed%s\n",
         v.slower, v.faster, v.added, v.removed, v.unmeasured, v.regressions,
         v.total_regressed ? ", and the whole compile" : "");
  printf(md ? "- confidence: **%s** — %s\n" : "  confidence     %s: %s\n", conf, why);
  printf(md ? "- base: %zu trace%s, %zu module build%s (%zu from recorded profiles); new: %zu trace%s, %zu module build%s (%zu recorded)\n"
            : "  base           %zu trace%s, %zu module build%s (%zu from recorded profiles)\n"
              "  new            %zu trace%s, %zu module build%s (%zu recorded)\n",
         b->traces, b->traces == 1 ? "" : "s", b->modules, b->modules == 1 ? "" : "s", b->recorded, n->traces,
         n->traces == 1 ? "" : "s", n->modules, n->modules == 1 ? "" : "s", n->recorded);
  if (v.unmeasured)
    printf(md ? "- %zu module%s unmeasured: cache hits whose entries were built without `--time-trace`\n"
              : "  unmeasured     %zu module%s: cache hits whose entries were built without --time-trace\n",
           v.unmeasured, v.unmeasured == 1 ? "" : "s");
  for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
    gpujit_trace_table tab = order[k]; /* modules first, then the tables that explain them */
    size_t count = gpujit_trace_diff_count(d, tab), changed = 0, shown = 0;
    for (size_t i = 0; i < count; i++)
      changed += tab == GPUJIT_TRACE_MODULES || gpujit_trace_diff_row_at(d, tab, i)->change != GPUJIT_TRACE_SAME;
    if (!changed)
      continue; /* a table without changes says nothing */
    count = changed;
    if (md)
      printf("\n#### %s (%zu%s)\n\n| change | base ms | new ms | Δ ms | Δ %% | samples | name |\n"
             "|---|---:|---:|---:|---:|---:|---|\n",
             gpujit_trace_table_name(tab), count, tab == GPUJIT_TRACE_MODULES ? "" : " changed");
    else
      printf("\n%s (%zu%s)\n  %-10s %10s %10s %10s %9s %7s  %s\n", gpujit_trace_table_name(tab), count,
             tab == GPUJIT_TRACE_MODULES ? "" : " changed", "change",
             "base ms", "new ms", "delta ms", "delta", tab == GPUJIT_TRACE_MODULES ? "samples" : "", "name");
    /* Modules all; the other tables their changed rows (--json has every row). */
    for (size_t i = 0; i < gpujit_trace_diff_count(d, tab) && (top == 0 || shown < top); i++) {
      const gpujit_trace_diff_row *r = gpujit_trace_diff_row_at(d, tab, i);
      if (tab != GPUJIT_TRACE_MODULES && r->change == GPUJIT_TRACE_SAME)
        continue;
      if (md)
        md_row(r);
      else
        text_row(r, tab == GPUJIT_TRACE_MODULES);
      shown++;
    }
    if (top && count > top)
      printf(md ? "\n… %zu more\n" : "  … %zu more\n", count - top);
    if (tab == GPUJIT_TRACE_MODULES && nrel > 1) {
      printf(md ? "\nLargest relative changes:" : "\nlargest relative changes\n");
      for (size_t i = 0; i < nrel && i < 5; i++) {
        if (md)
          printf("%s `%s` %+.1f %%", i ? "," : "", rel[i]->name, rel[i]->delta_pct);
        else
          printf("  %+9.1f %%  %s\n", rel[i]->delta_pct, rel[i]->name);
      }
      if (md)
        printf("\n");
    }
  }
}

static int add_side(cli_ctx *ctx, side_info *s, const char *path)
{
  size_t files = 0;
  int err = gpujit_trace_analysis_add_path(s->an, path, &files);
  if (err < 0)
    return cli_fail(ctx, err);
  s->traces += files;
  return EXIT_OK;
}

/* A side must hold compiles: anything else is a foreign trace. */
static int check_side(cli_ctx *ctx, side_info *s, const char *which)
{
  size_t unmeasured = 0;
  s->modules = 0;
  s->recorded = gpujit_trace_analysis_recorded(s->an, &unmeasured);
  s->unmeasured = unmeasured;
  for (size_t i = 0; i < gpujit_trace_analysis_count(s->an, GPUJIT_TRACE_MODULES); i++)
    s->modules += gpujit_trace_analysis_row(s->an, GPUJIT_TRACE_MODULES, i)->count;
  if (!s->modules) {
    fprintf(stderr, "%s: error: the %s traces hold no compile: no gpujit module build and no NVRTC front end "
                    "(is this a compile-time trace from gpujit build --time-trace or NVRTC's --fdevice-time-trace?)\n",
            ctx->prog, which);
    return EXIT_INPUT;
  }
  return EXIT_OK;
}

static bool parse_number(const char *s, double *out)
{
  char *end;
  if (!s || !*s)
    return false;
  *out = strtod(s, &end);
  return *end == '\0' && *out >= 0 && *out < 1e12;
}

/* The command line of one `gpujit trace diff`. */
typedef struct diff_cmd {
  cli_ctx *ctx;
  gpujit_trace_diff_options o;
  side_info base, next;
  const char *positional[2];
  size_t npos;
  bool named, json; /* named: --base/--new given */
  out_format fmt;
  const char *json_file;
  long top;
} diff_cmd;

/* One argument. *help: -h was given. */
static int parse_one(diff_cmd *c, cli_args *a, bool *help)
{
  const char *arg = a->argv[a->i];
  if (cli_end_of_options(a))
    return EXIT_OK;
  if (cli_opt(a, "-h", false) || cli_opt(a, "--help", false)) {
    *help = true;
  } else if (cli_opt(a, "--base", true) || cli_opt(a, "--new", true)) {
    if (a->failed)
      return cli_usage_error(c->ctx, "trace diff", "%s needs a path", arg);
    c->named = true;
    return add_side(c->ctx, !strncmp(arg, "--base", 6) ? &c->base : &c->next, a->value);
  } else if (cli_opt(a, "--fail-above", true)) {
    if (a->failed || !parse_number(a->value, &c->o.fail_above_pct))
      return cli_usage_error(c->ctx, "trace diff", "invalid --fail-above '%s': expected a percentage >= 0",
                             a->value ? a->value : "");
  } else if (cli_opt(a, "--min-ms", true)) {
    if (a->failed || !parse_number(a->value, &c->o.min_ms))
      return cli_usage_error(c->ctx, "trace diff", "invalid --min-ms '%s': expected milliseconds >= 0",
                             a->value ? a->value : "");
  } else if (cli_opt(a, "--top", true)) {
    if (a->failed || !cli_parse_int(a->value, 0, 1000000, &c->top))
      return cli_usage_error(c->ctx, "trace diff", "invalid --top '%s': expected a number >= 0",
                             a->value ? a->value : "");
  } else if (cli_json_opt(a, &c->json, &c->json_file)) {
    c->fmt = JSON;
    if (a->failed)
      return cli_usage_error(c->ctx, "trace diff", "option '%s' needs a value", arg);
  } else if (cli_opt(a, "--markdown", false)) {
    c->fmt = MARKDOWN;
  } else if (cli_is_option(a)) {
    return cli_unknown_option(c->ctx, a, "trace diff");
  } else if (c->npos < 2) {
    c->positional[c->npos++] = arg;
  } else {
    return cli_usage_error(c->ctx, "trace diff", "too many traces: give BASE and NEW, or --base and --new");
  }
  return EXIT_OK;
}

/* The two sides: BASE NEW, or --base and --new (each repeatable), each checked to hold compiles. */
static int sides(diff_cmd *c)
{
  int rc;
  if (c->named && c->npos)
    return cli_usage_error(c->ctx, "trace diff", "give BASE NEW or --base/--new, not both");
  if (!c->named && c->npos != 2)
    return cli_usage_error(c->ctx, "trace diff", "expected two sides: BASE NEW (or --base PATH --new PATH)");
  if (!c->named && ((rc = add_side(c->ctx, &c->base, c->positional[0])) != EXIT_OK ||
                    (rc = add_side(c->ctx, &c->next, c->positional[1])) != EXIT_OK))
    return rc;
  if (!c->base.traces || !c->next.traces)
    return cli_usage_error(c->ctx, "trace diff", "no %s traces given", !c->base.traces ? "base" : "new");
  if ((rc = check_side(c->ctx, &c->base, "base")) != EXIT_OK || (rc = check_side(c->ctx, &c->next, "new")) != EXIT_OK)
    return rc;
  return EXIT_OK;
}

/* The comparison, its report, and the gate's verdict as the exit code. */
static int compare(diff_cmd *c)
{
  gpujit_trace_diff *d = NULL;
  int err, rc = EXIT_OK;
  if ((err = gpujit_trace_diff_create(&d, c->base.an, c->next.an, &c->o)) < 0)
    return cli_fail(c->ctx, err);
  if (c->fmt == JSON)
    rc = emit_json(c->ctx, d, &c->base, &c->next, c->o.fail_above_pct, c->o.min_ms, (size_t)c->top, c->json_file);
  else
    print_report(d, &c->base, &c->next, c->o.fail_above_pct, c->o.min_ms, (size_t)c->top, c->fmt == MARKDOWN);
  if (rc == EXIT_OK) {
    gpujit_trace_diff_verdict v;
    gpujit_trace_diff_outcome(d, &v);
    rc = v.failed ? EXIT_REGRESSION : EXIT_OK;
  }
  gpujit_trace_diff_free(d);
  return rc;
}

int cmd_trace_diff(cli_ctx *ctx, int argc, char **argv)
{
  diff_cmd c = {.ctx = ctx, .o = GPUJIT_TRACE_DIFF_OPTIONS_INIT, .fmt = TEXT, .top = 10};
  cli_args a = {.argc = argc, .i = 2, .argv = argv, .cmd = "trace diff"};
  bool help = false;
  int err, rc = EXIT_OK;
  if ((err = gpujit_trace_analysis_create(&c.base.an)) < 0 || (err = gpujit_trace_analysis_create(&c.next.an)) < 0)
    rc = cli_fail(ctx, err);
  for (; a.i < argc && rc == EXIT_OK && !help; a.i++)
    rc = parse_one(&c, &a, &help);
  if (help)
    diff_help();
  else if (rc == EXIT_OK && (rc = sides(&c)) == EXIT_OK)
    rc = compare(&c);
  gpujit_trace_analysis_free(c.base.an);
  gpujit_trace_analysis_free(c.next.an);
  return rc;
}
