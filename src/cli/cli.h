/* Shared pieces of the gpujit command-line tool: exit codes, argument parsing, output. */
#ifndef GPUJIT_CLI_CLI_H
#define GPUJIT_CLI_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "gpujit.h"

/* Exit codes, documented in `gpujit --help`. */
enum {
  EXIT_OK = 0,
  EXIT_FAILURE_ = 1, /* anything else: internal error, out of memory */
  EXIT_USAGE = 2,    /* bad command line: unknown flag, bad option value */
  EXIT_COMPILE = 3,  /* the CUDA C did not compile or link */
  EXIT_IO = 4,       /* a file could not be read or written */
  EXIT_INPUT = 5,    /* an input file is not what it should be (empty, binary, malformed JSON) */
  EXIT_NODRIVER = 6, /* no CUDA driver or device: execution unavailable */
  EXIT_CUDA = 7,     /* a CUDA error while running */
  EXIT_REGRESSION = 8, /* trace diff: compile time regressed past the gate */
  EXIT_NOTOOLKIT = 9   /* no CUDA toolkit (NVRTC, nvJitLink) where gpujit looked */
};

typedef struct cli_ctx {
  int verbose; /* -1 quiet, 0 normal, 1 verbose */
  bool color;
  const char *prog;
} cli_ctx;

typedef int (*cli_fn)(cli_ctx *ctx, int argc, char **argv);

/* What the lean path did, as a report line (its JSON is in the module's record). */
void cli_print_lean(const gpujit_module *m);

/* -q / -v, before or after the command: the library's log follows (warnings, or everything). */
void cli_set_verbosity(cli_ctx *ctx, int verbose);

typedef struct cli_command {
  const char *name;
  cli_fn fn;
  const char *summary;
} cli_command;

/* Argument cursor: handles "--opt=value", "--opt value", "-Ivalue" and "-I value". */
typedef struct cli_args {
  int argc, i;
  char **argv;
  const char *cmd;
  const char *value; /* set by cli_opt when it matched an option with a value */
  bool failed;
  bool rest;         /* past "--": every argument is an operand */
  int tried_at;      /* the argument the names below were tried against (+1; 0: none) */
  size_t ntried;
  const char *tried[96]; /* the option names cli_opt tried on argv[tried_at - 1] */
} cli_args;

/** True when argv[i] is `name`; with `takes_value`, the value is in a->value. Never past "--". */
bool cli_opt(cli_args *a, const char *name, bool takes_value);
/** True (and from then on every argument is an operand) when argv[i] is the first "--". */
bool cli_end_of_options(cli_args *a);
/** Whether argv[i] is an option (starts with '-', is not "-" alone, and "--" was not seen). */
bool cli_is_option(const cli_args *a);
/** "unknown option 'X'" for `cmd`, with the nearest of the options tried on it, if one is near. */
int cli_unknown_option(cli_ctx *ctx, cli_args *a, const char *cmd);
/** Split combined short flags in place of argv (before "--", and for `profile` before its
 *  command): -qv -> -q -v, -vj4 -> -v -j4. Returns the new vector (argv itself when nothing was
 *  combined), *argc updated; NULL when out of memory. */
char **cli_split_short_flags(int *argc, char **argv, bool stop_at_operand);

/** `--json` (print on stdout) or `--json=FILE` (write FILE): true when argv[i] is either. */
bool cli_json_opt(cli_args *a, bool *json, const char **file);
/** Emit a result document: "format" (e.g. "gpujit-build") and "version" first, numbers that are
 *  not whole to 6 significant digits (at least 3 decimals), to `file` or stdout; frees `root`.
 *  Returns an exit code. docs/json.md describes every format. */
int cli_json_emit(cli_ctx *ctx, cJSON *root, const char *format, const char *file);
#define CLI_JSON_VERSION 1
/** Of `names`, the one nearest `word` (at most two insertions, deletions, substitutions or
 *  swaps away), or NULL. */
