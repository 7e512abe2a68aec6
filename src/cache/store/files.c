/* Cache entry files: checksummed payloads, metadata, publish by rename, listing and removal. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/file.h>
#include <unistd.h>
#include <xxhash.h>

#include "base/error.h"
#include "base/lockfile.h"
#include "base/fs.h"
#include "cache/store/files.h"
#include "cache/store/handle.h"

static void hex64(char out[17], uint64_t v) { snprintf(out, 17, "%016llx", (unsigned long long)v); }

/* A new file `name` in directory `dfd` (AT_FDCWD: `name` is a path), `path` in messages: never
 * through a link (O_NOFOLLOW, O_EXCL), and never past the file size limit, where the write
 * would raise SIGXFSZ — a store skipped instead, with the warning that says why. */
static int write_file_at(int dfd, const char *name, const char *path, const void *data, size_t len)
{
  const char *p = data;
  int fd, saved;
  if ((saved = gpujit__fsize_check(path, len)) < 0)
    return saved;
  fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return gpujit__error(GPUJIT_EIO, "%s: %s", path, strerror(errno));
  while (len) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      goto fail;
    p += n;
    len -= (size_t)n;
  }
  /* No fsync: every payload is checksummed, so what a crash tears reads as damaged (a miss,
   * rebuilt), and a miss does not wait for the disk. */
  if (close(fd) < 0)
    return gpujit__error(GPUJIT_EIO, "%s: %s", path, strerror(errno));
  return 0;
fail:
  saved = errno;
  close(fd);
  return gpujit__error(GPUJIT_EIO, "%s: write failed: %s", path, strerror(saved ? saved : EIO));
}

static int write_file(const char *path, const void *data, size_t len)
{
  return write_file_at(AT_FDCWD, path, path, data, len);
}

int gpujit__write_new(const char *dir, const char *rel, const void *data, size_t len)
{
  char path[PATH_MAX], *parent;
  int err;
  if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, rel) >= sizeof(path))
    return gpujit__error(GPUJIT_EINVAL, "%s: path too long", rel);
  parent = gpujit__dirname(path);
  err = parent ? gpujit__mkdirs(parent, 0700) : GPUJIT_ENOMEM;
  free(parent);
  return err < 0 ? err : write_file(path, data, len);
}

int gpujit__write_payload(const char *dir, const char *rel, const void *data, size_t len, cJSON *meta,
                          const char *role)
{
  char sum[17];
  cJSON *files = cJSON_GetObjectItemCaseSensitive(meta, "files"), *d;
  int err;
  if ((err = gpujit__write_new(dir, rel, data, len)) < 0)
    return err;
  hex64(sum, XXH3_64bits(data, len));
  if (!files)
    files = cJSON_AddObjectToObject(meta, "files");
  d = cJSON_CreateObject();
  cJSON_AddStringToObject(d, "file", rel);
  cJSON_AddNumberToObject(d, "size", (double)len);
  cJSON_AddStringToObject(d, "xxh3", sum);
  if (role)
    cJSON_AddItemToObject(meta, role, cJSON_Duplicate(d, 1));
  cJSON_AddItemToObject(files, rel, d);
  return 0;
}

int gpujit__write_meta(const char *dir, cJSON *meta)
{
  char path[PATH_MAX], sum[18];
  char *text = cJSON_Print(meta);
  int err;
  if (!text)
    return gpujit__error(GPUJIT_ENOMEM, "out of memory");
  snprintf(path, sizeof(path), "%s/meta.json", dir);
  err = write_file(path, text, strlen(text));
  hex64(sum, XXH3_64bits(text, strlen(text)));
  free(text);
  if (err < 0)
    return err;
  strcat(sum, "\n");
  snprintf(path, sizeof(path), "%s/meta.xxh3", dir);
  return write_file(path, sum, 17);
}

int gpujit__write_blob(const char *top, const char *path, const char *magic, const void *data, size_t len)
{
  static unsigned counter;
  char tmp[PATH_MAX], head[96];
  const char *name = gpujit__basename(path);
  gpujit__buf b = {0};
  int err, dfd;
  char *parent = gpujit__dirname(path);
  /* beneath the cache, only directories it made: a link there (notes/group -> elsewhere) is not
   * written through */
  dfd = parent ? gpujit__dir_open_beneath(top, parent, 0700) : gpujit__error(GPUJIT_ENOMEM, "out of memory");
  free(parent);
  if (dfd < 0)
    return dfd;
  snprintf(head, sizeof(head), "%s %016llx\n", magic, (unsigned long long)XXH3_64bits(data, len));
  if ((err = gpujit__buf_puts(&b, head)) < 0 || (err = gpujit__buf_put(&b, data, len)) < 0)
    goto done;
  snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.%u", name, (long)getpid(), __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
  if ((err = write_file_at(dfd, tmp, path, b.data, b.len)) == 0 && renameat(dfd, tmp, dfd, name) < 0)
    err = gpujit__error(GPUJIT_EIO, "%s: cannot publish: %s", path, strerror(errno));
  if (err < 0)
    unlinkat(dfd, tmp, 0);
done:
  close(dfd);
  gpujit__buf_free(&b);
  return err;
}

