/* The records of steps (docs/record-format.md): a "step" record where a recorded step begins
 * (and where recording stops), a "launch" record for each launch's host side in the recorded
 * steps. What they mean for the report is steps.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inject/protocol.h"
#include "profile/model.h"
#include "profile/record_fields.h"

void gpujit__profile_read_step(gpujit_profile *p, const char *line, const cJSON *j, int kind, int pid)
{
  if (kind == GPUJIT_RECORD_STEP) {
    pf_step *s = PF_PUSH(p->steps);
    if (!s)
      return;
    s->pid = pid;
    s->n = pf_u_of(j, "n");
    s->t = pf_t_of(line, "t");
    s->cycle = (int)pf_i_of(j, "cycle");
    snprintf(s->phase, sizeof(s->phase), "%s", pf_s_of(j, "phase"));
    snprintf(s->src, sizeof(s->src), "%s", pf_s_of(j, "src"));
  } else {
    pf_launch *l = PF_PUSH(p->launches);
    if (!l)
      return;
    l->pid = pid;
    l->tid = (uint32_t)pf_u_of(j, "tid");
    l->corr = pf_u_of(j, "corr");
    l->t0 = pf_t_of(line, "t0"), l->t1 = pf_t_of(line, "t1");
    snprintf(l->api, sizeof(l->api), "%s", pf_s_of(j, "api"));
  }
}

void gpujit__profile_step_note(pf_proc *proc, const cJSON *j)
{
  const char *msg = pf_s_of(j, "msg");
  /* the schedule the process runs ("wait=..."); a note of a schedule it could not take says so itself */
  if (strcmp(pf_s_of(j, "what"), "schedule") || strncmp(msg, "wait=", 5))
    return;
  free(proc->schedule);
  proc->schedule = pf_dup(msg);
}
