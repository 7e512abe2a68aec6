/* What `gpujit profile` and `gpujit profile report` write: the table, a saved profile (-o), the
 * JSON, the module rows as CSV, the trace and the HTML page — one set of options for both. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

const char *const cli_profile_out_help =
    "  -o NAME          save the profile to the file NAME (the records and the run's facts in one\n"
    "                   tar; .gjprof added where NAME lacks it): 'gpujit profile report NAME'\n"
    "                   reports and exports it again. An existing file is refused, unless --force\n"
    "  --force          let -o replace an existing file\n"
    "  --json[=FILE]    the whole profile as JSON (docs/json.md): on stdout (no table then), or\n"
    "                   written to FILE (--json FILE.json too)\n"
    "  --csv[=FILE]     the module rows as CSV: on stdout (no table then), or written to FILE\n"
    "  --trace FILE     write a trace (Perfetto, chrome://tracing, gpujit trace analyze/diff)\n"
    "  --html FILE      write one self-contained HTML page: per module the compile, load and GPU\n"
    "                   time as bars, by compiler and by process, and the timeline\n"
    "  --text FILE      write the table to FILE\n"
    "  --top N          module rows in the table (default 20; 0 for all)\n"
    "  -q, --quiet      no table (unless --text)\n";

/* An option's file: never the "--" that starts a command, never empty. */
static const char *file_value(cli_ctx *ctx, cli_args *a, const char *cmd, const char *name)
{
  if (a->failed || !a->value || !strcmp(a->value, "--") || !a->value[0]) {
    cli_usage_error(ctx, cmd, "option '%s' needs a value (a file%s)", name,
                    !strcmp(cmd, "profile") ? ", before '--'" : "");
    a->failed = false;
    return NULL;
  }
  return a->value;
}

/* `--json FILE` / `--csv FILE` as `profile` always took them: a FILE.json (FILE.csv), or any word
 * before a "--" further on (what comes before it is options and their values). */
static bool file_follows(const cli_args *a, const char *suffix)
{
  const char *next = a->i + 1 < a->argc ? a->argv[a->i + 1] : NULL;
  size_t len = next ? strlen(next) : 0, n = strlen(suffix);
  bool dashes = false;
  if (!next || next[0] == '-' || !next[0])
    return false;
  for (int k = a->i + 2; k < a->argc && !dashes; k++)
    dashes = !strcmp(a->argv[k], "--");
  return dashes || (len > n && !strcmp(next + len - n, suffix));
}

int cli_profile_out_opt(cli_ctx *ctx, cli_args *a, cli_profile_out *o, const char *cmd)
{
  long n;
  bool on = false;
  const char *file = NULL;
  if (cli_opt(a, "-o", true)) {
    return (o->save = file_value(ctx, a, cmd, "-o")) ? 1 : -EXIT_USAGE;
  } else if (cli_opt(a, "--force", false)) {
    o->force = true;
    return 1;
  } else if (cli_opt(a, "--text", true)) {
    return (o->text = file_value(ctx, a, cmd, "--text")) ? 1 : -EXIT_USAGE;
  } else if (cli_opt(a, "--trace", true)) {
    return (o->trace = file_value(ctx, a, cmd, "--trace")) ? 1 : -EXIT_USAGE;
  } else if (cli_opt(a, "--html", true)) {
    return (o->html = file_value(ctx, a, cmd, "--html")) ? 1 : -EXIT_USAGE;
  } else if (cli_opt(a, "--top", true)) {
    if (!cli_parse_int(a->value, 0, 1000000L, &n))
      return -cli_usage_error(ctx, cmd, "--top wants a count, not '%s'", a->value ? a->value : "");
    o->top = n;
    return 1;
  } else if (cli_json_opt(a, &on, &file)) {
    if (a->failed)
      return -cli_usage_error(ctx, cmd, "--json= needs a file name");
    o->json = true;
    o->json_file = file ? file : file_follows(a, ".json") ? a->argv[++a->i] : NULL;
    return 1;
  } else if (cli_opt(a, "--csv", false) || (!a->rest && !strncmp(a->argv[a->i], "--csv=", 6))) {
    if (a->argv[a->i][5] == '=' && !a->argv[a->i][6])
      return -cli_usage_error(ctx, cmd, "--csv= needs a file name");
    o->csv = true;
    o->csv_file = a->argv[a->i][5] == '=' ? a->argv[a->i] + 6 : file_follows(a, ".csv") ? a->argv[++a->i] : NULL;
    return 1;
  }
  return 0;
}

