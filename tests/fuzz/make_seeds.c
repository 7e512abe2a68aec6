/* Writes the seeds that only the library can make from a real build: a worker's frames (a job's
 * options, a result and its image) and a remote store's bundle of one request.
 * Usage: fuzz_make_seeds CACHE_DIR SOURCE.cu OUT_DIR   (make_seeds.sh runs it) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "gpujit.h"
#include "cache/exchange/bundle.h"
#include "cache/records/manifests.h"
#include "module/module.h"
#include "project/wire.h"

static void die(const char *what)
{
  fprintf(stderr, "make_seeds: %s: %s\n", what, gpujit_error_last());
  exit(1);
}

static void frame(int fd, uint32_t type, const char *text, size_t len)
{
  if (gpujit__frame_write(fd, type, text, len) < 0)
    die("frame");
}

int main(int argc, char **argv)
{
  gpujit_cache_options co = GPUJIT_CACHE_OPTIONS_INIT;
  gpujit_module_options o = GPUJIT_MODULE_OPTIONS_INIT;
  const char *defines[] = {"N=4"}, *exprs[] = {"saxpy"};
  gpujit_cache *c = NULL;
  gpujit_module *m = NULL;
  char path[4096], *text;
  cJSON *job, *res;
  gpujit__buf bundle = {0};
  int fd;
  if (argc != 4) {
    fprintf(stderr, "usage: %s CACHE_DIR SOURCE.cu OUT_DIR\n", argv[0]);
    return 2;
  }
  co.dir = argv[1];
  if (gpujit_cache_open(&c, &co) < 0)
    die("cache");
  o.arch = "sm_90";
  o.cache = c;
  o.defines = defines;
  o.defines_count = 1;
  (void)exprs;
  if (gpujit_module_build_files(&m, (const char *const *)&argv[2], 1, &o) < 0)
    die("build");
  /* a worker's stream: a job, then a result and its image */
  snprintf(path, sizeof(path), "%s/wire_frames.bin", argv[3]);
  if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0)
    die(path);
  job = cJSON_CreateObject();
  cJSON_AddItemToObject(job, "options", gpujit__options_to_json(&o));
  cJSON_AddStringToObject(job, "name", "saxpy");
  text = cJSON_PrintUnformatted(job);
  frame(fd, GPUJIT__FRAME_JOB, text, strlen(text));
  free(text);
  res = cJSON_CreateObject();
  cJSON_AddItemToObject(res, "module", gpujit__module_to_json(m));
  text = cJSON_PrintUnformatted(res);
  frame(fd, GPUJIT__FRAME_RESULT, text, strlen(text));
  free(text);
  frame(fd, GPUJIT__FRAME_IMAGE, m->image.data, m->image.len);
  close(fd);
  cJSON_Delete(job);
  cJSON_Delete(res);
  /* the bundle a remote store holds for this request */
  {
    char request[33] = "", entry[33];
    snprintf(entry, sizeof(entry), "%s", m->cache_key);
    snprintf(path, sizeof(path), "%s/manifests", argv[1]);
    /* the request whose manifest names this entry: the one manifest of a fresh cache */
    FILE *p;
    char cmd[4200];
    snprintf(cmd, sizeof(cmd), "cd '%s/manifests' && ls */* | tr -d '/'", argv[1]);
    if (!(p = popen(cmd, "r")) || !fgets(request, sizeof(request), p))
      die("manifest");
    pclose(p);
    if (gpujit__bundle_pack(c, request, entry, &bundle) < 0)
      die("bundle");
    snprintf(path, sizeof(path), "%s/saxpy.bundle", argv[3]);
    if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0 || write(fd, bundle.data, bundle.len) != (ssize_t)bundle.len)
      die(path);
    close(fd);
  }
  gpujit__buf_free(&bundle);
  gpujit_module_free(m);
  gpujit_cache_free(c);
  return 0;
}
