/* The build server's socket (server/socket.h). Nothing listens on a network port: a Unix socket
 * in a 0700 directory of the user's, and the peer's uid checked on every connection both ways. */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <xxhash.h>

#include "base/error.h"
#include "base/fs.h"
#include "cache/store/store.h"
#include "compile/toolkit/nvrtc_env.h"
#include "compile/toolkit/toolkit.h"
#include "server/socket.h"

int gpujit_server_options_init(gpujit_server_options *opts, unsigned int version)
{
  static const gpujit_server_options init = GPUJIT_SERVER_OPTIONS_INIT;
  if (!opts)
    return gpujit__error(GPUJIT_EINVAL, "options: NULL");
  if (version != GPUJIT_SERVER_OPTIONS_VERSION)
    return gpujit__error(GPUJIT_EVERSION, "server options version %u is not supported", version);
  *opts = init;
  return 0;
}

/* $XDG_RUNTIME_DIR/gpujit, else /tmp/gpujit-UID: made 0700, and refused unless it is a directory
 * of this user's that nobody else can enter. */
static int socket_dir(char *out, size_t size)
{
  const char *xdg = getenv("XDG_RUNTIME_DIR");
  struct stat st;
  if (xdg && *xdg && gpujit__is_dir(xdg))
    snprintf(out, size, "%s/gpujit", xdg);
  else
    snprintf(out, size, "/tmp/gpujit-%lu", (unsigned long)geteuid());
  if (mkdir(out, 0700) < 0 && errno != EEXIST)
    return gpujit__error(GPUJIT_EIO, "cannot make %s: %s", out, strerror(errno));
  if (lstat(out, &st) < 0)
    return gpujit__error(GPUJIT_EIO, "%s: %s", out, strerror(errno));
  if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
    return gpujit__error(GPUJIT_EINVAL, "%s is not a directory of this user's alone (owner %lu, mode %03o): no server",
                         out, (unsigned long)st.st_uid, (unsigned)(st.st_mode & 0777));
  return 0;
}

int gpujit__server_paths(char *sock, size_t sock_size, char *lock, size_t lock_size, const gpujit_server_options *o)
{
  char dir[PATH_MAX];
  int err;
  if (o && o->socket_path) {
    snprintf(sock, sock_size, "%s", o->socket_path);
  } else {
    char *cache = o && o->cache_dir ? gpujit__abspath(o->cache_dir) : gpujit__cache_default_dir(NULL);
    if (!cache)
      return gpujit__error(GPUJIT_ENOMEM, "out of memory");
    err = socket_dir(dir, sizeof(dir));
    /* one server per user and cache directory */
    if (err == 0)
      snprintf(sock, sock_size, "%s/server-%016llx.sock", dir, (unsigned long long)XXH3_64bits(cache, strlen(cache)));
    free(cache);
    if (err < 0)
      return err;
  }
  if (strlen(sock) >= sizeof(((struct sockaddr_un *)0)->sun_path))
    return gpujit__error(GPUJIT_EINVAL, "socket path too long for a Unix socket: %s", sock);
  if (lock)
    snprintf(lock, lock_size, "%s.lock", sock);
  return 0;
}

int gpujit_server_socket_path(char *out, size_t size, const gpujit_server_options *o)
{
  if (!out || !size)
    return gpujit__error(GPUJIT_EINVAL, "gpujit_server_socket_path: no buffer");
  return gpujit__server_paths(out, size, NULL, 0, o);
}

bool gpujit__peer_is(int fd, uid_t uid, char *why, size_t why_size)
{
  struct ucred cred;
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
    snprintf(why, why_size, "no peer credentials: %s", strerror(errno));
    return false;
  }
  if (cred.uid != uid) {
    snprintf(why, why_size, "peer pid %ld runs as uid %lu, not %lu", (long)cred.pid, (unsigned long)cred.uid,
             (unsigned long)uid);
    return false;
  }
  return true;
}

int gpujit__server_connect(const char *path)
{
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  char why[160];
  int fd;
  if (strlen(path) >= sizeof(a.sun_path))
    return gpujit__error(GPUJIT_EINVAL, "socket path too long: %s", path);
  strcpy(a.sun_path, path);
  if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
    return gpujit__error(GPUJIT_EIO, "socket: %s", strerror(errno));
  if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
    int e = errno;
    close(fd);
    return gpujit__error(GPUJIT_ENOENT, "no server at %s: %s", path, strerror(e));
  }
  if (!gpujit__peer_is(fd, geteuid(), why, sizeof(why))) { /* someone else's socket: never talk to it */
    close(fd);
    return gpujit__error(GPUJIT_EINVAL, "the server at %s is not this user's: %s", path, why);
  }
  return fd;
}

int gpujit__wait_readable(int fd, int timeout_ms)
{
  struct pollfd p = {fd, POLLIN, 0};
  for (;;) {
    int r = poll(&p, 1, timeout_ms);
    if (r < 0 && errno == EINTR)
      continue;
    return r > 0;
  }
}

