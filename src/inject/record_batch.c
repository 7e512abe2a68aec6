/* Record lines written together rather than one write each (inject/record.h): a thread's batch (a
 * CUPTI buffer's lines in one write), and the lines kept for later — a step's record, which a
 * program may make a thousand times a second: written with the next other record, or once the
 * oldest kept has waited 100 ms, or at exit, so a loop's steps pay no system call each. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "inject/record.h"

/* What writes whole lines to this process's records file (record.c's, given at its load). */
static void (*writer)(const char *s, size_t n);

void gji_batch_writer(void (*fn)(const char *s, size_t n)) { writer = fn; }

static void write_lines(const char *s, size_t n)
{
  if (n && writer)
    writer(s, n);
}

/* A thread's batch (gji_batch_begin): whole lines, written together. */
#define BATCH_BYTES (256u << 10)
static __thread struct {
  char *buf;
  size_t len;
  int depth;
} batch;

static void batch_write(void)
{
  write_lines(batch.buf, batch.len);
  batch.len = 0;
}

void gji_batch_begin(void)
{
  if (!batch.buf)
    batch.buf = malloc(BATCH_BYTES);
  batch.depth++;
}

void gji_batch_end(void)
{
  if (batch.depth > 0 && --batch.depth == 0) {
    batch_write();
    free(batch.buf); /* a thread that flushed once (the program's) keeps nothing */
    batch.buf = NULL;
  }
}

bool gji_batch_take(const char *s, size_t n)
{
  if (batch.depth <= 0 || !batch.buf)
    return false;
  if (batch.len + n > BATCH_BYTES)
    batch_write();
  memcpy(batch.buf + batch.len, s, n);
  batch.len += n;
  return true;
}

/* The lines kept for later, of any thread: a process's steps come from whichever thread marks
 * them. `len` is read without the lock first (a record that finds nothing kept takes no lock). */
#define LATER_BYTES (64u << 10)
#define LATER_NS 100000000ull
static struct {
  pthread_mutex_t lock;
  size_t len;
  uint64_t since; /* when the oldest line kept was */
  char buf[LATER_BYTES];
} later = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* A forked child: the lines kept are its parent's, which writes them; the lock is free (a thread
 * that held it at the fork does not exist here). */
static void later_forked(void)
{
  pthread_mutex_init(&later.lock, NULL);
  later.len = 0;
}

__attribute__((constructor)) static void later_init(void) { pthread_atfork(NULL, NULL, later_forked); }

static void later_write(void)
{
  write_lines(later.buf, later.len);
  __atomic_store_n(&later.len, 0, __ATOMIC_RELEASE);
}

void gji_later_keep(const char *s, size_t n, uint64_t now)
{
  pthread_mutex_lock(&later.lock);
  if (later.len && (later.len + n > LATER_BYTES || now - later.since >= LATER_NS))
    later_write();
  if (!later.len)
    later.since = now;
  memcpy(later.buf + later.len, s, n); /* a line is at most 8 KiB (gji_line) */
  __atomic_store_n(&later.len, later.len + n, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&later.lock);
}

void gji_later_flush(void)
{
  if (!__atomic_load_n(&later.len, __ATOMIC_ACQUIRE))
    return;
  pthread_mutex_lock(&later.lock);
  if (later.len)
    later_write();
  pthread_mutex_unlock(&later.lock);
}
