/* Nsight Compute helpers for the CLI: ready ncu command lines (--ncu-command). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Quote for a POSIX shell when needed. */
static void put_arg(const char *s)
{
  bool plain = *s != '\0';
  for (const char *p = s; *p && plain; p++)
    plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%", *p) != NULL;
  if (plain) {
    fputs(s, stdout);
    return;
  }
  putchar('\'');
  for (const char *p = s; *p; p++)
    if (*p == '\'')
      fputs("'\\''", stdout);
    else
      putchar(*p);
  putchar('\'');
}

typedef struct folders {
  char list[8192];
  size_t n;
} folders;

static bool same_content(const char *a, const char *b)
{
  FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
  bool same = fa && fb;
  while (same) {
    int ca = fgetc(fa), cb = fgetc(fb);
    if (ca != cb)
      same = false;
    if (ca == EOF || cb == EOF)
      break;
  }
  if (fa)
    fclose(fa);
  if (fb)
    fclose(fb);
  return same;
}

/* A dumped source whose original is gone or changed: ncu must read the dump instead. */
static int check_source(const char *named, const char *dump, void *payload)
{
  folders *f = payload;
  char dir[4096];
  const char *slash;
  if (same_content(named, dump))
    return 0;
  slash = strrchr(dump, '/');
  snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - dump) : 0, dump);
  if (strstr(f->list, dir))
    return 0;
  if (f->n)
    strncat(f->list, ",", sizeof(f->list) - strlen(f->list) - 1);
  strncat(f->list, dir, sizeof(f->list) - strlen(f->list) - 1);
  f->n++;
  return 0;
}

static bool wanted(const char *sym, const char *const *only, size_t nonly)
{
  if (!only)
    return true;
  for (size_t i = 0; i < nonly; i++)
    if (!strcmp(only[i], sym))
      return true;
  return false;
}

void cli_print_ncu_commands(const gpujit_module *m, gpujit_cache *cache, int argc, char **argv,
                            const char *const *only, size_t nonly)
{
  folders f = {{0}, 0};
  const char *key = gpujit_module_cache_key(m);
  if (cache && key)
    gpujit_cache_sources(cache, key, check_source, &f);
  for (size_t k = 0; k < gpujit_module_kernel_count(m); k++) {
    const char *sym = gpujit_module_kernel(m, k);
    char rep[512];
    if (!wanted(sym, only, nonly))
      continue; /* the command launches only the kernels it names */
    snprintf(rep, sizeof(rep), "%s-%s", gpujit_module_name(m), sym);
    /* The mangled name is exact for templates and overloads; extern "C" names are their own. */
    printf("ncu --set full --import-source yes --kernel-name-base mangled -k ");
    put_arg(sym);
    printf(" -c 1");
    if (f.n) {
      printf(" --source-folders ");
      put_arg(f.list);
    }
    printf(" -o ");
    put_arg(rep);
    if (argc > 0) {
      for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--ncu-command"))
          continue;
        putchar(' ');
        put_arg(argv[i]);
      }
      putchar('\n');
    } else {
      printf(" ./your-program  # the program that loads %s\n", gpujit_module_name(m));
    }
  }
}
