/* Argument specs for `gpujit run`: parsing, sizes, and host-side initialisation. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpujit/run.h"
#include "base/error.h"

static const struct {
  const char *name;
  gpujit_arg_type type;
  size_t size;
} scalar_types[] = {
    {"i32", GPUJIT_ARG_I32, 4}, {"u32", GPUJIT_ARG_U32, 4}, {"i64", GPUJIT_ARG_I64, 8},
    {"u64", GPUJIT_ARG_U64, 8}, {"f32", GPUJIT_ARG_F32, 4}, {"f64", GPUJIT_ARG_F64, 8},
};

size_t gpujit_arg_type_size(gpujit_arg_type t)
{
  for (size_t i = 0; i < 6; i++)
    if (scalar_types[i].type == t)
      return scalar_types[i].size;
  return 8; /* pointers */
}

size_t gpujit_arg_size(const gpujit_arg_spec *s)
{
  return s->type == GPUJIT_ARG_BUFFER || s->type == GPUJIT_ARG_REF ? 8 : gpujit_arg_type_size(s->type);
}

static int scalar_type(const char *name, size_t len, gpujit_arg_type *out)
{
  for (size_t i = 0; i < 6; i++)
    if (strlen(scalar_types[i].name) == len && strncmp(scalar_types[i].name, name, len) == 0) {
      *out = scalar_types[i].type;
      return 0;
    }
  return -1;
}

static bool is_float(gpujit_arg_type t) { return t == GPUJIT_ARG_F32 || t == GPUJIT_ARG_F64; }

/* A whole number or float literal for `type`, range-checked. */
static int parse_value(const char *spec, const char *text, gpujit_arg_type type, double *d, int64_t *i, uint64_t *u)
{
  char *end;
  errno = 0;
  if (!*text)
    return gpujit__error(GPUJIT_EINVAL, "argument '%s': missing value", spec);
  if (is_float(type)) {
    *d = strtod(text, &end);
    if (*end || errno == ERANGE)
      return gpujit__error(GPUJIT_EINVAL, "argument '%s': '%s' is not a number", spec, text);
    if (type == GPUJIT_ARG_F32 && isfinite(*d) && fabs(*d) > 3.4028234663852886e38)
      return gpujit__error(GPUJIT_EINVAL, "argument '%s': %s is out of f32 range", spec, text);
    return 0;
  }
  if (type == GPUJIT_ARG_U32 || type == GPUJIT_ARG_U64) {
    if (text[0] == '-')
      return gpujit__error(GPUJIT_EINVAL, "argument '%s': unsigned value '%s' is negative", spec, text);
    *u = strtoull(text, &end, 0);
    if (*end || errno == ERANGE || (type == GPUJIT_ARG_U32 && *u > 0xffffffffULL))
      return gpujit__error(GPUJIT_EINVAL, "argument '%s': '%s' is not a %s", spec, text,
                           type == GPUJIT_ARG_U32 ? "u32" : "u64");
    return 0;
  }
  *i = strtoll(text, &end, 0);
  if (*end || errno == ERANGE || (type == GPUJIT_ARG_I32 && (*i < INT32_MIN || *i > INT32_MAX)))
    return gpujit__error(GPUJIT_EINVAL, "argument '%s': '%s' is not a %s", spec, text,
                         type == GPUJIT_ARG_I32 ? "i32" : "i64");
  return 0;
}

/* Whether every element of `type` can hold `v` (integers: whole and in range; f32: in range). */
static bool value_fits(double v, gpujit_arg_type type)
{
  switch (type) {
  case GPUJIT_ARG_I32: return v == floor(v) && v >= -2147483648.0 && v <= 2147483647.0;
  case GPUJIT_ARG_U32: return v == floor(v) && v >= 0 && v <= 4294967295.0;
  case GPUJIT_ARG_I64: return v == floor(v) && v >= -9223372036854775808.0 && v < 9223372036854775808.0;
  case GPUJIT_ARG_U64: return v == floor(v) && v >= 0 && v < 18446744073709551616.0;
  case GPUJIT_ARG_F32: return !isfinite(v) || fabs(v) <= 3.4028234663852886e38;
  default: return true;
  }
}

/* `v` within [lo, hi] (NaN: 0), so the conversion that follows is defined. */
static double clamp(double v, double lo, double hi) { return isnan(v) ? 0 : v < lo ? lo : v > hi ? hi : v; }

