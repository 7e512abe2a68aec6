/* `gpujit cache`: inspect and maintain the kernel cache. The command line is read into a
 * cache_cmd through a table of options; the command is looked up in the table of commands, which
 * says what cache it needs and whether it takes an operand, and runs (cache_verbs.c). */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cache_cmd.h"

static void cache_help(void)
{
  printf("usage: gpujit cache [--cache-dir DIR] [--json[=FILE]] COMMAND\n\n"
         "commands:\n"
         "  path                       print the cache directory\n"
         "  ls                         list entries, most recently used first\n"
         "  show KEY                   print an entry's metadata (KEY: 4+ hex digits)\n"
         "  source KEY [--extract DIR] print the dumped sources, or copy them under DIR\n"
         "  stats                      entries, bytes, hits, misses, uncacheable builds, hit rate,\n"
         "                             corrupt, time saved, limit\n"
         "  zero                       zero the counters, keep the entries (to measure one run)\n"
         "  config                     the cache directory, its limit and the cache's settings, with\n"
         "                             where each came from\n"
         "  limit [SIZE|none]          show or set the size limit kept in the cache (SIZE: 5 is\n"
         "                             5 GiB, 500MB, 2GiB; 0 or none: no limit), saying what a\n"
         "                             lower limit evicted; $GPUJIT_CACHE_MAX_SIZE overrides it.\n"
         "                             Past the limit, a store evicts least recently used\n"
         "                             entries to 90 %% of it\n"
         "  clear                      remove every entry and its records, reset the counters\n"
         "  prune [--max-size SIZE] [--older-than AGE]\n"
         "                             drop least recently used entries (SIZE: 500MB, 2GiB;\n"
         "                             AGE: 3600s, 30m, 7d)\n"
         "  verify [--remove]          check every checksum; --remove deletes bad entries\n"
         "  export FILE [--used-since AGE|UNIX] [--key KEY]...\n"
         "                             write entries (those used within AGE, e.g. 7d, or since a\n"
         "                             Unix time; or the named keys) with their manifests into one\n"
         "                             archive: FILE.tar, .tar.zst, .tar.gz (CI artifacts, caches)\n"
         "  import FILE [--max-member SIZE]\n"
         "                             add an export's entries, each verified; a hostile archive\n"
         "                             (absolute or .. paths, links, devices, members over SIZE,\n"
         "                             default 1 GiB) is refused whole, naming the member\n\n"
         "ccache's spellings, in place of a command:\n"
         "  -s, --show-stats           stats (with -v: where the limit comes from, the remote stores)\n"
         "  -z, --zero-stats           zero; -s -z (or -sz) prints the counters, then zeroes them\n"
         "  -p, --show-config          config\n"
         "  -M, --max-size SIZE        limit SIZE (with prune: prune's --max-size)\n"
         "  -C, --clear                clear\n"
         "  --evict-older-than AGE     prune --older-than AGE\n"
         "Short flags combine as in ccache (-sv, -sz).\n\n"
         "SIZE, as ccache reads it: a bare number is GiB (-M 5: 5 GiB); kB, MB, GB, TB (and k, K,\n"
         "M, G, T) are powers of 1000; KiB, MiB, GiB, TiB (and Ki, Mi, Gi, Ti) powers of 1024;\n"
         "B is bytes; 0 or none: no limit.\n"
         "AGE, as ccache reads it: whole digits with s (seconds) or d (days), or m, h, w (minutes,\n"
         "hours, weeks); a bare number is refused.\n"
         "An option given to a command it does not apply to is an error, as is a second command\n"
         "(but for -s with -z).\n");
}

/* ---- the commands ---------------------------------------------------------------------- */

typedef enum verb_operand {
  OPERAND_NONE,     /* takes none */
  OPERAND_REQUIRED, /* KEY: refused without one, before the cache is opened */
  OPERAND_OPTIONAL  /* FILE or SIZE: the command says what is missing */
} verb_operand;

typedef struct cache_verb {
  const char *name;
  int (*fn)(cache_cmd *c);
  bool makes_cache; /* may make the cache (import, path, limit); the others look at one that is there */
  verb_operand operand;
} cache_verb;

static const cache_verb verbs[] = {
    {"path", cache_path, true, OPERAND_NONE},
    {"ls", cache_ls, false, OPERAND_NONE},
    {"show", cache_show, false, OPERAND_REQUIRED},
    {"source", cache_source, false, OPERAND_REQUIRED},
    {"stats", cache_stats, false, OPERAND_NONE},
    {"zero", cache_zero, false, OPERAND_NONE},
    {"config", cache_config, false, OPERAND_NONE},
    {"limit", cache_limit, true, OPERAND_OPTIONAL},
    {"clear", cache_clear, false, OPERAND_NONE},
    {"prune", cache_prune, false, OPERAND_NONE},
    {"verify", cache_verify, false, OPERAND_NONE},
    {"export", cache_export, false, OPERAND_OPTIONAL},
    {"import", cache_import, true, OPERAND_OPTIONAL},
};
#define NVERBS (sizeof(verbs) / sizeof(verbs[0]))

