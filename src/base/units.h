/* Sizes and ages written as ccache writes them, parsed in one place for the CLI, the Python
 * package and the environment alike. */
#ifndef GPUJIT_BASE_UNITS_H
#define GPUJIT_BASE_UNITS_H

#include <stdint.h>

/** The units a size takes, for messages and --help (one line). */
#define GPUJIT__SIZE_UNITS                                                                          \
  "a number with kB, MB, GB, TB (powers of 1000; k, K, M, G, T the same), KiB, MiB, GiB, TiB "     \
  "(powers of 1024; Ki, Mi, Gi, Ti the same) or B (bytes); a bare number is GiB; 0 or none: no limit"

/**
 * A size as ccache reads `-M`: a number (a decimal point allowed), then an optional unit:
 * k or K, M, G, T are powers of 1000 and Ki, Mi, Gi, Ti powers of 1024, each with or without a
 * B after it; no unit is GiB ("5" is 5 GiB, never 5 bytes); "B" alone is bytes; "0" and "none"
 * are 0 (no limit). No sign, exponent, hex, space or lower-case m, g, t.
 * @return 0, or GPUJIT_EINVAL naming the text and the units taken.
 */
int gpujit__parse_size(const char *text, uint64_t *bytes);

/**
 * An age as ccache reads `--evict-older-than`: whole digits, then one unit: s (seconds) or d
 * (days), as ccache takes them, and m, h, w (minutes, hours, weeks). A bare number is refused:
 * its unit is a guess.
 * @return 0, or GPUJIT_EINVAL naming the text and the units taken.
 */
int gpujit__parse_age(const char *text, double *seconds);

#endif