int gpujit__blob_check(const char *data, size_t len, size_t *offset, const char *magic, char *why, size_t n)
{
  const char *nl = data ? memchr(data, '\n', len) : NULL;
  size_t ml = strlen(magic);
  unsigned long long want;
  if (!nl || len < ml + 2 || strncmp(data, magic, ml) != 0 || data[ml] != ' ') {
    snprintf(why, n, "not a %s record", magic);
    return GPUJIT_ECORRUPT;
  }
  /* read up to the line's end only: the record need not end in a NUL (strtoull would skip
   * the newline as white space and read on) */
  if (gpujit__hex_span(data + ml + 1, nl, &want) < 0 || XXH3_64bits(nl + 1, len - (size_t)(nl + 1 - data)) != want) {
    snprintf(why, n, "checksum mismatch");
    return GPUJIT_ECORRUPT;
  }
  *offset = (size_t)(nl + 1 - data);
  return 0;
}

int gpujit__read_blob(gpujit__buf *out, size_t *offset, const char *path, const char *magic, char *why, size_t n)
{
  int err;
  if ((err = gpujit__file_read(out, path)) < 0) {
    gpujit_error_clear();
    snprintf(why, n, "unreadable");
    return err == GPUJIT_ENOENT ? GPUJIT_ENOENT : GPUJIT_ECORRUPT;
  }
  return gpujit__blob_check(out->data, out->len, offset, magic, why, n);
}

/* Payloads this large are mapped, not read: a hit need not copy (or, checked before in this
 * process, even touch) a CUB module's quarter megabyte. Entry files are never changed in place. */
#define MAP_MIN (64 * 1024)

