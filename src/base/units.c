/* Sizes and ages as ccache spells them (base/units.h). One parser: `gpujit cache -M 5`, `cache
 * limit 5`, `gpujit.cache.limit(5)` and GPUJIT_CACHE_MAX_SIZE=5 all mean 5 GiB, as ccache -M 5
 * does; a parser that read "5" as bytes emptied a ccache user's cache. */
#include <stdbool.h>
#include <string.h>

#include "base/error.h"
#include "base/units.h"

int gpujit__parse_size(const char *s, uint64_t *out)
{
  static const char prefixes[] = "KMGT";
  const char *p = s;
  double v = 0, scale = 1, unit = 1;
  bool digits = false;
  if (!s || !out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit__parse_size: NULL argument");
  if (!strcmp(s, "none")) {
    *out = 0;
    return 0;
  }
  /* whole digits, then an optional fraction: strtod would take signs, exponents, hex, inf */
  for (; *p >= '0' && *p <= '9'; p++, digits = true)
    v = v * 10 + (*p - '0');
  if (*p == '.')
    for (p++; *p >= '0' && *p <= '9'; p++, digits = true)
      v += (*p - '0') * (scale /= 10);
  if (!digits)
    goto bad;
  if (!*p) {
    unit = 1024.0 * 1024 * 1024; /* ccache's default unit: GiB */
  } else if (!strcmp(p, "B")) {
    unit = 1;
  } else {
    const char *u = *p == 'k' ? prefixes : strchr(prefixes, *p);
    if (!u || !*p)
      goto bad;
    p++;
    bool binary = *p == 'i';
    p += binary;
    p += *p == 'B';
    if (*p)
      goto bad;
    for (long k = 0; k <= u - prefixes; k++)
      unit *= binary ? 1024.0 : 1000.0;
  }
  if (v * unit >= 1.8e19)
    return gpujit__error(GPUJIT_EINVAL, "invalid size '%s': too large", s);
  *out = (uint64_t)(v * unit + 0.5);
  return 0;
bad:
  return gpujit__error(GPUJIT_EINVAL, "invalid size '%s': expected %s", s, GPUJIT__SIZE_UNITS);
}

int gpujit__parse_age(const char *s, double *out)
{
  static const char units[] = "smhdw";
  static const double secs[] = {1, 60, 3600, 86400, 604800};
  size_t digits;
  const char *u;
  if (!s || !out)
    return gpujit__error(GPUJIT_EINVAL, "gpujit__parse_age: NULL argument");
  digits = strspn(s, "0123456789");
  if (digits && !s[digits])
    return gpujit__error(GPUJIT_EINVAL, "invalid age '%s': a number needs a unit, as in ccache: %ss (seconds) "
                         "or %sd (days); also m, h, w", s, s, s);
  if (!digits || digits > 15 || !s[digits] || s[digits + 1] || !(u = strchr(units, s[digits])))
    return gpujit__error(GPUJIT_EINVAL, "invalid age '%s': a whole number with s (seconds) or d (days), as in "
                         "ccache, or m, h, w (e.g. 3600s, 30m, 12h, 7d, 2w)", s);
  *out = 0;
  for (size_t i = 0; i < digits; i++)
    *out = *out * 10 + (s[i] - '0');
  *out *= secs[u - units];
  return 0;
}
