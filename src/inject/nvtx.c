/* NVTX ranges from CUPTI's marker records (inject/nvtx.h): a range's start waits for its end. */
#include <pthread.h>
#include <stdio.h>

#include "inject/protocol.h"
#include "inject/nvtx.h"
#include "inject/record.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
__attribute__((constructor)) static void fork_safe_lock(void) { gji_fork_safe(&lock); }
static struct {
  uint32_t id;
  uint64_t t;
  char name[120];
} open_ranges[256];

void gji_nvtx_marker(const CUpti_ActivityMarker2 *m)
{
  gji_line l;
  if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
    pthread_mutex_lock(&lock);
    open_ranges[m->id % 256].id = m->id;
    open_ranges[m->id % 256].t = m->timestamp;
    snprintf(open_ranges[m->id % 256].name, sizeof(open_ranges[0].name), "%s", m->name ? m->name : "");
    pthread_mutex_unlock(&lock);
    return;
  }
  gji_begin(&l, GPUJIT_KIND(NVTX));
  if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
    pthread_mutex_lock(&lock);
    if (open_ranges[m->id % 256].id == m->id) {
      gji_str(&l, "name", open_ranges[m->id % 256].name);
      gji_u64(&l, "s", open_ranges[m->id % 256].t);
      open_ranges[m->id % 256].id = 0;
    }
    pthread_mutex_unlock(&lock);
  } else {
    gji_str(&l, "name", m->name ? m->name : "");
    gji_u64(&l, "s", m->timestamp);
  }
  gji_u64(&l, "e", m->timestamp);
  gji_u64(&l, "thread", m->objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? m->objectId.pt.threadId : 0);
  gji_str(&l, "domain", m->domain ? m->domain : "");
  gji_end(&l);
}