static bool valid_name(const char *s, size_t n)
{
  if (n == 0 || n >= 64)
    return false;
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
          s[i] == '_' || s[i] == '-'))
      return false;
  return true;
}

/* TYPE:VALUE, a scalar of a known type. */
static int parse_scalar(gpujit_arg_spec *out, const char *text, const char *colon)
{
  double d = 0;
  int64_t i = 0;
  uint64_t u = 0;
  int err;
  if ((err = parse_value(text, colon + 1, out->type, &d, &i, &u)) < 0)
    return err;
  switch (out->type) {
  case GPUJIT_ARG_I32: out->value.i32 = (int32_t)i; break;
  case GPUJIT_ARG_I64: out->value.i64 = i; break;
  case GPUJIT_ARG_U32: out->value.u32 = (uint32_t)u; break;
  case GPUJIT_ARG_U64: out->value.u64 = u; break;
  case GPUJIT_ARG_F32: out->value.f32 = (float)d; break;
  default: out->value.f64 = d; break;
  }
  return 0;
}

/* A buffer's INIT field (and a random one's SEED): zeros, ones, iota, random[:SEED] or a value. */
static int parse_init(gpujit_arg_spec *out, const char *text, char *const *parts, size_t nparts)
{
  const char *init = parts[2];
  double d = 0;
  int64_t i = 0;
  int err;
  if (!strcmp(init, "zeros")) {
    out->init = GPUJIT_INIT_ZEROS;
  } else if (!strcmp(init, "ones")) {
    out->init = GPUJIT_INIT_ONES;
  } else if (!strcmp(init, "iota")) {
    out->init = GPUJIT_INIT_IOTA;
  } else if (!strcmp(init, "random")) {
    out->init = GPUJIT_INIT_RANDOM;
    if (nparts >= 4 && (err = parse_value(text, parts[3], GPUJIT_ARG_U64, &d, &i, &out->seed)) < 0)
      return err;
  } else {
    char *end;
    out->init = GPUJIT_INIT_VALUE;
    out->init_value = strtod(init, &end);
    if (*end || end == init)
      return gpujit__error(GPUJIT_EINVAL, "argument '%s': init '%s' is not zeros, ones, iota, random[:SEED] or a number",
                           text, init);
    if (!value_fits(out->init_value, out->elem))
      return gpujit__error(GPUJIT_EINVAL, "argument '%s': init value %s does not fit the buffer's elements", text, init);
  }
  if (nparts > (out->init == GPUJIT_INIT_RANDOM ? 4u : 3u))
    return gpujit__error(GPUJIT_EINVAL, "argument '%s': too many ':' fields", text);
  return 0;
}

/* A buffer's options after its first comma: name=NAME, out=checksum|FILE. */
static int parse_buffer_options(gpujit_arg_spec *out, const char *text, char *opt)
{
  while (opt && *opt) {
    char *next = strchr(opt, ',');
    if (next)
      *next++ = '\0';
    if (!strncmp(opt, "name=", 5) && valid_name(opt + 5, strlen(opt + 5))) {
      snprintf(out->name, sizeof(out->name), "%s", opt + 5);
    } else if (!strcmp(opt, "out=checksum")) {
      out->out_checksum = 1;
    } else if (!strncmp(opt, "out=", 4) && opt[4]) {
      snprintf(out->out_file, sizeof(out->out_file), "%s", opt + 4);
    } else {
      return gpujit__error(GPUJIT_EINVAL, "argument '%s': unknown option '%s' (name=NAME, out=checksum, out=FILE)",
                           text, opt);
    }
    opt = next;
  }
  return 0;
}

/* buf:TYPE:COUNT[:INIT[:SEED]][,OPTION...] */
static int parse_buffer(gpujit_arg_spec *out, const char *text)
{
  char buf[512], *parts[8], *opt, *save = NULL, *end;
  size_t nparts = 0;
  int err;
  if (strlen(text) >= sizeof(buf))
    return gpujit__error(GPUJIT_EINVAL, "argument '%.40s…': too long", text);
  out->type = GPUJIT_ARG_BUFFER;
  out->init = GPUJIT_INIT_ZEROS;
  out->seed = 1;
  snprintf(buf, sizeof(buf), "%s", text + 4);
  opt = strchr(buf, ',');
  if (opt)
    *opt++ = '\0';
  for (char *p = strtok_r(buf, ":", &save); p && nparts < 8; p = strtok_r(NULL, ":", &save))
    parts[nparts++] = p;
  if (nparts < 2)
    return gpujit__error(GPUJIT_EINVAL, "argument '%s': a buffer is buf:TYPE:COUNT[:INIT]", text);
  if (scalar_type(parts[0], strlen(parts[0]), &out->elem) < 0)
    return gpujit__error(GPUJIT_EINVAL, "argument '%s': unknown element type '%s'", text, parts[0]);
  errno = 0;
  out->count = strtoull(parts[1], &end, 10);
  if (*end || errno || parts[1][0] == '-')
    return gpujit__error(GPUJIT_EINVAL, "argument '%s': element count '%s' is not a whole number", text, parts[1]);
  if (out->count == 0 || out->count > (1ULL << 40))
    return gpujit__error(GPUJIT_EINVAL, "argument '%s': element count must be 1 .. 2^40", text);
  if (nparts >= 3 && (err = parse_init(out, text, parts, nparts)) < 0)
    return err;
  return parse_buffer_options(out, text, opt);
}

