/* The cache tests' fixture: a fresh directory per test and a cache opened in it. */
#ifndef GPUJIT_TESTS_CACHE_FIXTURE_H
#define GPUJIT_TESTS_CACHE_FIXTURE_H

#include <stdlib.h>

#include "gpujit/cache.h"
#include "helpers.h"

/** The fixture's fields, first in a test's own struct: `root` a fresh directory, `cache` the cache
 *  opened at `cache_dir` (root/cache). */
#define TH_CACHE_FIXTURE                                                                                              \
  char *root, *cache_dir;                                                                                             \
  gpujit_cache *cache

static inline void th__cache_setup(char **root, char **cache_dir, gpujit_cache **cache)
{
  gpujit_cache_options co = GPUJIT_CACHE_OPTIONS_INIT;
  *root = th_tmpdir();
  *cache_dir = th_path(*root, "cache");
  co.dir = *cache_dir;
  assert_int_equal(gpujit_cache_open(cache, &co), 0);
}

static inline void th__cache_teardown(char **root, char **cache_dir, gpujit_cache **cache)
{
  gpujit_cache_free(*cache);
  th_rmrf(*root);
  free(*root);
  free(*cache_dir);
}

/** Make the fixture of `f` (a struct that begins with TH_CACHE_FIXTURE), and remove it. */
#define th_cache_setup(f) th__cache_setup(&(f)->root, &(f)->cache_dir, &(f)->cache)
#define th_cache_teardown(f) th__cache_teardown(&(f)->root, &(f)->cache_dir, &(f)->cache)

#endif
