/* Growable byte buffers, string vectors and string copies. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/buf.h"
#include "base/error.h"
#include "gpujit/common.h"

void gpujit_free(void *ptr) { free(ptr); }

void *gpujit__grow_to(void *items, size_t *cap, size_t need, size_t elem, size_t first)
{
  size_t n = *cap ? *cap : first ? first : 1;
  void *p;
  if (need <= *cap)
    return items;
  while (n < need && n <= SIZE_MAX / 2)
    n *= 2;
  if (n < need || n > SIZE_MAX / elem || !(p = realloc(items, n * elem))) {
    gpujit__error(GPUJIT_ENOMEM, "out of memory");
    return NULL;
  }
  *cap = n;
  return p;
}

void *gpujit__grow(void *items, size_t *cap, size_t count, size_t elem, size_t first)
{
  if (count == SIZE_MAX) {
    gpujit__error(GPUJIT_ENOMEM, "out of memory");
    return NULL;
  }
  return gpujit__grow_to(items, cap, count + 1, elem, first);
}

static bool mapped(const gpujit__buf *b) { return b->data && b->cap == 0; }

int gpujit__buf_map(gpujit__buf *b, int fd, size_t len)
{
  void *p = len ? mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0) : MAP_FAILED;
  if (p == MAP_FAILED)
    return gpujit__error(GPUJIT_EIO, "cannot map %zu bytes: %s", len, strerror(errno));
  gpujit__buf_free(b);
  b->data = p;
  b->len = len;
  b->cap = 0;
  return 0;
}

int gpujit__buf_reserve(gpujit__buf *b, size_t extra)
{
  size_t need = b->len + extra + 1, cap;
  char *p;
  if (mapped(b)) { /* to the heap before it can grow */
    gpujit__buf heap = {0};
    if (!(heap.data = malloc(b->len + 1)))
      return gpujit__error(GPUJIT_ENOMEM, "out of memory (%zu bytes)", b->len + 1);
    memcpy(heap.data, b->data, b->len);
    heap.data[b->len] = '\0';
    heap.len = b->len;
    heap.cap = b->len + 1;
    munmap(b->data, b->len);
    *b = heap;
  }
  if (need <= b->cap)
    return 0;
  cap = b->cap ? b->cap : 256;
  while (cap < need)
    cap *= 2;
  p = realloc(b->data, cap);
  if (!p)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory (%zu bytes)", cap);
  b->data = p;
  b->cap = cap;
  return 0;
}

int gpujit__buf_put(gpujit__buf *b, const void *data, size_t len)
{
  int err;
  if ((err = gpujit__buf_reserve(b, len)) < 0)
    return err;
  if (len)
    memcpy(b->data + b->len, data, len);
  b->len += len;
  b->data[b->len] = '\0';
  return 0;
}

int gpujit__buf_puts(gpujit__buf *b, const char *s) { return gpujit__buf_put(b, s, strlen(s)); }

int gpujit__buf_printf(gpujit__buf *b, const char *fmt, ...)
{
  va_list ap;
  int n, err;
  va_start(ap, fmt);
  n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0)
    return gpujit__error(GPUJIT_EINVAL, "bad format string");
  if ((err = gpujit__buf_reserve(b, (size_t)n)) < 0)
    return err;
  va_start(ap, fmt);
  vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
  return 0;
}

void gpujit__buf_free(gpujit__buf *b)
{
  if (mapped(b))
    munmap(b->data, b->len);
  else
    free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}

char *gpujit__strndup(const char *s, size_t n)
{
  char *p = malloc(n + 1);
  if (!p)
    return NULL;
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *gpujit__strdup(const char *s) { return s ? gpujit__strndup(s, strlen(s)) : NULL; }

int gpujit__strvec_push(gpujit__strvec *v, const char *s)
{
  char *copy;
  char **items = gpujit__grow(v->items, &v->cap, v->count, sizeof(*items), 16);
  if (!items)
    return GPUJIT_ENOMEM;
  v->items = items;
  if (!(copy = gpujit__strdup(s)))
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  v->items[v->count++] = copy;
  return 0;
}

int gpujit__strvec_pushf(gpujit__strvec *v, const char *fmt, ...)
{
  char tmp[4096];
  va_list ap;
  int n;
  va_start(ap, fmt);
  n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof(tmp))
    return gpujit__error(GPUJIT_EINVAL, "option too long (%d bytes)", n);
  return gpujit__strvec_push(v, tmp);
}

void gpujit__strvec_free(gpujit__strvec *v)
{
  for (size_t i = 0; i < v->count; i++)
    free(v->items[i]);
  free(v->items);
  v->items = NULL;
  v->count = v->cap = 0;
}

/* The value of the hexadecimal digit c, or -1 when c is not one. */
static int hex_digit(int c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

int gpujit__hex_span(const char *s, const char *end, unsigned long long *value)
{
  unsigned long long v = 0;
  if (end <= s || end - s > 16)
    return -1;
  for (; s < end; s++) {
    int d = hex_digit((unsigned char)*s);
    if (d < 0)
      return -1;
    v = v * 16 + (unsigned)d;
  }
  *value = v;
  return 0;
}

size_t gpujit__utf8_len(const char *s, size_t max)
{
  const unsigned char *u = (const unsigned char *)s;
  size_t n = !max ? 0 : u[0] < 0x80 ? 1 : u[0] >= 0xc2 && u[0] <= 0xdf ? 2 : u[0] >= 0xe0 && u[0] <= 0xef ? 3
                                        : u[0] >= 0xf0 && u[0] <= 0xf4 ? 4 : 0;
  if (n == 0 || n > max)
    return 0;
  for (size_t i = 1; i < n; i++)
    if ((u[i] & 0xc0) != 0x80)
      return 0;
  /* the second byte's range: no overlong form, no surrogate, nothing past U+10FFFF */
  if ((u[0] == 0xe0 && u[1] < 0xa0) || (u[0] == 0xed && u[1] > 0x9f) || (u[0] == 0xf0 && u[1] < 0x90) ||
      (u[0] == 0xf4 && u[1] > 0x8f))
    return 0;
  return n;
}