/* The descriptor /dev/stdout, /dev/stderr, /dev/fd/N or /proc/self/fd/N names, or -1: written
 * through as the shell set it up (docs/profile.md), never refused as the link it is. */
static int std_fd(const char *path)
{
  const char *n = !strcmp(path, "/dev/stdout")           ? "1"
                  : !strcmp(path, "/dev/stderr")         ? "2"
                  : !strncmp(path, "/dev/fd/", 8)        ? path + 8
                  : !strncmp(path, "/proc/self/fd/", 14) ? path + 14
                                                         : NULL;
  if (!n || !*n || strlen(n) > 9 || strspn(n, "0123456789") != strlen(n))
    return -1;
  return atoi(n);
}

/* Why FILE could not be written, or NULL: a directory, a file that is not writable, or a missing
 * or unwritable directory to create it in. A device or FIFO is written through, so it passes. */
static const char *unwritable(const char *file)
{
  struct stat st;
  char *dir;
  const char *why = NULL;
  int fd = std_fd(file), flags;
  if (fd >= 0)
    return (flags = fcntl(fd, F_GETFL)) < 0 ? "that descriptor is not open"
           : (flags & O_ACCMODE) == O_RDONLY ? "that descriptor is open for reading only"
                                              : NULL;
  if (lstat(file, &st) == 0)
    return S_ISDIR(st.st_mode)   ? "it is a directory"
           : S_ISLNK(st.st_mode) ? "it is a symbolic link (gpujit replaces nothing but a regular file)"
           : access(file, W_OK) != 0 ? strerror(errno)
                                     : NULL;
  if (errno != ENOENT)
    return strerror(errno);
  if (!(dir = strdup(file)))
    return strerror(ENOMEM);
  char *slash = strrchr(dir, '/');
  const char *d = !slash ? "." : slash == dir ? "/" : (*slash = '\0', dir);
  if (stat(d, &st) != 0)
    why = errno == ENOENT ? "its directory does not exist" : strerror(errno);
  else if (!S_ISDIR(st.st_mode))
    why = "its directory is not a directory";
  else if (access(d, W_OK | X_OK) != 0)
    why = "its directory is not writable";
  free(dir);
  return why;
}

/* `path` made absolute with its directory's links resolved (its last component kept as given),
 * or a copy of `path` when its directory cannot be resolved. */
static char *normalised(const char *path)
{
  char *dir = strdup(path), *real = NULL, *out = NULL;
  if (!dir)
    return NULL;
  char *slash = strrchr(dir, '/');
  const char *base = slash ? path + (slash - dir) + 1 : path;
  const char *d = !slash ? "." : slash == dir ? "/" : (*slash = '\0', dir);
  if (*base && strcmp(base, ".") && strcmp(base, "..") && (real = realpath(d, NULL)) != NULL &&
      asprintf(&out, "%s%s%s", real, strcmp(real, "/") ? "/" : "", base) < 0)
    out = NULL;
  free(real), free(dir);
  return out ? out : strdup(path);
}

/* Whether `a` and `b` are one file: one inode where both exist, else one normalised path. Devices
 * and FIFOs are written through, not replaced: two outputs may share /dev/null. */
static bool same_file(const char *a, const char *b)
{
  struct stat sa, sb;
  char *na, *nb;
  bool same;
  if (std_fd(a) >= 0 || std_fd(b) >= 0)
    return false;
  if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino && (S_ISREG(sa.st_mode) || S_ISDIR(sa.st_mode));
  na = normalised(a), nb = normalised(b);
  same = na && nb && !strcmp(na, nb);
  free(na), free(nb);
  return same;
}

