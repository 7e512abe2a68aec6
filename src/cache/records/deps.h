/* A cache entry's dependencies as they stood when it was built: files with their stat and
 * content hash, and paths that must not exist. Verified on lookups as ccache's direct mode does:
 * a file whose size, mtime, ctime, device and inode match its record is not read; otherwise its
 * content hash decides. */
#ifndef GPUJIT_CACHE_RECORDS_DEPS_H
#define GPUJIT_CACHE_RECORDS_DEPS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "base/buf.h"
#include "cache/store/key.h"

typedef struct gpujit__dep {
  char *path;      /* absolute (resolved against the base directory when recorded relative to it):
                      a file, or for an absent group the directory */
  char *rel;       /* as recorded: relative to the base directory when under it */
  bool absent;     /* a group: none of `names` may exist in directory `path` */
  char *names;     /* an absent group's names, each a single path component followed by '/' */
  bool trusted;    /* the stat may stand for the content (a file) or for the entries (a directory):
                      modified well before it was recorded */
  uint64_t size, dev, ino; /* the stat as recorded: device and inode are the file's identity */
  int64_t mtime_ns, ctime_ns;
  char hash[33];   /* a file's XXH3-128, hex */
  bool nofile;     /* a path a lookup passed over: it exists as no regular file and must stay so */
  int err;         /* a path whose probe failed with this errno (EACCES, ELOOP, …), which it must
                      still do: an answer replayed like an absence */
  bool env;        /* an environment variable NVRTC read (`path` and `rel` its name): unset
                      (`unset`) or set to a value whose XXH3-128 is `hash`, as it must still be */
  bool unset;
  bool once;       /* a file whose identity can change the output: its text may hold `#pragma once`
                      (gpujit__deps_scan_once), which skips a second include of the same file by
                      identity, not content. Other files' identities are never compared */
  uint32_t programs; /* an LTO module's `once` file: the programs (its sources, bit i for source i,
                        mod 32) that read it, as `#pragma once` sees one program at a time; 0:
                        every program (one source, a shared group's records) */
  unsigned same;   /* `once` files that were one file (hard links, symlinks) among these records:
                      the same number, from 1; 0 for one that was no other's here */
  char *with;      /* a `once` file of an entry that was one file with a record of its shared group:
                      that record's path as recorded (all of the entry's files one with that file
                      name the same record); NULL for none */
  uint64_t dev_now, ino_now; /* identity as recorded, then as the last verify found it */
  bool pin;        /* the build holds its base directory's path (`path`) where no relocation
                      reaches (__FILE__): it holds only for a lookup from that base */
  bool elsewhere;  /* a pin read by a lookup from another base */
  bool borrowed;   /* path, rel and names lie in the record's bytes (`keep`), not on their own */
} gpujit__dep;

typedef struct gpujit__deps {
  gpujit__dep *items;
  size_t count, cap;
  gpujit__buf keep; /* the bytes of a record read in place (gpujit__deps_from_bin), freed with it */
  bool once_macro;  /* while recording: a file added defines a macro that names `once` */
} gpujit__deps;

/** A new record for `path` (relative to `base` when under it; a relative `path` stays relative to
 *  the working directory of whoever verifies it, recorded as "./path"), zeroed; NULL out of memory. */
gpujit__dep *gpujit__deps_push(gpujit__deps *d, const char *path, const char *base);
/** A new record for `path` recorded as `rel` (as written in a record), zeroed; NULL out of memory. */
gpujit__dep *gpujit__deps_push_as(gpujit__deps *d, const char *path, const char *rel);
/** Nanoseconds of CLOCK_REALTIME: take it before reading the files you record. */
int64_t gpujit__deps_clock(void);

/**
 * Record a file whose content (`data`, read after `read_start`) the build used. It is trusted
 * only if neither its mtime nor its ctime is within a second of `read_start` (a later change
 * could then keep the same timestamps: the same-timestamp race).
 */
int gpujit__deps_add_file(gpujit__deps *d, const char *path, const char *base, const void *data, size_t size,
                          int64_t read_start);
