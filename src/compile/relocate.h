/* Moving an image's source paths from one base directory to another (line tables, PTX text). */
#ifndef GPUJIT_COMPILE_RELOCATE_H
#define GPUJIT_COMPILE_RELOCATE_H

#include "base/buf.h"
#include "gpujit/module.h"

/**
 * Rewrite old_base to new_base in a cubin's .debug_line directory and file tables (any
 * lengths). GPUJIT_EUNSUPPORTED, image untouched, when the layout is not the expected one.
 */
int gpujit__cubin_rebase(gpujit__buf *image, const char *old_base, const char *new_base);

/**
 * Move every path under `old_base` in an image to `new_base`: in place when both have the same
 * length (any kind), otherwise a cubin's line table is rebuilt and PTX text rewritten.
 * @return 0 (also when nothing named old_base), or GPUJIT_EUNSUPPORTED / GPUJIT_ENOMEM with
 *         the image untouched.
 */
int gpujit__image_rebase(gpujit__buf *image, gpujit_output_kind kind, const char *old_base,
                         const char *new_base);

#endif