int gpujit_arg_spec_parse(gpujit_arg_spec *out, const char *text)
{
  const char *colon;
  if (!out || !text)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_arg_spec_parse: NULL argument");
  memset(out, 0, sizeof(*out));
  if (text[0] == '@') {
    if (!valid_name(text + 1, strlen(text + 1)))
      return gpujit__error(GPUJIT_EINVAL, "argument '%s': '@' needs a buffer name (letters, digits, _ and -)", text);
    out->type = GPUJIT_ARG_REF;
    snprintf(out->name, sizeof(out->name), "%s", text + 1);
    return 0;
  }
  if (!(colon = strchr(text, ':')))
    return gpujit__error(GPUJIT_EINVAL, "argument '%s': expected TYPE:VALUE (i32, u32, i64, u64, f32, f64), "
                                        "buf:TYPE:COUNT[:INIT] or @NAME", text);
  if (scalar_type(text, (size_t)(colon - text), &out->type) == 0)
    return parse_scalar(out, text, colon);
  if (strncmp(text, "buf:", 4) != 0)
    return gpujit__error(GPUJIT_EINVAL, "argument '%s': unknown type '%.*s' (i32, u32, i64, u64, f32, f64, buf)",
                         text, (int)(colon - text), text);
  return parse_buffer(out, text);
}

/* splitmix64: a fixed, portable sequence for a seed, so runs and CPU references agree. */
static uint64_t next_random(uint64_t *state)
{
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

void gpujit_arg_fill(void *host, const gpujit_arg_spec *s)
{
  uint64_t state = s->seed;
  for (uint64_t k = 0; k < s->count; k++) {
    double v;
    switch (s->init) {
    case GPUJIT_INIT_ONES: v = 1; break;
    case GPUJIT_INIT_IOTA: v = (double)k; break;
    case GPUJIT_INIT_VALUE: v = s->init_value; break;
    case GPUJIT_INIT_RANDOM:
      /* floats uniform in [0, 1); integers uniform in [0, 2^20) */
      v = is_float(s->elem) ? (double)(next_random(&state) >> 11) * 0x1.0p-53
                            : (double)(next_random(&state) >> 44);
      break;
    default: v = 0; break;
    }
    /* iota counts in the element type (integers wrap past their range); other values were
     * checked when parsed and are clamped here, so no conversion is undefined */
    switch (s->elem) {
    case GPUJIT_ARG_I32:
      ((int32_t *)host)[k] = s->init == GPUJIT_INIT_IOTA ? (int32_t)(uint32_t)k : (int32_t)clamp(v, -2147483648.0, 2147483647.0);
      break;
    case GPUJIT_ARG_U32:
      ((uint32_t *)host)[k] = s->init == GPUJIT_INIT_IOTA ? (uint32_t)k : (uint32_t)clamp(v, 0, 4294967295.0);
      break;
    case GPUJIT_ARG_I64:
      ((int64_t *)host)[k] = s->init == GPUJIT_INIT_IOTA ? (int64_t)k : (int64_t)clamp(v, -9223372036854775808.0, 9223372036854774784.0);
      break;
    case GPUJIT_ARG_U64:
      ((uint64_t *)host)[k] = s->init == GPUJIT_INIT_IOTA ? k : (uint64_t)clamp(v, 0, 18446744073709549568.0);
      break;
    case GPUJIT_ARG_F32:
      ((float *)host)[k] = isfinite(v) ? (float)clamp(v, -3.4028234663852886e38, 3.4028234663852886e38) : (float)v;
      break;
    default: ((double *)host)[k] = v; break;
    }
  }
}