/** gpujit__deps_add_file() with the file's stat taken after its content was read (`st`), where the
 *  caller has one: not taken again. NULL: taken here. */
int gpujit__deps_add_file_at(gpujit__deps *d, const char *path, const char *base, const void *data, size_t size,
                             int64_t read_start, const struct stat *st);
/** Record a path that must stay absent: grouped with the others in its directory, which vouches
 *  for all of them with one stamp while its mtime and ctime stand. */
int gpujit__deps_add_absent(gpujit__deps *d, const char *path, const char *base);
/** Record a path that exists but is no regular file and must stay so (a lookup passed it over). */
int gpujit__deps_add_nofile(gpujit__deps *d, const char *path, const char *base);
/** Record a path whose probe failed with `err` (not ENOENT), as it must still fail. */
int gpujit__deps_add_error(gpujit__deps *d, const char *path, const char *base, int err);
/** Record an environment variable NVRTC read: `value`, or NULL when it was not set. The value
 *  itself is not kept (a record may travel), only its hash. */
int gpujit__deps_add_env(gpujit__deps *d, const char *name, const char *value);
/* deps_answers.c: the error and environment records. */
/** Whether an error or environment record `e` holds now (`shown`: its path as messages name it);
 *  `why` says how not. */
bool gpujit__deps_answer_holds(const gpujit__dep *e, const char *shown, char *why, size_t n);
/** An error or environment record's JSON fields into `o`. */
void gpujit__deps_answer_to_json(const gpujit__dep *e, cJSON *o);
/** An error record's "errno" of `o`: 1..4095, or 0 where it is not one. */
int gpujit__deps_errno_from_json(const cJSON *o);
/** An environment record {"env": NAME, "xxh3": HASH} or {"env": NAME, "unset": true} of `o`
 *  pushed to `out`. @return 0 or GPUJIT_ECORRUPT. */
int gpujit__deps_env_from_json(gpujit__deps *out, const cJSON *o);
/** Record that the build holds only for lookups whose base directory is `base` (the absolute
 *  path; NULL or "" for none). */
int gpujit__deps_add_pin(gpujit__deps *d, const char *base);
/**
 * Whether text can make its file's identity matter: it names `once` outside comments (`#pragma
 * once`, `_Pragma("once")`, a macro's argument). @param defines set when a `#define` names it:
 * a macro may then carry it into any file that expands it.
 */
bool gpujit__deps_scan_once(const char *text, size_t len, bool *defines);
/** Take every file as one whose identity can matter (a macro may carry `#pragma once` into it). */
void gpujit__deps_all_once(gpujit__deps *d);
/**
 * Number the `once` files that are one file (same device and inode) once every file was added:
 * those of `shared` among themselves, those of `d` among themselves, and a file of `d` that is one
 * with a file of `shared` names it (`with`). `shared` may be NULL. @return 0 or GPUJIT_ENOMEM.
 */
int gpujit__deps_identities(gpujit__deps *d, gpujit__deps *shared);
/**
 * After every file was stat'ed (their `dev_now`, `ino_now` set; gpujit__deps_stat_identities):
 * whether the `once` files that are one file now are exactly those recorded as one — those of
 * `d`, and with `shared` (NULL: `d` alone) those of both, `d`'s links to it included.
 * @return 0, GPUJIT_ENOENT, GPUJIT_ENOMEM.
 */
int gpujit__deps_identities_hold(gpujit__deps *d, const gpujit__deps *shared);
/** Take the current identity of every `once` file of `d` (records read, not verified).
 *  @return 0, or GPUJIT_ENOENT when one is not there. */
int gpujit__deps_stat_identities(gpujit__deps *d);
/** Whether any file of `d` has an identity that can matter (`once`). */
bool gpujit__deps_any_once(const gpujit__deps *d);
/** What identifies the identities of the `once` files of `d` as last found (`dev_now`, `ino_now`),
 *  in record order: 32 hex digits. An entry keeps its group's, and checks its files against the
 *  group's again when the group's differs (a group's record may have taken new identities). */
