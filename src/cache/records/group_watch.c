/*
 * Shared dependency groups kept verified under inotify: a group is verified once, with inotify
 * watching every file of it and every directory entry its paths resolve through, and vouched for
 * until an event says something changed. The build server's watch (server/watch.c) is one; a
 * process that checks the same group again — a Python session, a server's worker, a program that
 * builds many modules — keeps one of its own (gpujit__group_watch_process_vouch, below).
 *
 * Why a vouch is sound: every watch is in place before the group is verified, and inotify
 * queues an event inside the system call that changes a watched inode. A change finished
 * before a lookup asks is therefore queued when the watch, asked, takes the queue; any event
 * on a group's watches unverifies it. What is watched for each file: the file's own inode
 * (writes through any hard link, attribute and ctime changes, its removal) and, along the
 * path as the kernel resolves it — each symbolic link followed — every directory with the
 * one entry name the path goes through (creation, removal, renames of that entry). Paths that
 * must stay absent watch the same way up to where they stop. What inotify cannot see makes the
 * watch refuse, never vouch: a filesystem whose changes may come from elsewhere (NFS, FUSE,
 * SMB, 9p, ceph, anything not on the list below) or that raises no event for some changes —
 * overlayfs: a write made to one of its layers directly raises none on the overlay's inode, and a
 * container's files are such layers' — a mount-table change (all groups dropped), a full
 * queue (the same). Writes through a shared writable mmap raise no inotify event; editors and
 * package managers do not write so.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/error.h"
#include "cache/records/check_threads.h"
#include "cache/records/deps.h"
#include "cache/records/group_watch.h"
#include "cache/store/handle.h"

#define MAX_GROUPS 64
#define MAX_HOPS 40 /* symbolic links followed in one path, as the kernel allows */
#define FILE_EVENTS (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVE_SELF | IN_DELETE_SELF)
#define DIR_EVENTS (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_MOVE_SELF | IN_DELETE_SELF)

typedef struct entry {
  bool used;
  char *names;     /* a directory: "/a/b/", the entry names that matter; NULL: a file, every event */
  uint64_t groups; /* bit k: group k depends on it */
} entry;

typedef struct group {
  char digest[33];
  uint64_t record; /* a hash of the path of the group's record, in the cache it was read from */
  bool used, held;
  double used_us;
} group;