const char *cli_profile_last(char *buf, size_t size, bool make)
{
  const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
  char dir[4096];
  if (state && state[0] == '/') /* a relative one is to be ignored (the XDG spec) */
    snprintf(dir, sizeof(dir), "%s/gpujit", state);
  else if (home && *home)
    snprintf(dir, sizeof(dir), "%s/.local/state/gpujit", home);
  else
    return NULL;
  if (make) { /* each missing level, private as the XDG spec asks (0700) */
    for (char *p = strchr(dir + 1, '/'); p; p = strchr(p + 1, '/')) {
      *p = '\0';
      mkdir(dir, 0700);
      *p = '/';
    }
    mkdir(dir, 0700);
  }
  snprintf(buf, size, "%s/last" CLI_PROFILE_EXT, dir);
  return buf;
}

int cli_profile_out_name(cli_ctx *ctx, cli_profile_out *o, const char *cmd, bool keep_last)
{
  struct stat st;
  size_t n, e = strlen(CLI_PROFILE_EXT);
  if (!o->save) {
    if (!keep_last || !cli_profile_last(o->save_name, sizeof(o->save_name), false))
      return 0;
    o->save_last = true;
    return 0;
  }
  n = strlen(o->save);
  /* NAME that is there already (a file, a link, a device, FIFO or /dev/stdout) is taken as named:
   * the checks refuse it or write through it */
  if (std_fd(o->save) >= 0 || lstat(o->save, &st) == 0 || (n >= e && !strcmp(o->save + n - e, CLI_PROFILE_EXT)))
    snprintf(o->save_name, sizeof(o->save_name), "%s", o->save);
  else if (snprintf(o->save_name, sizeof(o->save_name), "%s" CLI_PROFILE_EXT, o->save) >= (int)sizeof(o->save_name))
    return cli_usage_error(ctx, cmd, "-o %s: the name is too long", o->save);
  o->given = o->save;
  o->save = o->save_name;
  return 0;
}

int cli_profile_out_check(cli_ctx *ctx, const cli_profile_out *o, const char *cmd, const char *input)
{
  const char *files[] = {o->save, o->text, o->json_file, o->csv_file, o->trace, o->html};
  const char *opts[] = {"-o", "--text", "--json", "--csv", "--trace", "--html"};
  if (o->json && o->csv && !o->json_file && !o->csv_file)
    return cli_usage_error(ctx, cmd, "--json and --csv cannot both go to stdout: give one a file (--csv=FILE)");
  /* Before the command runs: a report that cannot be written is found while nothing is spent. */
  for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
    const char *why = files[i] ? unwritable(files[i]) : NULL;
    if (files[i] && input && same_file(files[i], input))
      return cli_usage_error(ctx, cmd, "%s %s is the saved profile being reported: writing it would replace it; "
                                       "name another file", opts[i], files[i]);
    for (size_t k = 0; files[i] && k < i; k++)
      if (files[k] && same_file(files[i], files[k]))
        return cli_usage_error(ctx, cmd, "%s and %s both name %s: the one written last would be all that is left; "
                                         "give each its own file", opts[k], opts[i], files[i]);
    if (why)
      return cli_usage_error(ctx, cmd, "%s %s: cannot write it: %s", opts[i], files[i], why);
  }
  { /* as nsys: a saved profile is never replaced unless asked (a device or FIFO is written through) */
    struct stat st;
    if (o->save && !o->force && std_fd(o->save) < 0 && lstat(o->save, &st) == 0 && S_ISREG(st.st_mode))
      return cli_usage_error(ctx, cmd, "-o %s: %s exists; --force replaces it, or name another file",
                             o->given ? o->given : o->save, o->save);
  }
  return 0;
}

bool cli_profile_out_stdout(const cli_profile_out *o) { return (o->json && !o->json_file) || (o->csv && !o->csv_file); }

/* A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break; a byte that is
 * no UTF-8 (a command line's, a program name's) as U+FFFD, so the file stays UTF-8 text. */