void gpujit__deps_identity_print(const gpujit__deps *d, char out[33]);
/** Add one file's identity to the bytes an identity print hashes. @return 0 or GPUJIT_ENOMEM. */
int gpujit__deps_print_put(gpujit__buf *b, uint64_t dev, uint64_t ino);
void gpujit__deps_free(gpujit__deps *d);

/**
 * Check every dependency. @param refresh set when one matched by content but not by stat and
 * its record was updated (write the records back so the next lookup reads nothing).
 * Files recorded as one file must still be one, and no others may have become one.
 * @return 0 when all hold, GPUJIT_ENOENT when one changed, GPUJIT_ENOMEM (not verified).
 */
int gpujit__deps_verify(gpujit__deps *d, bool *refresh);
/** The same, saying in `why` which dependency no longer holds and how, when one does not. */
int gpujit__deps_verify_why(gpujit__deps *d, bool *refresh, char *why, size_t why_size);
/** The same; `moved` set when a `once` file's identity is not the one recorded (so files of
 *  another record set may have become one with it, or stopped being: gpujit__deps_identities_hold). */
int gpujit__deps_verify_moved(gpujit__deps *d, bool *refresh, bool *moved, char *why, size_t why_size);

/* Shared by the records (deps.c) and their checks (deps_check.c, deps_share.c). */
static inline int64_t gpujit__ns(struct timespec t) { return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec; }
/** Whether stamps this old may stand for a content read at `read_start` (the same-tick race). */
bool gpujit__deps_old_enough(int64_t mtime_ns, int64_t ctime_ns, int64_t read_start);
/** Take `st` as the record's stat, trusted when old enough for `read_start`. */
void gpujit__deps_set_stat(gpujit__dep *e, const struct stat *st, int64_t read_start);
/** Stamp an absent group's directory: while its mtime and ctime stand, nothing was created in it. */
void gpujit__deps_stamp_dir(gpujit__dep *e);
/** Whether `dir`/`name` (`len` bytes) is there (or cannot be said to be absent). */
bool gpujit__deps_name_exists(const char *dir, const char *name, size_t len);
/** Whether dir/name is a directory entry at all (lstat: a dangling link is one). */
bool gpujit__deps_name_entry(const char *dir, const char *name, size_t len);

/** Add what identifies the dependencies (paths as recorded, content hashes, absent paths). */
void gpujit__deps_hash(const gpujit__deps *d, gpujit__hasher *h, const char *label);

/** As JSON (an array) and back; `base` resolves relative paths. */
cJSON *gpujit__deps_to_json(const gpujit__deps *d);
int gpujit__deps_from_json(gpujit__deps *out, const cJSON *arr, const char *base);

/** The binary form of shared groups (docs/cache-format.md, "gpujit-deps-4"): fixed little-endian
 *  records and a table of NUL-terminated paths, read in place — no line is parsed and no record
 *  allocated, so a lookup of a CUB module's 600 toolkit headers costs one read and one array.
 *  Paths as recorded, no base; files only as content hashes, stats, absences and non-files
 *  (no pins, no links to another group). @return 0, GPUJIT_EINVAL (a record the form cannot hold)
 *  or GPUJIT_ENOMEM. */
int gpujit__deps_to_bin(const gpujit__deps *d, gpujit__buf *out);
/**
 * Read the binary form at `data` (`len` bytes) in place: the records' paths and names point into
 * those bytes, which must outlive `out` — or hand them to `out->keep`, which gpujit__deps_free
 * frees. Every offset, kind and flag is checked: bytes that are not exactly a record of this
 * form are refused, never half read.
 * @return 0, GPUJIT_ECORRUPT or GPUJIT_ENOMEM (`out` empty on error).
 */
int gpujit__deps_from_bin(gpujit__deps *out, const char *data, size_t len);

/** The binary form where it lies (a mapped or read record), checked whole by
 *  gpujit__deps_view_open and then read record by record, nothing allocated. Borrows the bytes. */
typedef struct gpujit__deps_view {
  const unsigned char *records;
  const char *strings;
  size_t count;
  size_t rec_size; /* GPUJIT__DEPS_REC_SIZE */
} gpujit__deps_view;

