/* The NVRTC stage: one-time initialisation, compiling one program, diagnostics parsing. */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "compile/nvrtc/nvrtc.h"
#include "compile/pch/pch.h"
#include "compile/toolkit/toolkit.h"

unsigned long gpujit__nvrtc_compiles; /* for tests: a cache hit must not compile */
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_status;
static int archs[64];
static int archs_count;

static const gpujit__nvrtc_api *N;
static char init_message[1024];

static void init_nvrtc(void)
{
  int n = 0, major, minor, err;
  nvrtcResult r;
  if ((err = gpujit__nvrtc_api_get(&N)) < 0) { /* GPUJIT_ENOTOOLKIT: none there; GPUJIT_ENVRTC: too old */
    snprintf(init_message, sizeof(init_message), "%s", gpujit_error_last());
    init_status = err;
    return;
  }
  r = N->nvrtcVersion(&major, &minor);
  if (r == NVRTC_SUCCESS)
    r = N->nvrtcGetNumSupportedArchs(&n);
  if (r == NVRTC_SUCCESS && n > 0 && n <= (int)(sizeof(archs) / sizeof(archs[0])))
    r = N->nvrtcGetSupportedArchs(archs);
  if (r != NVRTC_SUCCESS) {
    snprintf(init_message, sizeof(init_message), "NVRTC could not be initialised (error %d)", (int)r);
    init_status = GPUJIT_ENVRTC;
    return;
  }
  archs_count = n;
}

int gpujit__nvrtc_init(void)
{
  pthread_once(&init_once, init_nvrtc);
  if (init_status < 0)
    return gpujit__error(init_status, "%s", init_message);
  return 0;
}

bool gpujit__nvrtc_arch_supported(int arch)
{
  for (int i = 0; i < archs_count; i++)
    if (archs[i] == arch)
      return true;
  return false;
}

int gpujit__nvrtc_error(int result, const char *what)
{
  nvrtcResult r = (nvrtcResult)result;
  int code;
  switch (r) {
  case NVRTC_SUCCESS: return 0;
  case NVRTC_ERROR_OUT_OF_MEMORY: code = GPUJIT_ENOMEM; break;
  case NVRTC_ERROR_COMPILATION: code = GPUJIT_ECOMPILE; break;
  case NVRTC_ERROR_INVALID_OPTION:
  case NVRTC_ERROR_INVALID_INPUT:
  case NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID:
  case NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION: code = GPUJIT_EINVAL; break;
  default: code = GPUJIT_ENVRTC; break;
  }
  if (N)
    return gpujit__error(code, "%s: %s", what, N->nvrtcGetErrorString(r));
  return gpujit__error(code, "%s: NVRTC error %d", what, (int)r);
}

int gpujit__nvrtc_version(int *major, int *minor)
{
  int err;
  nvrtcResult r;
  if ((err = gpujit__nvrtc_init()) < 0)
    return err;
  if ((r = N->nvrtcVersion(major, minor)) != NVRTC_SUCCESS)
    return gpujit__nvrtc_error(r, "nvrtcVersion");
  return 0;
}

void gpujit__nvrtc_result_free(gpujit__nvrtc_result *r)
{
  gpujit__buf_free(&r->image);
  gpujit__buf_free(&r->log);
  gpujit__strvec_free(&r->lowered);
  gpujit__observed_free(&r->observed);
}

static int fetch_log(nvrtcProgram prog, gpujit__buf *log)
{
  size_t size = 0;
  int err;
  if (N->nvrtcGetProgramLogSize(prog, &size) != NVRTC_SUCCESS || size == 0)
    return 0;
  if ((err = gpujit__buf_reserve(log, size)) < 0)
    return err;
  if (N->nvrtcGetProgramLog(prog, log->data) != NVRTC_SUCCESS)
    return 0;
  log->len = strlen(log->data);
  return 0;
}

