/* `gpujit run`'s launch plan: dimensions, launch files, and the checks made before anything runs. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

bool parse_dims(const char *s, unsigned out[3])
{
  char *end;
  out[0] = out[1] = out[2] = 1;
  for (int i = 0; i < 3; i++) {
    unsigned long v;
    errno = 0;
    v = strtoul(s, &end, 10);
    if (errno || end == s || v == 0 || v > 0xffffffffUL)
      return false;
    out[i] = (unsigned)v;
    if (*end == '\0')
      return true;
    if (*end != ',')
      return false;
    s = end + 1;
  }
  return false;
}

/* A grid or block size: a whole number from 1 to 2^31 - 1 (parse_dims checks the rest). */
static bool whole_dim(const cJSON *e)
{
  return cJSON_IsNumber(e) && e->valuedouble >= 1 && e->valuedouble <= 2147483647.0 &&
         e->valuedouble == (double)(long)e->valuedouble;
}

static bool dims_json(const cJSON *j, unsigned out[3])
{
  char buf[96];
  const cJSON *e;
  size_t n = 0;
  if (cJSON_IsString(j))
    return parse_dims(j->valuestring, out);
  if (cJSON_IsNumber(j)) {
    if (!whole_dim(j))
      return false;
    snprintf(buf, sizeof(buf), "%.0f", j->valuedouble);
    return parse_dims(buf, out);
  }
  if (!cJSON_IsArray(j) || cJSON_GetArraySize(j) < 1 || cJSON_GetArraySize(j) > 3)
    return false;
  buf[0] = '\0';
  cJSON_ArrayForEach(e, j) {
    if (!whole_dim(e))
      return false;
    snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%.0f", n++ ? "," : "", e->valuedouble);
  }
  return parse_dims(buf, out);
}

int load_launch_file(cli_ctx *ctx, run_ctx *r, const char *path)
{
  FILE *f = fopen(path, "rb");
  char *text;
  long size;
  cJSON *root, *arr, *e;
  int rc = EXIT_OK;
  size_t idx = 0;
  if (!f) {
    fprintf(stderr, "%s: error: %s: %s\n", ctx->prog, path, strerror(errno));
    return EXIT_IO;
  }
  fseek(f, 0, SEEK_END);
  size = ftell(f);
  fseek(f, 0, SEEK_SET);
  text = malloc((size_t)size + 1);
  if (!text || fread(text, 1, (size_t)size, f) != (size_t)size) {
    fclose(f);
    free(text);
    fprintf(stderr, "%s: error: %s: read failed\n", ctx->prog, path);
    return EXIT_IO;
  }
  fclose(f);
  text[size] = '\0';
  root = cJSON_Parse(text);
  free(text);
  arr = cJSON_IsArray(root) ? root : cJSON_GetObjectItemCaseSensitive(root, "launches");
  if (!root || !cJSON_IsArray(arr)) {
    fprintf(stderr, "%s: error: %s: %s\n", ctx->prog, path,
            root ? "expected {\"launches\": [...]} or an array of launches" : "not valid JSON");
    cJSON_Delete(root);
    return EXIT_INPUT;
  }
  cJSON_ArrayForEach(e, arr) {
    launch *l;
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "kernel"), *args = cJSON_GetObjectItemCaseSensitive(e, "args");
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(e, "shared"), *a;
    idx++;
    if (r->nlaunches == MAX_LAUNCHES) {
      fprintf(stderr, "%s: error: %s: more than %d launches\n", ctx->prog, path, MAX_LAUNCHES);
      rc = EXIT_INPUT;
      break;
    }
    l = &r->launches[r->nlaunches];
    memset(l, 0, sizeof(*l));
    if (!cJSON_IsString(k) || !dims_json(cJSON_GetObjectItemCaseSensitive(e, "grid"), l->grid) ||
        !dims_json(cJSON_GetObjectItemCaseSensitive(e, "block"), l->block) || (args && !cJSON_IsArray(args)) ||
        (sh && (!cJSON_IsNumber(sh) || !(sh->valuedouble >= 0 && sh->valuedouble <= 4294967295.0)))) {
      fprintf(stderr, "%s: error: %s: launch %zu needs \"kernel\" (string), \"grid\" and \"block\" (1-3 positive "
                      "numbers), optional \"shared\" (bytes) and \"args\" (array of specs)\n",
              ctx->prog, path, idx);
      rc = EXIT_INPUT;
      break;
    }
    snprintf(l->kernel, sizeof(l->kernel), "%s", k->valuestring);
    l->shared = sh ? (unsigned)sh->valuedouble : 0;
    cJSON_ArrayForEach(a, args) {
      if (!cJSON_IsString(a) || l->nargs == MAX_ARGS) {
        fprintf(stderr, "%s: error: %s: launch %zu: arguments are spec strings (at most %d)\n", ctx->prog, path, idx,
                MAX_ARGS);
        rc = EXIT_INPUT;
        break;
      }
      if (gpujit_arg_spec_parse(&l->args[l->nargs++], a->valuestring) < 0) {
        fprintf(stderr, "%s: error: %s: launch %zu: %s\n", ctx->prog, path, idx, gpujit_error_last());
        rc = EXIT_USAGE;
        break;
      }
    }
    if (rc != EXIT_OK)
      break;
    r->nlaunches++;
  }
  cJSON_Delete(root);
  if (rc == EXIT_OK && r->nlaunches == 0) {
    fprintf(stderr, "%s: error: %s: no launches\n", ctx->prog, path);
    rc = EXIT_INPUT;
  }
  return rc;
}

