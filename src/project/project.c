/* The project object: modules added one by one, from a directory, or from a JSON manifest. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/fs.h"
#include "compile/nvrtc/options.h"
#include "module/module.h"
#include "project/project.h"
#include "project/wire.h"

int gpujit_project_create(gpujit_project **out)
{
  if (!out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_project_create: NULL out");
  if (!(*out = calloc(1, sizeof(**out))))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  return 0;
}

static void clear_result(gpujit__project_module *m)
{
  free(m->message);
  free(m->log);
  free(m->pch_reason);
  free(m->miss_reason);
  gpujit_module_free(m->module);
  m->message = m->log = m->pch_reason = m->miss_reason = NULL;
  m->module = NULL;
  memset(&m->r, 0, sizeof(m->r));
}

void gpujit__project_reset(gpujit_project *p)
{
  for (size_t i = 0; i < p->count; i++) {
    clear_result(&p->mods[i]);
    p->mods[i].r.index = i;
    p->mods[i].r.name = p->mods[i].name;
    p->mods[i].r.output = p->mods[i].output;
    p->mods[i].r.message = p->mods[i].r.log = p->mods[i].r.pch_reason = p->mods[i].r.miss_reason = "";
  }
  memset(&p->summary, 0, sizeof(p->summary));
  p->summary.modules = p->count;
}

static void module_release(gpujit__project_module *m)
{
  clear_result(m);
  for (size_t k = 0; k < m->files_count; k++)
    free(m->files[k]);
  free(m->files);
  free(m->name);
  free(m->output);
  cJSON_Delete(m->options);
}

void gpujit_project_free(gpujit_project *p)
{
  if (!p)
    return;
  for (size_t i = 0; i < p->count; i++)
    module_release(&p->mods[i]);
  free(p->mods);
  free(p);
}

size_t gpujit_project_count(const gpujit_project *p) { return p ? p->count : 0; }

const gpujit_project_result *gpujit_project_result_get(const gpujit_project *p, size_t i)
{
  return p && i < p->count ? &p->mods[i].r : NULL;
}

void gpujit_project_summary_get(const gpujit_project *p, gpujit_project_summary *out)
{
  if (out)
    memset(out, 0, sizeof(*out));
  if (p && out)
    *out = p->summary;
}

void gpujit__project_finish(gpujit_project *p, size_t i, gpujit_project_status status, gpujit_module *m, int error,
                            const char *message, const char *log, bool keep)
{
  gpujit__project_module *pm = &p->mods[i];
  const char *reason = "";
  struct stat st;
  /* a module that failed leaves no output, as compilers do: never an older build's image */
  if (status == GPUJIT_PROJECT_FAILED && pm->output && lstat(pm->output, &st) == 0 && S_ISREG(st.st_mode))
    unlink(pm->output);
  pm->r.status = status;
  pm->r.error = error;
  free(pm->message);
  free(pm->log);
  free(pm->pch_reason);
  pm->message = gpujit__strdup(message ? message : "");
  pm->log = gpujit__strdup(log ? log : (m ? gpujit_module_log(m) : ""));
  pm->r.pch = m ? gpujit_module_pch(m, &reason) : GPUJIT_PCH_STATUS_OFF;
  pm->pch_reason = gpujit__strdup(reason);
  pm->r.message = pm->message ? pm->message : "";
  pm->r.log = pm->log ? pm->log : "";
  pm->r.pch_reason = pm->pch_reason ? pm->pch_reason : "";
  if (m) {
    gpujit_module_timings t;
    gpujit_module_timings_get(m, &t);
    pm->r.compile_ms = status == GPUJIT_PROJECT_HIT ? 0 : t.compile_ms + t.link_ms;
  }
  if (keep && m)
    pm->module = m;
  else
    gpujit_module_free(m);
  pm->r.module = pm->module;
}

/* ---- adding modules ------------------------------------------------------------------------ */

static int add_json(gpujit_project *p, const char *name, const char *const *files, size_t count, cJSON *options,
                    const char *output)
{
  gpujit__project_module *m;
  int err = 0;
  if (!files || count == 0) {
    cJSON_Delete(options);
    return gpujit__error(GPUJIT_EINVAL, "module %s: no files", name ? name : "(unnamed)");
  }
  if (!(m = gpujit__grow(p->mods, &p->cap, p->count, sizeof(*m), 16))) {
    cJSON_Delete(options);
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  }
  p->mods = m;
  m = &p->mods[p->count];
  memset(m, 0, sizeof(*m));
  m->options = options;
  if (!(m->files = calloc(count, sizeof(char *))))
    err = GPUJIT_ENOMEM;
  for (size_t i = 0; err == 0 && i < count; i++) {
    if (!files[i] || !files[i][0])
      err = gpujit__error(GPUJIT_EINVAL, "module %s: file %zu is empty", name ? name : "(unnamed)", i);
    else if (!(m->files[m->files_count++] = gpujit__strdup(files[i])))
      err = GPUJIT_ENOMEM;
  }
  if (err == 0 && !name) {
    m->name = gpujit__stem(files[0]);
  } else if (err == 0) {
    m->name = gpujit__strdup(name);
  }
  if (err == 0 && (!m->name || !m->options || (output && !(m->output = gpujit__strdup(output)))))
    err = GPUJIT_ENOMEM;
  if (err < 0) {
    module_release(m);
    return err == GPUJIT_ENOMEM ? gpujit__error(GPUJIT_ENOMEM, "out of memory") : err;
  }
  p->count++;
  return 0;
}

