/* Module option validation, arch syntax and support, and NVRTC flag building. */
#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/fs.h"
#include "compile/nvrtc/nvrtc.h"
#include "compile/toolkit/nvrtc_opts.h"
#include "compile/nvrtc/options.h"
#include "compile/toolkit/toolkit.h"

int gpujit_module_options_init(gpujit_module_options *opts, unsigned int version)
{
  static const gpujit_module_options init = GPUJIT_MODULE_OPTIONS_INIT;
  if (!opts)
    return gpujit__error(GPUJIT_EINVAL, "options: NULL");
  if (version != GPUJIT_MODULE_OPTIONS_VERSION)
    return gpujit__error(GPUJIT_EVERSION, "module options version %u is not supported (expected %u)",
                         version, GPUJIT_MODULE_OPTIONS_VERSION);
  *opts = init;
  return 0;
}

/* sm_90, sm_90a, sm_100f, compute_90, compute_90a; returns the numeric arch or -1. */
static int parse_arch(const char *arch, bool *is_virtual)
{
  const char *p;
  int n = 0, digits = 0;
  if (strncmp(arch, "sm_", 3) == 0) {
    p = arch + 3;
    *is_virtual = false;
  } else if (strncmp(arch, "compute_", 8) == 0) {
    p = arch + 8;
    *is_virtual = true;
  } else {
    return -1;
  }
  while (isdigit((unsigned char)*p) && digits < 4) {
    n = n * 10 + (*p++ - '0');
    digits++;
  }
  if (digits < 2)
    return -1;
  if ((*p == 'a' || *p == 'f') && p[1] == '\0')
    return n;
  return *p == '\0' ? n : -1;
}

/* Syntax only: a cache hit must not initialise NVRTC. */
int gpujit__check_arch_syntax(const char *arch)
{
  bool virt;
  if (parse_arch(arch, &virt) < 0)
    return gpujit__error(GPUJIT_EINVAL,
                         "invalid --arch '%s': expected sm_XX or compute_XX (e.g. sm_90, compute_90)",
                         arch);
  return 0;
}

int gpujit__check_arch_supported(const char *arch)
{
  bool virt;
  int n = parse_arch(arch, &virt), err;
  if ((err = gpujit__check_arch_syntax(arch)) < 0)
    return err;
  if ((err = gpujit__nvrtc_init()) < 0)
    return err;
  if (!gpujit__nvrtc_arch_supported(n))
    return gpujit__error(GPUJIT_EINVAL, "invalid --arch '%s': this NVRTC does not support arch %d", arch, n);
  return 0;
}

