/* CLI helpers: argument cursor, exit-code mapping, error and warning output. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

bool cli_opt(cli_args *a, const char *name, bool takes_value)
{
  const char *arg = a->argv[a->i];
  size_t n = strlen(name);
  a->value = NULL;
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

cJSON *cli_lean_json(const gpujit_module *m)
{
  gpujit_module_lean l;
  cJSON *j;
  gpujit_module_lean_get(m, &l);
  if (!l.applied || !(j = cJSON_CreateObject()))
    return NULL;
  cJSON_AddNumberToObject(j, "ptx_bytes_before", (double)l.ptx_bytes_before);
  cJSON_AddNumberToObject(j, "ptx_bytes_after", (double)l.ptx_bytes_after);
  cJSON_AddNumberToObject(j, "variables", (double)l.variables);
  cJSON_AddNumberToObject(j, "removed", (double)l.removed);
  cJSON_AddNumberToObject(j, "kept_unreferenced", (double)l.kept_unreferenced);
  cJSON_AddNumberToObject(j, "pass_ms", l.pass_ms);
  cJSON_AddNumberToObject(j, "ptxas_ms", l.ptxas_ms);
  if (*l.note)
    cJSON_AddStringToObject(j, "note", l.note);
  return j;
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
