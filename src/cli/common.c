/* CLI helpers: argument cursor, exit-code mapping, error and warning output. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

bool cli_opt(cli_args *a, const char *name, bool takes_value)
{
  const char *arg = a->argv[a->i];
  size_t n = strlen(name);
  a->value = NULL;
  if (a->rest)
    return false;
  if (a->tried_at != a->i + 1)
    a->tried_at = a->i + 1, a->ntried = 0;
  if (a->ntried < sizeof(a->tried) / sizeof(a->tried[0]))
    a->tried[a->ntried++] = name;
  if (strncmp(arg, name, n) != 0)
    return false;
  if (!takes_value)
    return arg[n] == '\0';
  if (arg[n] == '=') {
    a->value = arg + n + 1;
    return true;
  }
  /* Short options glue their value: -Idir, -DNAME. */
  if (arg[n] != '\0') {
    if (name[1] == '-' || strlen(name) != 2)
      return false;
    a->value = arg + n;
    return true;
  }
  if (a->i + 1 >= a->argc) {
    a->failed = true;
    a->value = NULL;
    return true;
  }
  a->value = a->argv[++a->i];
  return true;
}

bool cli_end_of_options(cli_args *a)
{
  if (a->rest || strcmp(a->argv[a->i], "--") != 0)
    return false;
  a->rest = true;
  return true;
}

bool cli_is_option(const cli_args *a)
{
  const char *arg = a->argv[a->i];
  return !a->rest && arg[0] == '-' && arg[1] != '\0';
}

int cli_unknown_option(cli_ctx *ctx, cli_args *a, const char *cmd)
{
  const char *arg = a->argv[a->i], *eq = strchr(arg, '='), *near;
  char word[64];
  const char *names[sizeof(a->tried) / sizeof(a->tried[0]) + 1];
  size_t n = 0;
  snprintf(word, sizeof(word), "%.*s", eq ? (int)(eq - arg) : (int)strlen(arg), arg);
  if (a->tried_at == a->i + 1)
    for (; n < a->ntried; n++)
      names[n] = a->tried[n];
  names[n++] = "--help";
  /* a short option's one letter is near anything short: suggest only for long words */
  near = strlen(word) > 3 ? cli_nearest(word, names, n) : NULL;
  if (near && strlen(near) > 2)
    return cli_usage_error(ctx, cmd, "unknown option '%s' (did you mean '%s'?)", arg, near);
  return cli_usage_error(ctx, cmd, "unknown option '%s'", arg);
}

/* Short options without a value, and those that take one (glued: -j4, -oFILE, -DNAME). */
static const char flag_letters[] = "qvhG", value_letters[] = "ojIDU";
/* Long options (of any command) whose value may be the next argument: for `profile`, an operand
 * after one of these is its value, not the command. */
static const char *const value_longs[] = {"--json", "--csv", "--trace", "--html", "--text", "--keep", "--max-events", "--top"};

static bool combined(const char *arg)
{
  if (arg[0] != '-' || !arg[1] || !arg[2] || !strchr(flag_letters, arg[1]))
    return false;
  for (const char *c = arg + 1; *c; c++) {
    if (strchr(value_letters, *c))
      return true; /* the rest is its value */
    if (!strchr(flag_letters, *c))
      return false;
  }
  return true;
}

