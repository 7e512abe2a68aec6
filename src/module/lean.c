/* The lean path of a build: NVRTC's PTX (or nvJitLink's linked PTX) through the lean pass, then
 * the toolkit's ptxas. What the user's own files declare stays. */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "base/error.h"
#include "base/strset.h"
#include "cache/store/store.h"
#include "compile/toolkit/nvrtc_opts.h"
#include "compile/toolkit/ptxas.h"
#include "compile/image/ptx.h"
#include "module/deps.h"
#include "module/lean.h"
#include "module/stage.h"
#include "trace/rows.h"

/* A raw NVRTC option that changes what NVRTC's own ptxas makes and that gpujit's ptxas is not
 * given (compile/toolkit/ptxas.c gives it --maxrregcount and --ptxas-options): NVRTC makes the cubin. */
static bool ptxas_declined(const gpujit_module_options *o)
{
  gpujit__nvrtc_opts parsed;
  bool declined;
  if (!o->nvrtc_options_count)
    return false;
  if (gpujit__nvrtc_opts_parse(&parsed, (const char *const *)o->nvrtc_options, o->nvrtc_options_count) < 0) {
    gpujit_error_clear();
    return true;
  }
  declined = gpujit__nvrtc_opts_find(&parsed, GPUJIT__OPT_PTXAS) != NULL;
  gpujit__nvrtc_opts_free(&parsed);
  return declined;
}

