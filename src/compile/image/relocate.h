/* Moving an image's source paths from one base directory to another (line tables, PTX text). */
#ifndef GPUJIT_COMPILE_IMAGE_RELOCATE_H
#define GPUJIT_COMPILE_IMAGE_RELOCATE_H

#include "base/buf.h"
#include "gpujit/module.h"

/**
 * Rewrite old_base to new_base in a cubin's .debug_line directory and file tables (any
 * lengths). GPUJIT_EUNSUPPORTED, image untouched, when the layout is not the expected one.
 */
int gpujit__cubin_rebase(gpujit__buf *image, const char *old_base, const char *new_base);

/**
 * Move the paths under `old_base` in an image's line info to `new_base`: a cubin's .debug_line
 * (in place at the same length, else rebuilt), a PTX's .file directives. Nothing else is
 * rewritten: when the image names `old_base` anywhere else (its code or data, -G's debug info,
 * LTO-IR) it is left untouched and GPUJIT_EUNSUPPORTED returned.
 * @return 0 (also when nothing named old_base), GPUJIT_EUNSUPPORTED or GPUJIT_ENOMEM (image
 *         untouched).
 */
int gpujit__image_rebase(gpujit__buf *image, gpujit_output_kind kind, const char *old_base,
                         const char *new_base);

#endif
