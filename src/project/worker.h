/* A worker process of a project build: reads jobs, builds each module with the full pipeline
 * (cache, trace, precompiled headers kept for the jobs after), answers with the result. */
#ifndef GPUJIT_PROJECT_WORKER_H
#define GPUJIT_PROJECT_WORKER_H

/** The fds a worker reads jobs from and writes results to (set up by the pool). */
#define GPUJIT__WORKER_IN_FD 3
#define GPUJIT__WORKER_OUT_FD 4

/** Serve jobs until the input closes. @return the process exit status. */
int gpujit__worker_main(int in_fd, int out_fd);

#endif
