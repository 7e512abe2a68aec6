/* gpujit-worker: the process a project build compiles its cache misses in (project/worker.h).
 * Started by the build with its job and result pipes on fds 3 and 4; ends when they close. */
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "project/worker.h"

int main(void)
{
  /* Ctrl-C reaches the whole process group: the build decides when its workers stop. */
  signal(SIGINT, SIG_IGN);
  signal(SIGPIPE, SIG_IGN);
  /* and a build (or server) killed outright takes its workers with it. SIGKILL, not SIGTERM:
   * NVRTC catches SIGTERM during a compile and calls exit(), whose handlers wait on a lock the
   * compile holds — the worker would hang for good, holding the request's cache lock. */
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1)
    return 1;
  return gpujit__worker_main(GPUJIT__WORKER_IN_FD, GPUJIT__WORKER_OUT_FD);
}
