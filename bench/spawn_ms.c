/* Run a command and print its wall time in ms (posix_spawn + waitpid: no shell, no interpreter),
 * for the shell benchmarks. Exits with the command's status. usage: spawn_ms CMD [ARGS...] */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

int main(int argc, char **argv)
{
  struct timespec a, b;
  posix_spawn_file_actions_t fa;
  pid_t pid;
  int status = 0;
  if (argc < 2) {
    fprintf(stderr, "usage: spawn_ms CMD [ARGS...]\n");
    return 2;
  }
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 1, 0);
  clock_gettime(CLOCK_MONOTONIC, &a);
  if (posix_spawnp(&pid, argv[1], &fa, NULL, argv + 1, environ) != 0) {
    perror(argv[1]);
    return 127;
  }
  waitpid(pid, &status, 0);
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("%.3f\n", (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