static int read_at(gpujit__buf *out, int dfd, const char *rel, struct stat *st)
{
  int fd = openat(dfd, rel, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  ssize_t n;
  out->len = 0;
  if (fd < 0)
    return -1;
  if (fstat(fd, st) < 0) {
    close(fd);
    return -1;
  }
  /* Mapped only when the last page has room after the data: the kernel fills it with zeros, so
   * a mapped image stays NUL-terminated like a heap one (PTX is handed on as a C string). */
  if (S_ISREG(st->st_mode) && st->st_size >= MAP_MIN && st->st_size % sysconf(_SC_PAGESIZE) != 0 &&
      gpujit__buf_map(out, fd, (size_t)st->st_size) == 0) {
    close(fd);
    return 0;
  }
  gpujit_error_clear();
  if (gpujit__buf_reserve(out, (size_t)st->st_size + 1) < 0) { /* one read */
    close(fd);
    return -1;
  }
  for (;;) {
    if (gpujit__buf_reserve(out, 8192) < 0) {
      close(fd);
      return -1;
    }
    n = read(fd, out->data + out->len, out->cap - out->len - 1);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    out->len += (size_t)n;
  }
  close(fd);
  if (n < 0)
    return -1;
  out->data[out->len] = '\0';
  return 0;
}

int gpujit__meta_check(const char *meta, size_t len, const char *sum, size_t sum_len, cJSON **out, char *why, size_t n)
{
  char want[17];
  cJSON *schema;
  *out = NULL;
  if (!sum || sum_len < 16) {
    snprintf(why, n, "meta.xxh3 missing or truncated");
    return -1;
  }
  hex64(want, XXH3_64bits(meta, len));
  if (strncmp(sum, want, 16) != 0) {
    snprintf(why, n, "meta.json checksum mismatch");
    return -1;
  }
  *out = cJSON_ParseWithLength(meta, len);
  schema = cJSON_GetObjectItemCaseSensitive(*out, "schema");
  if (!cJSON_IsObject(*out) || !cJSON_IsNumber(schema) || schema->valueint != GPUJIT_CACHE_SCHEMA) {
    snprintf(why, n, "meta.json unparsable or of another schema");
    cJSON_Delete(*out);
    *out = NULL;
    return -1;
  }
  return 0;
}

int gpujit__read_meta(gpujit__buf *buf, cJSON **out, int dfd, char *why, size_t n)
{
  gpujit__buf sum = {0};
  struct stat st;
  int err;
  *out = NULL;
  if (read_at(buf, dfd, "meta.json", &st) < 0) {
    snprintf(why, n, "meta.json missing or unreadable");
    return -1;
  }
  if (read_at(&sum, dfd, "meta.xxh3", &st) < 0)
    sum.len = 0;
  err = gpujit__meta_check(buf->data, buf->len, sum.data, sum.len, out, why, n);
  gpujit__buf_free(&sum);
  return err;
}

/* Payloads this process already checked, by identity: entry files are written once and never
 * changed in place, so the same inode with the same size and times holds the same bytes. */
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static struct seen {
  dev_t dev;
  ino_t ino;
  off_t size;
  struct timespec mtime, ctime;
  char sum[17];
} seen[64];
static unsigned seen_next;

/* A child forked while another thread held the lock starts with it free and nothing seen (an
 * entry half written then is not trusted). */
static void seen_forget(void)
{
  pthread_mutex_init(&seen_lock, NULL);
  memset(seen, 0, sizeof(seen));
  seen_next = 0;
}

__attribute__((constructor)) static void seen_fork_safe(void) { pthread_atfork(NULL, NULL, seen_forget); }

static bool seen_same(const struct seen *a, const struct stat *st, const char *sum)
{
  return a->dev == st->st_dev && a->ino == st->st_ino && a->size == st->st_size &&
         a->mtime.tv_sec == st->st_mtim.tv_sec && a->mtime.tv_nsec == st->st_mtim.tv_nsec &&
         a->ctime.tv_sec == st->st_ctim.tv_sec && a->ctime.tv_nsec == st->st_ctim.tv_nsec && !strcmp(a->sum, sum);
}

static bool seen_find(const struct stat *st, const char *sum)
{
  bool found = false;
  pthread_mutex_lock(&seen_lock);
  for (size_t i = 0; i < sizeof(seen) / sizeof(seen[0]) && !found; i++)
    found = seen_same(&seen[i], st, sum);
  pthread_mutex_unlock(&seen_lock);
  return found;
}

static void seen_add(const struct stat *st, const char *sum)
{
  pthread_mutex_lock(&seen_lock);
  seen[seen_next] = (struct seen){st->st_dev, st->st_ino, st->st_size, st->st_mtim, st->st_ctim, ""};
  snprintf(seen[seen_next].sum, sizeof(seen[0].sum), "%s", sum);
  seen_next = (seen_next + 1) % (sizeof(seen) / sizeof(seen[0]));
  pthread_mutex_unlock(&seen_lock);
}

/* The file a payload description names, when it is a sound one. */
static const char *payload_file(const cJSON *desc, char *why, size_t n)
{
  const cJSON *file = cJSON_GetObjectItemCaseSensitive(desc, "file");
  if (!cJSON_IsString(file) || !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(desc, "size")) ||
      !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(desc, "xxh3")) || strstr(file->valuestring, "..") ||
      file->valuestring[0] == '/') {
    snprintf(why, n, "metadata lacks a valid payload description");
    return NULL;
  }
  return file->valuestring;
}

int gpujit__payload_check(const cJSON *desc, const void *data, size_t len, bool sum_known, char *why, size_t n)
{
  const char *file = payload_file(desc, why, n);
  double size;
  char got[17];
  if (!file)
    return -1;
  size = cJSON_GetObjectItemCaseSensitive(desc, "size")->valuedouble;
  if ((double)len != size) {
    snprintf(why, n, "%s is %zu bytes, expected %.0f (truncated?)", file, len, size);
    return -1;
  }
  if (sum_known)
    return 0;
  hex64(got, XXH3_64bits(data, len));
  if (strcmp(got, cJSON_GetObjectItemCaseSensitive(desc, "xxh3")->valuestring) != 0) {
    snprintf(why, n, "%s checksum mismatch", file);
    return -1;
  }
  return 0;
}

int gpujit__read_payload(gpujit__buf *out, int dfd, const cJSON *desc, char *why, size_t n)
{
  struct stat st;
  const char *file = payload_file(desc, why, n), *sum;
  bool known;
  if (!file)
    return -1;
  if (read_at(out, dfd, file, &st) < 0) {
    snprintf(why, n, "%s missing or unreadable", file);
    return -1;
  }
  sum = cJSON_GetObjectItemCaseSensitive(desc, "xxh3")->valuestring;
  known = seen_find(&st, sum);
  if (gpujit__payload_check(desc, out->data, out->len, known, why, n) < 0)
    return -1;
  if (!known)
    seen_add(&st, sum);
  return 0;
}

