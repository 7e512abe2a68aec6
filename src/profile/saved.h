/* A saved profile (`gpujit profile -o NAME`), the one description its writer (profile/saved.c)
 * and its reader (profile/saved_open.c) share: a POSIX tar whose first member is the manifest,
 * then every file of the records directory, then the end-of-archive blocks. docs/profile.md,
 * "Saved profiles", is its page; GPUJIT_PROFILE_SAVED_VERSION (gpujit/profile.h) its version. */
#ifndef GPUJIT_PROFILE_SAVED_H
#define GPUJIT_PROFILE_SAVED_H

#include "gpujit/profile.h"

/** The first member: a JSON object, "format" and "version" first. */
#define GPUJIT__SAVED_MANIFEST "gpujit-profile.json"
/** Its "format". */
#define GPUJIT__SAVED_FORMAT "gpujit-saved-profile"
/** The largest manifest a reader takes (its notes and member list are small). */
#define GPUJIT__SAVED_MANIFEST_MAX (16u << 20)

/* The manifest's keys:
 *   format, version     GPUJIT__SAVED_FORMAT, GPUJIT_PROFILE_SAVED_VERSION
 *   producer            "gpujit VERSION"
 *   command             the command line the run ran ("" when not known)
 *   records_dir         where the records were when saved (paths inside records point there)
 *   exit_status, signal, wall_ms    the run's outcome, as gpujit_profile_totals has them
 *   options             {lineinfo, nvrtc_trace, no_cupti, no_frameworks, max_trace_events}
 *   range               absent, or {pid, t0_ns, t1_ns} (ns as decimal strings: past a double's 53 bits)
 *   notes               the report's notes, one string per line
 *   members             [{name, bytes, xxh3}] in the order they follow: xxh3 is XXH3-128 of the
 *                       member's bytes, 32 hex digits (canonical, big-endian); absent in a records
 *                       directory's own manifest */

/** The manifest without its member list, as GPUJIT__SAVED_MANIFEST in a records directory the
 *  user keeps (`--keep DIR`): the directory is then what a saved profile unpacks to, and reports as
 *  the run did (its command, exit status, wall time, options and notes). */
int gpujit__profile_save_manifest(const gpujit_profile *p, const char *dir);

#endif