/** One record of a view; the strings point into the view's bytes. */
typedef struct gpujit__deps_rec {
  char kind;               /* 'f' a file, 'a' names absent from directory `path`, 'n' no regular file */
  bool trusted;            /* the stat (a file's) or stamp (a directory's) stands */
  bool once;               /* 'f': its identity can matter (gpujit__dep's `once`) */
  const char *path;        /* as recorded: absolute, or "./path" under the working directory */
  const char *names;       /* 'a': the names, each followed by '/'; NULL when none */
  unsigned same;           /* 'f': the number of the files that were one file; 0 none */
  uint64_t size, dev, ino; /* size: 'f'; dev, ino and the times: when trusted */
  int64_t mtime_ns, ctime_ns;
  const unsigned char *hash; /* 'f': XXH3-128, 16 bytes canonical */
} gpujit__deps_rec;

/** Check `len` bytes at `data` as a whole binary group (as gpujit__deps_from_bin does).
 *  @return 0 or GPUJIT_ECORRUPT. */
int gpujit__deps_view_open(gpujit__deps_view *out, const char *data, size_t len);
#define GPUJIT__DEPS_REC_SIZE 72 /* bytes of a record of the binary form */

/** A little-endian u32 of the binary form. */
static inline uint32_t gpujit__deps_ld32(const unsigned char *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/** Record `i`'s path and kind alone (as gpujit__deps_view_rec gives them). */
static inline const char *gpujit__deps_view_path(const gpujit__deps_view *v, size_t i)
{
  return v->strings + gpujit__deps_ld32(v->records + i * v->rec_size + 8);
}
static inline char gpujit__deps_view_kind(const gpujit__deps_view *v, size_t i)
{
  return (char)v->records[i * v->rec_size];
}

/** Record `i` (< count) of an opened view. */
void gpujit__deps_view_rec(const gpujit__deps_view *v, size_t i, gpujit__deps_rec *out);
/** gpujit__deps_identity_print of a view's records as recorded (a view that holds exactly).
 *  @return 0, or GPUJIT_ENOMEM. */
int gpujit__deps_view_identity_print(const gpujit__deps_view *v, char out[33]);

/**
 * Whether every record of `v` holds exactly as recorded — each file's stat, each directory's
 * stamp or absence, each non-file — which is what nearly every lookup finds: checked from the
 * records where they lie, nothing read into memory, on the caller's thread and helpers joined
 * before it returns.
 * @param bytes the buffer `v` lies in: taken, and freed before the return
 * @return 0 when all hold so; GPUJIT_ENOENT when one does not hold exactly as recorded (it may
 *         still hold by content: read the records with gpujit__deps_from_bin and decide with
 *         gpujit__deps_verify_why, which also says why); GPUJIT_ENOMEM (not verified).
 */
int gpujit__deps_verify_view(const gpujit__deps_view *v, gpujit__buf *bytes);

/** A check of a view begun ahead of its lookup, on helper threads alone (see cache/records/head_start.c). */
typedef struct gpujit__deps_ahead gpujit__deps_ahead;

/** Begin checking `v` on helpers started now; the lookup joins later (where none could start,
 *  the join checks it all). `bytes` (the buffer `v` lies in) is taken. NULL: one thread checks
 *  here (one CPU, or GPUJIT_CHECK_THREADS=1), or out of memory. */
gpujit__deps_ahead *gpujit__deps_check_ahead(const gpujit__deps_view *v, gpujit__buf *bytes);
/** The lookup's turn: the caller checks the chunks no helper took, joins the helpers, and frees
 *  `a`. @return as gpujit__deps_verify_view. */
int gpujit__deps_ahead_join(gpujit__deps_ahead *a);
/** gpujit__deps_view_identity_print of the view `a` checks, before it is joined ("" out of memory). */
void gpujit__deps_ahead_print(gpujit__deps_ahead *a, char out[33]);
/** Not wanted after all (the lookup went elsewhere): the helpers stop at their next chunk and are
 *  joined; `a` is freed. */
void gpujit__deps_ahead_drop(gpujit__deps_ahead *a);

#endif
