/* The module object: construction, accessors, and writing its image. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/fs.h"
#include "base/output.h"
#include "compile/image/image.h"
#include "compile/image/params.h"
#include "module/module.h"

gpujit_module *gpujit__module_new(void) { return calloc(1, sizeof(gpujit_module)); }

void gpujit_module_free(gpujit_module *m)
{
  if (!m)
    return;
  free(m->name);
  gpujit__buf_free(&m->image);
  gpujit__strvec_free(&m->kernels);
  gpujit__strvec_free(&m->name_exprs);
  gpujit__strvec_free(&m->lowered);
  gpujit__strvec_free(&m->sources);
  free(m->log);
  gpujit__profile_free(m->profile);
  free(m->profile);
  free(m);
}

const void *gpujit_module_image(const gpujit_module *m, size_t *size)
{
  if (size)
    *size = m ? m->image.len : 0;
  return m ? m->image.data : NULL;
}

const char *gpujit_output_kind_name(gpujit_output_kind k)
{
  switch (k) {
  case GPUJIT_OUTPUT_CUBIN: return "cubin";
  case GPUJIT_OUTPUT_PTX: return "ptx";
  case GPUJIT_OUTPUT_LTOIR: return "ltoir";
  default: return "auto";
  }
}

gpujit_output_kind gpujit_module_output(const gpujit_module *m) { return m ? m->output : GPUJIT_OUTPUT_AUTO; }
const char *gpujit_module_arch(const gpujit_module *m) { return m ? m->arch : NULL; }
const char *gpujit_module_name(const gpujit_module *m) { return m ? m->name : NULL; }
size_t gpujit_module_kernel_count(const gpujit_module *m) { return m ? m->kernels.count : 0; }

const char *gpujit_module_kernel(const gpujit_module *m, size_t i)
{
  return m && i < m->kernels.count ? m->kernels.items[i] : NULL;
}

const char *gpujit_module_lowered_name(const gpujit_module *m, const char *expr)
{
  if (!m || !expr)
    return NULL;
  for (size_t i = 0; i < m->name_exprs.count && i < m->lowered.count; i++)
    if (strcmp(m->name_exprs.items[i], expr) == 0)
      return m->lowered.items[i];
  return NULL;
}

int gpujit_module_kernel_params(const gpujit_module *m, const char *kernel, int *sizes, int max)
{
  if (!m || !kernel || !sizes || m->output != GPUJIT_OUTPUT_CUBIN)
    return -1;
  return gpujit__cubin_params(m->image.data, m->image.len, kernel, sizes, max);
}

const char *gpujit_param_type_name(gpujit_param_type t)
{
  static const char *const names[] = {"unknown", "pointer", "bool", "int8", "uint8", "int16", "uint16", "int32",
                                      "uint32", "int64", "uint64", "float16", "bfloat16", "float32", "float64",
                                      "record"};
  return (unsigned)t < sizeof(names) / sizeof(names[0]) ? names[t] : "invalid";
}

size_t gpujit_param_type_size(gpujit_param_type t) { return gpujit__param_type_size(t); }

int gpujit_param_types_parse(gpujit_param_type *types, int max, int *count, const char *signature)
{
  if (!types || !count || !signature)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_param_types_parse: NULL argument");
  return gpujit__params_parse(signature, types, max, count);
}

int gpujit_module_kernel_param_types(const gpujit_module *m, const char *kernel, gpujit_param_type *types,
                                     int *sizes, int max, int *count)
{
  int sz[256], nsizes, ntypes = -1;
  bool found = false;
  if (!m || !kernel || !types || !count || max < 0)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_module_kernel_param_types: NULL argument");
  *count = -1;
  for (size_t i = 0; i < m->kernels.count && !found; i++)
    found = !strcmp(m->kernels.items[i], kernel);
  if (!found && m->kernels.count)
    return gpujit__error(GPUJIT_ENOENT, "no kernel '%s' in module %s", kernel, gpujit_module_name(m));
  nsizes = gpujit_module_kernel_params(m, kernel, sz, (int)(sizeof(sz) / sizeof(sz[0])));
  if (gpujit__params_demangle(kernel, types, max, &ntypes) < 0)
    ntypes = -1; /* a mangling not read: the sizes alone */
  if (ntypes >= 0 && nsizes >= 0) {
    /* the cubin has the last word: a type whose size disagrees is not trusted */
    bool agree = ntypes == nsizes;
    for (int i = 0; agree && i < ntypes; i++) {
      size_t want = gpujit__param_type_size(types[i]);
      agree = want == 0 || want == (size_t)sz[i];
    }
    if (!agree)
      ntypes = -1;
  }
  if (ntypes < 0 && nsizes >= 0) {
    if (nsizes > max)
      return gpujit__error(GPUJIT_EINVAL, "kernel '%s' has %d parameters; room for %d", kernel, nsizes, max);
    for (int i = 0; i < nsizes; i++)
      types[i] = GPUJIT_PARAM_UNKNOWN;
    ntypes = nsizes;
  }
  if (sizes)
    for (int i = 0; i < ntypes && i < max; i++)
      sizes[i] = nsizes >= 0 && i < nsizes ? sz[i] : (int)gpujit__param_type_size(types[i]);
  *count = ntypes;
  return 0;
}