const char *cli_nearest(const char *word, const char *const *names, size_t n);
/** Report a usage error for the current command. */
int cli_usage_error(cli_ctx *ctx, const char *cmd, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/** Parse a whole non-negative integer; false on garbage. */
bool cli_parse_int(const char *s, long min, long max, long *out);

/** Map a library error code to the exit code table. */
int cli_exit_code(int err);
/** Print "gpujit: error: <gpujit_error_last()>" and return the mapped exit code. */
int cli_fail(cli_ctx *ctx, int err);
void cli_warn(cli_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Human-readable byte size into buf. */
const char *cli_size(char *buf, size_t size, double bytes);
/** A size limit as the user would have written it: "5 GiB", "2 GB", "1.5 MiB" (else cli_size). */
const char *cli_limit_size(char *buf, size_t size, uint64_t bytes);

#define CLI_MAX_LIST 256

typedef struct cli_list {
  const char *items[CLI_MAX_LIST];
  size_t count;
} cli_list;

/* Options shared by build and run (modopts.c). */
typedef struct cli_module_args {
  gpujit_module_options opts;
  cli_list incs, defs, undefs, exprs, xopts, files;
  const char *cache_dir, *base_dir, *trace_arg;
  bool no_cache, want_trace, json;
  int build_error; /* the library's error of a failed cli_module_build */
  const char *json_file; /* --json=FILE */
  bool files_optional; /* `build --modules FILE` takes its files from the manifest */
  char remote[4096];    /* --remote-cache URLs, space-separated */
  bool remote_read_only;
  gpujit_cache *cache;
  gpujit_trace *trace;
} cli_module_args;

extern const char *const cli_module_help;
void cli_module_args_init(cli_module_args *m);
/** 1: argv[a->i] was consumed; 0: not a module option; negative: -(exit code) after an error. */
int cli_module_opt(cli_ctx *ctx, cli_args *a, cli_module_args *m);
/** Validate, then open the trace (when asked or `nvrtc_phases`) and the cache. Returns an exit code. */
int cli_module_prepare(cli_ctx *ctx, cli_module_args *m, const char *cmd, bool nvrtc_phases);
/** Build, printing NVRTC's diagnostics on failure. Returns an exit code. */
int cli_module_build(cli_ctx *ctx, cli_module_args *m, gpujit_module **out);
void cli_module_args_free(cli_module_args *m);

/* The "gpujit-build" document (build_json.c): one record per module, single build or project. */
typedef struct cli_build_row {
  const char *name, *output, *status; /* status: hit, built, failed, cancelled */
  bool cached;                        /* looked up in (and stored to) a cache */
  const gpujit_module *module;        /* its facts and timings when there is one, else: */
  double compile_ms, total_ms;
  double start_ms;                    /* from a project's start; < 0: not part of one */
  int worker;                         /* < 0: not part of a project */
  gpujit_pch_status pch;
  const char *pch_reason;
  int error;                          /* 0, or the gpujit error, with message and log */
  const char *message, *log;
  const char *miss_reason;            /* without a module: why its lookup missed */
} cli_build_row;
typedef struct cli_build_summary {
  size_t modules, hits, built, failed, cancelled, served, pch_created, pch_used;
  int workers;
  double wall_ms, compile_ms, critical_ms;
  const char *trace;
} cli_build_summary;
cJSON *cli_build_record(const cli_build_row *r);
/** The document's body (records: a JSON array, taken over); cli_json_emit adds format/version. */
cJSON *cli_build_document(cJSON *records, const cli_build_summary *s);

/* `gpujit build` over directories or a manifest (build_project.c). */
typedef struct cli_project_args {
  int jobs;             /* 0: the number of cores */
  const char *manifest; /* --modules FILE */
  const char *out_dir;  /* --out-dir DIR */
} cli_project_args;
/** Build ma->files (directories) and pa->manifest as a project. Returns an exit code. */
int cli_build_project(cli_ctx *ctx, cli_module_args *ma, const cli_project_args *pa);

/** Print one ready ncu command per kernel — of `only` (symbols, `nonly` of them) when given, else
 *  of every kernel of the module; argv (may be 0) is the command that launches them. */
void cli_print_ncu_commands(const gpujit_module *m, gpujit_cache *cache, int argc, char **argv,
                            const char *const *only, size_t nonly);

int cmd_build(cli_ctx *ctx, int argc, char **argv);
int cmd_run(cli_ctx *ctx, int argc, char **argv);
int cmd_trace(cli_ctx *ctx, int argc, char **argv);
int cmd_trace_diff(cli_ctx *ctx, int argc, char **argv);
int cmd_cache(cli_ctx *ctx, int argc, char **argv);
/* `cache ls`, `cache source` and `cache verify` print through these (cache_list.c). */
typedef struct ls_ctx {
  bool json;
  cJSON *arr; /* with json: the entries */
  size_t n;
} ls_ctx;
typedef struct src_ctx {
  cJSON *arr;          /* with --json: the files */
  const char *extract; /* --extract DIR */
  int err;             /* an exit code once a copy failed */
} src_ctx;
int cli_cache_ls_one(const gpujit_cache_entry *e, void *payload);
int cli_cache_src_one(const char *named, const char *dump, void *payload);
void cli_cache_bad_one(const char *key, const char *problem, void *payload);
int cmd_ncu(cli_ctx *ctx, int argc, char **argv);
int cmd_server(cli_ctx *ctx, int argc, char **argv);
int cmd_profile(cli_ctx *ctx, int argc, char **argv);
/* `gpujit profile report NAME` (cmd_profile_report.c): a saved profile or a records directory. */
int cmd_profile_report(cli_ctx *ctx, int argc, char **argv);
/* What `profile` and `profile report` write (profile_out.c). */
typedef struct cli_profile_out {
  const char *save;                 /* -o NAME: a saved profile (NAME.gjprof where NAME lacks it) */
  bool force;                       /* --force: -o may replace an existing file */
  bool save_last;                   /* no -o: the profile kept as the last one (cli_profile_last) */
  char save_name[4096];             /* -o's NAME with its extension, or the last profile's path */
  const char *given;                /* -o's NAME as given */
  const char *text;                 /* --text FILE: the table */
  bool json, csv;                   /* --json, --csv ... */
  const char *json_file, *csv_file; /* ... to FILE; NULL: stdout */
  const char *trace, *html;         /* --trace FILE, --html FILE */
  long top;                         /* --top N */
} cli_profile_out;
#define CLI_PROFILE_OUT_INIT {NULL, false, false, "", NULL, NULL, false, false, NULL, NULL, NULL, NULL, 20}
/** A saved profile's extension, added to -o NAME where NAME lacks it (as nsys adds .nsys-rep). */
#define CLI_PROFILE_EXT ".gjprof"
/** Where `gpujit profile` keeps the last profile when not given -o (as perf keeps perf.data), and
 *  what `gpujit profile report` reads when given no NAME: $XDG_STATE_HOME/gpujit/last.gjprof, else
 *  ~/.local/state/gpujit/last.gjprof. With `make`, its directory is made. NULL: no HOME. */
const char *cli_profile_last(char *buf, size_t size, bool make);
/** -o NAME as it will be written (its extension added; cli_profile_out_check refuses it where it
 *  exists, without --force), or the last profile's path when there is no -o and `keep_last`.
 *  0 or a usage error's code. */
int cli_profile_out_name(cli_ctx *ctx, cli_profile_out *o, const char *cmd, bool keep_last);
/** The options' lines of the commands' help. */
extern const char *const cli_profile_out_help;
/** argv[a->i] is one of the output options: 1 (taken), 0 (not one), -(exit code) after a usage error. */
int cli_profile_out_opt(cli_ctx *ctx, cli_args *a, cli_profile_out *o, const char *cmd);
/** 0, or a usage error's exit code for outputs that cannot be written or go together: two in one
 *  file, or one over `input` (the saved profile `profile report` reads; NULL for none). */
int cli_profile_out_check(cli_ctx *ctx, const cli_profile_out *o, const char *cmd, const char *input);
/** Whether --json or --csv takes stdout. */
bool cli_profile_out_stdout(const cli_profile_out *o);
/** Write every output asked for, the table to `table` unless -q or stdout is taken (to --text's
 *  file when given). @return NULL, or what could not be written and why. */
const char *cli_profile_out_write(cli_ctx *ctx, const gpujit_profile *p, const cli_profile_out *o, FILE *table,
                                  const char *title);
/** The command on one line, cut at 100 characters: the table's title. */
void cli_profile_title(char *out, size_t size, const char *command);
/** The length (1-4) of the well-formed UTF-8 character `s` starts with; 0 when it is none. */
size_t cli_utf8_len(const char *s);
/** `s` as one line of UTF-8 text: a line break, tab or other control byte as \n, \r, \t or \xNN,
 *  a byte that is no UTF-8 as \xNN (a value can then never pass for another line). */
void cli_put_escaped(FILE *f, const char *s);
int cmd_env(cli_ctx *ctx, int argc, char **argv);
/** gpujit --version (cmd_env.c): gpujit's version, the toolkit and cache it would use. */
int cli_version(cli_ctx *ctx, int argc, char **argv);

/* The build server on demand: `gpujit server run` started detached (`wait`: until it listens; returns its pid, or -1 and why). */
/* The server for these options: 1 runs and takes our builds, 0 runs but is stale, -1 none. */
int cli_server_current(const gpujit_server_options *so);
int cli_server_spawn(const gpujit_server_options *so, bool wait, char *why, size_t why_size);
/** Whether builds may go through a server (GPUJIT_SERVER is not "0"); another value than 0 or 1
 *  is warned about once and ignored. */
bool cli_server_wanted(cli_ctx *ctx);
/** After a build that `missed` and was not `served`: the server on demand, when so set. */
void cli_server_after(cli_ctx *ctx, const gpujit_server_options *so, bool served, bool missed);

#endif
