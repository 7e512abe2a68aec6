/* `gpujit profile -- COMMAND`: JIT compile against execute for any CUDA program, unchanged. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static void profile_help(void)
{
  printf("usage: gpujit profile [options] -- COMMAND [ARGS...]\n"
         "       gpujit profile report NAME [options]   (a saved profile, or a --keep directory)\n\n"
         "Run COMMAND as it is, with gpujit's injection library inside it and its children, and report\n"
         "what JIT compiling cost against what executing cost: every NVRTC compile, nvJitLink link and\n"
         "libNVVM compile (also those a framework resolves with dlopen + dlsym), every toolchain process\n"
         "(ptxas, nvlink, nvcc, the C compilers), the compiles of Python frameworks (JAX/XLA, Triton,\n"
         "torch.compile, Warp, Numba-CUDA, Taichi) through a start-up hook in every Python process,\n"
         "every module load with the driver's JIT, every kernel, copy and memset (CUPTI), per module.\n"
         "The exit status is COMMAND's (128 + N when signal N ended it). The table goes to stderr\n"
         "when it ends. Without -o, the profile is kept as the last one, as perf keeps perf.data:\n"
         "$XDG_STATE_HOME/gpujit/last.gjprof (else ~/.local/state/gpujit/last.gjprof), which\n"
         "'gpujit profile report' with no NAME reads. While --json or --csv takes stdout, COMMAND's own stdout goes to stderr, so\n"
         "'gpujit profile --json -- COMMAND | jq' reads the JSON alone and nothing COMMAND prints is lost.\n\n"
         "options:\n"
         "%s"
         "  --lineinfo       add -lineinfo to NVRTC compiles that lack it (changes the compiles:\n"
         "                   Nsight Compute source correlation for any framework's kernels)\n"
         "  --nvrtc-trace    add --fdevice-time-trace to NVRTC compiles; their phases, headers and\n"
         "                   templates go into --trace (changes the compiles)\n"
         "  --no-cupti       leave CUPTI to the program: PyTorch's profiler (its CUPTI is linked into\n"
         "                   libtorch) or another CUPTI tool inside COMMAND; compiles and module loads\n"
         "                   are still recorded, kernels, copies and the driver's JIT are not\n"
         "  --no-frameworks  no Python start-up hook: the frameworks' compiles are not recorded as\n"
         "                   theirs (their ptxas processes and NVRTC/NVVM compiles still are)\n"
         "  --step SRC       where steps come from: auto (the program's gpujit.step() or\n"
         "                   gpujit_profile_step() calls, or torch.profiler's step()), api, torch,\n"
         "                   nvtx:NAME (each NVTX range or mark of that name), kernel:NAME (each\n"
         "                   launch of a kernel whose name holds NAME)\n"
         "  --schedule S     record only some steps, as torch.profiler.schedule:\n"
         "                   wait=W,warmup=U,active=A[,repeat=R][,skip_first=S]\n"
         "                   [,skip_first_wait=1]; CUPTI is on only\n"
         "                   from the first warmup step to the last active one, and the report\n"
         "                   explains each active step: GPU busy time, kernels, idle gaps\n"
         "  --max-events N   kernels, copies and memsets kept for the trace per process (default\n"
         "                   200000; past it they are counted, not drawn)\n"
         "  --keep DIR       keep the raw records (JSON lines per process) in DIR\n"
         "  -h, --help       this help\n", cli_profile_out_help);
}

/* An option's file, never the "--" that starts the command (`--json -- cmd`). */
static const char *file_value(cli_ctx *ctx, cli_args *a, const char *name)
{
  if (a->failed || !a->value || !strcmp(a->value, "--") || !a->value[0]) {
    cli_usage_error(ctx, "profile", "option '%s' needs a value (a file, before '--')", name);
    a->failed = false;
    return NULL;
  }
  return a->value;
}

/* 0 when `cmd` can be run; else 127 (not found) or 126 (found, not runnable), as sh says. */
static int runnable(const char *cmd)
{
  struct stat st;
  const char *path = getenv("PATH");
  char cand[4096];
  int found = 127;
  if (strchr(cmd, '/'))
    return stat(cmd, &st) != 0 ? 127 : S_ISREG(st.st_mode) && access(cmd, X_OK) == 0 ? 0 : 126;
  for (const char *p = path && *path ? path : "/usr/local/bin:/usr/bin:/bin"; p;) {
    const char *colon = strchr(p, ':');
    int n = colon ? (int)(colon - p) : (int)strlen(p);
    snprintf(cand, sizeof(cand), "%.*s/%s", n ? n : 1, n ? p : ".", cmd);
    if (stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
      if (access(cand, X_OK) == 0)
        return 0;
      found = 126;
    }
    p = colon ? colon + 1 : NULL;
  }
  return found;
}