static char identity[PATH_MAX + 64];

static void take_identity(void)
{
  Dl_info info;
  struct stat st;
  char path[PATH_MAX];
  ssize_t n;
  /* the file this code was loaded from, absolute (a relative name, as the program was started,
   * means nothing after a chdir): a server of another build is another file or mtime */
  if (!dladdr((void *)gpujit__build_identity, &info) || !info.dli_fname || !realpath(info.dli_fname, path)) {
    if ((n = readlink("/proc/self/exe", path, sizeof(path) - 1)) <= 0)
      n = 0;
    path[n] = '\0';
  }
  if (path[0] && stat(path, &st) == 0)
    snprintf(identity, sizeof(identity), "%s %s %lld %lld.%09ld", GPUJIT_VERSION_STRING, path, (long long)st.st_size,
             (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
  else
    snprintf(identity, sizeof(identity), "%s", GPUJIT_VERSION_STRING);
}

const char *gpujit__build_identity(void)
{
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, take_identity);
  return identity;
}

/* Whether two paths name one object (a namespace's inode, a root directory). */
static bool same_object(const char *a, const char *b)
{
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

bool gpujit__peer_resolves_as_we_do(int fd, char *why, size_t n)
{
  struct ucred cred;
  socklen_t len = sizeof(cred);
  char ns[64], root[64];
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
    snprintf(why, n, "no peer credentials: %s", strerror(errno));
    return false;
  }
  if (cred.pid <= 0) { /* a client in a pid namespace the server cannot see into */
    snprintf(why, n, "the client's process is not visible to the server (another pid namespace)");
    return false;
  }
  snprintf(ns, sizeof(ns), "/proc/%ld/ns/mnt", (long)cred.pid);
  snprintf(root, sizeof(root), "/proc/%ld/root", (long)cred.pid);
  if (!same_object(ns, "/proc/self/ns/mnt"))
    snprintf(why, n, "the client (pid %ld) is in another mount namespace: its paths are other files here",
             (long)cred.pid);
  else if (!same_object(root, "/"))
    snprintf(why, n, "the client (pid %ld) has another root directory: its paths are other files here",
             (long)cred.pid);
  else
    return true;
  return false;
}

void gpujit__env_to_json(cJSON *req)
{
  cJSON *env = cJSON_AddObjectToObject(req, "env");
  const char *name;
  for (size_t i = 0; env && (name = gpujit__nvrtc_env_name(i, NULL)); i++)
    if (getenv(name))
      cJSON_AddStringToObject(env, name, getenv(name));
}

/* The first variable of NVRTC's environment that differs between request `req` and this process,
 * into `why`; false when none does (a request without one: every variable unset). */
static bool env_differs(const cJSON *req, char *why, size_t n)
{
  const cJSON *env = cJSON_GetObjectItemCaseSensitive(req, "env");
  const char *name;
  for (size_t i = 0; (name = gpujit__nvrtc_env_name(i, NULL)); i++) {
    const char *theirs = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(env, name)), *ours = getenv(name);
    if (!theirs != !ours || (theirs && strcmp(theirs, ours))) {
      snprintf(why, n, "the client's environment is not the server's, and NVRTC reads it: %s is %s%s%s in the "
               "client, %s%s%s in the server", name, theirs ? "'" : "", theirs ? theirs : "unset",
               theirs ? "'" : "", ours ? "'" : "", ours ? ours : "unset", ours ? "'" : "");
      return true;
    }
  }
  return false;
}

/* Why a build request cannot be taken here, into `why`; false when it can. The same NVRTC
 * under another root is another toolkit (its headers are other files): never compiled here with
 * the server's own for such a client, which builds in its own process. So is a client whose
 * paths are other files here (another mount namespace or root), and one whose compile would see
 * another environment than the server's workers. */
bool gpujit__server_refuses(const cJSON *req, const char *op, int peer, char *why, size_t n)
{
  const char *ver = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req, "build"));
  const char *tk = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req, "toolkit"));
  const char *root = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req, "toolkit_root"));
  if (!op || strcmp(op, "build"))
    snprintf(why, n, "unknown request '%s'", op ? op : "");
  else if (!ver || strcmp(ver, gpujit__build_identity()) || !tk || strcmp(tk, gpujit__toolkit_id()) ||
           !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(req, "job")))
    snprintf(why, n, "stale server: it is %s with toolkit %s; the client is %s with toolkit %s",
             gpujit__build_identity(), gpujit__toolkit_id(), ver ? ver : "?", tk ? tk : "?");
  else if (!root || strcmp(root, gpujit__cuda_root()))
    snprintf(why, n, "the server compiles with the toolkit at %s; the client's is at %s", gpujit__cuda_root(),
             root ? root : "?");
  else if (!gpujit__peer_resolves_as_we_do(peer, why, n) || env_differs(req, why, n))
    return true;
  else
    return false;
  return true;
}
