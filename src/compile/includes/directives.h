/* A file's directive lines as the preprocessor reads them, for the include scan. */
#ifndef GPUJIT_COMPILE_INCLUDES_DIRECTIVES_H
#define GPUJIT_COMPILE_INCLUDES_DIRECTIVES_H

#include <stdbool.h>
#include <stddef.h>

#include "base/buf.h"

/**
 * The directive lines of `data` (`size` bytes, no NUL needed) after translation phases 1 to 3:
 * backslash-newlines joined, each comment one space, a directive introduced by "%:" spelled
 * '#', literals (raw strings across lines too) kept from starting a comment or a directive.
 * Every other line is left empty. Where the text holds "??" a second reading with trigraphs
 * follows (C++11 and C++14 have them; C++17 does not). Replaces `out`'s contents. `unsure`
 * (may be NULL) is set when the reading may have missed a directive: a character or string
 * literal open at a line's end, a comment or raw string open at the end.
 * @return 0 or GPUJIT_ENOMEM.
 */
int gpujit__directive_lines(gpujit__buf *out, const char *data, size_t size, bool *unsure);

/** The header-name token at p ("x" or <x>) into out; the end of the token, or NULL. */
const char *gpujit__inc_header_name(const char *p, const char *end, char *out, size_t size, bool *quoted);
const char *gpujit__inc_skip_ws(const char *p, const char *end);
bool gpujit__inc_ident_start(char c);
bool gpujit__inc_ident_char(char c);
/** The identifier at p (truncated to size - 1) into out. */
void gpujit__inc_ident(const char *p, const char *end, char *out, size_t size);

#endif