int cmd_profile(cli_ctx *ctx, int argc, char **argv)
{
  gpujit_profile_options o = GPUJIT_PROFILE_OPTIONS_INIT;
  cli_args a = {.argc = argc, .i = 1, .argv = argv, .cmd = "profile"};
  cli_profile_out out = CLI_PROFILE_OUT_INIT;
  gpujit_profile *p = NULL;
  gpujit_profile_totals t;
  char title[120];
  long n;
  int err, cmd = -1, keep = -1;
  const char *failed;
  if (argc > 1 && !strcmp(argv[1], "report")) /* a command named report runs after "--" */
    return cmd_profile_report(ctx, argc - 1, argv + 1);
  for (; a.i < argc; a.i++) {
    if (!strcmp(argv[a.i], "--")) {
      cmd = a.i + 1;
      break;
    }
    if (!strcmp(argv[a.i], "-h") || !strcmp(argv[a.i], "--help")) {
      profile_help();
      return EXIT_OK;
    } else if ((err = cli_profile_out_opt(ctx, &a, &out, "profile")) != 0) {
      if (err < 0)
        return -err;
    } else if (cli_opt(&a, "-q", false) || cli_opt(&a, "--quiet", false))
      ctx->verbose = -1;
    else if (cli_opt(&a, "--lineinfo", false))
      o.lineinfo = 1;
    else if (cli_opt(&a, "--nvrtc-trace", false))
      o.nvrtc_trace = 1;
    else if (cli_opt(&a, "--no-cupti", false))
      o.no_cupti = 1;
    else if (cli_opt(&a, "--no-frameworks", false))
      o.no_frameworks = 1;
    else if (cli_opt(&a, "--keep", true)) {
      struct stat st;
      if (!(o.records_dir = file_value(ctx, &a, "--keep")))
        return EXIT_USAGE;
      if (stat(o.records_dir, &st) == 0 && !S_ISDIR(st.st_mode))
        return cli_usage_error(ctx, "profile", "--keep %s: not a directory", o.records_dir);
    }
    else if (cli_opt(&a, "--step", true))
      o.steps = a.value;
    else if (cli_opt(&a, "--schedule", true))
      o.schedule = a.value;
    else if (cli_opt(&a, "--max-events", true)) {
      if (!cli_parse_int(a.value, 1, 1000000000L, &n))
        return cli_usage_error(ctx, "profile", "--max-events wants a count from 1, not '%s'", a.value);
      o.max_trace_events = (uint64_t)n;
    } else if (a.failed)
      return cli_usage_error(ctx, "profile", "option '%s' needs a value", argv[a.i]);
    else if (argv[a.i][0] == '-')
      return cli_unknown_option(ctx, &a, "profile");
    else {
      cmd = a.i; /* the command without "--" */
      break;
    }
  }
  if (a.failed)
    return cli_usage_error(ctx, "profile", "option '%s' needs a value", argv[a.i]);
  if ((err = cli_profile_out_name(ctx, &out, "profile", true)) != 0 ||
      (err = cli_profile_out_check(ctx, &out, "profile", NULL)) != 0)
    return err;
  if (gpujit_profile_check_steps(o.steps, o.schedule) < 0)
    return cli_usage_error(ctx, "profile", "%s", gpujit_error_last());
  if (cmd < 0 || cmd >= argc)
    return cli_usage_error(ctx, "profile", "no command to run: gpujit profile [options] -- COMMAND [ARGS...]");
  if ((err = runnable(argv[cmd])) != 0) { /* as a shell says it: 127 not found, 126 not runnable */
    fprintf(stderr, "%s: profile: %s: %s\n", ctx->prog, argv[cmd],
            err == 127 ? "command not found" : "cannot run it (not an executable file)");
    return err;
  }
  /* --json or --csv on stdout: the command's stdout goes to our stderr while it runs, so the
   * document is all a pipe reads and nothing the command printed is lost */
  if (cli_profile_out_stdout(&out) && (keep = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3)) >= 0 &&
      dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    close(keep);
    keep = -1;
  }
  err = gpujit_profile_run(&p, argv + cmd, &o);
  if (keep >= 0) {
    dup2(keep, STDOUT_FILENO);
    close(keep);
  }
  if (err < 0)
    return cli_fail(ctx, err);
  gpujit_profile_totals_get(p, &t);
  cli_profile_title(title, sizeof(title), gpujit_profile_command(p));
  failed = cli_profile_out_write(ctx, p, &out, stderr, title);
  /* The outputs were checked before the run; one that still could not be written (a full disk)
   * is said on stderr, even with -q — and the exit status stays the command's. */
  if (failed)
    fprintf(stderr, "%s: profile: cannot write %s; the command exited with status %d\n", ctx->prog, failed,
            t.exit_status);
  gpujit_profile_free(p);
  return t.exit_status; /* the command's, whatever gpujit wrote */
}