char **cli_split_short_flags(int *argc, char **argv, bool stop_at_operand)
{
  int n = *argc, extra = 0, end = n;
  char **out, *buf, *w;
  size_t bytes = 0;
  for (int i = 1; i < n; i++) {
    const char *arg = argv[i];
    if (!strcmp(arg, "--")) {
      end = i;
      break;
    }
    if (stop_at_operand && arg[0] != '-') {
      bool value = !strcmp(argv[i - 1], "-o");
      for (size_t k = 0; k < sizeof(value_longs) / sizeof(value_longs[0]); k++)
        value |= !strcmp(argv[i - 1], value_longs[k]);
      if (!value) {
        end = i;
        break;
      }
    }
    if (combined(arg)) {
      extra += (int)strlen(arg) - 2;
      bytes += 3 * strlen(arg);
    }
  }
  if (!extra)
    return argv;
  if (!(out = malloc((size_t)(n + extra + 1) * sizeof(*out) + bytes)))
    return NULL;
  { /* lives as long as the process: kept reachable (a leak checker's view) */
    static char **kept[4];
    static size_t nkept;
    if (nkept < sizeof(kept) / sizeof(kept[0]))
      kept[nkept++] = out;
  }
  w = buf = (char *)(out + n + extra + 1);
  {
    int k = 0;
    for (int i = 0; i < n; i++) {
      const char *arg = argv[i];
      if (i == 0 || i >= end || !combined(arg)) {
        out[k++] = argv[i];
        continue;
      }
      for (const char *c = arg + 1; *c; c++) {
        out[k++] = w;
        *w++ = '-';
        if (strchr(value_letters, *c)) { /* -oFILE: the letter and its glued value, if any */
          size_t len = strlen(c);
          memcpy(w, c, len + 1);
          w += len + 1;
          break;
        }
        *w++ = *c, *w++ = '\0';
      }
    }
    out[k] = NULL;
    *argc = k;
  }
  return out;
}

bool cli_json_opt(cli_args *a, bool *json, const char **file)
{
  if (cli_opt(a, "--json", false)) {
    *json = true;
    return true;
  }
  if (!a->rest && !strncmp(a->argv[a->i], "--json=", 7)) {
    *json = true;
    *file = a->argv[a->i] + 7;
    a->failed = !**file; /* "--json=" names no file: "needs a value" */
    return true;
  }
  return false;
}

/* Whole numbers as they are; others to 6 significant digits, and never fewer than 3 decimals (a
 * microsecond of a millisecond count): cJSON prints the shortest text that reads back the same. */
static void round_numbers(cJSON *j)
{
  for (cJSON *c = j; c; c = c->next) {
    if (cJSON_IsNumber(c)) {
      double v = c->valuedouble, a = fabs(v);
      if (v != floor(v) && isfinite(v)) {
        char text[40];
        if (a >= 1000)
          v = round(v * 1000) / 1000;
        else {
          snprintf(text, sizeof(text), "%.6g", v);
          v = strtod(text, NULL);
        }
        cJSON_SetNumberValue(c, v);
      }
    }
    if (c->child)
      round_numbers(c->child);
  }
}

int cli_json_emit(cli_ctx *ctx, cJSON *root, const char *format, const char *file)
{
  cJSON *doc = cJSON_CreateObject();
  char *text;
  int rc = EXIT_OK;
  /* "format" and "version" first, so a reader (or a person) sees which it is before the rest */
  if (!root || !doc || !cJSON_AddStringToObject(doc, "format", format) ||
      !cJSON_AddNumberToObject(doc, "version", CLI_JSON_VERSION)) {
    cJSON_Delete(root), cJSON_Delete(doc);
    fprintf(stderr, "%s: error: out of memory\n", ctx->prog);
    return EXIT_FAILURE_;
  }
  while (root->child) {
    cJSON *c = cJSON_DetachItemViaPointer(root, root->child);
    cJSON_AddItemToObject(doc, c->string, c);
  }
  cJSON_Delete(root);
  root = doc;
  round_numbers(root->child);
  if (!(text = cJSON_Print(root))) {
    cJSON_Delete(root);
    fprintf(stderr, "%s: error: out of memory\n", ctx->prog);
    return EXIT_FAILURE_;
  }
  if (file) {
    FILE *out = fopen(file, "w");
    if (!out || fprintf(out, "%s\n", text) < 0 || fclose(out) != 0) {
      fprintf(stderr, "%s: error: %s: %s\n", ctx->prog, file, strerror(errno));
      if (out)
        fclose(out);
      rc = EXIT_IO;
    }
  } else {
    printf("%s\n", text);
  }
  free(text);
  cJSON_Delete(root);
  return rc;
}