static void csv_field(FILE *f, const char *s)
{
  bool quote = strpbrk(s, ",\"\r\n") != NULL;
  size_t len;
  if (quote)
    fputc('"', f);
  for (; *s; s += len ? len : 1) {
    if (!(len = cli_utf8_len(s))) {
      fputs("\xef\xbf\xbd", f);
      continue;
    }
    if (*s == '"')
      fputc('"', f);
    fwrite(s, 1, len, f);
  }
  if (quote)
    fputc('"', f);
}

/* The module rows, one per line, with the JSON's keys as the header and the kernel's readable
 * name last (the JSON keeps the symbol). */
static void csv(FILE *f, const gpujit_profile *p)
{
  size_t nf, stride, n;
  const char *rows;
  const gpujit_profile_field *fl = gpujit_profile_fields(GPUJIT_PROFILE_MODULES, NULL, &nf);
  n = gpujit_profile_table_rows(p, GPUJIT_PROFILE_MODULES, (const void **)&rows, &stride);
  for (size_t k = 0; k < nf; k++)
    fprintf(f, "%s%s", k ? "," : "", fl[k].key);
  fputs(",kernel_name\r\n", f);
  for (size_t i = 0; i < n; i++) {
    const char *row = rows + i * stride;
    const gpujit_profile_module *m = (const gpujit_profile_module *)(const void *)row;
    char shown[1024];
    for (size_t k = 0; k < nf; k++) {
      const void *v = row + fl[k].offset;
      if (k)
        fputc(',', f);
      switch (fl[k].type) {
      case GPUJIT_FIELD_STR: csv_field(f, *(const char *const *)v ? *(const char *const *)v : ""); break;
      case GPUJIT_FIELD_INT: fprintf(f, "%d", *(const int *)v); break;
      case GPUJIT_FIELD_BOOL: fprintf(f, "%s", *(const int *)v ? "true" : "false"); break;
      case GPUJIT_FIELD_U32: fprintf(f, "%u", *(const uint32_t *)v); break;
      case GPUJIT_FIELD_U64: fprintf(f, "%llu", (unsigned long long)*(const uint64_t *)v); break;
      case GPUJIT_FIELD_F64: {
        double d = *(const double *)v;
        fprintf(f, d == (double)(long long)d ? "%.0f" : d >= 1000 || d <= -1000 ? "%.3f" : "%.6g", d);
        break;
      }
      }
    }
    fputc(',', f);
    /* as the table shows it: demangled, without the "void " every kernel returns */
    if (m->kernel && gpujit_demangle(m->kernel, shown, sizeof(shown)) == 1)
      csv_field(f, strncmp(shown, "void ", 5) ? shown : shown + 5);
    else
      csv_field(f, m->kernel ? m->kernel : "");
    fputs("\r\n", f);
  }
}

/* A file the user named: written in place (a device or FIFO stays one), never through a link;
 * /dev/stdout and its kin: that descriptor. A FIFO that no reader opens within two seconds is
 * an error (ENXIO), not a wait without end. */
static FILE *open_out(const char *path)
{
  int fd = std_fd(path) >= 0 ? fcntl(std_fd(path), F_DUPFD_CLOEXEC, 3) : -1;
  for (int tries = 0; fd < 0 && std_fd(path) < 0; tries++) {
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC | O_NONBLOCK, 0644);
    if (fd >= 0 || errno != ENXIO || tries == 200)
      break;
    nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
  }
  if (fd >= 0)
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (fd >= 0 && !f)
    close(fd);
  return f;
}

static char why[1024];

/* What failed, and why: the library's message, or errno's. */
static const char *failed_lib(const char *what)
{
  const char *msg = gpujit_error_last();
  size_t n = strlen(what);
  if (!strncmp(msg, what, n) && !strncmp(msg + n, ": ", 2)) /* "PATH: cannot write: why": the why */
    msg += n + 2;
  if (!strncmp(msg, "cannot write: ", 14))
    msg += 14;
  snprintf(why, sizeof(why), "%s (%s)", what, *msg ? msg : "write failed");
  return why;
}