void gpujit__lean_warn_no_ptxas(const gpujit_module_options *o, gpujit_output_kind output)
{
  static int said;
  const char *root = gpujit__cuda_root();
  gpujit__buf note = {0};
  bool known;
  if (!o->lean || output != GPUJIT_OUTPUT_CUBIN || gpujit__ptxas_path() || __atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
    return;
  /* said once per cache and toolkit: a note in the cache holds the root it was said for */
  known = o->cache && gpujit__cache_note_get(o->cache, "said", "no-ptxas", &note) == 0 && note.len == strlen(root) &&
          !memcmp(note.data, root, note.len);
  gpujit__buf_free(&note);
  if (known) {
    gpujit__log(GPUJIT_LOG_INFO, "no ptxas in %s: lean modules take NVRTC's cubin", root);
    return;
  }
  gpujit__log(GPUJIT_LOG_WARN, "lean modules need the toolkit's ptxas, and %s/bin/ptxas is not there (NVIDIA's pip "
                               "wheels ship it in nvidia-cuda-nvcc): cubins are NVRTC's own (said once for this cache)",
              root);
  if (o->cache && gpujit__cache_note_put(o->cache, "said", "no-ptxas", root, strlen(root)) < 0)
    gpujit_error_clear();
}

bool gpujit__lean_applies(const gpujit_module_options *o, gpujit_output_kind output)
{
  /* a cubin needs the toolkit's ptxas; without one the build is NVRTC's whole image. With -G the
   * debug sections name every variable, so nothing could go: not worth a ptxas of its own */
  return o->lean && !o->device_debug &&
         (output == GPUJIT_OUTPUT_PTX || (output == GPUJIT_OUTPUT_CUBIN && gpujit__ptxas_path() &&
                                         !ptxas_declined(o)));
}

/*
 * A variable nothing references may still be the user's: `__device__ int counter;` that the host
 * reads by name looks in PTX exactly like a static member of a CCCL template. The user's files
 * decide: a name is kept when every source name of its scope (`counter`; for
 * `_ZN2ns7counterE` "ns" and "counter") is an identifier in the module's sources or in a header
 * outside the toolkit, and the name itself stands in a declaration of theirs that says
 * `__device__`, `__constant__` or `__managed__` — what the host can read by name. Names no file
 * of the user's spells — `cuda::std::__4::integral_constant<…>::value` — cannot be the user's;
 * nor can a host `constexpr int kThreads = 256;` that NVRTC emits for the device (nvcc folds it
 * away; kept, it costs the load a global's allocation and copy: 73 against 29 µs measured).
 * Token pasting (`##`) in the user's files, a macro whose body says one of those words (the
 * declaration may hide it), an include list the scan could not complete, or a mangling the
 * reader does not know: kept as before, on the names alone.
 */
typedef struct user_files {
  const gpujit_source *sources;
  size_t count;
  const gpujit__buf *headers; /* the user's headers' text; NULL: the headers read are not known */
  size_t nheaders;
  char why[160];               /* set when everything was kept */
} user_files;

typedef struct words {
  gpujit__strset set; /* component → index into found */
  bool *found;
  bool *declared; /* found in a statement that says __device__, __constant__ or __managed__ */
  bool pastes;
  bool qualifier_macro; /* a directive line says one of them: a macro may hide it */
} words;

static bool is_qualifier(const char *s, size_t n)
{
  return (n == 10 && !memcmp(s, "__device__", 10)) || (n == 12 && !memcmp(s, "__constant__", 12)) ||
         (n == 11 && !memcmp(s, "__managed__", 11));
}

static void scan_text(words *w, const char *text, size_t len)
{
  char small[256];
  bool device = false, directive = false, line_start = true;
  for (size_t i = 0; i < len;) {
    char c = text[i];
    if (c == '\n') {
      directive = false;
      line_start = true;
      i++;
      continue;
    }
    if (line_start && c == '#')
      directive = true;
    if (c != ' ' && c != '\t')
      line_start = false;
    if (c == '#' && i + 1 < len && text[i + 1] == '#') {
      w->pastes = true;
      i += 2;
    } else if (isalpha((unsigned char)c) || c == '_') {
      size_t s = i, v;
      while (i < len && (isalnum((unsigned char)text[i]) || text[i] == '_'))
        i++;
      if (is_qualifier(text + s, i - s)) {
        device = !directive;
        w->qualifier_macro = w->qualifier_macro || directive;
      } else if (i - s < sizeof(small)) {
        memcpy(small, text + s, i - s);
        small[i - s] = '\0';
        if (gpujit__strset_find(&w->set, small, &v)) {
          w->found[v] = true;
          w->declared[v] = w->declared[v] || device;
        }
      }
    } else if (isdigit((unsigned char)c)) {
      while (i < len && (isalnum((unsigned char)text[i]) || text[i] == '_' || text[i] == '.'))
        i++;
    } else {
      if (!directive && (c == ';' || c == '{' || c == '}'))
        device = false; /* a statement or a block begins: its declaration says its own */
      i++;
    }
  }
}

static int user_decides(const char *const *names, size_t count, bool *keep, void *payload)
{
  user_files *u = payload;
  gpujit__strvec *scopes = calloc(count + 1, sizeof(*scopes));
  words w = {{0}, NULL, NULL, false, false};
  size_t total = 0;
  int err = 0;

  if (!scopes)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  for (size_t i = 0; i < count; i++) {
    if ((err = gpujit__ptx_name_scope(&scopes[i], names[i])) == GPUJIT_EPARSE) {
      gpujit_error_clear();
      keep[i] = true; /* not understood: it stays */
      err = 0;
    } else if (err < 0) {
      goto done;
    }
    total += scopes[i].count;
  }
  if (!u->headers) {
    for (size_t i = 0; i < count; i++)
      keep[i] = true;
    goto done;
  }
  if (!(w.found = calloc(total + 1, sizeof(*w.found))) || !(w.declared = calloc(total + 1, sizeof(*w.declared)))) {
    err = gpujit__error(GPUJIT_ENOMEM, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < count; i++)
    for (size_t k = 0; k < scopes[i].count; k++)
      if (!gpujit__strset_find(&w.set, scopes[i].items[k], NULL) &&
          (err = gpujit__strset_put(&w.set, scopes[i].items[k], w.set.count)) < 0)
        goto done;
  for (size_t i = 0; i < u->count; i++)
    scan_text(&w, u->sources[i].data, u->sources[i].size);
  for (size_t i = 0; i < u->nheaders; i++)
    if (u->headers[i].data)
      scan_text(&w, u->headers[i].data, u->headers[i].len);
  if (w.pastes)
    snprintf(u->why, sizeof(u->why), "the user's files paste tokens (##): every variable kept");
  for (size_t i = 0; i < count; i++) {
    bool all = !keep[i];
    size_t v = 0;
    for (size_t k = 0; all && k < scopes[i].count; k++)
      all = gpujit__strset_find(&w.set, scopes[i].items[k], &v) && w.found[v];
    /* v: the variable's own name, the last of its scope */
    keep[i] = keep[i] || (all && (scopes[i].count == 0 || w.declared[v] || w.qualifier_macro)) || w.pastes;
  }
done:
  for (size_t i = 0; i < count; i++)
    gpujit__strvec_free(&scopes[i]);
  free(scopes);
  gpujit__strset_free(&w.set);
  free(w.found);
  free(w.declared);
  return err;
}

void gpujit__profile_phase(gpujit_module *m, const char *phase, double ms)
{
  if (!m->profile)
    return;
  m->profile->compile_us += ms * 1e3;
  if (gpujit__rows_add(&m->profile->tables[GPUJIT_TRACE_PHASES], phase, ms * 1e3, ms * 1e3, 1) < 0)
    gpujit_error_clear();
}

int gpujit__lean_assemble(gpujit_module *m, const gpujit__buf *ptx, const gpujit_source *sources, size_t count,
                          const gpujit__buf *headers, size_t nheaders, const gpujit_module_options *opts,
                          gpujit__buf *log)
{
  user_files u = {sources, count, headers, nheaders, ""};
  gpujit__lean_policy policy = {user_decides, &u, (const char *const *)m->lowered.items, m->lowered.count};
  gpujit__lean_stats st;
  gpujit__buf lean = {0};
  gpujit__stage stage;
  int err;

  if (!headers)
    snprintf(u.why, sizeof(u.why), "the headers the compile read are not known: every variable kept");
  gpujit__stage_begin(&stage, opts->trace, "lean PTX");
  err = gpujit__ptx_lean(&lean, ptx->data, ptx->len, &policy, &st, NULL);
  gpujit__stage_arg_num(&stage, "ptx_bytes_before", (double)st.ptx_before);
  gpujit__stage_arg_num(&stage, "ptx_bytes_after", (double)st.ptx_after);
  gpujit__stage_arg_num(&stage, "variables", (double)st.variables);
  gpujit__stage_arg_num(&stage, "removed", (double)st.removed);
  gpujit__stage_arg_num(&stage, "kept_unreferenced", (double)st.kept_user);
  if (st.note[0] || u.why[0])
    gpujit__stage_arg_str(&stage, "note", st.note[0] ? st.note : u.why);
  m->lean.pass_ms = gpujit__stage_end(&stage);
  if (err < 0)
    goto done;
  gpujit__profile_phase(m, "lean", m->lean.pass_ms);
  m->timings.compile_ms += m->lean.pass_ms;
  m->lean.applied = 1;
  m->lean.ptx_bytes_before = st.ptx_before;
  m->lean.ptx_bytes_after = st.ptx_after;
  m->lean.variables = st.variables;
  m->lean.removed = st.removed;
  m->lean.kept_unreferenced = st.kept_user;
  snprintf(m->lean_note, sizeof(m->lean_note), "%s", st.note[0] ? st.note : st.kept_user ? u.why : "");
  if (m->lean_note[0])
    gpujit__log(GPUJIT_LOG_INFO, "lean: %s: %s", m->name, m->lean_note);
  gpujit__log(GPUJIT_LOG_DEBUG, "lean: %s: %zu of %zu module-scope variables removed, PTX %zu -> %zu bytes",
              m->name, st.removed, st.variables, st.ptx_before, st.ptx_after);

  if (m->output == GPUJIT_OUTPUT_PTX) { /* the lean PTX is the image */
    gpujit__buf_free(&m->image);
    m->image = lean;
    memset(&lean, 0, sizeof(lean));
    goto done;
  }
  {
    gpujit__buf info = {0};
    gpujit__stage_begin(&stage, opts->trace, "ptxas");
    gpujit__buf_free(&m->image);
    err = gpujit__ptxas(&m->image, &info, &lean, ptx, m->arch, opts);
    gpujit__stage_arg_str(&stage, "arch", m->arch);
    gpujit__stage_arg_num(&stage, "image_bytes", (double)m->image.len);
    m->lean.ptxas_ms = gpujit__stage_end(&stage);
    m->timings.compile_ms += m->lean.ptxas_ms; /* NVRTC's own compile includes its ptxas */
    gpujit__profile_phase(m, "ptxas", m->lean.ptxas_ms);
    if (info.len && log->len)
      gpujit__buf_puts(log, "\n");
    gpujit__buf_put(log, info.data, info.len);
    gpujit__buf_free(&info);
  }
done:
  gpujit__buf_free(&lean);
  return err;
}

#define LEAN_SIZES(X) X(ptx_bytes_before) X(ptx_bytes_after) X(variables) X(removed) X(kept_unreferenced)

cJSON *gpujit__lean_json(const gpujit_module *m)
{
  cJSON *j;
  if (!m->lean.applied || !(j = cJSON_CreateObject()))
    return NULL;
#define PUT(f) cJSON_AddNumberToObject(j, #f, (double)m->lean.f);
  LEAN_SIZES(PUT)
#undef PUT
  cJSON_AddNumberToObject(j, "pass_ms", m->lean.pass_ms);
  cJSON_AddNumberToObject(j, "ptxas_ms", m->lean.ptxas_ms);
  cJSON_AddStringToObject(j, "note", m->lean_note);
  return j;
}

void gpujit__lean_from_json(gpujit_module *m, const cJSON *j)
{
  const cJSON *v;
  memset(&m->lean, 0, sizeof(m->lean));
  m->lean_note[0] = '\0';
  if (!cJSON_IsObject(j))
    return;
  m->lean.applied = 1;
  /* sizes from a file: whole, non-negative and below 2^53 or they read as 0 */
#define GET(f)                                                                             \
  v = cJSON_GetObjectItemCaseSensitive(j, #f);                                             \
  m->lean.f = cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble < 9007199254740992.0 \
                  ? (size_t)v->valuedouble : 0;
  LEAN_SIZES(GET)
#undef GET
  v = cJSON_GetObjectItemCaseSensitive(j, "pass_ms");
  m->lean.pass_ms = cJSON_IsNumber(v) ? v->valuedouble : 0;
  v = cJSON_GetObjectItemCaseSensitive(j, "ptxas_ms");
  m->lean.ptxas_ms = cJSON_IsNumber(v) ? v->valuedouble : 0;
  v = cJSON_GetObjectItemCaseSensitive(j, "note");
  snprintf(m->lean_note, sizeof(m->lean_note), "%s", cJSON_IsString(v) ? v->valuestring : "");
}