/* Optimal string alignment distance (Levenshtein with transpositions), bounded words. */
static size_t distance(const char *a, const char *b)
{
  size_t la = strlen(a), lb = strlen(b), d[33][33];
  if (la > 32 || lb > 32)
    return 99;
  for (size_t i = 0; i <= la; i++)
    d[i][0] = i;
  for (size_t j = 0; j <= lb; j++)
    d[0][j] = j;
  for (size_t i = 1; i <= la; i++)
    for (size_t j = 1; j <= lb; j++) {
      size_t cost = a[i - 1] != b[j - 1], best = d[i - 1][j - 1] + cost;
      if (d[i - 1][j] + 1 < best)
        best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best)
        best = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
        best = d[i - 2][j - 2] + 1;
      d[i][j] = best;
    }
  return d[la][lb];
}

const char *cli_nearest(const char *word, const char *const *names, size_t n)
{
  const char *best = NULL;
  size_t bd = 3;
  for (size_t i = 0; i < n; i++) {
    size_t dd = distance(word, names[i]);
    if (dd < bd)
      bd = dd, best = names[i];
  }
  return best;
}

int cli_usage_error(cli_ctx *ctx, const char *cmd, const char *fmt, ...)
{
  va_list ap;
  fprintf(stderr, "%s: ", ctx->prog);
  if (cmd)
    fprintf(stderr, "%s: ", cmd);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  if (cmd)
    fprintf(stderr, "\nTry '%s %s --help'.\n", ctx->prog, cmd);
  else
    fprintf(stderr, "\nTry '%s --help'.\n", ctx->prog);
  return EXIT_USAGE;
}

bool cli_parse_int(const char *s, long min, long max, long *out)
{
  char *end;
  long v;
  if (!s || !*s)
    return false;
  errno = 0;
  v = strtol(s, &end, 10);
  if (errno || *end || v < min || v > max)
    return false;
  *out = v;
  return true;
}

int cli_exit_code(int err)
{
  switch (err) {
  case 0: return EXIT_OK;
  case GPUJIT_EINVAL:
  case GPUJIT_EVERSION: return EXIT_USAGE;
  case GPUJIT_ECOMPILE:
  case GPUJIT_ELINK: return EXIT_COMPILE;
  case GPUJIT_EIO:
  case GPUJIT_ENOENT: return EXIT_IO;
  case GPUJIT_EPARSE:
  case GPUJIT_ECORRUPT: return EXIT_INPUT;
  case GPUJIT_ENODRIVER:
  case GPUJIT_ENODEVICE: return EXIT_NODRIVER;
  case GPUJIT_ECUDA: return EXIT_CUDA;
  case GPUJIT_ENOTOOLKIT: return EXIT_NOTOOLKIT;
  default: return EXIT_FAILURE_;
  }
}

int cli_fail(cli_ctx *ctx, int err)
{
  const char *msg = gpujit_error_last();
  if (ctx->color)
    fprintf(stderr, "%s: \033[1;31merror:\033[0m %s\n", ctx->prog, *msg ? msg : gpujit_strerror(err));
  else
    fprintf(stderr, "%s: error: %s\n", ctx->prog, *msg ? msg : gpujit_strerror(err));
  return cli_exit_code(err);
}

