/* Toolkit programs gpujit starts (ptxas) and their private temporary directories, registered so
 * that gpujit_children_abort() can end them and remove what they wrote when the process is killed. */
#ifndef GPUJIT_BASE_CHILDREN_H
#define GPUJIT_BASE_CHILDREN_H

#include <stddef.h>
#include <sys/types.h>

/** A private directory (mode 0700) made in $TMPDIR (or /tmp), registered until
 *  gpujit__child_dir_remove(): its path goes to `out` (size `cap`), its slot to `*slot`
 *  (-1 when every slot is taken: the directory is still made, only not cleaned on a kill).
 *  @return 0, or GPUJIT_EIO (the message names the directory it could not make). */
int gpujit__child_dir_make(char *out, size_t cap, int *slot);

/** The child now running with its files in slot `slot`'s directory (slot -1: nothing). */
void gpujit__child_started(int slot, pid_t pid);

/** Wait for the child of `slot` (started with pid `pid`) to end, with its status in `*status`;
 *  the slot forgets it before it is reaped, so a kill never reaches a reused pid. */
void gpujit__child_wait(int slot, pid_t pid, int *status);

/** Remove directory `dir` and the files in it, and free `slot` (-1: none). */
void gpujit__child_dir_remove(int slot, const char *dir);

#endif
