/* `gpujit profile report NAME`: a saved profile (`gpujit profile -o NAME`) or a records directory
 * (`--keep DIR`) reported and exported again, without running anything. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

static void report_help(void)
{
  printf("usage: gpujit profile report [NAME] [options]\n\n"
         "Report a saved profile again — the file 'gpujit profile -o NAME -- COMMAND' wrote, or the\n"
         "records directory of '--keep DIR' — and export it, without running COMMAND again. With no\n"
         "NAME, the last profile 'gpujit profile' kept without -o ($XDG_STATE_HOME/gpujit/last.gjprof,\n"
         "else ~/.local/state/gpujit/last.gjprof), as 'perf report' reads perf.data. The table\n"
         "goes to stdout. A file that is not a saved profile, or one truncated or damaged, is an error\n"
         "that says what it is (exit 5); a saved profile of another version names both (exit 2).\n\n"
         "options:\n"
         "%s"
         "  -h, --help       this help\n\n"
         "examples:\n"
         "  gpujit profile -o run.gjprof -- python train.py\n"
         "  gpujit profile report run.gjprof --html run.html --trace run.trace.json\n"
         "  gpujit profile report run.gjprof --json | jq '.modules[0]'\n",
         cli_profile_out_help);
}

int cmd_profile_report(cli_ctx *ctx, int argc, char **argv)
{
  cli_args a = {.argc = argc, .i = 1, .argv = argv, .cmd = "profile report"};
  cli_profile_out out = CLI_PROFILE_OUT_INIT;
  const char *name = NULL, *failed;
  gpujit_profile *p = NULL;
  char title[120], last[4096];
  int err;
  for (; a.i < argc; a.i++) {
    if (cli_end_of_options(&a))
      continue;
    if (!a.rest && (!strcmp(argv[a.i], "-h") || !strcmp(argv[a.i], "--help"))) {
      report_help();
      return EXIT_OK;
    }
    if (!cli_is_option(&a)) {
      if (name)
        return cli_usage_error(ctx, "profile report", "one saved profile at a time ('%s' is extra)", argv[a.i]);
      name = argv[a.i];
    } else if ((err = cli_profile_out_opt(ctx, &a, &out, "profile report")) != 0) {
      if (err < 0)
        return -err;
    } else if (cli_opt(&a, "-q", false) || cli_opt(&a, "--quiet", false))
      ctx->verbose = -1;
    else if (a.failed)
      return cli_usage_error(ctx, "profile report", "option '%s' needs a value", argv[a.i]);
    else
      return cli_unknown_option(ctx, &a, "profile report");
  }
  if (!name) { /* the last profile, as perf report reads perf.data */
    struct stat st;
    if (!(name = cli_profile_last(last, sizeof(last), false)))
      return cli_usage_error(ctx, "profile report", "no saved profile named, and no HOME to find the last one in: "
                                                    "gpujit profile report NAME [options]");
    if (stat(name, &st) != 0) {
      fprintf(stderr, "%s: error: profile report: no NAME given and no last profile at %s: 'gpujit profile -- "
                      "COMMAND' keeps one (without -o)\n", ctx->prog, name);
      return EXIT_IO;
    }
  }
  if ((err = cli_profile_out_name(ctx, &out, "profile report", false)) != 0 ||
      (err = cli_profile_out_check(ctx, &out, "profile report", name)) != 0)
    return err;
  if ((err = gpujit_profile_open(&p, name)) < 0)
    return cli_fail(ctx, err);
  cli_profile_title(title, sizeof(title), *gpujit_profile_command(p) ? gpujit_profile_command(p) : name);
  failed = cli_profile_out_write(ctx, p, &out, stdout, title);
  gpujit_profile_free(p);
  if (failed) {
    fprintf(stderr, "%s: profile report: cannot write %s\n", ctx->prog, failed);
    return EXIT_IO;
  }
  return EXIT_OK;
}