void cli_warn(cli_ctx *ctx, const char *fmt, ...)
{
  va_list ap;
  if (ctx->verbose < 0)
    return;
  fprintf(stderr, ctx->color ? "%s: \033[1;33mwarning:\033[0m " : "%s: warning: ", ctx->prog);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

const char *cli_size(char *buf, size_t size, double bytes)
{
  if (bytes < 1024)
    snprintf(buf, size, "%.0f B", bytes);
  else if (bytes < 1024 * 1024)
    snprintf(buf, size, "%.1f KiB", bytes / 1024);
  else
    snprintf(buf, size, "%.1f MiB", bytes / (1024 * 1024));
  return buf;
}

const char *cli_limit_size(char *buf, size_t size, uint64_t bytes)
{
  /* the largest unit that writes it exactly to two decimals: 5 GiB stays 5 GiB, 2G stays 2 GB */
  static const struct { const char *name; double unit; } units[] = {
      {"TiB", 1099511627776.0}, {"TB", 1e12}, {"GiB", 1073741824.0}, {"GB", 1e9},
      {"MiB", 1048576.0},       {"MB", 1e6},  {"KiB", 1024.0},       {"kB", 1e3}};
  for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
    double v = (double)bytes / units[i].unit;
    if (v >= 1 && fabs(v * 100 - round(v * 100)) < 1e-6) {
      snprintf(buf, size, "%.*f %s", v == floor(v) ? 0 : fabs(v * 10 - round(v * 10)) < 1e-6 ? 1 : 2, v,
               units[i].name);
      return buf;
    }
  }
  return cli_size(buf, size, (double)bytes);
}

static void log_to_stderr(gpujit_log_level level, const char *message, void *payload)
{
  cli_ctx *ctx = payload;
  static const char *const names[] = {"error", "warning", "info", "debug"};
  fprintf(stderr, "%s: %s: %s\n", ctx->prog, names[level], message);
}

void cli_set_verbosity(cli_ctx *ctx, int verbose)
{
  ctx->verbose = verbose;
  gpujit_log_set(verbose > 0 ? GPUJIT_LOG_DEBUG : GPUJIT_LOG_WARN, verbose < 0 ? NULL : log_to_stderr, ctx);
}

void cli_print_lean(const gpujit_module *m)
{
  gpujit_module_lean l;
  char a[32], b[32];
  gpujit_module_lean_get(m, &l);
  if (!l.applied)
    return;
  printf("  lean PTX %s -> %s, %zu of %zu module-scope variables removed", cli_size(a, sizeof(a), (double)l.ptx_bytes_before),
         cli_size(b, sizeof(b), (double)l.ptx_bytes_after), l.removed, l.variables);
  if (l.kept_unreferenced)
    printf(", %zu unused kept as the user's", l.kept_unreferenced);
  printf("\n");
  if (*l.note)
    printf("  lean: %s\n", l.note);
}

size_t cli_utf8_len(const char *s)
{
  const unsigned char *u = (const unsigned char *)s;
  size_t n = u[0] < 0x80 ? 1 : u[0] >= 0xc2 && u[0] <= 0xdf ? 2 : u[0] >= 0xe0 && u[0] <= 0xef ? 3
             : u[0] >= 0xf0 && u[0] <= 0xf4 ? 4 : 0;
  for (size_t i = 1; i < n; i++) /* a NUL ends the string and is no continuation byte */
    if ((u[i] & 0xc0) != 0x80)
      return 0;
  /* no overlong form, no surrogate, nothing past U+10FFFF */
  if ((u[0] == 0xe0 && u[1] < 0xa0) || (u[0] == 0xed && u[1] > 0x9f) || (u[0] == 0xf0 && u[1] < 0x90) ||
      (u[0] == 0xf4 && u[1] > 0x8f))
    return 0;
  return n;
}

void cli_put_escaped(FILE *f, const char *s)
{
  for (size_t len; *s; s += len ? len : 1) {
    unsigned char c = (unsigned char)*s;
    len = cli_utf8_len(s);
    if (len > 1)
      fwrite(s, 1, len, f);
    else if (c == '\n' || c == '\r' || c == '\t')
      fprintf(f, "\\%c", c == '\n' ? 'n' : c == '\r' ? 'r' : 't');
    else if (!len || c < 0x20 || c == 0x7f)
      fprintf(f, "\\x%02x", c);
    else
      fputc(c, f);
  }
}
