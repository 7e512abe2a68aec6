/* Growable byte buffers, string vectors and string copies. */
#ifndef GPUJIT_BASE_BUF_H
#define GPUJIT_BASE_BUF_H

#include <stdarg.h>
#include <stddef.h>

#include "base/error.h"

/** A growable byte buffer; `data` is NUL-terminated whenever it is not NULL and the buffer is
 *  on the heap. A buffer may instead map a file (cap 0, see gpujit__buf_map): reading it is the
 *  same, growing it first copies it to the heap, freeing it unmaps it. */
typedef struct gpujit__buf {
  char *data;
  size_t len;
  size_t cap;
} gpujit__buf;

/** Make room for `extra` more bytes (and the terminating NUL). @return 0 or GPUJIT_ENOMEM. */
int gpujit__buf_reserve(gpujit__buf *b, size_t extra);
int gpujit__buf_put(gpujit__buf *b, const void *data, size_t len);
int gpujit__buf_puts(gpujit__buf *b, const char *s);
int gpujit__buf_printf(gpujit__buf *b, const char *fmt, ...) GPUJIT__PRINTF(2, 3);
void gpujit__buf_free(gpujit__buf *b);
/** Map `len` bytes of the open file `fd` privately (writes stay in this process). The byte after
 *  them is the mapping's zero fill only when `len` is not a multiple of the page size.
 *  @return 0, or GPUJIT_EIO with `b` untouched. */
int gpujit__buf_map(gpujit__buf *b, int fd, size_t len);

/** A vector of owned strings. */
typedef struct gpujit__strvec {
  char **items;
  size_t count;
  size_t cap;
} gpujit__strvec;

int gpujit__strvec_push(gpujit__strvec *v, const char *s);
int gpujit__strvec_pushf(gpujit__strvec *v, const char *fmt, ...) GPUJIT__PRINTF(2, 3);
void gpujit__strvec_free(gpujit__strvec *v);

/**
 * Make room for `need` elements of `elem` bytes in an array of capacity `*cap`: the capacity
 * doubled (from `first` when empty) until it holds them. The one way arrays grow in gpujit; the
 * new elements are not initialised.
 * @return the array, moved or not, with `*cap` updated; NULL with GPUJIT_ENOMEM set when out of
 *         memory or when the size would overflow (the array and `*cap` untouched).
 */
void *gpujit__grow_to(void *items, size_t *cap, size_t need, size_t elem, size_t first);
/** Room for one more element after `count`: gpujit__grow_to(items, cap, count + 1, elem, first). */
void *gpujit__grow(void *items, size_t *cap, size_t count, size_t elem, size_t first);

/** malloc'd copies; NULL when out of memory (and for a NULL `s`). */
char *gpujit__strdup(const char *s);
char *gpujit__strndup(const char *s, size_t n);
/* The value of the hex digits in [s, end), at most 16, all of them digits; -1 when not so
 * (none, too many, another character). Reads nothing outside [s, end): no NUL is needed. */
int gpujit__hex_span(const char *s, const char *end, unsigned long long *value);
/* The length (1-4) of the well-formed UTF-8 character `s` starts with, reading at most `max`
 * bytes; 0 when it is none (a stray, overlong, surrogate or cut sequence, or max 0). */
size_t gpujit__utf8_len(const char *s, size_t max);

#endif