static int check_options(const gpujit_module_options *opts)
{
  return opts ? gpujit_module_options_validate(opts) : 0;
}

static cJSON *options_json(const gpujit_module_options *opts)
{
  gpujit_module_options cur;
  gpujit__options_current(&cur, opts);
  return gpujit__options_to_json(&cur);
}

int gpujit_project_add(gpujit_project *p, const char *name, const char *const *files, size_t count,
                       const gpujit_module_options *opts, const char *output)
{
  int err;
  if (!p)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_project_add: NULL project");
  if ((err = check_options(opts)) < 0)
    return err;
  return add_json(p, name, files, count, options_json(opts), output);
}

static const char *ext_of(const gpujit_module_options *opts, const char *ext)
{
  if (ext)
    return ext;
  if (opts && opts->output != GPUJIT_OUTPUT_AUTO)
    return gpujit_output_kind_name(opts->output);
  return opts && opts->arch && strncmp(opts->arch, "compute_", 8) == 0 ? "ptx" : "cubin";
}

/* Every *.cu beneath `dir`, relative paths in `out`. */
static int walk(gpujit__strvec *out, const char *root, const char *rel)
{
  char path[4096];
  struct dirent **names = NULL;
  int n, err = 0;
  snprintf(path, sizeof(path), "%s%s%s", root, *rel ? "/" : "", rel);
  if ((n = scandir(path, &names, NULL, alphasort)) < 0)
    return gpujit__error(errno == ENOENT || errno == ENOTDIR ? GPUJIT_ENOENT : GPUJIT_EIO, "%s: %s", path,
                         strerror(errno));
  for (int i = 0; i < n; i++) {
    const char *d = names[i]->d_name;
    size_t len = strlen(d);
    char child[4096], full[8192];
    struct stat st;
    if (err == 0 && d[0] != '.') {
      snprintf(child, sizeof(child), "%s%s%s", rel, *rel ? "/" : "", d);
      snprintf(full, sizeof(full), "%s/%s", root, child);
      if (stat(full, &st) == 0 && S_ISDIR(st.st_mode))
        err = walk(out, root, child);
      else if (len > 3 && strcmp(d + len - 3, ".cu") == 0 && stat(full, &st) == 0 && S_ISREG(st.st_mode))
        err = gpujit__strvec_push(out, child);
    }
    free(names[i]);
  }
  free(names);
  return err;
}

int gpujit_project_add_dir(gpujit_project *p, const char *dir, const char *out_dir, const gpujit_module_options *opts,
                           const char *ext)
{
  gpujit__strvec rels = {0};
  int err;
  if (!p || !dir)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_project_add_dir: NULL argument");
  if ((err = check_options(opts)) < 0)
    return err;
  if (!gpujit__is_dir(dir))
    return gpujit__error(GPUJIT_ENOENT, "%s: not a directory", dir);
  ext = ext_of(opts, ext);
  if ((err = walk(&rels, dir, "")) == 0 && rels.count == 0)
    err = gpujit__error(GPUJIT_ENOENT, "%s: no .cu files beneath it", dir);
  for (size_t i = 0; err == 0 && i < rels.count; i++) {
    char file[8192], output[8192], name[4096];
    const char *f = file;
    size_t stem = strlen(rels.items[i]) - 3;
    snprintf(file, sizeof(file), "%s/%s", dir, rels.items[i]);
    snprintf(name, sizeof(name), "%.*s", (int)stem, rels.items[i]);
    snprintf(output, sizeof(output), "%s/%s.%s", out_dir ? out_dir : dir, name, ext);
    err = add_json(p, name, &f, 1, options_json(opts), output);
  }
  gpujit__strvec_free(&rels);
  return err;
}

/* A manifest path: absolute as is, else from the manifest's directory. */
static char *from_manifest(const char *mdir, const char *path)
{
  gpujit__buf b = {0};
  if (path[0] == '/')
    return gpujit__strdup(path);
  if (gpujit__buf_printf(&b, "%s/%s", mdir, path) < 0)
    return NULL;
  return b.data;
}