static int move_aside(const char *cache_dir, const char *path, char *trash, size_t size)
{
  static unsigned counter;
  snprintf(trash, size, "%s/tmp/trash.%ld.%u", cache_dir, (long)getpid(),
           __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
  return rename(path, trash);
}

int gpujit__publish_dir(const char *cache_dir, const char *tmp, const char *final)
{
  char trash[PATH_MAX];
  if (rename(tmp, final) == 0)
    return 0;
  if (errno != EEXIST && errno != ENOTEMPTY)
    return gpujit__error(GPUJIT_EIO, "%s: cannot publish: %s", final, strerror(errno));
  /* The entry there was found damaged (or another process just published the same key). */
  if (move_aside(cache_dir, final, trash, sizeof(trash)) < 0 && errno != ENOENT)
    return gpujit__error(GPUJIT_EIO, "%s: cannot replace: %s", final, strerror(errno));
  if (rename(tmp, final) < 0 && errno != EEXIST && errno != ENOTEMPTY)
    return gpujit__error(GPUJIT_EIO, "%s: cannot publish: %s", final, strerror(errno));
  gpujit__rmrf(trash);
  return 0;
}

int gpujit__remove_entry(const char *cache_dir, const char *entry)
{
  char trash[PATH_MAX];
  int fd = gpujit__lockfile_open(entry, O_RDONLY | O_DIRECTORY, 0), err;
  if (fd < 0)
    return gpujit__error(errno == ENOENT ? GPUJIT_ENOENT : GPUJIT_EIO, "%s: %s", entry, strerror(errno));
  /* Readers hold a shared lock on the entry (gpujit__cache_get): one being read stays. */
  if (gpujit__lockfile_lock(fd, LOCK_EX | LOCK_NB) < 0) {
    gpujit__lockfile_close(fd);
    return gpujit__error(GPUJIT_EBUSY, "%s: in use", entry);
  }
  if (move_aside(cache_dir, entry, trash, sizeof(trash)) < 0) {
    err = gpujit__error(errno == ENOENT ? GPUJIT_ENOENT : GPUJIT_EIO, "%s: %s", entry, strerror(errno));
    gpujit__lockfile_close(fd);
    return err;
  }
  err = gpujit__rmrf(trash);
  gpujit__lockfile_close(fd);
  return err;
}

/* nftw has no payload: the sum is the thread's own (no lock: a store's walk holds none that a
 * child forked meanwhile could inherit held). */
static _Thread_local uint64_t tree_bytes;
static int size_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  (void)path;
  (void)ftw;
  if (flag == FTW_F || flag == FTW_D || flag == FTW_DP || flag == FTW_SL)
    tree_bytes += (uint64_t)st->st_blocks * 512; /* on disk, as du counts it */
  return 0;
}

uint64_t gpujit__dir_bytes(const char *path)
{
  tree_bytes = 0;
  nftw(path, size_cb, 16, FTW_PHYS);
  return tree_bytes;
}

static char *str_of(const cJSON *j, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
  return gpujit__strdup(cJSON_IsString(v) ? v->valuestring : "");
}

static int cmp_used(const void *a, const void *b)
{
  const gpujit__entry *x = a, *y = b;
  return (x->used_ns < y->used_ns) - (x->used_ns > y->used_ns);
}

