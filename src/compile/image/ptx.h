/* The lean pass over PTX: module-scope variables no kernel, no kept symbol and nothing the host
 * can reach uses are removed before ptxas. */
#ifndef GPUJIT_COMPILE_IMAGE_PTX_H
#define GPUJIT_COMPILE_IMAGE_PTX_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"

/**
 * What the pass may not remove beyond what it finds referenced. `user` is asked once, with every
 * variable nothing references: it sets keep[i] for those that may be the user's own (the host
 * can read them by name). NULL keeps them all.
 */
typedef struct gpujit__lean_policy {
  int (*user)(const char *const *names, size_t count, bool *keep, void *payload);
  void *payload;
  const char *const *keep; /* names kept whatever (lowered name expressions) */
  size_t keep_count;
} gpujit__lean_policy;

typedef struct gpujit__lean_stats {
  size_t variables; /* module-scope .global/.const variables */
  size_t removed;
  size_t kept_user; /* referenced by nothing, kept as possibly the user's */
  size_t ptx_before, ptx_after;
  char note[240]; /* why nothing was removed (a construct the pass does not know), or "" */
} gpujit__lean_stats;

/**
 * Write the lean PTX of `ptx` into `out` (reset first). A construct the pass does not understand
 * leaves the text unchanged and says which in stats->note; that is not an error.
 * @param removed optional: receives the names removed.
 * @return 0, or GPUJIT_ENOMEM / the policy's error.
 */
int gpujit__ptx_lean(gpujit__buf *out, const char *ptx, size_t len, const gpujit__lean_policy *policy,
                     gpujit__lean_stats *stats, gpujit__strvec *removed);

/**
 * The source names that scope a PTX name — for `_ZN4cuda3std3__417integral_constantIbLb0EE5valueE`
 * "cuda", "std", "__4", "integral_constant", "value" (template arguments left out; anonymous and
 * file-internal namespaces left out); an unmangled name is itself.
 * @return 0; GPUJIT_EPARSE for a mangling this reader does not know; GPUJIT_ENOMEM.
 */
int gpujit__ptx_name_scope(gpujit__strvec *out, const char *name);

#endif
