/* The profile's JSON (json.c): what other writers of a profile's JSON share with it. */
#ifndef GPUJIT_PROFILE_JSON_H
#define GPUJIT_PROFILE_JSON_H

#include <cjson/cJSON.h>

#include "gpujit/profile.h"

/** The profile's notes as a JSON array, one string per line (NULL: out of memory). */
cJSON *gpujit__profile_notes_json(const gpujit_profile *p);

#endif