static const char *failed_io(const char *what)
{
  snprintf(why, sizeof(why), "%s (%s)", what,
           errno == ENXIO ? "a FIFO that nothing reads (waited 2 s for a reader): start its reader first, or name a file"
           : errno        ? strerror(errno)
                          : "write failed");
  return why;
}

/* -o NAME, or the last profile (as perf.data: there to report again; never a reason to fail the
 * run). @return NULL, or what could not be written and why. */
static const char *save(cli_ctx *ctx, const gpujit_profile *p, const cli_profile_out *o)
{
  char last[4096];
  if (o->save && gpujit_profile_save(p, o->save) < 0)
    return failed_lib(o->save);
  if (o->save_last && (!cli_profile_last(last, sizeof(last), true) || gpujit_profile_save(p, last) < 0)) {
    cli_warn(ctx, "the profile was not kept as the last one (%s): %s", o->save_name,
             *gpujit_error_last() ? gpujit_error_last() : "no HOME");
    gpujit_error_clear();
  }
  return NULL;
}

/* Every output asked for is tried; the first that failed is the one named. */
const char *cli_profile_out_write(cli_ctx *ctx, const gpujit_profile *p, const cli_profile_out *o, FILE *table,
                                  const char *title)
{
  const char *failed = NULL;
#define FAILED(expr) (failed = failed ? failed : (expr))
  errno = 0;
  FAILED(save(ctx, p, o));
  if (o->json) {
    char *text = NULL;
    if (gpujit_profile_json(p, &text) < 0)
      FAILED(failed_lib("the JSON"));
    else if (o->json_file) {
      FILE *f = open_out(o->json_file);
      bool ok = f && fprintf(f, "%s\n", text) >= 0;
      if ((f && fclose(f) != 0) || !ok)
        FAILED(failed_io(o->json_file));
    } else if (printf("%s\n", text) < 0 || fflush(stdout) != 0)
      FAILED(failed_io("the JSON"));
    free(text);
  }
  if (o->csv) {
    FILE *f = o->csv_file ? open_out(o->csv_file) : stdout;
    bool ok = f != NULL;
    if (f) {
      csv(f, p);
      ok = !ferror(f);
      if ((o->csv_file ? fclose(f) : fflush(f)) != 0)
        ok = false;
    }
    if (!ok)
      FAILED(failed_io(o->csv_file ? o->csv_file : "the CSV"));
  }
  if (o->trace && gpujit_profile_trace(p, o->trace) < 0)
    FAILED(failed_lib(o->trace));
  if (o->html && gpujit_profile_html(p, o->html) < 0)
    FAILED(failed_lib(o->html));
  if ((ctx->verbose >= 0 && !cli_profile_out_stdout(o)) || o->text) {
    FILE *f = o->text ? open_out(o->text) : table;
    char *text = NULL;
    bool ok = f && gpujit_profile_format(p, title, o->top, &text) == 0 && fputs(text, f) >= 0;
    if (f && (o->text ? fclose(f) : fflush(f)) != 0)
      ok = false;
    if (!ok)
      FAILED(failed_io(o->text ? o->text : "the report"));
    free(text);
  }
  if (ctx->verbose >= 0 && (o->save_last || (o->save && std_fd(o->save) < 0)))
    fprintf(cli_profile_out_stdout(o) ? stderr : table, "saved: %s (gpujit profile report%s%s)\n", o->save_last ? o->save_name : o->save,
            o->save_last ? "" : " ", o->save_last ? "" : o->save);
#undef FAILED
  return failed;
}

/* The command on one line, cut at 100 characters: the table's title. */
void cli_profile_title(char *out, size_t size, const char *command)
{
  size_t len = 0;
  for (const char *c = command; *c && len + 1 < size && len < 100; c++)
    out[len++] = (*c == '\n' || *c == '\t' || *c == '\r') ? ' ' : *c;
  out[len] = '\0';
  if (strlen(command) > len && len + 5 < size)
    strcat(out, " ...");
}
