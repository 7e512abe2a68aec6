/* A built module's record: the one builder of what `gpujit build --json` writes for a module and
 * gpujit.build() returns, with one set of key names (docs/json.md, "gpujit-build"). */
#include <stddef.h>
#include <stdlib.h>

#include "gpujit/error.h"
#include "gpujit/module.h"
#include "base/error.h"

typedef struct record_out {
  gpujit_module_record_fn fn;
  void *payload;
  int err; /* the first negative return of fn: nothing more is said after it */
} record_out;

static void entry(record_out *o, const char *key, gpujit_module_record_kind kind, const gpujit_module_record_value *v)
{
  static const gpujit_module_record_value none = {NULL, 0, NULL, 0};
  int r;
  if (o->err == 0 && (r = o->fn(key, kind, v ? v : &none, o->payload)) < 0)
    o->err = r;
}

static void put_string(record_out *o, const char *key, const char *s)
{
  gpujit_module_record_value v = {s, 0, NULL, 0};
  entry(o, key, GPUJIT_MODULE_RECORD_STRING, &v);
}

static void put_number(record_out *o, const char *key, double n)
{
  gpujit_module_record_value v = {NULL, n, NULL, 0};
  entry(o, key, GPUJIT_MODULE_RECORD_NUMBER, &v);
}

/* kernels: the image's symbols, as a list. */
static void kernels(record_out *o, const gpujit_module *m)
{
  size_t n = gpujit_module_kernel_count(m);
  const char **names = n ? calloc(n, sizeof(*names)) : NULL;
  gpujit_module_record_value v = {NULL, 0, names, n};
  if (n && !names) {
    o->err = o->err ? o->err : gpujit__error(GPUJIT_ENOMEM, "out of memory");
    return;
  }
  for (size_t i = 0; i < n; i++)
    names[i] = gpujit_module_kernel(m, i);
  entry(o, "kernels", GPUJIT_MODULE_RECORD_STRINGS, &v);
  free(names);
}

/* lowered_names: each name expression and the symbol it lowered to ("" when none). */
static void lowered_names(record_out *o, const gpujit_module *m)
{
  entry(o, "lowered_names", GPUJIT_MODULE_RECORD_OBJECT, NULL);
  for (size_t i = 0; i < gpujit_module_name_expression_count(m); i++) {
    const char *lowered;
    const char *expr = gpujit_module_name_expression(m, i, &lowered);
    put_string(o, expr, lowered ? lowered : "");
  }
  entry(o, NULL, GPUJIT_MODULE_RECORD_END, NULL);
}

/* lean: what the lean pass did, when it ran. */
static void lean(record_out *o, const gpujit_module *m)
{
  gpujit_module_lean l;
  gpujit_module_lean_get(m, &l);
  if (!l.applied)
    return;
  entry(o, "lean", GPUJIT_MODULE_RECORD_OBJECT, NULL);
  put_number(o, "ptx_bytes_before", (double)l.ptx_bytes_before);
  put_number(o, "ptx_bytes_after", (double)l.ptx_bytes_after);
  put_number(o, "variables", (double)l.variables);
  put_number(o, "removed", (double)l.removed);
  put_number(o, "kept_unreferenced", (double)l.kept_unreferenced);
  put_number(o, "pass_ms", l.pass_ms);
  put_number(o, "ptxas_ms", l.ptxas_ms);
  if (*l.note)
    put_string(o, "note", l.note);
  entry(o, NULL, GPUJIT_MODULE_RECORD_END, NULL);
}

/* time_ms: the build's stages. */
static void times(record_out *o, const gpujit_module *m)
{
  gpujit_module_timings t;
  gpujit_module_timings_get(m, &t);
  entry(o, "time_ms", GPUJIT_MODULE_RECORD_OBJECT, NULL);
  put_number(o, "read", t.read_ms);
  put_number(o, "hash", t.hash_ms);
  put_number(o, "lookup", t.lookup_ms);
  put_number(o, "compile", t.compile_ms);
  put_number(o, "link", t.link_ms);
  put_number(o, "store", t.store_ms);
  put_number(o, "total", t.total_ms);
  put_number(o, "saved", t.saved_ms);
  entry(o, NULL, GPUJIT_MODULE_RECORD_END, NULL);
}

int gpujit_module_record(const gpujit_module *m, gpujit_module_record_fn fn, void *payload)
{
  record_out o = {fn, payload, 0};
  gpujit_module_record_value uncacheable = {NULL, 1, NULL, 0};
  size_t size = 0;
  if (!m || !fn)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_module_record: NULL argument");
  gpujit_module_image(m, &size);
  put_string(&o, "arch", gpujit_module_arch(m));
  put_string(&o, "kind", gpujit_output_kind_name(gpujit_module_output(m)));
  put_number(&o, "size", (double)size);
  kernels(&o, m);
  lowered_names(&o, m);
  if (gpujit_module_cache_key(m))
    put_string(&o, "key", gpujit_module_cache_key(m));
  if (*gpujit_module_cache_miss_reason(m))
    put_string(&o, "miss_reason", gpujit_module_cache_miss_reason(m));
  if (gpujit_module_uncacheable(m))
    entry(&o, "uncacheable", GPUJIT_MODULE_RECORD_BOOL, &uncacheable);
  lean(&o, m);
  times(&o, m);
  return o.err;
}
