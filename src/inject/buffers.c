/* CUPTI's activity buffers: zeroed, touched and reused (inject/buffers.h). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "inject/buffers.h"
#include "inject/record.h"

#define SPARE_BUFFERS 8 /* kept for reuse, at most */
#define READY_BUFFERS 2 /* made ready in CUPTI's thread when fewer are kept */

static struct {
  pthread_mutex_t lock;
  uint8_t *v[SPARE_BUFFERS];
  size_t n, bytes;
  uint64_t late;
} spare = {.lock = PTHREAD_MUTEX_INITIALIZER, .bytes = GJI_BUFFER_BYTES};
__attribute__((constructor)) static void fork_safe_lock(void) { gji_fork_safe(&spare.lock); }

static void keep(uint8_t *buffer)
{
  pthread_mutex_lock(&spare.lock);
  if (spare.n < SPARE_BUFFERS) {
    spare.v[spare.n++] = buffer;
    buffer = NULL;
  }
  pthread_mutex_unlock(&spare.lock);
  free(buffer);
}

static size_t kept(void)
{
  size_t n;
  pthread_mutex_lock(&spare.lock);
  n = spare.n;
  pthread_mutex_unlock(&spare.lock);
  return n;
}

/* A zeroed buffer whose pages are all touched: a calloc's would be faulted in by CUPTI's writes,
 * in the thread that launches. */
static bool make_one(void)
{
  uint8_t *b = malloc(spare.bytes);
  if (!b)
    return false;
  explicit_bzero(b, spare.bytes);
  keep(b);
  return true;
}

void gji_buffers_prepare(int n, size_t bytes)
{
  if (bytes)
    spare.bytes = bytes;
  for (int i = 0; i < n && make_one(); i++)
    ;
}

void gji_buffer_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
  *buffer = NULL;
  pthread_mutex_lock(&spare.lock);
  if (spare.n)
    *buffer = spare.v[--spare.n];
  pthread_mutex_unlock(&spare.lock);
  if (!*buffer) {
    *buffer = calloc(1, spare.bytes); /* fresh pages read as zero */
    __atomic_add_fetch(&spare.late, 1, __ATOMIC_RELAXED);
  }
  *size = *buffer ? spare.bytes : 0;
  *max_records = 0;
}

void gji_buffer_give_back(uint8_t *buffer)
{
  memset(buffer, 0, spare.bytes);
  keep(buffer);
  while (kept() < READY_BUFFERS && make_one())
    ;
}

uint64_t gji_buffers_allocated_late(void)
{
  return __atomic_load_n(&spare.late, __ATOMIC_RELAXED);
}