static bool is_ident_start(char c) { return isalpha((unsigned char)c) || c == '_'; }
static bool is_ident(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* NAME, NAME=VALUE or NAME(args)=VALUE. */
static int check_macro(const char *what, const char *s, bool allow_value)
{
  const char *p = s;
  if (!s || !is_ident_start(*p))
    return gpujit__error(GPUJIT_EINVAL, "invalid %s '%s': a macro name must start with a letter or _",
                         what, s ? s : "(null)");
  while (is_ident(*p))
    p++;
  if (*p == '\0')
    return 0;
  if (allow_value && (*p == '=' || *p == '('))
    return 0;
  return gpujit__error(GPUJIT_EINVAL, "invalid %s '%s': not a macro name%s", what, s,
                       allow_value ? " (use NAME or NAME=VALUE)" : "");
}

static int check_list(const char *what, const char *const *items, size_t count)
{
  if (count && !items)
    return gpujit__error(GPUJIT_EINVAL, "%s: count %zu with a NULL list", what, count);
  for (size_t i = 0; i < count; i++)
    if (!items[i] || !items[i][0])
      return gpujit__error(GPUJIT_EINVAL, "%s: entry %zu is empty", what, i);
  return 0;
}

int gpujit_module_options_validate(const gpujit_module_options *opts)
{
  static const char *const stds[] = {"c++03", "c++11", "c++14", "c++17", "c++20"};
  static const char *const ofast[] = {"0", "min", "mid", "max"};
  int err;
  size_t i;

  if (!opts)
    return 0;
  if (opts->version > GPUJIT_MODULE_OPTIONS_VERSION || opts->version < 1)
    return gpujit__error(GPUJIT_EVERSION, "module options version %u is not supported (expected 1..%u)",
                         opts->version, GPUJIT_MODULE_OPTIONS_VERSION);
  if (opts->version >= 2 && (unsigned)opts->pch > GPUJIT_PCH_ON)
    return gpujit__error(GPUJIT_EINVAL, "invalid pch mode %d", (int)opts->pch);
  if (opts->arch && (err = gpujit__check_arch_syntax(opts->arch)) < 0)
    return err;
  if ((unsigned)opts->output > GPUJIT_OUTPUT_LTOIR)
    return gpujit__error(GPUJIT_EINVAL, "invalid output kind %d", (int)opts->output);
  if (opts->output == GPUJIT_OUTPUT_CUBIN && opts->arch && strncmp(opts->arch, "compute_", 8) == 0)
    return gpujit__error(GPUJIT_EINVAL, "a cubin needs a real arch (sm_XX), not '%s'", opts->arch);
  if (opts->std) {
    for (i = 0; i < sizeof(stds) / sizeof(stds[0]) && strcmp(opts->std, stds[i]) != 0; i++)
      ;
    if (i == sizeof(stds) / sizeof(stds[0]))
      return gpujit__error(GPUJIT_EINVAL, "invalid --std '%s': expected c++03, c++11, c++14, c++17 or c++20",
                           opts->std);
  }
  if (opts->maxrregcount < 0 || opts->maxrregcount > 255 ||
      (opts->maxrregcount > 0 && opts->maxrregcount < 16))
    return gpujit__error(GPUJIT_EINVAL, "invalid --maxrregcount %d: expected 16..255 (0 for no limit)",
                         opts->maxrregcount);
  if (opts->ofast_compile) {
    for (i = 0; i < 4 && strcmp(opts->ofast_compile, ofast[i]) != 0; i++)
      ;
    if (i == 4)
      return gpujit__error(GPUJIT_EINVAL, "invalid --Ofast-compile '%s': expected 0, min, mid or max",
                           opts->ofast_compile);
  }
  if ((err = check_list("include directories", opts->include_dirs, opts->include_dirs_count)) < 0 ||
      (err = check_list("defines", opts->defines, opts->defines_count)) < 0 ||
      (err = check_list("undefines", opts->undefines, opts->undefines_count)) < 0 ||
      (err = check_list("name expressions", opts->name_expressions, opts->name_expressions_count)) < 0 ||
      (err = check_list("NVRTC options", opts->nvrtc_options, opts->nvrtc_options_count)) < 0)
    return err;
  for (i = 0; i < opts->include_dirs_count; i++)
    if (!gpujit__is_dir(opts->include_dirs[i]))
      return gpujit__error(GPUJIT_EINVAL, gpujit__exists(opts->include_dirs[i])
                                              ? "include directory '%s' is a file, not a directory"
                                              : "include directory '%s' does not exist",
                           opts->include_dirs[i]);
  for (i = 0; i < opts->defines_count; i++)
    if ((err = check_macro("define", opts->defines[i], true)) < 0)
      return err;
  for (i = 0; i < opts->undefines_count; i++)
    if ((err = check_macro("undefine", opts->undefines[i], false)) < 0)
      return err;
  {
    gpujit__nvrtc_opts parsed; /* read as NVRTC reads them: a value may follow in the next element */
    if ((err = gpujit__nvrtc_opts_parse(&parsed, (const char *const *)opts->nvrtc_options,
                                        opts->nvrtc_options_count)) < 0)
      return err;
    gpujit__nvrtc_opts_free(&parsed);
  }
  return 0;
}

void gpujit__options_current(gpujit_module_options *dst, const gpujit_module_options *src)
{
  static const gpujit_module_options init = GPUJIT_MODULE_OPTIONS_INIT;
  *dst = init;
  if (!src)
    return;
  if (src->version == 1) /* version 1 ends before `pch` */
    memcpy(dst, src, offsetof(gpujit_module_options, pch));
  else if (src->version == 2) /* version 2 before `lean` */
    memcpy(dst, src, offsetof(gpujit_module_options, lean));
  else
    *dst = *src;
  dst->version = GPUJIT_MODULE_OPTIONS_VERSION;
}

gpujit_output_kind gpujit__resolve_output(const char *arch, gpujit_output_kind requested)
{
  if (requested != GPUJIT_OUTPUT_AUTO)
    return requested;
  return strncmp(arch, "compute_", 8) == 0 ? GPUJIT_OUTPUT_PTX : GPUJIT_OUTPUT_CUBIN;
}

int gpujit__nvrtc_flags(gpujit__strvec *out, const gpujit_module_options *o, const char *arch,
                        const char *source_dir, bool lto, const char *time_trace_file)
{
  const char *root = gpujit__cuda_root();
  int err = 0;
  size_t i;

#define PUSH(...) do { if ((err = gpujit__strvec_pushf(out, __VA_ARGS__)) < 0) return err; } while (0)
  PUSH("-arch=%s", arch);
  PUSH("--ptxas-options=-v"); /* per-kernel registers, shared and local memory in the log */
  if (o->std)
    PUSH("-std=%s", o->std);
  if (o->lineinfo)
    PUSH("-lineinfo");
  if (o->device_debug)
    PUSH("-G");
  if (o->fast_math)
    PUSH("--use_fast_math");
  if (o->maxrregcount > 0)
    PUSH("--maxrregcount=%d", o->maxrregcount);
  if (o->ofast_compile)
    PUSH("--Ofast-compile=%s", o->ofast_compile);
  if (lto) {
    PUSH("-dlto");
    PUSH("-rdc=true");
  }
  for (i = 0; i < o->defines_count; i++)
    PUSH("-D%s", o->defines[i]);
  for (i = 0; i < o->undefines_count; i++)
    PUSH("-U%s", o->undefines[i]);
  for (i = 0; i < o->include_dirs_count; i++)
    PUSH("-I%s", o->include_dirs[i]);
  /* Like nvcc: the source's own directory, then the toolkit's headers (CCCL lives in cccl/). */
  if (source_dir)
    PUSH("-I%s", source_dir);
  PUSH("-I%s/include/cccl", root);
  PUSH("-I%s/include", root);
  /* gpujit's own device headers (gpujit/regions.cuh) last: a user's or the toolkit's come first */
  if (gpujit_include_dir())
    PUSH("-I%s", gpujit_include_dir());
  if (time_trace_file)
    PUSH("--fdevice-time-trace=%s", time_trace_file);
  /* path-bearing ones made absolute: NVRTC would resolve them against the working directory */
  err = gpujit__nvrtc_opts_given(out, (const char *const *)o->nvrtc_options, o->nvrtc_options_count);
#undef PUSH
  return err;
}
