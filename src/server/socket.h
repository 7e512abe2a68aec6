/* The build server's socket: where it lives (a directory of the user's alone), who may talk to
 * it (the same user: SO_PEERCRED on every connection), and connecting with a deadline. */
#ifndef GPUJIT_SERVER_SOCKET_H
#define GPUJIT_SERVER_SOCKET_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "gpujit/server.h"

/** The socket path for these options, and beside it the lock file a server holds. */
int gpujit__server_paths(char *sock, size_t sock_size, char *lock, size_t lock_size, const gpujit_server_options *o);

/** Whether the process at the other end of `fd` runs as `uid`; `why` says who it was when not. */
bool gpujit__peer_is(int fd, uid_t uid, char *why, size_t why_size);

/** Connect to `path` (the peer checked to be this user). @return the fd, GPUJIT_ENOENT (nobody
 *  listens), GPUJIT_EINVAL (another user's server). */
int gpujit__server_connect(const char *path);

/** Wait until `fd` is readable or `timeout_ms` passes (-1: forever). @return 1 readable, 0 timed out. */
int gpujit__wait_readable(int fd, int timeout_ms);

/** What identifies this build of gpujit: the version and the file its code was loaded from (path,
 *  size, mtime). A server answers only clients of its own build. */
const char *gpujit__build_identity(void);
/** Whether the process at the other end of `fd` resolves paths as this one does: the same mount
 *  namespace (/proc/PID/ns/mnt) and root directory (/proc/PID/root), read from the kernel, never
 *  from what the peer says; false with `why`. */
bool gpujit__peer_resolves_as_we_do(int fd, char *why, size_t n);

/** This process's values of the environment NVRTC and nvJitLink read (compile/toolkit/nvrtc_env.h),
 *  as `req`'s "env" object: each set variable by name; an unset one is absent. */
void gpujit__env_to_json(cJSON *req);

/** Why a server refuses request `req` (op `op`) from the client at the other end of `peer`, into
 *  `why`: not a build, another build of gpujit or toolkit, the same NVRTC under another root
 *  (another toolkit: its headers are other files), a client in another mount namespace or root
 *  (its paths are other files here), or one whose NVRTC environment is not the server's; false
 *  when it takes it. */
bool gpujit__server_refuses(const cJSON *req, const char *op, int peer, char *why, size_t n);

#endif
