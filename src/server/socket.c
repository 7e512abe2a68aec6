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
#include "cache/store.h"
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

/* Why a build request cannot be taken here, into `why`; false when it can. The same NVRTC
 * under another root is another toolkit (its headers are other files): never compiled here with
 * the server's own for such a client, which builds in its own process. */
bool gpujit__server_refuses(const cJSON *req, const char *op, char *why, size_t n)
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
  else
    return false;
  return true;
}