static int fetch_image(nvrtcProgram prog, gpujit__buf *out, gpujit_output_kind kind)
{
  size_t size = 0;
  nvrtcResult r;
  int err;
  switch (kind) {
  case GPUJIT_OUTPUT_PTX: r = N->nvrtcGetPTXSize(prog, &size); break;
  case GPUJIT_OUTPUT_LTOIR: r = N->nvrtcGetLTOIRSize(prog, &size); break;
  default: r = N->nvrtcGetCUBINSize(prog, &size); break;
  }
  if (r != NVRTC_SUCCESS)
    return gpujit__nvrtc_error(r, "reading the compiled image");
  if ((err = gpujit__buf_reserve(out, size)) < 0)
    return err;
  switch (kind) {
  case GPUJIT_OUTPUT_PTX: r = N->nvrtcGetPTX(prog, out->data); break;
  case GPUJIT_OUTPUT_LTOIR: r = N->nvrtcGetLTOIR(prog, out->data); break;
  default: r = N->nvrtcGetCUBIN(prog, out->data); break;
  }
  if (r != NVRTC_SUCCESS)
    return gpujit__nvrtc_error(r, "reading the compiled image");
  /* NVRTC counts PTX's terminating NUL in its size; the image is the text. */
  if (kind == GPUJIT_OUTPUT_PTX && size && out->data[size - 1] == '\0')
    size--;
  out->len = size;
  out->data[size] = '\0';
  return 0;
}

static int compile_once(gpujit__nvrtc_result *out, const gpujit__nvrtc_request *req, const gpujit__strvec *flags,
                        const gpujit__pch_block *block)
{
  static const char *const header_names[] = {GPUJIT__PRELUDE_HEADER};
  const char *header_data[1] = {req->prelude};
  nvrtcProgram prog = NULL;
  nvrtcResult r;
  int err;
  size_t i;

  r = N->nvrtcCreateProgram(&prog, req->source, req->program_name, req->prelude ? 1 : 0,
                            req->prelude ? header_data : NULL, req->prelude ? header_names : NULL);
  if (r != NVRTC_SUCCESS) {
    err = gpujit__nvrtc_error(r, "nvrtcCreateProgram");
    goto done;
  }
  for (i = 0; i < req->name_exprs_count; i++) {
    if ((r = N->nvrtcAddNameExpression(prog, req->name_exprs[i])) != NVRTC_SUCCESS) {
      err = gpujit__nvrtc_error(r, "adding a name expression");
      goto done;
    }
  }
  __atomic_fetch_add(&gpujit__nvrtc_compiles, 1, __ATOMIC_RELAXED);
  gpujit__observed_free(&out->observed); /* a compile repeated (the PCH heap grew) is seen anew */
  gpujit__observe_libs_mark();
  gpujit__observe_begin(&out->observed);
  r = N->nvrtcCompileProgram(prog, (int)flags->count, (const char *const *)flags->items);
  gpujit__observe_end(&out->observed);
  gpujit__observe_add_process(&out->observed);
  if ((err = fetch_log(prog, &out->log)) < 0)
    goto done;
  if (out->observed.refused[0]) { /* its open was failed: NVRTC's error would only say "cannot open" */
    gpujit__error_set_log(out->log.data);
    err = gpujit__error(GPUJIT_EIO, "%s", out->observed.refused);
    goto done;
  }
  if (block) {
    req->pch->observed = &out->observed;
    req->pch->source = req->program_name;
  }
  if (block && gpujit__pch_after(req->pch, block, prog, &out->log)) {
    err = 1; /* the caller compiles again */
    goto done;
  }
  if (r != NVRTC_SUCCESS) {
    char first[512];
    if (r != NVRTC_ERROR_COMPILATION) {
      err = gpujit__nvrtc_error(r, "nvrtcCompileProgram");
      gpujit__error_set_log(out->log.data);
      goto done;
    }
    gpujit__first_diagnostic(first, sizeof(first), out->log.data ? out->log.data : "");
    gpujit__error_set_log(out->log.data);
    err = gpujit__error(GPUJIT_ECOMPILE, "compile failed: %s", first);
    goto done;
  }
  if ((err = fetch_image(prog, &out->image, req->output)) < 0)
    goto done;
  for (i = 0; i < req->name_exprs_count; i++) {
    const char *lowered = NULL;
    if ((r = N->nvrtcGetLoweredName(prog, req->name_exprs[i], &lowered)) != NVRTC_SUCCESS) {
      err = gpujit__nvrtc_error(r, req->name_exprs[i]);
      goto done;
    }
    if ((err = gpujit__strvec_push(&out->lowered, lowered)) < 0)
      goto done;
  }
done:
  if (prog)
    N->nvrtcDestroyProgram(&prog);
  return err;
}

