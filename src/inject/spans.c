/*
 * Launches by correlation id, as runs: run i says that launches from corr[i] up to the next run's
 * start came from module[i]. A launch from the module of the run before it costs nothing; a
 * change of module adds a run. Correlation ids grow with each API call; a launch whose callback
 * comes after a later one's (two threads) is put in its place, and the run it splits is
 * continued after it. The oldest runs give way past MAX_RUNS (the kernel records they were for
 * came long before).
 */
#include <pthread.h>
#include <string.h>

#include "inject/spans.h"

#define MAX_RUNS 65536

static struct {
  uint32_t corr;
  uint64_t module;
} runs[MAX_RUNS];
static uint64_t first, end; /* the runs kept: [first, end), indices modulo MAX_RUNS */
static uint32_t newest;     /* the highest correlation id launched */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

#define AT(i) runs[(i) % MAX_RUNS]

static void push(uint32_t corr, uint64_t module)
{
  AT(end).corr = corr;
  AT(end).module = module;
  end++;
  if (end - first > MAX_RUNS)
    first = end - MAX_RUNS;
}

/* Insert a run at position `at` (first <= at <= end), moving the later ones up. */
static void insert(uint64_t at, uint32_t corr, uint64_t module)
{
  push(0, 0);
  for (uint64_t i = end - 1; i > at; i--)
    AT(i) = AT(i - 1);
  if (at >= first) {
    AT(at).corr = corr;
    AT(at).module = module;
  }
}

/* The last run starting at or before corr, or end when there is none. */
static uint64_t find(uint32_t corr)
{
  uint64_t lo = first, hi = end; /* the answer is in [lo - 1, hi) */
  if (first == end || AT(first).corr > corr)
    return end;
  while (hi - lo > 1) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (AT(mid).corr <= corr)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

void gji_span_launch(uint32_t corr, uint64_t module)
{
  pthread_mutex_lock(&lock);
  if (first == end || newest < corr) { /* the usual case: the newest launch */
    if (first == end || AT(end - 1).module != module)
      push(corr, module);
    newest = corr;
  } else {
    uint64_t at = find(corr);
    if (at == end) /* before every run kept */
      insert(first, corr, module);
    else if (AT(at).module != module) {
      uint64_t old = AT(at).module;
      bool next_starts = at + 1 < end && AT(at + 1).corr == corr + 1;
      if (AT(at).corr == corr)
        AT(at).module = module;
      else
        insert(++at, corr, module);
      if (!next_starts)
        insert(at + 1, corr + 1, old); /* what followed in the run goes on after it */
    }
  }
  pthread_mutex_unlock(&lock);
}

bool gji_span_module(uint32_t corr, uint64_t *module)
{
  uint64_t at;
  bool ok;
  pthread_mutex_lock(&lock);
  at = find(corr);
  ok = at != end;
  *module = ok ? AT(at).module : 0;
  pthread_mutex_unlock(&lock);
  return ok;
}