buffer *find_buffer(run_ctx *r, const char *name)
{
  for (size_t i = 0; i < r->nbuffers; i++)
    if (r->buffers[i].spec->name[0] && strcmp(r->buffers[i].spec->name, name) == 0)
      return &r->buffers[i];
  return NULL;
}

/* Everything that can be checked without a GPU: names, references, argument counts and sizes. */
int validate_plan(cli_ctx *ctx, run_ctx *r, const gpujit_module *m)
{
  for (size_t i = 0; i < r->nlaunches; i++) {
    launch *l = &r->launches[i];
    const char *sym = gpujit_module_lowered_name(m, l->kernel);
    int sizes[MAX_ARGS], n;
    bool found = false;
    if (!sym)
      sym = l->kernel;
    for (size_t k = 0; k < gpujit_module_kernel_count(m); k++)
      found |= strcmp(gpujit_module_kernel(m, k), sym) == 0;
    if (!found) {
      fprintf(stderr, "%s: run: unknown kernel '%s'; the module has:", ctx->prog, l->kernel);
      for (size_t k = 0; k < gpujit_module_kernel_count(m); k++)
        fprintf(stderr, " %s", gpujit_module_kernel(m, k));
      fprintf(stderr, "\n");
      return EXIT_USAGE;
    }
    if (sym != l->kernel) {
      /* Keep the expression, then take the lowered name. (Plain copies: GCC 12's -Wrestrict
       * misreads snprintf between two fields of one struct under the sanitizers.) */
      size_t len = strnlen(l->kernel, sizeof(l->expr) - 1);
      memcpy(l->expr, l->kernel, len);
      l->expr[len] = '\0';
      len = strnlen(sym, sizeof(l->kernel) - 1);
      memmove(l->kernel, sym, len);
      l->kernel[len] = '\0';
    }
    sym = l->kernel;
    n = gpujit_module_kernel_params(m, sym, sizes, MAX_ARGS);
    if (n >= 0 && (size_t)n != l->nargs) {
      fprintf(stderr, "%s: run: kernel %s takes %d argument%s; %zu given\n", ctx->prog, sym, n, n == 1 ? "" : "s",
              l->nargs);
      return EXIT_USAGE;
    }
    for (size_t a = 0; a < l->nargs; a++) {
      gpujit_arg_spec *s = &l->args[a];
      if (n >= 0 && (size_t)sizes[a] != gpujit_arg_size(s)) {
        fprintf(stderr, "%s: run: kernel %s argument %zu is %d bytes; the spec gives %zu\n", ctx->prog, sym, a + 1,
                sizes[a], gpujit_arg_size(s));
        return EXIT_USAGE;
      }
      if (s->type == GPUJIT_ARG_REF && !find_buffer(r, s->name)) {
        fprintf(stderr, "%s: run: argument %zu of %s refers to buffer '%s', not named before it\n", ctx->prog, a + 1,
                sym, s->name);
        return EXIT_USAGE;
      }
      if (s->type == GPUJIT_ARG_BUFFER) {
        if (s->name[0] && find_buffer(r, s->name)) {
          fprintf(stderr, "%s: run: buffer name '%s' is used twice (refer to it as @%s)\n", ctx->prog, s->name, s->name);
          return EXIT_USAGE;
        }
        r->buffers[r->nbuffers].spec = s;
        r->buffers[r->nbuffers].bytes = (size_t)s->count * gpujit_arg_type_size(s->elem);
        r->nbuffers++;
      }
    }
  }
  return EXIT_OK;
}

