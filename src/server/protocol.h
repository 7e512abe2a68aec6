/* What passes over the build server's socket: project/wire.h's frames. A client sends one JOB
 * frame, {"op": "build"|"status"|"stop", "build": BUILD, "toolkit": ID, "job": {…}} (the job
 * as a project build sends it to a worker); the server answers an ACK frame, {"ok", "why",
 * "build", "pid"} (BUILD: gpujit__build_identity()), then for a build the worker's RESULT frame and, when it built, its IMAGE
 * frame, as the worker wrote them. A status request is answered by one RESULT frame. */
#ifndef GPUJIT_SERVER_PROTOCOL_H
#define GPUJIT_SERVER_PROTOCOL_H

#include "project/wire.h" /* GPUJIT__FRAME_ACK with the others */

#endif
