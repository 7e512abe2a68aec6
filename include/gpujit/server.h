/* The warm build server: worker processes that keep NVRTC loaded and its precompiled headers
 * warm between CLI calls, reached over a Unix socket of the user's. */
#ifndef GPUJIT_SERVER_H
#define GPUJIT_SERVER_H

#include "gpujit/common.h"
#include "gpujit/module.h"
#include "gpujit/project.h"

GPUJIT_BEGIN_DECLS

#define GPUJIT_SERVER_OPTIONS_VERSION 1

/** One server per user and cache directory. Initialise with GPUJIT_SERVER_OPTIONS_INIT. */
typedef struct gpujit_server_options {
  unsigned int version;
  const char *cache_dir;   /**< the cache it serves; NULL: the default cache directory */
  const char *socket_path; /**< NULL: server-HASH.sock in $XDG_RUNTIME_DIR/gpujit, else /tmp/gpujit-UID (0700) */
  int workers;             /**< worker processes; 0: 2 */
  int max_pch;             /**< include blocks a worker keeps PCHs for before it is restarted; 0: 4 */
  double idle_timeout_s;   /**< exit after this long without a request; 0: 900 */
  const char *worker_path; /**< the worker executable; NULL: found as project builds find it */
} gpujit_server_options;

#define GPUJIT_SERVER_OPTIONS_INIT { GPUJIT_SERVER_OPTIONS_VERSION, NULL, NULL, 0, 0, 0.0, NULL }

/** @return 0, or GPUJIT_EVERSION. */
GPUJIT_API int gpujit_server_options_init(gpujit_server_options *opts, unsigned int version);

/**
 * The socket a server for these options listens on (its directory made 0700 if missing).
 * @return 0, GPUJIT_EINVAL (the directory is not the user's alone, or the path is too long).
 */
GPUJIT_API int gpujit_server_socket_path(char *out, size_t size, const gpujit_server_options *opts);

/**
 * Run a server in this process until it is stopped, idle for idle_timeout_s, or signalled
 * (SIGTERM, SIGINT). When listening it writes "ready\n" to `ready_fd` (-1: none) and closes it.
 * @return 0; GPUJIT_EBUSY (a server already serves this socket), GPUJIT_EINVAL, GPUJIT_EIO,
 *   GPUJIT_EWORKER (no worker could be started).
 */
GPUJIT_API int gpujit_server_run(const gpujit_server_options *opts, int ready_fd);

/**
 * What the running server holds, as JSON: uptime, workers (pid, jobs, RSS), the precompiled
 * headers (include block, bytes, hits), memory, limits, and "compatible": whether it takes this
 * process's builds (the same build of gpujit and toolkit).
 * @param out receives the text; free with gpujit_free().
 * @return 0, GPUJIT_ENOENT (none running), GPUJIT_EIO, GPUJIT_EUNSUPPORTED (another version).
 */
GPUJIT_API int gpujit_server_status(char **out, const gpujit_server_options *opts);

/** Stop the running server. @return 0, GPUJIT_ENOENT (none running), GPUJIT_EIO. */
GPUJIT_API int gpujit_server_stop(const gpujit_server_options *opts);

/**
 * $GPUJIT_SERVER as every reader takes it: `*out` 1 ("1": start a server on demand and use it),
 * 0 ("0": never use one) or -1 (unset or empty: as the cache's setting says, a running server
 * used). Any other value leaves `*out` -1.
 * @return 0, or GPUJIT_EINVAL naming the value (which is then ignored).
 */
GPUJIT_API int gpujit_server_env(int *out);

/**
 * Whether a server should be started on demand for these options' cache: $GPUJIT_SERVER "1"
 * (yes) or "0" (no) when set, else the setting gpujit_server_autostart_set() keeps in the cache
 * directory (also when $GPUJIT_SERVER holds another value, which is ignored: see gpujit_server_env()).
 * @return 1 or 0.
 */
GPUJIT_API int gpujit_server_autostart(const gpujit_server_options *opts);

/** Keep (`on`) or remove the start-on-demand setting in the cache directory.
 *  @return 0, or GPUJIT_EIO naming the file. */
GPUJIT_API int gpujit_server_autostart_set(const gpujit_server_options *opts, int on);

/**
 * gpujit_module_build_files() through the server: a cache hit is served here; a miss goes to
 * the server, whose result, diagnostics and trace come back as an in-process build gives them.
 * A server that is absent, of another version or toolkit, hung or gone mid-request makes this
 * build in-process (one line in the log at info level saying why).
 * @param served receives 1 when the server built the module, else 0 (may be NULL).
 * @return as gpujit_module_build_files().
 */
GPUJIT_API int gpujit_server_build_files(gpujit_module **out, const char *const *paths, size_t count,
                                         const gpujit_module_options *opts, const gpujit_server_options *server,
                                         int *served);

/**
 * gpujit_project_build() through the server: hits are served here as always; of the misses, as
 * many at once as the server has workers go to them (their precompiled headers warm from earlier
 * builds), the longest first, while the build's other opts->jobs slots start worker processes of
 * their own. Whatever the server does not take (none runs, another version or toolkit, no
 * answer in 2 s, lost mid-job: that job is built again) is built as gpujit_project_build()
 * builds it, with one line in the log at info level. Results, outputs and exit status are those
 * of gpujit_project_build().
 * @param served receives the number of modules the server built (may be NULL).
 */
GPUJIT_API int gpujit_server_build_project(gpujit_project *project, const gpujit_project_options *opts,
                                           const gpujit_server_options *server, size_t *served);

GPUJIT_END_DECLS

#endif
