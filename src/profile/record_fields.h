/* A record's fields, read from its parsed JSON (and, for exact 64-bit times, from its text). */
#ifndef GPUJIT_PROFILE_RECORD_FIELDS_H
#define GPUJIT_PROFILE_RECORD_FIELDS_H

#include <cjson/cJSON.h>
#include <stdint.h>

/** A string field, "" when absent. */
const char *pf_s_of(const cJSON *j, const char *k);
/** An unsigned field: a number, or a "0x..." string (handles); 0 when absent or out of range. */
uint64_t pf_u_of(const cJSON *j, const char *k);
/** A nanosecond time read from the line's text, exact to 64 bits (cJSON keeps doubles). */
uint64_t pf_t_of(const char *line, const char *k);
/** A signed field; 0 when absent or out of range. */
int64_t pf_i_of(const cJSON *j, const char *k);
/** A copy of s ("" for NULL); NULL when out of memory. */
char *pf_dup(const char *s);
/** A compile's "options" (a list, or one string) as one string, words joined by spaces; NULL when
 *  out of memory. */
char *pf_options_of(const cJSON *j);
/** A hash field into 33 bytes. */
void pf_copy_hash(char out[33], const char *s);

#endif