static int add_manifest_module(gpujit_project *p, const cJSON *jm, size_t index, const char *mdir,
                               const cJSON *base, const char *out_dir, const char *ext)
{
  const cJSON *jname = cJSON_GetObjectItemCaseSensitive(jm, "name"), *jfiles = cJSON_GetObjectItemCaseSensitive(jm, "files");
  const cJSON *jout = cJSON_GetObjectItemCaseSensitive(jm, "output"), *jopts = cJSON_GetObjectItemCaseSensitive(jm, "options");
  const cJSON *f;
  gpujit__strvec files = {0};
  gpujit__options_holder h;
  char what[300], *output = NULL;
  cJSON *options;
  int err = 0;

  if (!cJSON_IsObject(jm))
    return gpujit__error(GPUJIT_EPARSE, "module %zu: not an object", index);
  if (jname && !cJSON_IsString(jname))
    return gpujit__error(GPUJIT_EPARSE, "module %zu: \"name\" must be a string", index);
  snprintf(what, sizeof(what), "module %zu (%s)", index, jname ? jname->valuestring : "unnamed");
  if (!cJSON_IsArray(jfiles) || cJSON_GetArraySize(jfiles) == 0)
    return gpujit__error(GPUJIT_EPARSE, "%s: \"files\" must be a non-empty array of paths", what);
  cJSON_ArrayForEach(f, jfiles) {
    char *path;
    if (!cJSON_IsString(f) || !f->valuestring[0]) {
      err = gpujit__error(GPUJIT_EPARSE, "%s: \"files\" must be a non-empty array of paths", what);
      break;
    }
    if (!(path = from_manifest(mdir, f->valuestring)) || gpujit__strvec_push(&files, path) < 0)
      err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
    free(path);
    if (err < 0)
      break;
  }
  if (err == 0 && jout && (!cJSON_IsString(jout) || !jout->valuestring[0]))
    err = gpujit__error(GPUJIT_EPARSE, "%s: \"output\" must be a path", what);
  if (err == 0 && !(options = gpujit__options_merge(base, jopts)))
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
  if (err == 0) { /* the options must parse and validate here, not in a worker */
    if ((err = gpujit__options_from_json(&h, options, what)) == 0 && (err = gpujit_module_options_validate(&h.o)) < 0) {
      char msg[512];
      snprintf(msg, sizeof(msg), "%s", gpujit_error_last()); /* not formatted into itself */
      err = gpujit__error(err, "%s: %s", what, msg);
    }
    gpujit__options_holder_free(&h);
    if (err == 0 && jout) {
      output = from_manifest(mdir, jout->valuestring);
    } else if (err == 0) {
      const char *name = jname ? jname->valuestring : NULL;
      char *stem = NULL;
      if (!name)
        name = stem = gpujit__stem(files.items[0]);
      if (out_dir) {
        gpujit__buf ob = {0};
        gpujit__buf_printf(&ob, "%s/%s.%s", out_dir, name, ext);
        output = ob.data;
      } else {
        char *d = gpujit__dirname(files.items[0]);
        gpujit__buf ob = {0};
        gpujit__buf_printf(&ob, "%s/%s.%s", d ? d : ".", name, ext);
        output = ob.data;
        free(d);
      }
      free(stem);
    }
    if (err == 0)
      err = add_json(p, jname ? jname->valuestring : NULL, (const char *const *)files.items, files.count, options,
                     output);
    else
      cJSON_Delete(options);
  }
  free(output);
  gpujit__strvec_free(&files);
  return err;
}

int gpujit_project_add_manifest(gpujit_project *p, const char *path, const char *out_dir,
                                const gpujit_module_options *opts, const char *ext)
{
  gpujit__buf text = {0};
  cJSON *root = NULL, *base = NULL;
  const cJSON *mods, *jm;
  char *mdir = NULL;
  size_t i = 0, before;
  int err;
  if (!p || !path)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_project_add_manifest: NULL argument");
  if ((err = check_options(opts)) < 0)
    return err;
  if ((err = gpujit__file_read(&text, path)) < 0)
    return err;
  before = p->count;
  if (!(root = cJSON_ParseWithLength(text.data ? text.data : "", text.len))) {
    err = gpujit__error(GPUJIT_EPARSE, "%s: not valid JSON", path);
    goto done;
  }
  mods = cJSON_GetObjectItemCaseSensitive(root, "modules");
  if (!cJSON_IsArray(mods) || cJSON_GetArraySize(mods) == 0) {
    err = gpujit__error(GPUJIT_EPARSE, "%s: expected {\"modules\": [ … ]} with at least one module", path);
    goto done;
  }
  if (!(mdir = gpujit__dirname(path)) || !(base = options_json(opts))) {
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
    goto done;
  }
  cJSON_ArrayForEach(jm, mods) {
    if ((err = add_manifest_module(p, jm, i++, mdir, base, out_dir, ext_of(opts, ext))) < 0) {
      char msg[512];
      snprintf(msg, sizeof(msg), "%s", gpujit_error_last()); /* not formatted into itself */
      err = gpujit__error(err, "%s: %s", path, msg);
      break;
    }
  }
  while (err < 0 && p->count > before) /* all or nothing */
    module_release(&p->mods[--p->count]);
done:
  free(mdir);
  cJSON_Delete(base);
  cJSON_Delete(root);
  gpujit__buf_free(&text);
  return err;
}
