/* bin/gpujit of the Python package: a native launcher that execs the package's own gpujit (the
 * one beside its worker, injection library and the libraries auditwheel copied for it). pip puts
 * this file in the environment's bin/ and the package in ../lib/pythonX.Y/site-packages/gpujit/
 * (venvs, --user, conda; Debian's /usr/local uses dist-packages; ../gpujit with pip --target), so
 * it is found from here with no
 * Python start-up: a cached build costs about what the binary does. It links libc alone, so the
 * wheel's bin/ needs nothing copied (auditwheel would wrap such a binary in a Python script). */
#define _GNU_SOURCE
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
  static const char *const where[] = {"/../lib/python3*/site-packages/gpujit/gpujit",
                                      "/../lib/python3*/dist-packages/gpujit/gpujit",
                                      "/../gpujit/gpujit"}; /* pip install --target T: T/bin, T/gpujit */
  char self[PATH_MAX], pattern[PATH_MAX + 64];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  char *slash;
  (void)argc;
  if (n <= 0) {
    fprintf(stderr, "gpujit: cannot find where this launcher is (/proc/self/exe: %s)\n", strerror(errno));
    return 127;
  }
  self[n] = '\0';
  if ((slash = strrchr(self, '/')) != NULL)
    *slash = '\0';
  for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
    glob_t g;
    snprintf(pattern, sizeof(pattern), "%s%s", self, where[i]);
    if (glob(pattern, 0, NULL, &g) == 0) {
      /* the newest Python's first where one prefix holds several (glob sorts python3.9 after
       * python3.12: try the list from its end) */
      for (size_t k = g.gl_pathc; k-- > 0;)
        if (access(g.gl_pathv[k], X_OK) == 0) {
          execv(g.gl_pathv[k], argv);
          fprintf(stderr, "gpujit: cannot run %s: %s\n", g.gl_pathv[k], strerror(errno));
          globfree(&g);
          return 126;
        }
      globfree(&g);
    }
  }
  fprintf(stderr, "gpujit: the gpujit package is not beside %s (looked in ../lib/python3*/site-packages/gpujit and ../gpujit); "
                  "'python -m gpujit' runs it wherever Python can import it\n", self);
  return 127;
}