/* ---- the options ------------------------------------------------------------------------ */

typedef enum opt_kind {
  OPT_HELP,   /* -h, --help */
  OPT_JSON,   /* --json, --json=FILE */
  OPT_STR,    /* a value into `field` */
  OPT_FLAG,   /* true into `field` */
  OPT_VERB,   /* ccache's spelling of a command: `verb` */
  OPT_LIMIT,  /* -M SIZE: the limit command with its size */
  OPT_EVICT,  /* --evict-older-than AGE: prune's --older-than, under its own name */
  OPT_KEY,    /* --key KEY, repeatable */
  OPT_VERBOSE /* -v, -q after the command (ccache's -sv) */
} opt_kind;

typedef struct cache_option {
  const char *name;
  opt_kind kind;
  size_t field;      /* offsetof(cache_cmd, ...) for OPT_STR and OPT_FLAG */
  const char *verbs; /* the commands it applies to (NULL: all); OPT_VERB: the command it names */
} cache_option;

/* In the order they are tried (the nearest name to an unknown option is looked for among them). */
static const cache_option options[] = {
    {"-h", OPT_HELP, 0, NULL},
    {"--help", OPT_HELP, 0, NULL},
    {"--cache-dir", OPT_STR, offsetof(cache_cmd, copts.dir), NULL},
    {"--json", OPT_JSON, 0, NULL},
    {"-v", OPT_VERBOSE, 0, NULL},
    {"--verbose", OPT_VERBOSE, 0, NULL},
    {"-q", OPT_VERBOSE, 0, NULL},
    {"--quiet", OPT_VERBOSE, 0, NULL},
    {"-s", OPT_VERB, 0, "stats"},
    {"--show-stats", OPT_VERB, 0, "stats"},
    {"-z", OPT_VERB, 0, "zero"},
    {"--zero-stats", OPT_VERB, 0, "zero"},
    {"-C", OPT_VERB, 0, "clear"},
    {"--clear", OPT_VERB, 0, "clear"},
    {"-p", OPT_VERB, 0, "config"},
    {"--show-config", OPT_VERB, 0, "config"},
    {"-M", OPT_LIMIT, 0, NULL},
    {"--extract", OPT_STR, offsetof(cache_cmd, extract), "source"},
    {"--max-size", OPT_STR, offsetof(cache_cmd, max_size), "prune limit"}, /* alone: ccache's, the limit */
    {"--older-than", OPT_STR, offsetof(cache_cmd, older), "prune"},
    {"--evict-older-than", OPT_EVICT, 0, "prune"}, /* alone: prune */
    {"--remove", OPT_FLAG, offsetof(cache_cmd, remove_bad), "verify"},
    {"--used-since", OPT_STR, offsetof(cache_cmd, since), "export"},
    {"--max-member", OPT_STR, offsetof(cache_cmd, max_member), "import"},
    {"--key", OPT_KEY, 0, "export"},
};

/* A ccache spelling names a command; a second command, or an option given to one it does not apply
 * to, is a usage error naming it. */
static bool stats_and_zero(const char *a, const char *b)
{
  return (!strcmp(a, "stats") && !strcmp(b, "zero")) || (!strcmp(a, "zero") && !strcmp(b, "stats"));
}

static int set_verb(cache_cmd *c, const char *v, const char *from)
{
  if (c->verb && strcmp(c->verb, v) && !c->then && c->verb_from[0] == '-' && stats_and_zero(c->verb, v)) {
    c->then = v; /* ccache's -s -z: in the order given */
    return EXIT_OK;
  }
  if (c->verb && strcmp(c->verb, v) && !(c->then && !strcmp(c->then, v)))
    return cli_usage_error(c->ctx, "cache", "'%s' and '%s' are two commands: give one", c->verb_from, from);
  c->verb = v;
  c->verb_from = from;
  return EXIT_OK;
}