size_t gpujit_module_name_expression_count(const gpujit_module *m) { return m ? m->name_exprs.count : 0; }

const char *gpujit_module_name_expression(const gpujit_module *m, size_t i, const char **lowered)
{
  if (lowered)
    *lowered = NULL;
  if (!m || i >= m->name_exprs.count)
    return NULL;
  if (lowered && i < m->lowered.count)
    *lowered = m->lowered.items[i];
  return m->name_exprs.items[i];
}

const char *gpujit_module_log(const gpujit_module *m) { return m && m->log ? m->log : ""; }

void gpujit_module_timings_get(const gpujit_module *m, gpujit_module_timings *out)
{
  if (!out)
    return;
  if (m) {
    *out = m->timings;
    out->front_end_ms = m->phase_ms[0];
    out->optimizer_ms = m->phase_ms[1];
    out->codegen_ms = m->phase_ms[2];
    out->ptxas_ms = m->phase_ms[3];
  } else {
    memset(out, 0, sizeof(*out));
  }
}

gpujit_cache_status gpujit_module_cache_status(const gpujit_module *m) { return m ? m->cache_status : GPUJIT_CACHE_NONE; }
int gpujit_module_uncacheable(const gpujit_module *m) { return m && m->uncacheable; }

const char *gpujit_module_cache_miss_reason(const gpujit_module *m)
{
  return m && m->cache_status == GPUJIT_CACHE_MISS ? m->miss_reason : "";
}

const char *gpujit_module_cache_key(const gpujit_module *m)
{
  return m && m->cache_key[0] ? m->cache_key : NULL;
}

int gpujit_module_write(const gpujit_module *m, const char *path)
{
  if (!m || !path)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_module_write: NULL argument");
  int err = gpujit__file_update(path, m->image.data ? m->image.data : "", m->image.len);
  return err < 0 ? err : 0;
}

void gpujit_module_lean_get(const gpujit_module *m, gpujit_module_lean *out)
{
  if (!out)
    return;
  memset(out, 0, sizeof(*out));
  if (m)
    *out = m->lean;
  out->note = m ? m->lean_note : "";
}

gpujit_pch_status gpujit_module_pch(const gpujit_module *m, const char **reason)
{
  if (reason)
    *reason = m ? m->pch_reason : "";
  return m ? m->pch : GPUJIT_PCH_STATUS_OFF;
}

const char *gpujit_pch_status_name(gpujit_pch_status status)
{
  switch (status) {
  case GPUJIT_PCH_STATUS_NONE: return "none";
  case GPUJIT_PCH_STATUS_CREATED: return "created";
  case GPUJIT_PCH_STATUS_USED: return "used";
  case GPUJIT_PCH_STATUS_REFUSED: return "refused";
  default: return "off";
  }
}