int gpujit__entries(gpujit__entry_list *out, const char *cache_dir, bool meta)
{
  char p[PATH_MAX];
  DIR *top, *sub;
  struct dirent *a, *b;
  memset(out, 0, sizeof(*out));
  snprintf(p, sizeof(p), "%s/entries", cache_dir);
  if (!(top = opendir(p)))
    return errno == ENOENT ? 0 : gpujit__error(GPUJIT_EIO, "%s: %s", p, strerror(errno));
  while ((a = readdir(top))) {
    if (strlen(a->d_name) != 2 || strspn(a->d_name, "0123456789abcdef") != 2)
      continue;
    snprintf(p, sizeof(p), "%s/entries/%s", cache_dir, a->d_name);
    if (!(sub = opendir(p)))
      continue;
    while ((b = readdir(sub))) {
      gpujit__entry *e;
      struct stat st;
      if (strlen(b->d_name) != 30 || strspn(b->d_name, "0123456789abcdef") != 30)
        continue;
      if (!(e = gpujit__grow(out->items, &out->cap, out->count, sizeof(*e), 64))) {
        closedir(sub);
        closedir(top);
        gpujit__entry_list_free(out);
        return GPUJIT_ENOMEM;
      }
      out->items = e;
      e = &out->items[out->count++];
      memset(e, 0, sizeof(*e));
      snprintf(e->hex, sizeof(e->hex), "%s%s", a->d_name, b->d_name);
      snprintf(p, sizeof(p), "%s/entries/%s/%s", cache_dir, a->d_name, b->d_name);
      e->bytes = gpujit__dir_bytes(p);
      e->pub.key = e->hex;
      e->pub.bytes = e->bytes;
      if (stat(p, &st) == 0) {
        e->pub.last_used = (int64_t)st.st_mtime;
        e->used_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec; /* LRU order within a second */
      }
      if (meta) {
        gpujit__buf buf = {0};
        cJSON *j;
        strncat(p, "/meta.json", sizeof(p) - strlen(p) - 1);
        gpujit__file_read(&buf, p);
        j = buf.data ? cJSON_ParseWithLength(buf.data, buf.len) : NULL;
        e->module = str_of(j, "module");
        e->arch = str_of(j, "arch");
        e->kind = str_of(j, "kind");
        {
          gpujit__buf ks = {0};
          const cJSON *k;
          cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(j, "kernels")) {
            const cJSON *name = cJSON_GetObjectItemCaseSensitive(k, "name");
            if (cJSON_IsString(name))
              gpujit__buf_printf(&ks, "%s%s", ks.len ? " " : "", name->valuestring);
          }
          e->kernels = ks.data ? ks.data : gpujit__strdup("");
        }
        {
          const cJSON *cr = cJSON_GetObjectItemCaseSensitive(j, "created");
          const cJSON *ms = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "time_ms"), "compile");
          e->pub.created = cJSON_IsNumber(cr) && fabs(cr->valuedouble) < 9.2e18 ? (int64_t)cr->valuedouble : 0;
          e->pub.compile_ms = cJSON_IsNumber(ms) ? ms->valuedouble : 0;
        }
        e->pub.module = e->module;
        e->pub.arch = e->arch;
        e->pub.kind = e->kind;
        e->pub.kernels = e->kernels;
        cJSON_Delete(j);
        gpujit__buf_free(&buf);
      }
    }
    closedir(sub);
  }
  closedir(top);
  if (meta && out->count) /* qsort takes no NULL base, even for nothing */
    qsort(out->items, out->count, sizeof(*out->items), cmp_used);
  return 0;
}

void gpujit__entry_list_free(gpujit__entry_list *l)
{
  for (size_t i = 0; i < l->count; i++) {
    free(l->items[i].module);
    free(l->items[i].arch);
    free(l->items[i].kind);
    free(l->items[i].kernels);
  }
  free(l->items);
  memset(l, 0, sizeof(*l));
}

int gpujit__verify_entry(const char *entry, char *why, size_t n)
{
  gpujit__buf meta = {0}, payload = {0};
  cJSON *j = NULL, *f;
  int dfd = open(entry, O_RDONLY | O_DIRECTORY | O_CLOEXEC), bad = 0;
  if (dfd < 0) {
    snprintf(why, n, "entry unreadable: %s", strerror(errno));
    return -1;
  }
  if (gpujit__read_meta(&meta, &j, dfd, why, n) < 0)
    bad = -1;
  if (!bad && !cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(j, "image"))) {
    snprintf(why, n, "metadata names no image");
    bad = -1;
  }
  if (!bad)
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(j, "files")) {
      if (gpujit__read_payload(&payload, dfd, f, why, n) < 0) {
        bad = -1;
        break;
      }
    }
  close(dfd);
  cJSON_Delete(j);
  gpujit__buf_free(&meta);
  gpujit__buf_free(&payload);
  return bad;
}

void gpujit__cache_entry_path(char *out, size_t size, const gpujit_cache *c, const char *hex)
{
  gpujit__cache_record_path(out, size, c, "entries", hex);
}

void gpujit__cache_record_path(char *out, size_t size, const gpujit_cache *c, const char *what, const char *hex)
{
  snprintf(out, size, "%s/%s/%.2s/%s", c->dir, what, hex, hex + 2);
}

const char *gpujit__path_components_problem(const char *p)
{
  while (*p) {
    const char *slash = strchr(p, '/');
    size_t n = slash ? (size_t)(slash - p) : strlen(p);
    if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
      return "a path that leaves its directory (\"..\", \".\" or an empty component)";
    p += n + (slash ? 1 : 0);
  }
  return NULL;
}

const char *gpujit__cache_dump_problem(const char *path)
{
  if (path[0] != '/')
    return "not an absolute path";
  return path[1] ? gpujit__path_components_problem(path + 1) : "the root directory";
}