int gpujit__nvrtc_compile(gpujit__nvrtc_result *out, const gpujit__nvrtc_request *req)
{
  gpujit__strvec flags = {0};
  gpujit__pch_block block;
  bool pch_on = false;
  int err;

  if ((err = gpujit__nvrtc_init()) < 0)
    return err;
  for (size_t i = 0; i < req->flags->count; i++)
    if ((err = gpujit__strvec_push(&flags, req->flags->items[i])) < 0)
      goto done;
  if (req->prelude && (err = gpujit__strvec_push(&flags, "--pre-include=" GPUJIT__PRELUDE_HEADER)) < 0)
    goto done;
  if (req->pch) {
    gpujit__pch_block_of(&block, req->source, strlen(req->source), req->prelude, req->flags);
    pch_on = gpujit__pch_plan(req->pch, &block, &flags, &err);
    if (err < 0)
      goto done;
  }
  while ((err = compile_once(out, req, &flags, pch_on ? &block : NULL)) == 1) {
    gpujit__buf_free(&out->log); /* the heap grew: once more, so the PCH is made */
  }
done:
  if (req->pch)
    gpujit__pch_release(req->pch);
  gpujit__strvec_free(&flags);
  return err;
}

/*
 * NVRTC writes "FILE(LINE): error: MESSAGE", then the offending source line and a caret line
 * under it. The caret's position gives the column.
 */
void gpujit__first_diagnostic(char *out, size_t size, const char *log)
{
  const char *line = log;
  while (line && *line) {
    const char *eol = strchr(line, '\n');
    size_t len = eol ? (size_t)(eol - line) : strlen(line);
    const char *paren = NULL, *kind;
    for (const char *p = line; p + 2 < line + len; p++)
      if (p[0] == '(' && isdigit((unsigned char)p[1]))
        paren = p;
      else if (paren && p[0] == ')' && p[1] == ':')
        break;
    kind = paren ? strstr(paren, "): ") : NULL;
    if (paren && kind && kind < line + len &&
        (strncmp(kind + 3, "error", 5) == 0 || strncmp(kind + 3, "catastrophic error", 18) == 0 ||
         strncmp(kind + 3, "fatal error", 11) == 0)) {
      long lineno = strtol(paren + 1, NULL, 10);
      const char *msg = strstr(kind + 3, ": ");
      int col = 0;
      const char *next = eol ? eol + 1 : NULL;
      const char *caret_line = next ? strchr(next, '\n') : NULL;
      if (caret_line) {
        const char *c = caret_line + 1;
        const char *ce = strchr(c, '\n');
        size_t clen = ce ? (size_t)(ce - c) : strlen(c);
        const char *caret = memchr(c, '^', clen);
        bool only_space = caret != NULL;
        for (const char *q = c; caret && q < caret; q++)
          only_space &= (*q == ' ');
        /* NVRTC indents the echoed source line by two spaces. */
        if (only_space && caret - c >= 2)
          col = (int)(caret - c) - 1;
      }
      msg = msg && msg < line + len ? msg + 2 : kind + 3;
      if (col > 0)
        snprintf(out, size, "%.*s:%ld:%d: %.*s", (int)(paren - line), line, lineno, col,
                 (int)(line + len - msg), msg);
      else
        snprintf(out, size, "%.*s:%ld: %.*s", (int)(paren - line), line, lineno,
                 (int)(line + len - msg), msg);
      return;
    }
    line = eol ? eol + 1 : NULL;
  }
  snprintf(out, size, "%s", "see the NVRTC log");
}