static bool verb_in(const char *verb, const char *verbs_)
{
  size_t n = strlen(verb);
  for (const char *p = verbs_; (p = strstr(p, verb)) != NULL; p += n)
    if ((p == verbs_ || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
      return true;
  return false;
}

/* --key: every one kept, however many (an export of a long list of keys leaves none out). */
static int add_key(cache_cmd *c, const char *key)
{
  if (c->nkeys == c->keys_cap) {
    size_t cap = c->keys_cap ? c->keys_cap * 2 : 16;
    const char **grown = realloc(c->keys, cap * sizeof(*grown));
    if (!grown)
      return cli_fail(c->ctx, GPUJIT_ENOMEM);
    c->keys = grown, c->keys_cap = cap;
  }
  c->keys[c->nkeys++] = key;
  return EXIT_OK;
}

/* Apply one option of the table (`arg` as given, its value in a->value). Returns an exit code. */
static int apply_option(cache_cmd *c, const cache_option *o, cli_args *a, const char *arg)
{
  char *field = (char *)c + o->field;
  if (o->verbs && o->kind != OPT_VERB && c->ngiven < sizeof(c->given) / sizeof(c->given[0]))
    c->given[c->ngiven++] = (verb_opt){arg, o->verbs};
  switch (o->kind) {
  case OPT_STR:
    *(const char **)(void *)field = a->value;
    break;
  case OPT_FLAG:
    *(bool *)(void *)field = true;
    break;
  case OPT_VERB:
    return set_verb(c, o->verbs, arg);
  case OPT_LIMIT: {
    int rc = a->failed ? EXIT_OK : set_verb(c, "limit", arg);
    if (!a->failed && rc == EXIT_OK)
      c->max_size_flag = a->value;
    return rc;
  }
  case OPT_EVICT:
    c->older = a->value, c->older_name = arg;
    break;
  case OPT_KEY:
    return a->value ? add_key(c, a->value) : EXIT_OK;
  case OPT_VERBOSE:
    cli_set_verbosity(c->ctx, arg[1] == 'q' || arg[2] == 'q' ? -1 : 1);
    break;
  case OPT_HELP:
  case OPT_JSON:
    break;
  }
  return EXIT_OK;
}

/* An operand: the command, the same command again after its ccache spelling, or its operand. */
static int operand(cache_cmd *c, const char *arg)
{
  if (!c->verb) {
    c->verb = c->verb_from = arg;
  } else if (c->verb_from[0] == '-') { /* after -s, -z, -C, -p, -M: the same command again, or a second */
    int rc = strcmp(arg, c->verb) && !(c->then && !strcmp(arg, c->then)) ? cli_usage_error(c->ctx, "cache", "'%s' and '%s' are two commands: give one",
                                                    c->verb_from, arg)
                                  : EXIT_OK;
    c->verb_from = arg;
    return rc;
  } else if (!c->key) {
    c->key = arg;
  } else {
    return cli_usage_error(c->ctx, "cache", "unexpected argument '%s'", arg);
  }
  return EXIT_OK;
}

/* One argument. *help: -h was given. */
static int parse_one(cache_cmd *c, cli_args *a, bool *help)
{
  const char *arg = a->argv[a->i];
  if (cli_end_of_options(a))
    return EXIT_OK;
  for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
    const cache_option *o = &options[i];
    bool hit = o->kind == OPT_JSON ? cli_json_opt(a, &c->json, &c->json_file)
                                   : cli_opt(a, o->name, o->kind == OPT_STR || o->kind == OPT_LIMIT ||
                                                             o->kind == OPT_EVICT || o->kind == OPT_KEY);
    if (hit) {
      *help = o->kind == OPT_HELP;
      return *help ? EXIT_OK : apply_option(c, o, a, arg);
    }
  }
  if (cli_is_option(a))
    return cli_unknown_option(c->ctx, a, "cache");
  return operand(c, arg);
}

/* ccache's combined short flags: -sv, -sz, -svz, -sM5 (a value after M). Every letter must be one
 * of ccache's flags that gpujit cache takes, else the argument is left whole (and refused whole). */
static bool ccache_combined(const char *arg)
{
  if (arg[0] != '-' || arg[1] == '-' || !arg[1] || !arg[2])
    return false;
  for (const char *p = arg + 1; *p; p++) {
    if (*p == 'M')
      return p > arg + 1; /* -M5 alone is -M's glued value */
    if (!strchr("szCpvqh", *p))
      return false;
  }
  return true;
}

static char **split_ccache_flags(int *argc, char **argv)
{
  size_t bytes = 0;
  int extra = 0, k = 0;
  char **out, *w;
  for (int i = 1; i < *argc && strcmp(argv[i], "--"); i++)
    if (ccache_combined(argv[i]))
      extra += (int)strlen(argv[i]), bytes += 3 * strlen(argv[i]) + 1;
  if (!extra)
    return argv;
  if (!(out = malloc((size_t)(*argc + extra + 1) * sizeof(*out) + bytes)))
    return NULL;
  w = (char *)(out + *argc + extra + 1);
  for (int i = 0, rest = 0; i < *argc; i++) {
    rest |= !strcmp(argv[i], "--");
    if (i == 0 || rest || !ccache_combined(argv[i])) {
      out[k++] = argv[i];
      continue;
    }
    for (const char *p = argv[i] + 1; *p; p++) {
      out[k++] = w;
      w += sprintf(w, "-%c", *p) + 1;
      if (*p == 'M' && p[1]) { /* the rest is its value */
        out[k++] = w;
        w += sprintf(w, "%s", p + 1) + 1;
        break;
      }
    }
  }
  out[k] = NULL;
  *argc = k;
  return out;
}

static int parse(cache_cmd *c, int argc, char **argv, bool *help)
{
  cli_args a = {.argc = argc, .i = 1, .argv = argv, .cmd = "cache"};
  int rc;
  for (; a.i < argc; a.i++) {
    const char *arg = argv[a.i];
    if ((rc = parse_one(c, &a, help)) != EXIT_OK || *help)
      return rc;
    if (a.failed)
      return cli_usage_error(c->ctx, "cache", "option '%s' needs a value", arg);
  }
  return EXIT_OK;
}

/* The command, from its name or from the options that stand for one; checked with its options
 * and operand. *out: its row of the table. */
static int resolve(cache_cmd *c, const cache_verb **out)
{
  const char *names[NVERBS], *near;
  if (!c->verb && c->max_size && !c->older) /* `cache --max-size 1G`: ccache's, the limit */
    c->verb = "limit";
  else if (!c->verb && c->older) /* `cache --evict-older-than 7d` (ccache's), with --max-size too */
    c->verb = "prune";
  if (!c->verb)
    return cli_usage_error(c->ctx, "cache", "no command given: one of path, ls, show, source, stats, zero, config, "
                           "limit, clear, prune, verify, export, import (gpujit cache --help)");
  *out = NULL;
  for (size_t i = 0; i < NVERBS; i++) {
    names[i] = verbs[i].name;
    if (!strcmp(c->verb, verbs[i].name))
      *out = &verbs[i];
  }
  if (!*out)
    return (near = cli_nearest(c->verb, names, NVERBS))
               ? cli_usage_error(c->ctx, "cache", "unknown command '%s' (did you mean '%s'?)", c->verb, near)
               : cli_usage_error(c->ctx, "cache", "unknown command '%s'", c->verb);
  for (size_t i = 0; i < c->ngiven; i++)
    if (!verb_in(c->verb, c->given[i].verbs))
      return cli_usage_error(c->ctx, "cache", "option '%s' does not apply to '%s' (it is for '%s'%s)",
                             c->given[i].name, c->verb, c->given[i].verbs[0] == 'p' ? "prune" : c->given[i].verbs,
                             !strncmp(c->given[i].verbs, "prune limit", 11) ? ", or alone sets the limit" : "");
  if (!strcmp(c->verb, "limit") && (c->max_size_flag || c->max_size)) {
    const char *size = c->max_size_flag ? c->max_size_flag : c->max_size;
    if (c->key)
      return cli_usage_error(c->ctx, "cache", "the limit given twice: '%s' and '%s'", size, c->key);
    c->key = size;
  } else if (c->key && (*out)->operand == OPERAND_NONE) {
    return cli_usage_error(c->ctx, "cache", "unexpected argument '%s': '%s' takes none", c->key, c->verb);
  }
  snprintf(c->format, sizeof(c->format), "gpujit-cache-%s", c->verb); /* docs/json.md */
  if ((*out)->operand == OPERAND_REQUIRED && !c->key)
    return cli_usage_error(c->ctx, "cache", "'%s' needs a KEY", c->verb);
  return EXIT_OK;
}

int cmd_cache(cli_ctx *ctx, int argc, char **argv)
{
  cache_cmd c = {.ctx = ctx, .older_name = "--older-than", .copts = GPUJIT_CACHE_OPTIONS_INIT};
  const cache_verb *v = NULL;
  bool help = false;
  int err, rc;
  char **split = split_ccache_flags(&argc, argv);
  if (!split)
    return cli_fail(ctx, GPUJIT_ENOMEM);
  if ((rc = parse(&c, argc, split, &help)) == EXIT_OK && help)
    cache_help();
  else if (rc == EXIT_OK && (rc = resolve(&c, &v)) == EXIT_OK) {
    /* a verb that makes a cache (import, limit) makes it where there is none, never in a
     * directory of someone else's files: that is refused as any verb refuses it */
    err = gpujit_cache_open_existing(&c.cache, &c.copts);
    if (err == 0 && v->makes_cache && !gpujit_cache_writable(c.cache)) {
      gpujit_cache_free(c.cache);
      c.cache = NULL;
      err = gpujit_cache_open(&c.cache, &c.copts);
    }
    rc = err < 0 ? cli_fail(ctx, err) : v->fn(&c);
    if (rc == EXIT_OK && c.then) { /* -s -z: the second of the two, its output under the first's */
      c.second = true;
      rc = !strcmp(c.then, "zero") ? cache_zero(&c) : cache_stats(&c);
    }
  }
  gpujit_cache_free(c.cache);
  free(c.keys);
  if (split != argv)
    free(split);
  return rc;
}
