/* The timeline of a profile's HTML page (html_timeline.c), as the page's script reads it. */
#ifndef GPUJIT_PROFILE_HTML_TIMELINE_H
#define GPUJIT_PROFILE_HTML_TIMELINE_H

#include "profile/model.h"

/** Events drawn per track, about: past it, neighbours within the track's length over this
 *  are drawn merged into one block no longer than that. */
#define GPUJIT__HTML_TRACK_EVENTS 4000

/**
 * The timeline as a JSON object: {"tracks": [[group, name], ...], "names": [...],
 * "events": [[track, start_us, dur_us, name, category, detail], ...], "end_us": N, "merged": N,
 * "zero_ns": "N"}. Times are microseconds from the earliest event; `name` and `detail` index
 * "names" (detail -1: none); categories: 0 a compile, 1 a compile inside another, 2 a stage of
 * one, 3 a module load, 4 a kernel, 5 a copy, 6 a memset, 7 an NVTX range. Host tracks (a
 * process's threads) come first, in the order their processes started, then each GPU's streams.
 * @param out receives the text (free()). @return 0 or GPUJIT_ENOMEM.
 */
int gpujit__profile_html_timeline(const gpujit_profile *p, char **out);

#endif