static uint64_t path_hash(const char *s)
{
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

struct gpujit__group_watch {
  int ifd, mfd;
  entry *e; /* by watch descriptor (the kernel hands them out increasing) */
  size_t ne;
  group g[MAX_GROUPS];
  int max_groups; /* the groups kept watched at once, the least recently asked for dropped */
  uint64_t devs[16]; /* devices found on a filesystem inotify can vouch for */
  size_t ndevs;
  gpujit__group_watch_counts st;
};

/* Filesystems whose every change passes through this kernel and raises its event on the inode a
 * path resolves to (their magic numbers). Not overlayfs (0x794c7630): a write to a lower or upper
 * layer's own path changes what the overlay shows and raises nothing on the overlay's inode. */
static bool local_fs(long type)
{
  static const unsigned long local[] = {
      0xEF53,     /* ext2/3/4 */
      0x58465342, /* xfs */
      0x9123683E, /* btrfs */
      0x01021994, /* tmpfs */
      0x2fc12fc1, /* zfs */
      0xF2F52010, /* f2fs */
      0x73717368, /* squashfs */
      0x858458f6, /* ramfs */
      0x3153464a, /* jfs */
      0x52654973, /* reiserfs */
  };
  for (size_t i = 0; i < sizeof(local) / sizeof(local[0]); i++)
    if ((unsigned long)type == local[i])
      return true;
  return false;
}

int gpujit__group_watch_new(gpujit__group_watch **out)
{
  gpujit__group_watch *w = calloc(1, sizeof(*w));
  *out = NULL;
  if (!w)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  w->mfd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
  if ((w->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0) {
    int e = errno;
    if (w->mfd >= 0)
      close(w->mfd);
    free(w);
    return gpujit__error(GPUJIT_EIO, "inotify: %s", strerror(e));
  }
  w->max_groups = MAX_GROUPS;
  if (w->mfd >= 0) { /* take the first report, so that the next one means a change */
    struct pollfd p = {w->mfd, POLLPRI, 0};
    (void)poll(&p, 1, 0);
  }
  *out = w;
  return 0;
}

void gpujit__group_watch_free(gpujit__group_watch *w)
{
  if (!w)
    return;
  for (size_t i = 0; i < w->ne; i++)
    free(w->e[i].names);
  free(w->e);
  close(w->ifd);
  if (w->mfd >= 0)
    close(w->mfd);
  free(w);
}

static void unhold(gpujit__group_watch *w, uint64_t groups)
{
  for (int k = 0; k < MAX_GROUPS; k++)
    if ((groups >> k & 1) && w->g[k].held) {
      w->g[k].held = false;
      w->st.invalidated++;
    }
}

static bool names_have(const char *names, const char *name)
{
  size_t len = strlen(name);
  for (const char *p = names; (p = strstr(p, name)) != NULL; p++)
    if (p > names && p[-1] == '/' && p[len] == '/')
      return true;
  return false;
}

/* Take every queued event; an event that concerns a group unverifies it. */
static void take_events(gpujit__group_watch *w)
{
  char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
  ssize_t len;
  if (w->mfd >= 0) {
    struct pollfd p = {w->mfd, POLLPRI, 0};
    if (poll(&p, 1, 0) > 0 && (p.revents & (POLLPRI | POLLERR))) {
      unhold(w, ~0ULL); /* a mount or unmount: paths may resolve elsewhere now */
      w->ndevs = 0;     /* and a device number may be another filesystem's */
    }
  }
  while ((len = read(w->ifd, buf, sizeof(buf))) > 0)
    for (char *p = buf; p < buf + len;) {
      const struct inotify_event *ev = (const struct inotify_event *)p;
      entry *e = ev->wd >= 0 && (size_t)ev->wd < w->ne && w->e[ev->wd].used ? &w->e[ev->wd] : NULL;
      p += sizeof(*ev) + ev->len;
      if (ev->mask & IN_Q_OVERFLOW)
        unhold(w, ~0ULL);
      if (!e)
        continue;
      if (!e->names || !ev->len || names_have(e->names, ev->name))
        unhold(w, e->groups);
      if (ev->mask & IN_IGNORED) { /* gone (removed, unmounted): the kernel dropped the watch */
        unhold(w, e->groups);
        free(e->names);
        memset(e, 0, sizeof(*e));
      }
    }
}

/* Whether device `dev` (0: not known) is on a filesystem inotify can vouch for: looked up by
 * statfs of `path` once per device. */
static bool local_dev(gpujit__group_watch *w, uint64_t dev, const char *path, char *why, size_t n)
{
  struct statfs fs;
  for (size_t i = 0; dev && i < w->ndevs; i++)
    if (w->devs[i] == dev)
      return true;
  if (statfs(path, &fs) != 0) {
    snprintf(why, n, "%s: %s", path, strerror(errno));
    return false;
  }
  if (!local_fs((long)fs.f_type)) {
    snprintf(why, n, "%s: on a filesystem (type 0x%lx) whose changes inotify may not see", path,
             (unsigned long)fs.f_type);
    return false;
  }
  if (dev && w->ndevs < sizeof(w->devs) / sizeof(w->devs[0]))
    w->devs[w->ndevs++] = dev;
  return true;
}

/* Note watch `wd` for group k: a file (name NULL), or a directory for the entry `name`. */
static int note(gpujit__group_watch *w, int wd, int k, const char *name, char *why, size_t n)
{
  entry *e;
  if ((size_t)wd >= w->ne) {
    size_t ne = w->ne;
    entry *grown = gpujit__grow_to(w->e, &ne, (size_t)wd + 1, sizeof(*grown), 64);
    if (!grown) {
      snprintf(why, n, "out of memory");
      return -1;
    }
    memset(grown + w->ne, 0, (ne - w->ne) * sizeof(*grown));
    w->e = grown, w->ne = ne;
  }
  e = &w->e[wd];
  if (!e->used)
    w->st.watches++;
  e->used = true;
  e->groups |= 1ULL << k;
  if (name && !names_have(e->names ? e->names : "", name)) {
    size_t have = e->names ? strlen(e->names) : 0;
    char *grown = realloc(e->names, have + strlen(name) + 3);
    if (!grown) {
      snprintf(why, n, "out of memory");
      return -1;
    }
    snprintf(grown + have, strlen(name) + 3, "%s%s/", have ? "" : "/", name);
    e->names = grown;
  }
  return wd;
}

/* Watch `path` (on device `dev`, 0: not known) for group k: a file (name NULL) or a directory for
 * the entry `name`. @return its watch descriptor, or -1 (`why`). */
static int add(gpujit__group_watch *w, int k, const char *path, uint64_t dev, const char *name, char *why, size_t n)
{
  int wd = inotify_add_watch(w->ifd, path, (name ? DIR_EVENTS : FILE_EVENTS) | IN_MASK_ADD);
  if (wd < 0) {
    snprintf(why, n, "inotify on %s: %s", path, strerror(errno));
    return -1;
  }
  if (((size_t)wd >= w->ne || !w->e[wd].used) && !local_dev(w, dev, path, why, n)) {
    inotify_rm_watch(w->ifd, wd);
    return -1;
  }
  return note(w, wd, k, name, why, n);
}

/* The directory the last path watched went through, as given and as resolved (no symbolic link
 * met on the way), with its watch: the group's records come in path order, so most share the
 * last one's directory, watched already. */
typedef struct resolved {
  char in[PATH_MAX], out[PATH_MAX];
  int wd;
  uint64_t dev;
  bool ok;
} resolved;

/*
 * Resolve `path` as the kernel does, watching each directory for the entry the path takes from
 * it and reading each symbolic link met; the file reached is watched itself when `file`. A path
 * that stops (an entry that does not exist) is watched up to there: its creation is an event.
 * `r` (NULL: none) remembers the directory of the path for the next.
 */
static int watch_path(gpujit__group_watch *w, int k, const char *path, bool file, resolved *r, char *why, size_t n)
{
  char cur[PATH_MAX] = "", rest[PATH_MAX * 2], link[PATH_MAX], comp[NAME_MAX + 1];
  const char *base = strrchr(path, '/');
  size_t dir = base ? (size_t)(base - path) : 0;
  uint64_t dev = 0; /* cur's device, where known */
  int hops = 0, memo = -1;
  if (path[0] != '/') {
    snprintf(why, n, "%s: not an absolute path", path);
    return -1;
  }
  snprintf(rest, sizeof(rest), "%s", path);
  if (r && r->ok && dir == strlen(r->in) && !memcmp(path, r->in, dir)) {
    snprintf(cur, sizeof(cur), "%s", r->out);
    snprintf(rest, sizeof(rest), "%s", base);
    memo = r->wd, dev = r->dev;
  }
  for (;;) {
    char *p = rest, next[PATH_MAX + NAME_MAX + 2];
    struct stat st;
    size_t len;
    bool last;
    int wd;
    while (*p == '/')
      p++;
    if (!*p)
      break;
    len = strcspn(p, "/");
    if (len > NAME_MAX) {
      snprintf(why, n, "%s: a name too long", path);
      return -1;
    }
    memcpy(comp, p, len);
    comp[len] = '\0';
    memmove(rest, p + len, strlen(p + len) + 1);
    if (!strcmp(comp, "."))
      continue;
    if (!strcmp(comp, "..")) {
      char *slash = strrchr(cur, '/');
      if (slash)
        *slash = '\0';
      dev = 0;
      continue;
    }
    last = !rest[0] && !hops; /* cur is the path's own directory, reached through no link */
    wd = memo >= 0 ? note(w, memo, k, comp, why, n) : add(w, k, cur[0] ? cur : "/", dev, comp, why, n);
    memo = -1;
    if (wd < 0)
      return -1;
    if (r && last && dir < sizeof(r->in) && strlen(cur) < sizeof(r->out)) {
      memcpy(r->in, path, dir);
      r->in[dir] = '\0';
      memcpy(r->out, cur, strlen(cur) + 1);
      r->wd = wd, r->dev = dev, r->ok = true;
    }
    snprintf(next, sizeof(next), "%s/%s", cur, comp);
    if (lstat(next, &st) != 0)
      return errno == ENOENT || errno == ENOTDIR ? 0 : (snprintf(why, n, "%s: %s", next, strerror(errno)), -1);
    if (S_ISLNK(st.st_mode)) {
      ssize_t got = readlink(next, link, sizeof(link) - 1);
      char joined[sizeof(rest)];
      if (got < 0 || ++hops > MAX_HOPS) {
        snprintf(why, n, "%s: %s", next, got < 0 ? strerror(errno) : "too many symbolic links");
        return -1;
      }
      link[got] = '\0';
      snprintf(joined, sizeof(joined), "%s/%s", link, rest);
      snprintf(rest, sizeof(rest), "%s", joined);
      if (link[0] == '/')
        cur[0] = '\0', dev = 0;
      continue;
    }
    if (strlen(next) >= sizeof(cur)) {
      snprintf(why, n, "%s: path too long", path);
      return -1;
    }
    memcpy(cur, next, strlen(next) + 1);
    dev = (uint64_t)st.st_dev;
  }
  return file ? (add(w, k, cur[0] ? cur : "/", dev, NULL, why, n) < 0 ? -1 : 0) : 0;
}

/* Forget group k: its bit leaves every watch; watches no group needs are removed. */
static void release(gpujit__group_watch *w, int k)
{
  for (size_t wd = 0; wd < w->ne; wd++) {
    entry *e = &w->e[wd];
    if (!e->used || !(e->groups >> k & 1))
      continue;
    e->groups &= ~(1ULL << k);
    if (!e->groups) {
      inotify_rm_watch(w->ifd, (int)wd);
      free(e->names);
      memset(e, 0, sizeof(*e));
      w->st.watches--;
    }
  }
  memset(&w->g[k], 0, sizeof(w->g[k]));
}

static int slot_for(gpujit__group_watch *w, const char *digest)
{
  int free_k = -1, oldest = 0;
  for (int k = 0; k < w->max_groups; k++) {
    if (w->g[k].used && !strcmp(w->g[k].digest, digest))
      return k;
    if (!w->g[k].used && free_k < 0)
      free_k = k;
    if (w->g[k].used_us < w->g[oldest].used_us)
      oldest = k;
  }
  if (free_k >= 0)
    return free_k;
  release(w, oldest);
  return oldest;
}

bool gpujit__group_watch_vouch(gpujit__group_watch *w, gpujit_cache *c, const char *digest, gpujit__group_loader load,
                               char *why, size_t n)
{
  gpujit__deps deps;
  char changed[PATH_MAX + 128] = "", record[PATH_MAX];
  static _Thread_local resolved r; /* 8 KiB: not on the stack of a lookup */
  bool refresh = false, moved = false;
  int k;
  w->st.asked++;
  take_events(w);
  k = slot_for(w, digest);
  w->g[k].used_us = gpujit__now_us();
  /* the group's own record too, watched before it is read: one replaced (an earlier form, damage
   * repaired, stats written back) is read again, as a lookup would read it — and the group is
   * vouched for only in the cache whose record was read (another cache's may be damaged) */
  gpujit__cache_record_path(record, sizeof(record), c, "deps", digest);
  if (w->g[k].used && w->g[k].held && w->g[k].record == path_hash(record)) {
    w->st.vouched++;
    return true;
  }
  if (w->g[k].used)
    release(w, k); /* watched again from scratch: what it resolved through may have changed */
  w->g[k].used = true;
  w->g[k].used_us = gpujit__now_us();
  w->g[k].record = path_hash(record);
  snprintf(w->g[k].digest, sizeof(w->g[k].digest), "%s", digest);
  r.ok = false;
  if (watch_path(w, k, record, true, NULL, why, n) < 0 || load(c, digest, &deps, why, n) < 0) {
    gpujit_error_clear();
    release(w, k);
    return false;
  }
  for (size_t i = 0; i < deps.count; i++) {
    const gpujit__dep *d = &deps.items[i];
    bool ok = true;
    if (!d->absent)
      ok = watch_path(w, k, d->path, true, &r, why, n) == 0;
    else /* each name that must stay absent, as a path that stops where it stops */
      for (const char *p = d->names; ok && p && *p;) {
        size_t len = strcspn(p, "/");
        char full[PATH_MAX * 2];
        snprintf(full, sizeof(full), "%s/%.*s", d->path, (int)len, p);
        ok = watch_path(w, k, full, false, NULL, why, n) == 0;
        p += len + (p[len] == '/');
      }
    if (!ok) {
      release(w, k);
      gpujit__deps_free(&deps);
      return false;
    }
  }
  /* Watched from here on: verify now, as a lookup would. */
  w->g[k].held = gpujit__deps_verify_moved(&deps, &refresh, &moved, changed, sizeof(changed)) == 0;
  w->st.verified++;
  gpujit__deps_free(&deps);
  gpujit_error_clear();
  if (w->g[k].held && moved) {
    /* a client checks its own files' identities against the group's as recorded (cache/records/groups.c):
     * it checks the group itself, and records the identities found, until they are as recorded */
    w->g[k].held = false;
    snprintf(why, n, "a header whose identity can matter (#pragma once) is another file than recorded");
  } else if (!w->g[k].held)
    snprintf(why, n, "the group changed since it was recorded: %s", changed[0] ? changed : "not exactly as recorded");
  else
    w->st.vouched++;
  return w->g[k].held;
}

void gpujit__group_watch_counts_get(const gpujit__group_watch *w, gpujit__group_watch_counts *out) { *out = w->st; }

bool gpujit__group_watch_holds(gpujit__group_watch *w, const char *digest)
{
  take_events(w);
  for (int k = 0; k < MAX_GROUPS; k++)
    if (w->g[k].used && !strcmp(w->g[k].digest, digest))
      return w->g[k].held;
  return false;
}

/* ---- the process's own watch ---- */

/* Made on a group's third check in the process (WATCH_AT); guarded by `proc_lock`, which a lookup only
 * tries: one that finds the watch busy (another thread's lookup setting a group up) checks for
 * itself. A child of fork shares the watch's inotify queue with its parent, so it never reads it
 * (the parent would lose the events it took): it starts over, without. */
static pthread_mutex_t proc_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t proc_once = PTHREAD_ONCE_INIT;
static gpujit__group_watch *proc;
static pid_t proc_pid;
static bool proc_none; /* no inotify here (or no memory): never tried again */
#define SEEN 16
/* Setting a CUB group's watch up costs a process about as much as five checks of it (12 ms of CPU
 * against 2.3 ms, 2-core box): a group looked up once or twice is only checked. */
#define WATCH_AT 3
/* inotify's watches are the user's, shared with every program (an editor's, a build tool's): a
 * process keeps at most this many groups watched (~700 watches each for CUB) */
#define PROC_GROUPS 4
/* A group the watch failed to vouch for (changed, on a filesystem it cannot trust, a header whose
 * identity moved) is left to the lookups' own checks for 1, 2, 4 … 64 checks before it is tried
 * again: a group that keeps failing costs its setup seldom. */
static struct seen {
  char digest[33];
  unsigned checks, fails, wait;
} seen[SEEN];
static unsigned seen_next;

/* A parent's watch, left in a child as it was (its descriptors close at exec; freeing it in the
 * child of a threaded parent is not safe): kept reachable, so that a leak checker at the child's
 * exit does not count it, for as many generations of forks as there are places. */
static gpujit__group_watch *proc_left[8];

static void proc_leave(void)
{
  for (size_t i = 0; proc && i < sizeof(proc_left) / sizeof(proc_left[0]); i++)
    if (!proc_left[i] || proc_left[i] == proc) {
      proc_left[i] = proc;
      break;
    }
  proc = NULL;
}

static void proc_child(void)
{
  pthread_mutex_init(&proc_lock, NULL);
  proc_leave();
  proc_none = false;
  memset(seen, 0, sizeof(seen));
}

static void proc_register(void) { pthread_atfork(NULL, NULL, proc_child); }

static struct seen *seen_for(const char *digest)
{
  struct seen *s;
  for (int i = 0; i < SEEN; i++)
    if (!strcmp(seen[i].digest, digest))
      return &seen[i];
  s = &seen[seen_next++ % SEEN];
  memset(s, 0, sizeof(*s));
  snprintf(s->digest, sizeof(s->digest), "%s", digest);
  return s;
}

/* With `proc_lock` held: the process's watch, made when `make` (NULL: none). */
static gpujit__group_watch *proc_watch(bool make)
{
  if (proc && proc_pid != getpid()) { /* a child made without fork's handlers (clone): as one made with */
    proc_leave();
    proc_none = false;
  }
  if (!proc && make && !proc_none) {
    if (gpujit__group_watch_new(&proc) < 0) {
      gpujit_error_clear();
      proc_none = true;
      return NULL;
    }
    proc_pid = getpid();
    proc->max_groups = PROC_GROUPS;
  }
  return proc;
}

bool gpujit__group_watch_process_vouch(gpujit_cache *c, const char *digest, gpujit__group_loader load)
{
  char why[PATH_MAX + 160];
  struct seen *s;
  bool ok = false;
  pthread_once(&proc_once, proc_register);
  if (!gpujit__check_threads_get().watch || pthread_mutex_trylock(&proc_lock) != 0)
    return false;
  s = seen_for(digest);
  if (++s->checks >= WATCH_AT && s->wait)
    s->wait--;
  else if (s->checks >= WATCH_AT && proc_watch(true)) {
    ok = gpujit__group_watch_vouch(proc, c, digest, load, why, sizeof(why));
    s->fails = ok ? 0 : s->fails + 1;
    s->wait = ok ? 0 : 1u << (s->fails < 7 ? s->fails - 1 : 6);
    if (!ok)
      gpujit__log(GPUJIT_LOG_DEBUG, "the process's watch does not vouch for group %s: %s", digest, why);
  }
  pthread_mutex_unlock(&proc_lock);
  return ok;
}

void gpujit__group_watch_process_counts(gpujit__group_watch_counts *out)
{
  memset(out, 0, sizeof(*out));
  pthread_mutex_lock(&proc_lock);
  if (proc && proc_pid == getpid())
    *out = proc->st;
  pthread_mutex_unlock(&proc_lock);
}

bool gpujit__group_watch_process_holds(const char *digest)
{
  bool held = false;
  pthread_once(&proc_once, proc_register);
  if (!gpujit__check_threads_get().watch || pthread_mutex_trylock(&proc_lock) != 0)
    return false;
  if (proc_watch(false))
    held = gpujit__group_watch_holds(proc, digest);
  pthread_mutex_unlock(&proc_lock);
  return held;
}
