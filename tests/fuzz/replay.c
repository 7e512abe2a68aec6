/* Replays fuzz inputs through a target without libFuzzer: every file named, and every file in
 * every directory named (not recursively). Built with the normal compiler, so each CTest run
 * replays the corpora, and a crash that once was found stays a regression test. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
  FILE *f = fopen(path, "rb");
  uint8_t *data;
  long n;
  if (!f) {
    fprintf(stderr, "replay: cannot open %s\n", path);
    return -1;
  }
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  /* An exact-size heap copy, as libFuzzer gives: a read past the end is caught by ASan. */
  data = malloc(n > 0 ? (size_t)n : 1);
  if (!data || (n > 0 && fread(data, 1, (size_t)n, f) != (size_t)n)) {
    fprintf(stderr, "replay: cannot read %s\n", path);
    fclose(f);
    free(data);
    return -1;
  }
  fclose(f);
  LLVMFuzzerTestOneInput(data, (size_t)n);
  free(data);
  return 0;
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv)
{
  size_t count = 0;
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
    return 2;
  }
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) < 0) {
      fprintf(stderr, "replay: %s: no such file or directory\n", argv[i]);
      return 1;
    }
    if (S_ISDIR(st.st_mode)) {
      DIR *d = opendir(argv[i]);
      struct dirent *e;
      char **names = NULL;
      size_t n = 0, cap = 0;
      if (!d)
        return 1;
      while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
          continue;
        if (n == cap) {
          cap = cap ? cap * 2 : 64;
          names = realloc(names, cap * sizeof(*names));
        }
        names[n] = malloc(strlen(argv[i]) + strlen(e->d_name) + 2);
        sprintf(names[n++], "%s/%s", argv[i], e->d_name);
      }
      closedir(d);
      qsort(names, n, sizeof(*names), cmp_names); /* the same order every run */
      for (size_t k = 0; k < n; k++) {
        if (replay_file(names[k]) < 0)
          return 1;
        free(names[k]);
        count++;
      }
      free(names);
    } else {
      if (replay_file(argv[i]) < 0)
        return 1;
      count++;
    }
  }
  printf("replayed %zu input%s\n", count, count == 1 ? "" : "s");
  return count ? 0 : 1;
}
