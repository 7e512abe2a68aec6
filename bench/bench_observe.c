/*
 * What observing NVRTC costs a miss: whole `gpujit build --no-cache` processes of
 * examples/saxpy.cu and examples/block_reduce.cu (CUB: ~600 headers, ~700 probes), with the
 * observing wrappers in NVRTC's GOT (the default) and without them (GPUJIT_BENCH_OBSERVE=0, which
 * caches nothing), alternated in one run so both see the same machine. Target (issue 43): at
 * most 2 % added to a miss.
 * Usage: bench_observe [ROUNDS]. Prints a table and RESULT lines.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"

static double build(const char *example, bool observe)
{
  char src[600], out[600];
  snprintf(src, sizeof(src), "%s/%s.cu", GPUJIT_EXAMPLES_DIR, example);
  snprintf(out, sizeof(out), "/tmp/bench-observe-%ld-%s.cubin", (long)getpid(), example);
  char *argv[] = {(char *)GPUJIT_CLI, "build", "-q", "--no-cache", "--arch", "sm_90", "-o", out, src, NULL};
  setenv("GPUJIT_BENCH_OBSERVE", observe ? "1" : "0", 1);
  double ms = bench_run_process(argv);
  unlink(out);
  return ms;
}

int main(int argc, char **argv)
{
  static const char *const ex[2] = {"saxpy", "block_reduce"};
  int rounds = argc > 1 ? atoi(argv[1]) : 9;
  double t[2][2][64], m[2][2]; /* [example][observe][round] */
  if (rounds < 1 || rounds > 64) {
    fprintf(stderr, "usage: bench_observe [ROUNDS 1..64]\n");
    return 2;
  }
  setenv("GPUJIT_SERVER", "0", 1);
  for (int e = 0; e < 2; e++) /* warm the page cache and toolkit-hashes */
    build(ex[e], true);
  for (int r = 0; r < rounds; r++)
    for (int e = 0; e < 2; e++) {
      bool first = (r + e) % 2; /* which goes first alternates */
      t[e][first][r] = build(ex[e], first);
      t[e][!first][r] = build(ex[e], !first);
    }
  printf("gpujit build --no-cache (a miss's compile), medians of %d alternated rounds\n", rounds);
  printf("%-14s %14s %14s %8s\n", "", "not observed", "observed", "ratio");
  for (int e = 0; e < 2; e++) {
    m[e][0] = bench_median(t[e][0], rounds);
    m[e][1] = bench_median(t[e][1], rounds);
    printf("%-14s %11.1f ms %11.1f ms %7.3fx\n", ex[e], m[e][0], m[e][1], m[e][1] / m[e][0]);
  }
  for (int e = 0; e < 2; e++)
    printf("RESULT miss_ms %s not_observed %.2f observed %.2f ratio %.4f\n", ex[e], m[e][0], m[e][1],
           m[e][1] / m[e][0]);
  printf("target: observing adds at most 2%% to a miss (block_reduce %+.1f%%, saxpy %+.1f%%)\n",
         (m[1][1] / m[1][0] - 1) * 100, (m[0][1] / m[0][0] - 1) * 100);
  return 0;
}
