/* CUPTI's activity buffers: zeroed, touched and reused (inject/buffers.h). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "inject/buffers.h"

#define SPARE_BUFFERS 4

static struct {
  pthread_mutex_t lock;
  uint8_t *v[SPARE_BUFFERS];
  size_t n;
} spare = {.lock = PTHREAD_MUTEX_INITIALIZER};

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

void gji_buffers_prepare(int n)
{
  for (int i = 0; i < n; i++) {
    uint8_t *b = malloc(GJI_BUFFER_BYTES);
    if (!b)
      return;
    explicit_bzero(b, GJI_BUFFER_BYTES); /* writes every page (a calloc's would wait for the first use) */
    keep(b);
  }
}

void gji_buffer_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
  *buffer = NULL;
  pthread_mutex_lock(&spare.lock);
  if (spare.n)
    *buffer = spare.v[--spare.n];
  pthread_mutex_unlock(&spare.lock);
  if (!*buffer)
    *buffer = calloc(1, GJI_BUFFER_BYTES); /* fresh pages read as zero */
  *size = *buffer ? GJI_BUFFER_BYTES : 0;
  *max_records = 0;
}

void gji_buffer_give_back(uint8_t *buffer)
{
  memset(buffer, 0, GJI_BUFFER_BYTES);
  keep(buffer);
}
