/* Walks of the cache's file trees: every file beneath a directory, every record of a layout. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "cache/store/files.h"

int gpujit__walk_files(const char *root, const char *rel, gpujit__file_fn fn, void *payload)
{
  char path[PATH_MAX];
  struct dirent **names = NULL;
  int n, err = 0;
  snprintf(path, sizeof(path), "%s/%s", root, rel);
  if ((n = scandir(path, &names, NULL, alphasort)) < 0)
    return gpujit__error(GPUJIT_EIO, "%s: %s", path, strerror(errno));
  for (int i = 0; i < n; i++) {
    char child[PATH_MAX], full[PATH_MAX + 8];
    struct stat st;
    if (err == 0 && strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, "..")) {
      snprintf(child, sizeof(child), "%s/%s", rel, names[i]->d_name);
      snprintf(full, sizeof(full), "%s/%s", root, child);
      if (lstat(full, &st) == 0 && S_ISDIR(st.st_mode))
        err = gpujit__walk_files(root, child, fn, payload);
      else if (S_ISREG(st.st_mode))
        err = fn(root, child, payload);
    }
    free(names[i]);
  }
  free(names);
  return err;
}

int gpujit__each_record(const char *dir, const char *what, gpujit__record_fn fn, void *payload)
{
  char top_path[PATH_MAX];
  DIR *top;
  struct dirent *d;
  int err = 0;
  snprintf(top_path, sizeof(top_path), "%s/%s", dir, what);
  if (!(top = opendir(top_path)))
    return 0;
  while (err == 0 && (d = readdir(top))) {
    char sub[PATH_MAX + 8];
    DIR *in;
    struct dirent *f;
    if (strlen(d->d_name) != 2)
      continue;
    snprintf(sub, sizeof(sub), "%s/%s", top_path, d->d_name);
    if (!(in = opendir(sub)))
      continue;
    while (err == 0 && (f = readdir(in))) {
      char hex[40], p[PATH_MAX + 64];
      if (strlen(f->d_name) != 30)
        continue;
      snprintf(hex, sizeof(hex), "%s%s", d->d_name, f->d_name);
      snprintf(p, sizeof(p), "%s/%s", sub, f->d_name);
      err = fn(p, hex, payload);
    }
    closedir(in);
  }
  closedir(top);
  return err;
}
